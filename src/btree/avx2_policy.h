// AVX2 node search: signed compares of 8 x 32-bit or 4 x 64-bit keys, movemask, popcount; the
// leaf block heads with 16 x 16-bit unsigned min/max compares. Include only from avx2.cc.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace simdex::btree_detail {

template <class S>
struct avx2_policy {
  using key = S;
  static constexpr const char* kName = "avx2";
  static constexpr unsigned kLanes = 32 / sizeof(S);

  // Whole vectors are read even past m: every caller's array is followed by more of its node.
  static unsigned count_le(const S* a, unsigned m, S x) noexcept {
    __m256i kv = splat(x);
    std::uint64_t gt = 0;
    for (unsigned i = 0; i < m; i += kLanes) gt |= std::uint64_t{greater(load(a + i), kv)} << i;
    std::uint64_t live = m >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << m) - 1;
    return static_cast<unsigned>(_mm_popcnt_u64(~gt & live));
  }
  static unsigned count_lt16(const S* a, S x) noexcept {
    __m256i kv = splat(x);
    unsigned bits = 0;
    for (unsigned i = 0; i < 16; i += kLanes) bits |= greater(kv, load(a + i)) << i;
    return static_cast<unsigned>(_mm_popcnt_u32(bits));
  }
  static void count_heads(const std::uint16_t* a, unsigned m, std::uint16_t h, unsigned& lt,
                          unsigned& le) noexcept {
    __m256i hv = _mm256_set1_epi16(static_cast<short>(h));
    lt = le = 0;
    for (unsigned i = 0; i < m; i += 16) {
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
      // Two mask bits per lane: a <= h where min(a, h) == a, a >= h where max(a, h) == a.
      auto bits = [&](__m256i eq) { return static_cast<std::uint32_t>(_mm256_movemask_epi8(eq)); };
      std::uint32_t live = m - i >= 16 ? ~std::uint32_t{0} : (std::uint32_t{1} << 2 * (m - i)) - 1;
      std::uint32_t le_bits = bits(_mm256_cmpeq_epi16(_mm256_min_epu16(v, hv), v)) & live;
      std::uint32_t ge_bits = bits(_mm256_cmpeq_epi16(_mm256_max_epu16(v, hv), v)) & live;
      le += static_cast<unsigned>(_mm_popcnt_u32(le_bits)) / 2;
      lt += static_cast<unsigned>(_mm_popcnt_u32(~ge_bits & live)) / 2;
    }
  }

 private:
  static __m256i load(const S* a) noexcept {
    return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
  }
  static __m256i splat(S x) noexcept {
    if constexpr (sizeof(S) == 4)
      return _mm256_set1_epi32(x);
    else
      return _mm256_set1_epi64x(x);
  }
  // One bit per lane: x[i] > y[i] (signed).
  static unsigned greater(__m256i x, __m256i y) noexcept {
    if constexpr (sizeof(S) == 4)
      return static_cast<unsigned>(
          _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(x, y))));
    else
      return static_cast<unsigned>(
          _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(x, y))));
  }
};

}  // namespace simdex::btree_detail
