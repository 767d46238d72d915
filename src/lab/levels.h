// Whether the latency plateaus of a cache sweep (bench_lab's cache_levels) are the levels they
// are labelled: a guest's caches are not always what it reports, and an "L3" plateau can be
// DRAM. Internal to the lab.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "simdex/lab/system.h"
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

// One point of the latency sweep: working-set bytes, ns per dependent load with 4 KiB pages
// and, where measured, with 2 MiB pages (0: not measured).
struct sweep_latency {
  std::size_t bytes = 0;
  double ns = 0;
  double ns_2m = 0;
};

// How much slower a load must be beyond a cache (at 4x its size) than within it (at half) for
// the curve to show the cache ending there. A real boundary is about 3x or more across that 8x
// of size (L1 4-5 to L2 12-16 cycles, L2 to L3 about 3x, L3 to DRAM more); page walks alone add
// about 1.5x with 4 KiB pages under nested paging (16 to 128 MiB on a KVM guest: 1.45x), and a
// loaded host inflates that, so where both page sizes were measured the smaller step decides
// (the same guest with 2 MiB pages: 1.16x).
inline constexpr double kStepPastSize = 2.0;

// Check "cache_sizes": the measured curve steps where the machine says each of its caches ends.
// The plateaus are read at half of each reported size (sysfs, from CPUID), which a VM may fill
// with the host's caches or with sizes that are not its share of them; then they are not the
// levels they are labelled. Fails (as levels_plausible does, so that no verdict rests on such
// labels) naming each level the curve does not show at its size; warns naming each level the
// sweep does not reach 4x of; passes otherwise.
check cache_sizes_agree(const std::vector<cache_level>& caches,
                        const std::vector<sweep_latency>& curve);

}  // namespace simdex::lab
