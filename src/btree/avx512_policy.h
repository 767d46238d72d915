// AVX-512 node search: 16 x 32-bit or 8 x 64-bit compares straight into mask registers, and
// 32 x 16-bit compares for the leaf block heads. Masked loads stop at m, so nothing past the
// searched keys is read. Include only from avx512.cc.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace simdex::btree_detail {

template <class S>
struct avx512_policy {
  using key = S;
  static constexpr const char* kName = "avx512";
  static constexpr unsigned kLanes = 64 / sizeof(S);

  static unsigned count_le(const S* a, unsigned m, S x) noexcept {
    __m512i kv = splat(x);
    unsigned c = 0;
    for (unsigned i = 0; i < m; i += kLanes) {
      unsigned live = m - i >= kLanes ? (1u << kLanes) - 1 : (1u << (m - i)) - 1;
      c += static_cast<unsigned>(_mm_popcnt_u32(le_mask(live, a + i, kv)));
    }
    return c;
  }
  static unsigned count_lt16(const S* a, S x) noexcept {
    __m512i kv = splat(x);
    unsigned c = 0;
    for (unsigned i = 0; i < 16; i += kLanes)
      c += static_cast<unsigned>(_mm_popcnt_u32(lt_mask(a + i, kv)));
    return c;
  }
  static void count_heads(const std::uint16_t* a, unsigned m, std::uint16_t h, unsigned& lt,
                          unsigned& le) noexcept {
    __m512i hv = _mm512_set1_epi16(static_cast<short>(h));
    lt = le = 0;
    for (unsigned i = 0; i < m; i += 32) {
      __mmask32 live = m - i >= 32 ? ~__mmask32{0} : (__mmask32{1} << (m - i)) - 1;
      __m512i v = _mm512_maskz_loadu_epi16(live, a + i);
      lt += static_cast<unsigned>(_mm_popcnt_u32(_mm512_mask_cmplt_epu16_mask(live, v, hv)));
      le += static_cast<unsigned>(_mm_popcnt_u32(_mm512_mask_cmple_epu16_mask(live, v, hv)));
    }
  }

 private:
  static __m512i splat(S x) noexcept {
    if constexpr (sizeof(S) == 4)
      return _mm512_set1_epi32(x);
    else
      return _mm512_set1_epi64(x);
  }
  // Lanes of a (those set in `live`) that are <= kv / < kv, as a bit mask.
  static unsigned le_mask(unsigned live, const S* a, __m512i kv) noexcept {
    if constexpr (sizeof(S) == 4)
      return _mm512_mask_cmple_epi32_mask(static_cast<__mmask16>(live),
                                          _mm512_maskz_loadu_epi32(static_cast<__mmask16>(live), a),
                                          kv);
    else
      return _mm512_mask_cmple_epi64_mask(static_cast<__mmask8>(live),
                                          _mm512_maskz_loadu_epi64(static_cast<__mmask8>(live), a),
                                          kv);
  }
  static unsigned lt_mask(const S* a, __m512i kv) noexcept {
    if constexpr (sizeof(S) == 4)
      return _mm512_cmplt_epi32_mask(_mm512_loadu_si512(a), kv);
    else
      return _mm512_cmplt_epi64_mask(_mm512_loadu_si512(a), kv);
  }
};

}  // namespace simdex::btree_detail
