// SSE4.2 level: one block as two xmm halves. SSE has no per-lane variable shift, so 1 << s is
// built as the float 2^s (exponent field s + 127) converted back to an integer; for s = 31 the
// conversion overflows to 0x80000000, which is exactly 1 << 31.
#include <immintrin.h>

#include "generic.h"
#include "kernels.h"

namespace simdex::bloom {
namespace {

inline __m128i pow2(__m128i s) {
  const __m128i bits = _mm_add_epi32(_mm_slli_epi32(s, 23), _mm_set1_epi32(0x3f800000));
  return _mm_cvttps_epi32(_mm_castsi128_ps(bits));
}

inline __m128i salt128(int half) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(kSalt) + half);
}

struct sse42_policy {
  struct mask_t {
    __m128i lo, hi;
  };
  static mask_t mask(std::uint32_t key) {
    const __m128i k = _mm_set1_epi32(static_cast<int>(key));
    return {pow2(_mm_srli_epi32(_mm_mullo_epi32(k, salt128(0)), 27)),
            pow2(_mm_srli_epi32(_mm_mullo_epi32(k, salt128(1)), 27))};
  }
  // (mask & ~block) == 0 over both halves: one ptest on the OR of the two and-nots.
  static bool test(const std::uint32_t* block, const mask_t& m) {
    const auto* p = reinterpret_cast<const __m128i*>(block);
    const __m128i missing = _mm_or_si128(_mm_andnot_si128(_mm_loadu_si128(p), m.lo),
                                         _mm_andnot_si128(_mm_loadu_si128(p + 1), m.hi));
    return _mm_testz_si128(missing, missing) != 0;
  }
  static void set(std::uint32_t* block, const mask_t& m) {
    auto* p = reinterpret_cast<__m128i*>(block);
    _mm_storeu_si128(p, _mm_or_si128(_mm_loadu_si128(p), m.lo));
    _mm_storeu_si128(p + 1, _mm_or_si128(_mm_loadu_si128(p + 1), m.hi));
  }
};

}  // namespace

const kernels kSse42Kernels = make_kernels<sse42_policy>();

}  // namespace simdex::bloom
