// AVX2 node search: signed compares of 8 x 32-bit or 4 x 64-bit keys, movemask, popcount.
// Include only from avx2.cc (needs -mavx2).
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "block16.h"

namespace simdex::btree_detail {

// One 256-bit vector of keys: its width, the broadcast, and compares as movemask bits.
template <class S>
struct avx2_lanes {
  static constexpr bool k64 = sizeof(S) == 8;
  static constexpr unsigned kWidth = 32 / sizeof(S);
  static __m256i set1(S x) noexcept {
    if constexpr (k64) return _mm256_set1_epi64x(x);
    return _mm256_set1_epi32(x);
  }
  static unsigned bits(__m256i r) noexcept {
    if constexpr (k64) return static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(r)));
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(r)));
  }
  static __m256i load(const S* a) noexcept {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  }
  // Lane moves for a block's one-lane shift (block16::open16 / close16), as in avx512_lanes.
  using vec = __m256i;
  static void store(S* a, vec v) noexcept { _mm256_storeu_si256(reinterpret_cast<__m256i*>(a), v); }
  static vec next_lane(vec v, vec n) noexcept {
    if constexpr (k64)
      return _mm256_blend_epi32(_mm256_permute4x64_epi64(v, _MM_SHUFFLE(0, 3, 2, 1)),
                                _mm256_permute4x64_epi64(n, 0), 0xc0);
    return _mm256_blend_epi32(
        _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(1, 2, 3, 4, 5, 6, 7, 0)),
        _mm256_permutevar8x32_epi32(n, _mm256_setzero_si256()), 0x80);
  }
  static vec prev_lane(vec v, vec p) noexcept {
    if constexpr (k64)
      return _mm256_blend_epi32(_mm256_permute4x64_epi64(v, _MM_SHUFFLE(2, 1, 0, 3)),
                                _mm256_permute4x64_epi64(p, _MM_SHUFFLE(3, 3, 3, 3)), 0x03);
    return _mm256_blend_epi32(
        _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(7, 0, 1, 2, 3, 4, 5, 6)),
        _mm256_permutevar8x32_epi32(p, _mm256_set1_epi32(7)), 0x01);
  }
  // The lane numbers first, first + 1, ...
  static vec lane_ids(unsigned first) noexcept {
    if constexpr (k64) return _mm256_add_epi64(_mm256_setr_epi64x(0, 1, 2, 3), set1(S(first)));
    return _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), set1(S(first)));
  }
  static vec pick(unsigned first, unsigned from, vec a, vec b) noexcept {
    vec below = set1(static_cast<S>(from) - 1);  // lanes past it take b
    if constexpr (k64) return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(lane_ids(first), below));
    return _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi32(lane_ids(first), below));
  }
  static vec put(unsigned first, unsigned at, vec v, S k) noexcept {
    vec at_v = set1(static_cast<S>(at));
    if constexpr (k64)
      return _mm256_blendv_epi8(v, set1(k), _mm256_cmpeq_epi64(lane_ids(first), at_v));
    return _mm256_blendv_epi8(v, set1(k), _mm256_cmpeq_epi32(lane_ids(first), at_v));
  }
  static unsigned gt_bits(const S* a, __m256i kv) noexcept {  // a[i] > x
    if constexpr (k64) return bits(_mm256_cmpgt_epi64(load(a), kv));
    return bits(_mm256_cmpgt_epi32(load(a), kv));
  }
  static unsigned lt_bits(const S* a, __m256i kv) noexcept {  // a[i] < x
    if constexpr (k64) return bits(_mm256_cmpgt_epi64(kv, load(a)));
    return bits(_mm256_cmpgt_epi32(kv, load(a)));
  }
  static vec eq(const S* a, __m256i kv) noexcept {
    if constexpr (k64) return _mm256_cmpeq_epi64(kv, load(a));
    return _mm256_cmpeq_epi32(kv, load(a));
  }
  static unsigned eq_bits(const S* a, __m256i kv) noexcept { return bits(eq(a, kv)); }
};

// Bits i < m set, m <= 64.
inline std::uint64_t avx2_low_bits(unsigned m) noexcept {
  return m >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << m) - 1;
}

template <class S>
struct avx2_policy : block16<avx2_lanes<S>, S> {
  using key = S;
  using L = avx2_lanes<S>;
  static constexpr const char* kName = "avx2";
  template <class E>
  using block_of = block16<avx2_lanes<E>, E>;  // as in avx512_policy
  static unsigned count_le(const key* a, unsigned m, key x) noexcept {
    __m256i kv = L::set1(x);
    std::uint64_t gt = 0;
    unsigned i = 0;
    for (; i + L::kWidth <= m; i += L::kWidth) gt |= std::uint64_t{L::gt_bits(a + i, kv)} << i;
    if (i < m) {
      if (m >= L::kWidth)  // the last whole vector, as in avx512_policy: no read past a[m - 1]
        gt |= (std::uint64_t{L::gt_bits(a + m - L::kWidth, kv)} >> (L::kWidth - (m - i))) << i;
      else
        gt |= L::gt_bits(a, kv);  // a short run (an inner node's 7 keys) reads one vector
    }
    return static_cast<unsigned>(_mm_popcnt_u64(~gt & avx2_low_bits(m)));
  }
  // Whether a 16-key block holds x: the compares ORed and tested once, no mask built (as in
  // avx512_policy).
  static bool any_eq16(const key* a, key x) noexcept {
    const __m256i kv = L::set1(x);
    __m256i any = L::eq(a, kv);
    for (unsigned i = L::kWidth; i < 16; i += L::kWidth)
      any = _mm256_or_si256(any, L::eq(a + i, kv));
    return !_mm256_testz_si256(any, any);
  }
};

}  // namespace simdex::btree_detail
