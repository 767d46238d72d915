// Clocks, the core's cycle time, and the few helpers that keep a timed loop honest.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace simdex::lab {

// An opaque use of `value`: the compiler must compute it and may not move work across it.
template <class T>
inline void do_not_optimize(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}
template <class T>
inline void do_not_optimize(T& value) {
  asm volatile("" : "+r,m"(value) : : "memory");
}
inline void clobber_memory() { asm volatile("" : : : "memory"); }

// CLOCK_MONOTONIC through the vDSO (TSC-backed where the clocksource is tsc).
inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Fast deterministic generator for inputs and shuffles (splitmix64).
struct rng {
  std::uint64_t state;
  explicit rng(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) {
    __extension__ using u128 = unsigned __int128;  // __extension__: no -Wpedantic warning
    return static_cast<std::uint64_t>((static_cast<u128>(next()) * n) >> 64);
  }
};

// Nanoseconds per core cycle: the fastest of 200 short chains of dependent register-to-register
// integer adds (one add a cycle on every x86 core), so it follows turbo and the hypervisor's clock.
// Measured once per process: the machine probe, the lab's cycles/op and the harness's "below one
// cycle" flag all divide by this one value, so they cannot disagree.
double cycle_ns();

// The fastest of 200 short chains of dependent 64-bit multiplies, in ns per multiply: 3 cycles
// on every x86 core since Nehalem and Zen. A cross-check of cycle_ns()'s premise (tests).
double mul_chain_ns();

// What the timer is and what it costs.
struct clock_info {
  std::string clocksource;     // /sys/.../current_clocksource: "tsc", "kvm-clock", ...
  bool invariant_tsc = false;  // CPUID 0x80000007 EDX bit 8: the TSC ticks at a fixed rate
  double tsc_ghz = 0;          // TSC ticks per nanosecond of CLOCK_MONOTONIC
  double now_ns_cost = 0;      // ns per now_ns() call (median of back-to-back calls)
  double cycle_ns = 0;         // cycle_ns()
  double core_ghz = 0;         // 1 / cycle_ns
};
clock_info calibrate_clock();

}  // namespace simdex::lab
