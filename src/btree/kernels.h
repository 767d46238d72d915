// The per-level operation tables, defined in scalar.cc / avx2.cc / avx512.cc.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simdex/btree/detail.h"

namespace simdex::btree_detail {

template <class S, std::size_t VS>
const ops<S, VS>* scalar_ops();
template <class S, std::size_t VS>
const ops<S, VS>* avx2_ops();
template <class S, std::size_t VS>
const ops<S, VS>* avx512_ops();

}  // namespace simdex::btree_detail

// Explicit instantiations of a per-level table getter for every (stored key, value slot).
#define SIMDEX_BTREE_INSTANTIATE(fn)                                           \
  template const ops<std::int32_t, 0>* fn<std::int32_t, 0>();                  \
  template const ops<std::int32_t, 4>* fn<std::int32_t, 4>();                  \
  template const ops<std::int32_t, 8>* fn<std::int32_t, 8>();                  \
  template const ops<std::int32_t, 16>* fn<std::int32_t, 16>();                \
  template const ops<std::int64_t, 0>* fn<std::int64_t, 0>();                  \
  template const ops<std::int64_t, 4>* fn<std::int64_t, 4>();                  \
  template const ops<std::int64_t, 8>* fn<std::int64_t, 8>();                  \
  template const ops<std::int64_t, 16>* fn<std::int64_t, 16>();
