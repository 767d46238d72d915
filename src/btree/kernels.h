// The per-level kernel tables (one getter, instantiated by scalar.cc / avx2.cc / avx512.cc) and the
// one list of (stored key, value slot) shapes every explicit instantiation of the tree is made for.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simdex/btree/detail.h"

// X(S, VS) for every shape btree_set / btree_map use: the six key types store as int32_t or
// int64_t, values take slots of 0 (set), 4, 8 or 16 bytes.
#define SIMDEX_BTREE_SHAPES(X) \
  X(std::int32_t, 0)           \
  X(std::int32_t, 4)           \
  X(std::int32_t, 8)           \
  X(std::int32_t, 16)          \
  X(std::int64_t, 0)           \
  X(std::int64_t, 4)           \
  X(std::int64_t, 8)           \
  X(std::int64_t, 16)

namespace simdex::btree_detail {

// The node-search policies, one per level with code of its own (scalar_policy.h, ...).
template <class S>
struct scalar_policy;
template <class S>
struct avx2_policy;
template <class S>
struct avx512_policy;

// One level's kernel table: impl<Policy<S>, VS>::table(). Defined in generic.h and instantiated
// for every shape by that level's file only, so each level's code stays in its own object.
template <template <class> class Policy, class S, std::size_t VS>
const kernels<S, VS>* level_kernels();

}  // namespace simdex::btree_detail
