// Per-level kernel tables of the primitives family; each is defined in its level's file.
#pragma once

#include "simdex/primitives.h"

namespace simdex::primitives {

// One variant of every primitive; `dispatch::pick` selects a table per family.
struct kernels {
  std::size_t (*lower_bound)(const std::uint8_t*, std::size_t, std::uint8_t);
  std::size_t (*lower_bound_padded)(const std::uint8_t*, std::size_t, std::uint8_t);
  void (*remap_branches)(const std::uint8_t*, std::uint8_t*, std::size_t, const std::uint8_t*);
  void (*rank_table)(const std::uint8_t*, std::uint8_t*);
  std::size_t (*find_u32x16)(const std::uint32_t*, std::size_t, std::uint32_t);
  std::size_t (*find_min_index_32)(const std::uint16_t*);
  std::size_t (*find_min_index_64)(const std::uint16_t*);
};

// Every level's table (nullptr where a level has no variant of its own); tests and benchmarks
// use it to run each level side by side. The public functions use dispatch::pick.
const dispatch::by_level<kernels>& kernel_tables();

// The table of a level type L, whose static functions are named as the table's entries (and
// find_min<N> serves find_min_index_N). A level type inherits what it does not redefine from
// the level below it, so each entry is written once, where it first changes.
template <class L>
constexpr kernels table_of() {
  return {.lower_bound = L::lower_bound,
          .lower_bound_padded = L::lower_bound_padded,
          .remap_branches = L::remap_branches,
          .rank_table = L::rank_table,
          .find_u32x16 = L::find_u32x16,
          .find_min_index_32 = L::template find_min<32>,
          .find_min_index_64 = L::template find_min<64>};
}

extern const kernels kScalarKernels;
extern const kernels kSse42Kernels;
extern const kernels kAvx2Kernels;
extern const kernels kAvx512Kernels;

}  // namespace simdex::primitives
