// The machine's limits, measured in the same run as the figures they sit beside, by the lab's
// kernels (simdex/lab/limits.h): the same code the lab's experiments report.
#pragma once

#include <string>

#include "harness.h"
#include "simdex/lab/limits.h"

namespace simdex::bench {

// memcpy GiB/s and ns per access with 1 and 16 chains, 4 KiB and 2 MiB pages, cycle time.
using machine_limits = lab::memory_limits;

// 256 MiB working sets in quick mode, 1 GiB in full mode; opts.repetitions() samples each.
machine_limits probe_machine(const options& opts);

// JSON object text for the environment: CPU, caches, cores, memory, kernel, THP, hypervisor,
// compiler and flags, simdex commit, ISA levels and kernels.
std::string environment_json();
std::string machine_json(const machine_limits& m);

}  // namespace simdex::bench
