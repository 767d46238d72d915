// AVX2 level: 32-byte compares and remap; the 16-byte rank table stays on SSE.
#include "sse42_common.h"

namespace simdex::primitives {
namespace {

inline unsigned lt_mask32(const std::uint8_t* p, __m256i key_flipped) {
  __m256i x = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)),
                               _mm256_set1_epi8(static_cast<char>(0x80)));
  return static_cast<unsigned>(_mm256_movemask_epi8(_mm256_cmpgt_epi8(key_flipped, x)));
}

// rank_table and find_min stay on the SSE4.2 level's 16-byte code.
struct avx2_level : sse42_level {
  static std::size_t lower_bound(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
    if (n < 32) return lower_bound_tail16(data, 0, n, key);
    __m256i kf = _mm256_set1_epi8(static_cast<char>(key ^ 0x80));
    std::size_t i = 0;
    return count_unpadded<32>(i, n, [&](std::size_t j) { return lt_mask32(data + j, kf); });
  }

  static std::size_t lower_bound_padded(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
    __m256i kf = _mm256_set1_epi8(static_cast<char>(key ^ 0x80));
    return count_padded<32>(n, [&](std::size_t j) { return lt_mask32(data + j, kf); });
  }

  static void remap_branches(const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                             const std::uint8_t* lut) {
    __m256i lut_hi = _mm256_broadcastsi128_si256(remap_lut16(lut));  // same table in both lanes
    __m256i lo_mask = _mm256_set1_epi8(0x0f);
    std::size_t i = 0;
    for (; i + 32 <= n; i += 32) {
      __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i));
      __m256i hi = _mm256_and_si256(_mm256_srli_epi16(x, 4), lo_mask);
      __m256i y = _mm256_or_si256(_mm256_shuffle_epi8(lut_hi, hi), _mm256_and_si256(x, lo_mask));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), y);
    }
    sse42_level::remap_branches(in + i, out + i, n - i, lut);
  }

  static std::size_t find_u32x16(const std::uint32_t* slots, std::size_t size,
                                 std::uint32_t needle) {
    __m256i n = _mm256_set1_epi32(static_cast<int>(needle));
    auto eq = [&](int k) {
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(slots + 8 * k));
      return static_cast<unsigned>(
          _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(v, n))));
    };
    unsigned mask = eq(0) | (eq(1) << 8) | (1u << size);
    return static_cast<std::size_t>(_tzcnt_u32(mask));
  }
};

}  // namespace

const kernels kAvx2Kernels = table_of<avx2_level>();

}  // namespace simdex::primitives
