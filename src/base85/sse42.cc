// SSE4.2 kernels: the lane algorithms of generic.h with one 128-bit lane, 4 groups (16 bytes
// <-> 20 chars) per step. No FMA below AVX2: d0 = q2 / 85^2 takes a float multiply and an
// add, exact as well (see simd_constants.h).
#include "generic.h"

namespace simdex::base85 {
namespace {

struct sse42_policy {
  using vec = __m128i;
  static constexpr int kLanes = 1;
  static constexpr std::uint32_t kFullMask = 0xffff;

  static vec load(const void* p) { return _mm_loadu_si128(static_cast<const vec*>(p)); }
  static vec load_aligned(const void* p) { return _mm_load_si128(static_cast<const vec*>(p)); }
  static void store(void* p, vec v) { _mm_storeu_si128(static_cast<vec*>(p), v); }
  static vec lane(vec v, int) { return v; }
  static void store_lane(char* p, vec v, int) { store(p, v); }
  static vec load_lanes(const char* p, int off) { return load(p + off); }
  static vec rows(const std::uint8_t* row16) { return load(row16); }
  SIMDEX_BASE85_LANE_OPS(_mm, 128)
  static vec odd_dwords(vec even, vec odd) { return _mm_blend_epi16(even, odd, 0xcc); }
  static vec blend_last(vec x, vec d) {
    static_assert(word_at(1, 0, 3) == 3);
    return _mm_blend_epi16(x, d, 0xc0);
  }
  static vec div7225_small(vec q) {
    return _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(q), _mm_set1_ps(kInv7225)),
                                       _mm_set1_ps(kInv7225 / 2)));
  }
};

}  // namespace

const kernels kSse42Kernels = {.encode = encode_lanes<sse42_policy>,
                               .decode = decode_lanes<sse42_policy>,
                               .compact = compact_lanes<sse42_policy>,
                               .copy_lines = copy_lines_by<move16>};

}  // namespace simdex::base85
