#include "simdex/lab/timing.h"

#include <cpuid.h>
#include <x86intrin.h>

#include <algorithm>
#include <vector>

#include "simdex/lab/system.h"

namespace simdex::lab {
namespace {

// One short chain of 100k dependent adds (about 30 us at one add a cycle), in ns per add. A long
// chain on a shared core is stretched by every preemption; the fastest of many short ones is
// not. The adds are register to register, of a value the compiler cannot see: Intel's cores from
// Golden Cove on (Sapphire Rapids, Alder Lake's P-cores) fold chains of add-immediate at register
// rename, several a cycle, and a lent Xeon read 9.95 GHz from such a chain.
double add_chain_ns() {
  std::uint64_t x = 0, one = 1;
  asm volatile("" : "+r"(one));
  std::uint64_t t0 = now_ns();
  for (int i = 0; i < 12'500; ++i)
    asm volatile(
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
        : "+r"(x)
        : "r"(one));
  std::uint64_t t1 = now_ns();
  do_not_optimize(x);
  return static_cast<double>(t1 - t0) / 100'000.0;
}

bool invariant_tsc() {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d >> 8) & 1;
}

}  // namespace

double cycle_ns() {
  static const double ns = [] {
    double best = add_chain_ns();
    for (int b = 1; b < 200; ++b) best = std::min(best, add_chain_ns());
    return best;
  }();
  return ns;
}

double mul_chain_ns() {
  std::uint64_t x = 3, m = 1;
  asm volatile("" : "+r"(m));
  double best = 1e300;
  for (int b = 0; b < 200; ++b) {
    std::uint64_t t0 = now_ns();
    for (int i = 0; i < 4'000; ++i)
      asm volatile(
          "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
          "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0"
          : "+r"(x)
          : "r"(m));
    std::uint64_t t1 = now_ns();
    best = std::min(best, static_cast<double>(t1 - t0) / 32'000.0);
  }
  do_not_optimize(x);
  return best;
}

clock_info calibrate_clock() {
  clock_info c;
  c.clocksource = first_line("/sys/devices/system/clocksource/clocksource0/current_clocksource");
  c.invariant_tsc = invariant_tsc();
  {  // TSC against CLOCK_MONOTONIC over ~20 ms
    std::uint64_t n0 = now_ns(), t0 = __rdtsc();
    while (now_ns() - n0 < 20'000'000) {
    }
    std::uint64_t n1 = now_ns(), t1 = __rdtsc();
    c.tsc_ghz = static_cast<double>(t1 - t0) / static_cast<double>(n1 - n0);
  }
  {  // back-to-back now_ns() calls, median of 21 batches of 1000
    std::vector<double> per_call;
    for (int b = 0; b < 21; ++b) {
      std::uint64_t t0 = now_ns(), last = t0;
      for (int i = 0; i < 1000; ++i) last = now_ns();
      per_call.push_back(static_cast<double>(last - t0) / 1000.0);
    }
    std::sort(per_call.begin(), per_call.end());
    c.now_ns_cost = per_call[per_call.size() / 2];
  }
  c.cycle_ns = cycle_ns();
  c.core_ghz = c.cycle_ns > 0 ? 1.0 / c.cycle_ns : 0;
  return c;
}

}  // namespace simdex::lab
