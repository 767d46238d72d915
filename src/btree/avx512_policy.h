// AVX-512 node search: 16 x 32-bit or 8 x 64-bit compares straight into mask registers.
// Masked loads stop at m, so nothing past the searched keys is read. Include only from
// avx512.cc.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace simdex::btree_detail {

template <class S>
struct avx512_policy;

template <>
struct avx512_policy<std::int32_t> {
  using key = std::int32_t;
  static constexpr const char* kName = "avx512";
  static unsigned count_le(const key* a, unsigned m, key x) noexcept {
    __m512i kv = _mm512_set1_epi32(x);
    unsigned c = 0;
    for (unsigned i = 0; i < m; i += 16) {
      __mmask16 live = m - i >= 16 ? __mmask16(0xffff) : __mmask16((1u << (m - i)) - 1);
      __m512i v = _mm512_maskz_loadu_epi32(live, a + i);
      c += static_cast<unsigned>(_mm_popcnt_u32(_mm512_mask_cmple_epi32_mask(live, v, kv)));
    }
    return c;
  }
  static unsigned count_lt16(const key* a, key x) noexcept {
    __m512i v = _mm512_loadu_si512(a);
    return static_cast<unsigned>(_mm_popcnt_u32(_mm512_cmplt_epi32_mask(v, _mm512_set1_epi32(x))));
  }
  static unsigned eq_mask16(const key* a, key x) noexcept {
    return _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(a), _mm512_set1_epi32(x));
  }
};

template <>
struct avx512_policy<std::int64_t> {
  using key = std::int64_t;
  static constexpr const char* kName = "avx512";
  static unsigned count_le(const key* a, unsigned m, key x) noexcept {
    __m512i kv = _mm512_set1_epi64(x);
    unsigned c = 0;
    for (unsigned i = 0; i < m; i += 8) {
      __mmask8 live = m - i >= 8 ? __mmask8(0xff) : __mmask8((1u << (m - i)) - 1);
      __m512i v = _mm512_maskz_loadu_epi64(live, a + i);
      c += static_cast<unsigned>(_mm_popcnt_u32(_mm512_mask_cmple_epi64_mask(live, v, kv)));
    }
    return c;
  }
  static unsigned count_lt16(const key* a, key x) noexcept {
    __m512i kv = _mm512_set1_epi64(x);
    __mmask8 lo = _mm512_cmplt_epi64_mask(_mm512_loadu_si512(a), kv);
    __mmask8 hi = _mm512_cmplt_epi64_mask(_mm512_loadu_si512(a + 8), kv);
    return static_cast<unsigned>(
        _mm_popcnt_u32(static_cast<unsigned>(lo) | static_cast<unsigned>(hi) << 8));
  }
  static unsigned eq_mask16(const key* a, key x) noexcept {
    __m512i kv = _mm512_set1_epi64(x);
    __mmask8 lo = _mm512_cmpeq_epi64_mask(_mm512_loadu_si512(a), kv);
    __mmask8 hi = _mm512_cmpeq_epi64_mask(_mm512_loadu_si512(a + 8), kv);
    return static_cast<unsigned>(lo) | static_cast<unsigned>(hi) << 8;
  }
};

}  // namespace simdex::btree_detail
