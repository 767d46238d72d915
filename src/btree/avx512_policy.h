// AVX-512 node search: 16 x 32-bit or 8 x 64-bit compares straight into mask registers.
// Masked loads stop at m, so nothing past the searched keys is read. Include only from
// avx512.cc.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "block16.h"

namespace simdex::btree_detail {

// One 512-bit vector of keys: its width, the broadcast, and compares into mask bits.
template <class S>
struct avx512_lanes {
  static constexpr bool k64 = sizeof(S) == 8;
  static constexpr unsigned kWidth = 64 / sizeof(S);
  static constexpr unsigned kAll = (1u << kWidth) - 1;
  static __m512i set1(S x) noexcept {
    if constexpr (k64) return _mm512_set1_epi64(x);
    return _mm512_set1_epi32(x);
  }
  // Lanes live (bits of `live`) with a[i] <= x; the others are neither loaded nor counted.
  static unsigned le_bits(unsigned live, const S* a, __m512i kv) noexcept {
    if constexpr (k64)
      return _mm512_mask_cmple_epi64_mask(static_cast<__mmask8>(live),
                                          _mm512_maskz_loadu_epi64(live, a), kv);
    return _mm512_mask_cmple_epi32_mask(static_cast<__mmask16>(live),
                                        _mm512_maskz_loadu_epi32(live, a), kv);
  }
  static unsigned lt_bits(const S* a, __m512i kv) noexcept {
    if constexpr (k64) return _mm512_cmplt_epi64_mask(_mm512_loadu_si512(a), kv);
    return _mm512_cmplt_epi32_mask(_mm512_loadu_si512(a), kv);
  }
  static unsigned eq_bits(const S* a, __m512i kv) noexcept {
    if constexpr (k64) return _mm512_cmpeq_epi64_mask(_mm512_loadu_si512(a), kv);
    return _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(a), kv);
  }
};

template <class S>
struct avx512_policy : block16<avx512_lanes<S>, S> {
  using key = S;
  using L = avx512_lanes<S>;
  static constexpr const char* kName = "avx512";
  static unsigned count_le(const key* a, unsigned m, key x) noexcept {
    __m512i kv = L::set1(x);
    unsigned c = 0;
    for (unsigned i = 0; i < m; i += L::kWidth) {
      unsigned live = m - i >= L::kWidth ? L::kAll : (1u << (m - i)) - 1;
      c += static_cast<unsigned>(_mm_popcnt_u32(L::le_bits(live, a + i, kv)));
    }
    return c;
  }
};

}  // namespace simdex::btree_detail
