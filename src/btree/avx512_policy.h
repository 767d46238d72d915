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
  // Lane moves for a block's one-lane shift (block16::open16 / close16): lanes of v one down,
  // the last from n's first; one up, the first from p's last; lanes first + i >= from from b;
  // lane at - first set to k.
  using vec = __m512i;
  static vec load(const S* a) noexcept { return _mm512_loadu_si512(a); }
  static void store(S* a, vec v) noexcept { _mm512_storeu_si512(a, v); }
  static vec next_lane(vec v, vec n) noexcept {
    if constexpr (k64) return _mm512_alignr_epi64(n, v, 1);
    return _mm512_alignr_epi32(n, v, 1);
  }
  static vec prev_lane(vec v, vec p) noexcept {
    if constexpr (k64) return _mm512_alignr_epi64(v, p, 7);
    return _mm512_alignr_epi32(v, p, 15);
  }
  static vec pick(unsigned first, unsigned from, vec a, vec b) noexcept {
    unsigned m = ((0xffffffffu << from) >> first) & kAll;
    if constexpr (k64) return _mm512_mask_blend_epi64(static_cast<__mmask8>(m), a, b);
    return _mm512_mask_blend_epi32(static_cast<__mmask16>(m), a, b);
  }
  static vec put(unsigned first, unsigned at, vec v, S k) noexcept {
    unsigned m = ((1u << at) >> first) & kAll;
    if constexpr (k64) return _mm512_mask_set1_epi64(v, static_cast<__mmask8>(m), k);
    return _mm512_mask_set1_epi32(v, static_cast<__mmask16>(m), k);
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
  // The block shifts over lanes of another width (a map's 4- and 8-byte value slots).
  template <class E>
  using block_of = block16<avx512_lanes<E>, E>;
  static unsigned count_le(const key* a, unsigned m, key x) noexcept {
    __m512i kv = L::set1(x);
    if (m < L::kWidth)  // a masked load: nothing past a[m - 1] is read
      return static_cast<unsigned>(_mm_popcnt_u32(L::le_bits((1u << m) - 1, a, kv)));
    unsigned c = 0, i = 0;
    for (; i + L::kWidth <= m; i += L::kWidth)
      c += static_cast<unsigned>(_mm_popcnt_u32(L::le_bits(L::kAll, a + i, kv)));
    // The tail as the last whole vector with its lanes before i dropped. A masked load there
    // spans a whole vector's bytes past a[m - 1] (a leaf's counts, just written by an edit)
    // and waits for any store in them to reach the cache.
    if (i < m)
      c += static_cast<unsigned>(
          _mm_popcnt_u32(L::le_bits(L::kAll, a + m - L::kWidth, kv) >> (L::kWidth - (m - i))));
    return c;
  }
  // Whether a 16-key block holds x: the compares' masks tested together, no mask built.
  static bool any_eq16(const key* a, key x) noexcept {
    const __m512i kv = L::set1(x);
    if constexpr (L::k64)
      return !_kortestz_mask8_u8(_mm512_cmpeq_epi64_mask(L::load(a), kv),
                                 _mm512_cmpeq_epi64_mask(L::load(a + 8), kv));
    return _mm512_cmpeq_epi32_mask(L::load(a), kv) != 0;
  }
};

}  // namespace simdex::btree_detail
