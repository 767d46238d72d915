// Language group, the clock: what reading the time costs through each interface (19), and
// whether the read stays in user space (the vDSO) or enters the kernel, which depends on the
// clocksource. Every reading is consumed; a loop's readings must advance with the time it took
// (a hoisted call would return one reading), and monotonic clocks may never go backwards.
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include <chrono>
#include <vector>

#include "lang_util.h"

namespace simdex::lab_bench {
namespace {

using namespace lang;

struct readings {
  std::uint64_t first = 0, last = 0, backwards = 0, sum = 0;
};

// One loop per interface: `n` readings, each compared with the previous one.
template <class Read>
readings read_clock(std::size_t n, Read&& read) {
  readings r;
  std::uint64_t prev = read();
  r.first = prev;
  for (std::size_t i = 1; i < n; ++i) {
    std::uint64_t v = read();
    r.backwards += v < prev;
    r.sum += v;
    prev = v;
  }
  r.last = prev;
  return r;
}

std::uint64_t ns_of(const timespec& ts) {
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

#define SIMDEX_LAB_CLOCK_LOOP(name, expr)                  \
  SIMDEX_LAB_NOINLINE readings name(std::size_t n) {       \
    return read_clock(n, []() -> std::uint64_t { expr; }); \
  }
SIMDEX_LAB_CLOCK_LOOP(steady_now, return static_cast<std::uint64_t>(
                                      std::chrono::steady_clock::now().time_since_epoch().count()))
SIMDEX_LAB_CLOCK_LOOP(system_now, return static_cast<std::uint64_t>(
                                      std::chrono::system_clock::now().time_since_epoch().count()))
SIMDEX_LAB_CLOCK_LOOP(monotonic, timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ns_of(ts))
SIMDEX_LAB_CLOCK_LOOP(monotonic_raw, timespec ts; clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
                      return ns_of(ts))
SIMDEX_LAB_CLOCK_LOOP(time_of_day, timeval tv; gettimeofday(&tv, nullptr);
                      return static_cast<std::uint64_t>(tv.tv_sec) * 1'000'000'000u +
                             static_cast<std::uint64_t>(tv.tv_usec) * 1000u)
SIMDEX_LAB_CLOCK_LOOP(monotonic_coarse, timespec ts; clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
                      return ns_of(ts))
SIMDEX_LAB_CLOCK_LOOP(tsc, return __rdtsc())
SIMDEX_LAB_CLOCK_LOOP(monotonic_syscall, timespec ts;
                      syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts); return ns_of(ts))
#undef SIMDEX_LAB_CLOCK_LOOP

struct clock_kind {
  const char* name;
  readings (*loop)(std::size_t);
  bool monotonic;
  bool fine;      // resolution well below a batch's duration: its readings must advance
  bool via_vdso;  // served by the vDSO when the clocksource allows (false: always a system call)
  bool in_ns;     // readings in nanoseconds (rdtsc counts ticks)
};

void clock_overhead(trial& t) {
  const clock_kind clocks[] = {
      {"steady_clock::now", steady_now, true, true, true, true},
      {"system_clock::now", system_now, false, true, true, true},
      {"clock_gettime(CLOCK_MONOTONIC)", monotonic, true, true, true, true},
      {"clock_gettime(CLOCK_MONOTONIC_RAW) (the study's)", monotonic_raw, true, true, true, true},
      {"gettimeofday", time_of_day, false, true, true, true},
      {"clock_gettime(CLOCK_MONOTONIC_COARSE)", monotonic_coarse, true, false, true, true},
      {"rdtsc", tsc, true, true, true, false},
      {"clock_gettime as a system call", monotonic_syscall, true, true, false, true},
  };
  const std::string source =
      lab::first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  const std::string available =
      lab::first_line("/sys/devices/system/clocksource/clocksource0/available_clocksource");
  const bool capable = vdso_capable(source);
  const bool vdso_mapped = getauxval(AT_SYSINFO_EHDR) != 0;
  t.note("clocksource: " + source + " (available: " + available + "); " +
         (capable ? "the vDSO can read it in user space"
                  : "the vDSO cannot read it: every clock call is a system call") +
         "; vDSO " + (vdso_mapped ? "mapped" : "not mapped"));

  const std::size_t calls = t.quick() ? 20'000 : 50'000;
  std::size_t backwards = 0, stuck = 0, runs = 0;
  std::vector<kernel> ks;
  for (const auto& c : clocks)
    ks.push_back({c.name, [&, c](std::size_t n) {
                    std::size_t m = c.via_vdso ? n : n / 10;  // system calls: fewer of them
                    std::uint64_t t0 = lab::now_ns();
                    readings r = c.loop(m);
                    double ns = static_cast<double>(lab::now_ns() - t0);
                    lab::do_not_optimize(r.sum);
                    ++runs;
                    if (c.monotonic) backwards += r.backwards != 0;
                    // The readings must span at least half the loop's own time (ticks: advance).
                    if (c.fine)
                      stuck += c.in_ns ? static_cast<double>(r.last - r.first) < ns / 2
                                       : r.last == r.first;
                    return ns * static_cast<double>(n) / static_cast<double>(m);
                  }});
  auto s = measure_calls(t, "read the time", {{"calls", static_cast<std::int64_t>(calls)}}, ks,
                         calls, "clock_gettime(CLOCK_MONOTONIC)");
  t.add({"work_done",
         backwards == 0 && stuck == 0 ? lab::check_status::pass : lab::check_status::fail,
         format("%.0f loops: %.0f saw a monotonic clock go backwards, %.0f returned readings "
                "spanning less than half the loop's own time (a call not made per iteration)",
                double(runs), double(backwards), double(stuck))});

  // Where each call runs: CPU time in the kernel over enough calls for tick-sampled accounting,
  // the median of three runs (one run on a busy machine can be far off).
  double max_vdso_share = 0;
  for (std::size_t i = 0; i < std::size(clocks); ++i) {
    const auto& c = clocks[i];
    double per_call = s[i].median > 0 ? s[i].median : 100;
    std::size_t n = static_cast<std::size_t>(40e6 / per_call);
    cpu_split split = median_kernel_split([&] {
      readings r = c.loop(n);
      lab::do_not_optimize(r.sum);
    });
    bool expect_vdso = c.via_vdso && capable;
    t.add(clock_path(c.name, split, expect_vdso));
    if (c.via_vdso) max_vdso_share = std::max(max_vdso_share, split.sys_share());
  }
  const double cyc = lab::cycle_ns();
  t.figure(s[2].median, "clock_gettime(CLOCK_MONOTONIC)");
  double lo = s[0].median, hi = s[0].median;
  for (int i : {0, 1, 3, 4}) {
    lo = std::min(lo, s[i].median);
    hi = std::max(hi, s[i].median);
  }
  t.set({{"spread", hi / lo},
         {"steady", s[0].median},
         {"system", s[1].median},
         {"raw", s[3].median},
         {"gtod", s[4].median},
         {"coarse", s[5].median},
         {"tsc", s[6].median},
         {"syscall", s[7].median}});
  t.set("monotonic_cycles", s[2].median / cyc);
  t.set({{"gtod_fastest", s[4].median <= lo * 1.02},
         {"capable", capable},
         {"kernel_share", max_vdso_share}});
}

verdict clock_verdict(const trial& t) {
  std::string why =
      format("steady_clock %.0f, system_clock %.0f, clock_gettime(CLOCK_MONOTONIC_RAW) %.0f ns",
             t.get("steady"), t.get("system"), t.get("raw")) +
      format(", gettimeofday %.0f ns per call (the four within %.2fx); CLOCK_MONOTONIC %.0f cycles",
             t.get("gtod"), t.get("spread"), t.get("monotonic_cycles")) +
      format(
          "; references: rdtsc alone %.1f ns, CLOCK_MONOTONIC_COARSE %.1f ns, a real system "
          "call %.0f ns",
          t.get("tsc"), t.get("coarse"), t.get("syscall")) +
      (t.get("capable") != 0
           ? format("; the clocksource is vDSO-capable and at most %.0f%% of the clock calls' CPU "
                    "time was in the kernel",
                    100 * t.get("kernel_share"))
           : std::string("; the clocksource is not vDSO-capable: every call is a system call"));
  if (t.get("gtod_fastest") == 0) why += "; gettimeofday is not the fastest here";
  if (t.get("spread") <= 1.5)
    return {verdict_kind::confirmed, "the four interfaces cost about the same: " + why};
  return {verdict_kind::contradicted, "the interfaces differ by more than 1.5x: " + why};
}

const registration kClock("clock_overhead", clock_overhead, clock_verdict);

}  // namespace
}  // namespace simdex::lab_bench
