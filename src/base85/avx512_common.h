// Base85 arithmetic at 512 bits shared by the AVX-512 files (avx512.cc: BW, avx512vbmi.cc).
// Internal linkage: each file compiles its own copy with its own flags.
#pragma once

#include <immintrin.h>

#include "kernels.h"
#include "simd_constants.h"

namespace simdex::base85 {
namespace {

inline __m512i load512(const void* p) { return _mm512_loadu_si512(p); }

// Byte order within each u32 reversed (big-endian groups).
inline __m512i bswap32_512(__m512i v) {
  return _mm512_shuffle_epi8(v, _mm512_set4_epi32(0x0c0d0e0f, 0x08090a0b, 0x04050607, 0x00010203));
}

inline __m512i div7225_512(__m512i n) {
  const __m512i m = _mm512_set1_epi64(kDiv7225);
  __m512i even = _mm512_srli_epi64(_mm512_mul_epu32(n, m), kDiv7225Shift);
  __m512i odd =
      _mm512_srli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(n, 32), m), kDiv7225Shift - 32);
  return _mm512_mask_blend_epi32(0xaaaa, even, odd);
}

// Digits of 16 big-endian words (as loaded): x lanes hold [d3 d4 d1 d2], d0 lanes hold d0.
// n / 85^2 by 64-bit multiply-high, that quotient / 85^2 by a float FMA; the two remaining
// 16-bit halves divide by 85 together with vpmulhuw.
inline void digits16(__m512i raw, __m512i& x, __m512i& d0) {
  const __m512i k7225 = _mm512_set1_epi32(7225);
  __m512i n = bswap32_512(raw);
  __m512i q2 = div7225_512(n);                                      // d0 d1 d2
  __m512i lo = _mm512_sub_epi32(n, _mm512_mullo_epi32(q2, k7225));  // d3 d4
  d0 = _mm512_cvttps_epi32(_mm512_fmadd_ps(_mm512_cvtepi32_ps(q2), _mm512_set1_ps(kInv7225),
                                           _mm512_set1_ps(kInv7225 / 2)));
  __m512i mid = _mm512_sub_epi32(q2, _mm512_mullo_epi32(d0, k7225));  // d1 d2
  __m512i pair = _mm512_or_si512(lo, _mm512_slli_epi32(mid, 16));
  __m512i q = _mm512_srli_epi16(_mm512_mulhi_epu16(pair, _mm512_set1_epi16(kDiv85)), 4);
  __m512i r = _mm512_sub_epi16(pair, _mm512_mullo_epi16(q, _mm512_set1_epi16(85)));
  x = _mm512_or_si512(q, _mm512_slli_epi16(r, 8));
}

// Words of 16 groups from prefix digits [d0 d1 d2 d3] and last digits d4 (one per u32), as
// stored big-endian; `over` gets the overflowing groups: x + (d4 != 0) > 50529027, with x the
// prefix value from vpmaddubsw (pairs x 85) and vpmaddwd (pairs x 85^2).
inline __m512i combine16(__m512i prefix, __m512i last, __mmask16& over) {
  __m512i x = _mm512_madd_epi16(_mm512_maddubs_epi16(prefix, _mm512_set1_epi16(85 | 1 << 8)),
                                _mm512_set1_epi32(7225 | 1 << 16));
  over = _mm512_cmpgt_epu32_mask(_mm512_add_epi32(x, _mm512_min_epu32(last, _mm512_set1_epi32(1))),
                                 _mm512_set1_epi32(static_cast<int>(kMaxPrefix)));
  return bswap32_512(_mm512_add_epi32(_mm512_mullo_epi32(x, _mm512_set1_epi32(85)), last));
}

inline __mmask16 stop_words(__m512i raw, bool stop_zero, bool stop_spaces) {
  return (stop_zero ? _mm512_testn_epi32_mask(raw, raw) : 0) |
         (stop_spaces ? _mm512_cmpeq_epi32_mask(raw, _mm512_set1_epi32(0x20202020)) : 0);
}

}  // namespace
}  // namespace simdex::base85
