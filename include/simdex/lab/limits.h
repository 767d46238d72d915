// The machine's memory limits that sit beside every benchmark's figures: memcpy bandwidth and
// dependent-load latency (1 and 16 chains), with 4 KiB and 2 MiB pages, and the core's cycle.
#pragma once

#include <cstddef>

#include "simdex/lab/stats.h"

namespace simdex::lab {

struct memory_limits {
  double cycle_ns = 0;                  // cycle_ns()
  std::size_t bytes = 0;                // working set of every probe
  summary memcpy_4k, memcpy_2m;         // GiB/s of bytes copied
  summary latency_1_4k, latency_16_4k;  // ns per access over random 64-byte lines
  summary latency_1_2m, latency_16_2m;
  std::size_t huge_bytes_2m = 0;  // how much of the 2 MiB-page probe the kernel really backed so
  std::size_t huge_bytes_4k = 0;  // ... and of the 4 KiB one (should be 0)
};

// `reps` interleaved samples each (4k and 2m alternate); `steps` loads per chain-1 sample.
memory_limits measure_memory_limits(std::size_t bytes, int reps, std::size_t steps);

}  // namespace simdex::lab
