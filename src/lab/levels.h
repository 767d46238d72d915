// Whether the latency plateaus of a cache sweep (bench_lab's cache_levels) are the levels they
// are labelled: a guest's caches are not always what it reports, and an "L3" plateau can be
// DRAM. Internal to the lab.
#pragma once

#include <string>
#include <vector>

#include "simdex/lab/validity.h"

namespace simdex::lab {

// Where a cache level's load-to-use latency lies on current x86 and Arm cores, in cycles, with
// 4 KiB pages (at half of a large L3 that includes page walks); a level beyond L3 gets L3's.
struct level_cycles {
  int level;
  double lo, hi;
};
inline constexpr level_cycles kLevelCycles[] = {{1, 2, 12}, {2, 8, 50}, {3, 20, 250}};

struct plateau {
  std::string name;  // "L1", "L2", ..., "DRAM"
  int level = 0;     // the cache level; 0 for DRAM
  double ns = 0;     // ns per dependent load
};

// Check "levels": every cache plateau (DRAM last, not judged itself) lies above the one before
// it, below the one after it and within its level's kLevelCycles; otherwise it fails, naming
// each plateau that does not, so a verdict cannot confirm steps between mislabelled plateaus.
check levels_plausible(const std::vector<plateau>& ps, double cycle_ns);

}  // namespace simdex::lab
