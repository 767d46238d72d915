#include "simdex/lab/timing.h"

#include <cpuid.h>
#include <x86intrin.h>

#include <algorithm>
#include <vector>

#include "simdex/lab/system.h"

namespace simdex::lab {
namespace {

// The fastest of 200 short chains (`iters` x 8 dependent instructions, tens of microseconds), in
// ns per instruction. A long chain on a shared core is stretched by every preemption; the
// fastest of many short ones is not. eight(x, operand) runs eight of the chain's instructions.
template <class Eight>
double fastest_chain_ns(int iters, Eight eight) {
  std::uint64_t x = 3, operand = 1;
  asm volatile("" : "+r"(operand));  // a value the compiler (and the core's renamer) cannot see
  double best = 1e300;
  for (int b = 0; b < 200; ++b) {
    const std::uint64_t t0 = now_ns();
    for (int i = 0; i < iters; ++i) eight(x, operand);
    best = std::min(best, static_cast<double>(now_ns() - t0) / (8.0 * iters));
  }
  do_not_optimize(x);
  return best;
}

bool invariant_tsc() {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return false;
  __get_cpuid(0x80000007u, &a, &b, &c, &d);
  return (d >> 8) & 1;
}

}  // namespace

// One add a cycle. Register to register: Intel's cores from Golden Cove on (Sapphire Rapids,
// Alder Lake's P-cores) fold chains of add-immediate at register rename, several a cycle, and a
// lent Xeon read 9.95 GHz from such a chain.
double cycle_ns() {
  static const double ns = fastest_chain_ns(12'500, [](std::uint64_t& x, std::uint64_t one) {
    asm volatile(
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
        "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
        : "+r"(x)
        : "r"(one));
  });
  return ns;
}

double mul_chain_ns() {
  return fastest_chain_ns(4'000, [](std::uint64_t& x, std::uint64_t m) {
    asm volatile(
        "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t"
        "imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0"
        : "+r"(x)
        : "r"(m));
  });
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
