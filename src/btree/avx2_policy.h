// AVX2 node search: signed compares of 8 x 32-bit or 4 x 64-bit keys, movemask, popcount.
// Include only from avx2.cc (needs -mavx2).
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace simdex::btree_detail {

template <class S>
struct avx2_policy;

// Bits i < m set, m <= 64.
inline std::uint64_t avx2_low_bits(unsigned m) noexcept {
  return m >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << m) - 1;
}

template <>
struct avx2_policy<std::int32_t> {
  using key = std::int32_t;
  static constexpr const char* kName = "avx2";
  static unsigned count_le(const key* a, unsigned m, key x) noexcept {
    __m256i kv = _mm256_set1_epi32(x);
    std::uint64_t gt = 0;
    for (unsigned i = 0; i < m; i += 8) {
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
      unsigned bits =
          static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(v, kv))));
      gt |= std::uint64_t{bits} << i;
    }
    return static_cast<unsigned>(_mm_popcnt_u64(~gt & avx2_low_bits(m)));
  }
  static unsigned count_lt16(const key* a, key x) noexcept {
    __m256i kv = _mm256_set1_epi32(x);
    __m256i lo = _mm256_cmpgt_epi32(kv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)));
    __m256i hi =
        _mm256_cmpgt_epi32(kv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 8)));
    unsigned bits = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(lo))) |
                    static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(hi))) << 8;
    return static_cast<unsigned>(_mm_popcnt_u32(bits));
  }
  static unsigned eq_mask16(const key* a, key x) noexcept {
    __m256i kv = _mm256_set1_epi32(x);
    __m256i lo = _mm256_cmpeq_epi32(kv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a)));
    __m256i hi =
        _mm256_cmpeq_epi32(kv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 8)));
    return static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(lo))) |
           static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(hi))) << 8;
  }
};

template <>
struct avx2_policy<std::int64_t> {
  using key = std::int64_t;
  static constexpr const char* kName = "avx2";
  static unsigned count_le(const key* a, unsigned m, key x) noexcept {
    __m256i kv = _mm256_set1_epi64x(x);
    std::uint64_t gt = 0;
    for (unsigned i = 0; i < m; i += 4) {
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
      unsigned bits =
          static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(v, kv))));
      gt |= std::uint64_t{bits} << i;
    }
    return static_cast<unsigned>(_mm_popcnt_u64(~gt & avx2_low_bits(m)));
  }
  // Bit i set where pred(x, a[i]) holds, over one 16-key block.
  template <class Pred>
  static unsigned mask16(const key* a, key x, Pred pred) noexcept {
    __m256i kv = _mm256_set1_epi64x(x);
    unsigned bits = 0;
    for (unsigned i = 0; i < 16; i += 4) {
      __m256i r = pred(kv, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
      bits |= static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(r))) << i;
    }
    return bits;
  }
  static unsigned count_lt16(const key* a, key x) noexcept {
    return static_cast<unsigned>(_mm_popcnt_u32(
        mask16(a, x, [](__m256i k, __m256i v) { return _mm256_cmpgt_epi64(k, v); })));
  }
  static unsigned eq_mask16(const key* a, key x) noexcept {
    return mask16(a, x, [](__m256i k, __m256i v) { return _mm256_cmpeq_epi64(k, v); });
  }
};

}  // namespace simdex::btree_detail
