// The language and allocator group's validity checks (bench/lab/lang_checks.h, alloc_util.h),
// each shown failing on a deliberately broken kernel: a loop whose work was hoisted, a clock
// read that is really a system call, an allocator that hands out a block twice or misaligned.
#include "../../bench/lab/lang_checks.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "../../bench/lab/alloc_util.h"
#include "simdex/lab/system.h"
#include "simdex/lab/timing.h"

namespace {

using namespace simdex::lab_bench::lang;
using simdex::lab::check_status;

// --- per_call ---------------------------------------------------------------------------------

TEST(LabPerCall, DecidesFromTheGrowth) {
  EXPECT_EQ(per_call("x", 1000, 2000, 1000).status, check_status::pass);
  EXPECT_EQ(per_call("x", 1000, 1100, 1000).status, check_status::fail);
  EXPECT_EQ(per_call("x", 0, 0, 1000).status, check_status::fail);
  // Two timings at the clock's resolution: a ratio, but no time per extra call.
  EXPECT_EQ(per_call("x", 30, 60, 1'000'000).status, check_status::fail);
}

std::uint64_t mix(std::uint64_t x) { return (x ^ (x >> 31)) * 0x9e3779b97f4a7c15ull; }

// The broken variant: what a compiler makes of a loop whose body does not depend on the
// iteration (x = f(42) each time, only the last result kept): the work done once.
[[gnu::noinline]] std::uint64_t hoisted(std::size_t calls) {
  std::uint64_t x = 0;
  if (calls > 0) x = mix(42);
  return x;
}

double best_ns(std::size_t calls) {
  double best = 0;
  for (int b = 0; b < 9; ++b) {
    std::uint64_t t0 = simdex::lab::now_ns();
    std::uint64_t r = hoisted(calls);
    simdex::lab::do_not_optimize(r);
    double ns = static_cast<double>(simdex::lab::now_ns() - t0);
    if (b == 0 || ns < best) best = ns;
  }
  return best;
}

TEST(LabPerCall, HoistedLoopIsFlagged) {
  const std::size_t n = 1'000'000;
  auto c = per_call("hoisted", best_ns(n), best_ns(2 * n), static_cast<double>(n));
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  EXPECT_NE(c.detail.find("hoisted"), std::string::npos) << c.detail;
}

// --- clock_path ---------------------------------------------------------------------------------

TEST(LabClockPath, DecidesFromTheKernelShare) {
  cpu_split user{40e6, 0}, kernel{4e6, 36e6}, short_run{1e6, 0}, mixed{20e6, 20e6};
  EXPECT_EQ(clock_path("x", user, true).status, check_status::pass);
  EXPECT_EQ(clock_path("x", kernel, false).status, check_status::pass);
  EXPECT_EQ(clock_path("x", kernel, true).status, check_status::fail);
  EXPECT_EQ(clock_path("x", user, false).status, check_status::fail);
  EXPECT_EQ(clock_path("x", short_run, true).status, check_status::warn);
  EXPECT_EQ(clock_path("x", mixed, true).status, check_status::warn);
  EXPECT_TRUE(vdso_capable("tsc"));
  EXPECT_TRUE(vdso_capable("kvm-clock"));
  EXPECT_FALSE(vdso_capable("hpet"));
  EXPECT_FALSE(vdso_capable("acpi_pm"));
}

double thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

// Calls `read` until this thread has spent 50 ms of CPU time (enough for tick-sampled
// accounting, however busy the machine), checking the time every 1000 calls; the median of three
// such runs, as the experiment takes it.
template <class Read>
cpu_split split_of(Read&& read) {
  return median_kernel_split([&] {
    std::uint64_t sum = 0;
    double t0 = thread_cpu_ns();
    while (thread_cpu_ns() - t0 < 50e6)
      for (int i = 0; i < 1000; ++i) sum += read();
    simdex::lab::do_not_optimize(sum);
  });
}

// clock_path over `read`, tried up to five times until it fails (or does not) as `wanted_fail`
// says: the user/kernel split is sampled at timer ticks, and interrupts taken for other work are
// charged to whatever thread runs, so one try on a loaded machine can land on the wrong side.
// The last try is returned.
template <class Read>
simdex::lab::check clock_path_tries(const char* what, Read&& read, bool wanted_fail) {
  simdex::lab::check c;
  for (int i = 0; i < 5; ++i) {
    c = clock_path(what, split_of(read), true);
    if ((c.status == check_status::fail) == wanted_fail) break;
  }
  return c;
}

// The broken variant: a clock read presented as a vDSO call that is really a system call (what
// every clock call is on a clocksource the vDSO cannot read).
TEST(LabClockPath, SystemCallClaimedUserSpaceFails) {
  // A loaded guest once credited 36% of the system calls' time to user space; the check must
  // still catch the broken kernel in one of the tries.
  auto c = clock_path_tries(
      "syscall clock_gettime",
      [] {
        timespec ts;
        syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts);
        return static_cast<std::uint64_t>(ts.tv_nsec);
      },
      true);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
}

