// AVX-512BW level: unsigned byte compares straight into mask registers, masked loads and
// stores for tails (fault-suppressing, so the unpadded form never reads past the end).
#include "sse42_common.h"

namespace simdex::primitives {
namespace {

inline __mmask64 tail_mask64(std::size_t rem) {
  return rem >= 64 ? ~__mmask64{0} : _bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(rem));
}

// rank_table stays on the SSE4.2 level's 16-byte code.
struct avx512_level : sse42_level {
  static std::size_t lower_bound(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
    __m512i k = _mm512_set1_epi8(static_cast<char>(key));
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; i += 64) {
      __mmask64 live = tail_mask64(n - i);
      __m512i x = _mm512_maskz_loadu_epi8(live, data + i);
      count += static_cast<std::size_t>(_mm_popcnt_u64(_mm512_mask_cmplt_epu8_mask(live, x, k)));
    }
    return count;
  }

  static std::size_t lower_bound_padded(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
    __m512i k = _mm512_set1_epi8(static_cast<char>(key));
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; i += 64) {
      __m512i x = _mm512_loadu_si512(data + i);
      count += static_cast<std::size_t>(
          _mm_popcnt_u64(_mm512_mask_cmplt_epu8_mask(tail_mask64(n - i), x, k)));
    }
    return count;
  }

  // Full 64-byte steps; the tail goes through 16-byte steps, because a masked store followed
  // by a read of the same bytes stalls store forwarding for short arrays.
  static void remap_branches(const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                             const std::uint8_t* lut) {
    __m512i lut_hi = _mm512_maskz_broadcast_i32x4(
        0xffff, remap_lut16(lut));  // maskz: gcc 12 warns on the unmasked form
    __m512i lo_mask = _mm512_set1_epi8(0x0f);
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {
      __m512i x = _mm512_loadu_si512(in + i);
      __m512i hi = _mm512_and_si512(_mm512_srli_epi16(x, 4), lo_mask);
      __m512i y = _mm512_or_si512(_mm512_shuffle_epi8(lut_hi, hi), _mm512_and_si512(x, lo_mask));
      _mm512_storeu_si512(out + i, y);
    }
    sse42_level::remap_branches(in + i, out + i, n - i, lut);
  }

  static std::size_t find_u32x16(const std::uint32_t* slots, std::size_t size,
                                 std::uint32_t needle) {
    __mmask16 eq = _mm512_cmpeq_epi32_mask(_mm512_loadu_si512(slots),
                                           _mm512_set1_epi32(static_cast<int>(needle)));
    return static_cast<std::size_t>(_tzcnt_u32(static_cast<unsigned>(eq) | (1u << size)));
  }

  template <std::size_t N>
  static std::size_t find_min(const std::uint16_t* v) {
    __m512i m = _mm512_loadu_si512(v);
    if constexpr (N == 64) m = _mm512_min_epu16(m, _mm512_loadu_si512(v + 32));
    __m256i m256 = _mm256_min_epu16(_mm512_castsi512_si256(m), _mm512_extracti64x4_epi64(m, 1));
    __m128i m128 = _mm_min_epu16(_mm256_castsi256_si128(m256), _mm256_extracti128_si256(m256, 1));
    __m512i minv = _mm512_set1_epi16(static_cast<short>(_mm_cvtsi128_si32(_mm_minpos_epu16(m128))));
    std::uint64_t mask = _mm512_cmpeq_epu16_mask(_mm512_loadu_si512(v), minv);
    if constexpr (N == 64)
      mask |= static_cast<std::uint64_t>(_mm512_cmpeq_epu16_mask(_mm512_loadu_si512(v + 32), minv))
              << 32;
    return static_cast<std::size_t>(_tzcnt_u64(mask));
  }
};

}  // namespace

const kernels kAvx512Kernels = table_of<avx512_level>();

}  // namespace simdex::primitives
