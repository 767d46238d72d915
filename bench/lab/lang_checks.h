// Validity checks of the language and allocator experiments (besides the call shape in
// lang_calls.h). Plain functions of what an experiment measured, so a test can feed them a
// deliberately broken kernel and watch them fail.
#pragma once

#include <sys/resource.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "lab/format.h"
#include "simdex/lab/validity.h"

namespace simdex::lab_bench::lang {

using lab::format;

// --- per_call: the timed loop really runs once per call ----------------------------------------

// Time grows with the number of calls: twice the calls must take at least kPerCallGrowth x the
// time, and the extra calls at least kMinNsPerCall each (a tenth of a cycle at 5 GHz), so that
// two timings at the clock's resolution cannot pass by chance. A loop the compiler hoisted (the
// work done once) or removed costs the same for both.
constexpr double kPerCallGrowth = 1.5;
constexpr double kMinNsPerCall = 0.02;

inline lab::check per_call(const std::string& what, double ns_n, double ns_2n, double calls) {
  double r = ns_n > 0 ? ns_2n / ns_n : 0;
  double extra = calls > 0 ? (ns_2n - ns_n) / calls : 0;
  bool ok = r >= kPerCallGrowth && extra >= kMinNsPerCall;
  return {
      "per_call", ok ? lab::check_status::pass : lab::check_status::fail,
      what +
          format(": twice the calls took %.2fx the time, %.3g ns more per extra call", r, extra) +
          (ok ? "" : " (the work does not repeat per call: the compiler hoisted or removed it)")};
}

// --- clock_path: where a clock call runs
// ----------------------------------------------------------

// Clocksources whose reading the vDSO can do in user space (x86 TSC, KVM and Hyper-V paravirtual
// clocks, the arm64 generic timer); any other (hpet, acpi_pm, jiffies) makes every clock call a
// system call.
inline bool vdso_capable(const std::string& clocksource) {
  for (const char* c :
       {"tsc", "kvm-clock", "hyperv_clocksource_tsc_page", "arch_sys_counter", "xen"})
    if (clocksource == c) return true;
  return false;
}

// CPU time this thread spent in user space and in the kernel while fn ran.
struct cpu_split {
  double user_ns = 0, sys_ns = 0;
  double sys_share() const { return user_ns + sys_ns > 0 ? sys_ns / (user_ns + sys_ns) : 0; }
};
inline cpu_split split_cpu(const std::function<void()>& fn) {
  auto ns = [](const timeval& t) { return t.tv_sec * 1e9 + t.tv_usec * 1e3; };
  rusage a{}, b{};
  getrusage(RUSAGE_THREAD, &a);
  fn();
  getrusage(RUSAGE_THREAD, &b);
  return {ns(b.ru_utime) - ns(a.ru_utime), ns(b.ru_stime) - ns(a.ru_stime)};
}

// Kernel time is sampled on timer ticks: below this much CPU time the split says little.
constexpr double kSplitMinNs = 20e6;

// The median by kernel share of three runs of fn. On a busy machine one run's tick-sampled
// split can be far off either way (interrupts and preemption charged as kernel time, or a run
// that caught few of its own kernel ticks); the median of three is robust to one such run.
inline cpu_split median_kernel_split(const std::function<void()>& fn) {
  std::array<cpu_split, 3> s{split_cpu(fn), split_cpu(fn), split_cpu(fn)};
  std::sort(s.begin(), s.end(),
            [](const cpu_split& x, const cpu_split& y) { return x.sys_share() < y.sys_share(); });
  return s[1];
}

// A clock call expected to stay in user space (`user_space`: the vDSO, or an instruction) must
// spend little of its time in the kernel; one expected to be a system call, most of it.
inline lab::check clock_path(const std::string& what, const cpu_split& s, bool user_space) {
  double share = s.sys_share();
  std::string d = what + format(": %.0f%% of %.0f ms CPU time in the kernel", 100 * share,
                                (s.user_ns + s.sys_ns) * 1e-6);
  auto make = [&](lab::check_status st, const std::string& why) {
    return lab::check{"clock_path", st, d + why};
  };
  if (s.user_ns + s.sys_ns < kSplitMinNs)
    return make(lab::check_status::warn, " (too little CPU time to tell)");
  if (user_space && share < 0.25) return make(lab::check_status::pass, ": stays in user space");
  if (!user_space && share > 0.5)
    return make(lab::check_status::pass, ": enters the kernel on every call, as expected");
  if (user_space && share > 0.5)
    return make(lab::check_status::fail,
                ": expected to stay in user space, but every call enters the kernel (a system "
                "call: a clocksource the vDSO cannot read, or a trap)");
  if (!user_space && share < 0.25)
    return make(lab::check_status::fail,
                ": expected a system call, but the calls stayed in user space");
  return make(lab::check_status::warn, ": between user space and the kernel; unclear");
}

// --- blocks_valid: an allocator handed out real, separate, aligned memory
// --------------------------

struct block {
  const void* p = nullptr;
  std::size_t bytes = 0;
};

// Blocks live at the same time: each aligned to `align`, none overlapping another.
inline lab::check blocks_valid(const std::string& what, std::vector<block> blocks,
                               std::size_t align) {
  std::size_t misaligned = 0, overlaps = 0;
  for (const auto& b : blocks) misaligned += reinterpret_cast<std::uintptr_t>(b.p) % align != 0;
  std::sort(blocks.begin(), blocks.end(), [](const block& a, const block& b) { return a.p < b.p; });
  for (std::size_t i = 1; i < blocks.size(); ++i) {
    auto prev_end = reinterpret_cast<std::uintptr_t>(blocks[i - 1].p) + blocks[i - 1].bytes;
    overlaps += reinterpret_cast<std::uintptr_t>(blocks[i].p) < prev_end;
  }
  bool ok = !blocks.empty() && misaligned == 0 && overlaps == 0;
  return {"blocks_valid", ok ? lab::check_status::pass : lab::check_status::fail,
          what +
              format(": %.0f blocks live at once, %.0f not aligned to %.0f bytes",
                     double(blocks.size()), double(misaligned), double(align)) +
              format(", %.0f overlapping another", double(overlaps))};
}

// --- work_done: a kernel's result equals a plain C++ reference
// -------------------------------------

inline lab::check work_done(const std::string& what, std::size_t wrong, std::size_t runs) {
  bool ok = wrong == 0 && runs > 0;
  return {"work_done", ok ? lab::check_status::pass : lab::check_status::fail,
          what +
              format(": %.0f of %.0f runs returned a result different from the plain C++ "
                     "reference",
                     double(wrong), double(runs)) +
              (ok ? "" : ": calls were skipped or computed something else")};
}

}  // namespace simdex::lab_bench::lang