TEST(LabClockPath, VdsoClockStaysInUserSpace) {
  std::string source =
      simdex::lab::first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  if (!vdso_capable(source)) GTEST_SKIP() << "clocksource " << source << " has no vDSO read";
  // A parallel test's disk I/O takes interrupts on this CPU, charged to this thread too.
  auto c = clock_path_tries(
      "clock_gettime",
      [] {
        timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return static_cast<std::uint64_t>(ts.tv_nsec);
      },
      false);
  if (c.status != check_status::fail) return;
  // Still read as kernel time: tell a check that misjudges from a machine that charges kernel
  // time to a loop making no call at all.
  std::uint64_t x = 1;
  auto control = split_of([&] { return x = mix(x); });
  if (control.sys_share() > 0.25)
    GTEST_SKIP() << "a loop with no calls also spent " << 100 * control.sys_share()
                 << "% of its CPU time in the kernel: " << c.detail;
  ADD_FAILURE() << c.detail;
}

// --- blocks_valid and the allocator pass ---------------------------------------------------------

TEST(LabBlocksValid, SeparateAlignedBlocksPass) {
  std::vector<block> bs;
  std::vector<void*> owned;
  for (int i = 0; i < 100; ++i) {
    owned.push_back(std::aligned_alloc(64, 128));
    bs.push_back({owned.back(), 128});
  }
  EXPECT_EQ(blocks_valid("aligned_alloc", bs, 64).status, check_status::pass);
  for (void* p : owned) std::free(p);
}

// The broken variants: an allocator that hands out one block twice, one whose blocks overlap,
// one that ignores the alignment asked for.
TEST(LabBlocksValid, BrokenAllocatorsFail) {
  alignas(64) static unsigned char arena[64 * 128];
  std::vector<block> twice = {{arena, 128}, {arena + 128, 128}, {arena, 128}};
  auto c = blocks_valid("same block twice", twice, 64);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  std::vector<block> overlapping = {{arena, 128}, {arena + 64, 128}};
  EXPECT_EQ(blocks_valid("overlap", overlapping, 64).status, check_status::fail);
  std::vector<block> misaligned = {{arena + 16, 128}, {arena + 256, 128}};
  c = blocks_valid("16-byte aligned, 64 asked", misaligned, 64);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  EXPECT_EQ(blocks_valid("nothing", {}, 64).status, check_status::fail);
}

TEST(LabAllocPass, PatternShowsEveryBlockKeptItsContents) {
  namespace alloc = simdex::lab_bench::alloc;
  const std::size_t n = 1000;
  std::vector<void*> slots(n);
  auto bytes = [](std::size_t) { return std::size_t{128}; };
  auto good = alloc::pass(
      n, 7, slots, bytes, [](std::size_t) { return std::aligned_alloc(64, 128); },
      [](void* p, std::size_t) { std::free(p); });
  EXPECT_EQ(good, alloc::pattern_sum(7, n));
  EXPECT_EQ(work_done("pass", good != alloc::pattern_sum(7, n), 1).status, check_status::pass);
  // The broken variant: a pool whose free list hands the same node out again and again.
  alignas(64) static unsigned char one[128];
  auto bad = alloc::pass(
      n, 7, slots, bytes, [](std::size_t) -> void* { return one; }, [](void*, std::size_t) {});
  EXPECT_NE(bad, alloc::pattern_sum(7, n));
  auto c = work_done("a pool handing out one node", bad != alloc::pattern_sum(7, n), 1);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  auto live = alloc::live_blocks(
      8, bytes, [](std::size_t) -> void* { return one; }, [](void*, std::size_t) {});
  EXPECT_EQ(blocks_valid("a pool handing out one node", live, 64).status, check_status::fail);
}

TEST(LabAllocPass, FreeListHandsOutEveryNodeOnce) {
  namespace alloc = simdex::lab_bench::alloc;
  alloc::free_list pool(100);
  std::vector<block> bs;
  for (int i = 0; i < 100; ++i) bs.push_back({pool.take(), sizeof(alloc::node)});
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(blocks_valid("free list", bs, alignof(alloc::node)).status, check_status::pass);
}

// --- work_done ----------------------------------------------------------------------------------

TEST(LabWorkDone, AnyWrongRunFails) {
  EXPECT_EQ(work_done("x", 0, 10).status, check_status::pass);
  EXPECT_EQ(work_done("x", 1, 10).status, check_status::fail);
  EXPECT_EQ(work_done("x", 0, 0).status, check_status::fail);
}

}  // namespace
