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
  static void store(void* p, vec v) { _mm_storeu_si128(static_cast<vec*>(p), v); }
  static vec lane(vec v, int) { return v; }
  static void store_lane(char* p, vec v, int) { store(p, v); }
  static vec load_lanes(const char* p, int off) { return load(p + off); }
  static vec rows(const std::uint8_t* row16) { return load(row16); }
  static vec zero() { return _mm_setzero_si128(); }
  static vec set1_8(int c) { return _mm_set1_epi8(static_cast<char>(c)); }
  static vec set1_16(int c) { return _mm_set1_epi16(static_cast<short>(c)); }
  static vec set1_32(int c) { return _mm_set1_epi32(c); }
  static vec set1_64(std::uint64_t c) { return _mm_set1_epi64x(static_cast<long long>(c)); }

  static vec and_(vec a, vec b) { return _mm_and_si128(a, b); }
  static vec or_(vec a, vec b) { return _mm_or_si128(a, b); }
  static vec xor_(vec a, vec b) { return _mm_xor_si128(a, b); }
  static vec add8(vec a, vec b) { return _mm_add_epi8(a, b); }
  static vec sub8(vec a, vec b) { return _mm_sub_epi8(a, b); }
  static vec adds_u8(vec a, vec b) { return _mm_adds_epu8(a, b); }
  static vec cmpgt8(vec a, vec b) { return _mm_cmpgt_epi8(a, b); }
  static vec cmpeq8(vec a, vec b) { return _mm_cmpeq_epi8(a, b); }
  static vec blendv8(vec a, vec b, vec m) { return _mm_blendv_epi8(a, b, m); }
  static vec shuffle8(vec t, vec i) { return _mm_shuffle_epi8(t, i); }
  static vec add16(vec a, vec b) { return _mm_add_epi16(a, b); }
  static vec mullo16(vec a, vec b) { return _mm_mullo_epi16(a, b); }
  static vec mulhi_u16(vec a, vec b) { return _mm_mulhi_epu16(a, b); }
  static vec slli16(vec a, int n) { return _mm_slli_epi16(a, n); }
  static vec srli16(vec a, int n) { return _mm_srli_epi16(a, n); }
  static vec add32(vec a, vec b) { return _mm_add_epi32(a, b); }
  static vec sub32(vec a, vec b) { return _mm_sub_epi32(a, b); }
  static vec mullo32(vec a, vec b) { return _mm_mullo_epi32(a, b); }
  static vec min_u32(vec a, vec b) { return _mm_min_epu32(a, b); }
  static vec cmpgt32(vec a, vec b) { return _mm_cmpgt_epi32(a, b); }
  static vec cmpeq32(vec a, vec b) { return _mm_cmpeq_epi32(a, b); }
  static vec slli32(vec a, int n) { return _mm_slli_epi32(a, n); }
  static vec srli32(vec a, int n) { return _mm_srli_epi32(a, n); }
  static vec srli64(vec a, int n) { return _mm_srli_epi64(a, n); }
  static vec mul_u32(vec a, vec b) { return _mm_mul_epu32(a, b); }
  static vec maddubs(vec a, vec b) { return _mm_maddubs_epi16(a, b); }
  static vec madd(vec a, vec b) { return _mm_madd_epi16(a, b); }
  static vec packus32(vec a, vec b) { return _mm_packus_epi32(a, b); }
  static vec packus16(vec a, vec b) { return _mm_packus_epi16(a, b); }
  template <int imm>
  static vec shuffle32(vec a) {
    return _mm_shuffle_epi32(a, imm);
  }
  static vec odd_dwords(vec even, vec odd) { return _mm_blend_epi16(even, odd, 0xcc); }
  static vec blend_last(vec x, vec d) {
    static_assert(word_at(1, 0, 3) == 3);
    return _mm_blend_epi16(x, d, 0xc0);
  }
  static vec div7225_small(vec q) {
    return _mm_cvttps_epi32(_mm_add_ps(_mm_mul_ps(_mm_cvtepi32_ps(q), _mm_set1_ps(kInv7225)),
                                       _mm_set1_ps(kInv7225 / 2)));
  }
  static std::uint32_t movemask(vec v) { return static_cast<std::uint32_t>(_mm_movemask_epi8(v)); }
  static bool all_zero(vec v) { return _mm_testz_si128(v, v); }
};

}  // namespace

const kernels kSse42Kernels = {.encode = encode_lanes<sse42_policy>,
                               .decode = decode_lanes<sse42_policy>,
                               .compact = compact_lanes<sse42_policy>};

}  // namespace simdex::base85
