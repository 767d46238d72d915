// The machine's limits, measured in the same run as the figures they sit beside.
#pragma once

#include <string>

#include "harness.h"

namespace simdex::bench {

struct machine_limits {
  double cycle_ns = 0;                                // one dependent integer add
  stats memcpy_4k_gib_s, memcpy_2m_gib_s;             // large copy, counted once per byte copied
  stats latency_1chain_4k_ns, latency_16chain_4k_ns;  // ns per access, random 64 B lines
  stats latency_1chain_2m_ns, latency_16chain_2m_ns;
  std::size_t probe_bytes = 0;    // working set of the latency and copy probes
  std::size_t huge_bytes_2m = 0;  // how much of the 2 MiB-page probe was really huge pages
};

machine_limits probe_machine(const options& opts);

// Nanoseconds per core cycle: the fastest of five chains of dependent adds.
double measure_cycle_ns();

// JSON object text for the environment: CPU, caches, cores, memory, kernel, THP, hypervisor,
// compiler and flags, simdex commit, ISA levels and kernels.
std::string environment_json();
std::string machine_json(const machine_limits& m);

}  // namespace simdex::bench
