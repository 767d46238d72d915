// AVX2 kernels: the lane algorithms of generic.h with two 128-bit lanes, 8 groups (32 bytes
// <-> 40 chars) per step. The AVX-512 levels take some of them (see kernels.h).
#include "generic.h"

namespace simdex::base85 {
namespace {

struct avx2_policy {
  using vec = __m256i;
  static constexpr int kLanes = 2;
  static constexpr std::uint32_t kFullMask = ~0u;

  static vec load(const void* p) { return _mm256_loadu_si256(static_cast<const vec*>(p)); }
  static void store(void* p, vec v) { _mm256_storeu_si256(static_cast<vec*>(p), v); }
  static __m128i lane(vec v, int l) {
    return l ? _mm256_extracti128_si256(v, 1) : _mm256_castsi256_si128(v);
  }
  static void store_lane(char* p, vec v, int l) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), lane(v, l));
  }
  // Lane l gets p[off + 20l, +16): dword blends of overlapping loads keep this off the
  // shuffle ports (unlike vinserti128).
  static vec load_lanes(const char* p, int off) {
    return _mm256_blend_epi32(load(p + off), load(p + off + 4), 0xf0);
  }
  static vec rows(const std::uint8_t* row16) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row16)));
  }
  static vec zero() { return _mm256_setzero_si256(); }
  static vec set1_8(int c) { return _mm256_set1_epi8(static_cast<char>(c)); }
  static vec set1_16(int c) { return _mm256_set1_epi16(static_cast<short>(c)); }
  static vec set1_32(int c) { return _mm256_set1_epi32(c); }
  static vec set1_64(std::uint64_t c) { return _mm256_set1_epi64x(static_cast<long long>(c)); }

  static vec and_(vec a, vec b) { return _mm256_and_si256(a, b); }
  static vec or_(vec a, vec b) { return _mm256_or_si256(a, b); }
  static vec xor_(vec a, vec b) { return _mm256_xor_si256(a, b); }
  static vec add8(vec a, vec b) { return _mm256_add_epi8(a, b); }
  static vec sub8(vec a, vec b) { return _mm256_sub_epi8(a, b); }
  static vec adds_u8(vec a, vec b) { return _mm256_adds_epu8(a, b); }
  static vec cmpgt8(vec a, vec b) { return _mm256_cmpgt_epi8(a, b); }
  static vec cmpeq8(vec a, vec b) { return _mm256_cmpeq_epi8(a, b); }
  static vec blendv8(vec a, vec b, vec m) { return _mm256_blendv_epi8(a, b, m); }
  static vec shuffle8(vec t, vec i) { return _mm256_shuffle_epi8(t, i); }
  static vec add16(vec a, vec b) { return _mm256_add_epi16(a, b); }
  static vec mullo16(vec a, vec b) { return _mm256_mullo_epi16(a, b); }
  static vec mulhi_u16(vec a, vec b) { return _mm256_mulhi_epu16(a, b); }
  static vec slli16(vec a, int n) { return _mm256_slli_epi16(a, n); }
  static vec srli16(vec a, int n) { return _mm256_srli_epi16(a, n); }
  static vec add32(vec a, vec b) { return _mm256_add_epi32(a, b); }
  static vec sub32(vec a, vec b) { return _mm256_sub_epi32(a, b); }
  static vec mullo32(vec a, vec b) { return _mm256_mullo_epi32(a, b); }
  static vec min_u32(vec a, vec b) { return _mm256_min_epu32(a, b); }
  static vec cmpgt32(vec a, vec b) { return _mm256_cmpgt_epi32(a, b); }
  static vec cmpeq32(vec a, vec b) { return _mm256_cmpeq_epi32(a, b); }
  static vec slli32(vec a, int n) { return _mm256_slli_epi32(a, n); }
  static vec srli32(vec a, int n) { return _mm256_srli_epi32(a, n); }
  static vec srli64(vec a, int n) { return _mm256_srli_epi64(a, n); }
  static vec mul_u32(vec a, vec b) { return _mm256_mul_epu32(a, b); }
  static vec maddubs(vec a, vec b) { return _mm256_maddubs_epi16(a, b); }
  static vec madd(vec a, vec b) { return _mm256_madd_epi16(a, b); }
  static vec packus32(vec a, vec b) { return _mm256_packus_epi32(a, b); }
  static vec packus16(vec a, vec b) { return _mm256_packus_epi16(a, b); }
  template <int imm>
  static vec shuffle32(vec a) {
    return _mm256_shuffle_epi32(a, imm);
  }
  static vec odd_dwords(vec even, vec odd) { return _mm256_blend_epi32(even, odd, 0xaa); }
  static vec blend_last(vec x, vec d) {
    return _mm256_blend_epi32(x, d, 1 << word_at(2, 0, 3) | 1 << (4 + word_at(2, 1, 3)));
  }
  static vec div7225_small(vec q) {
    return _mm256_cvttps_epi32(_mm256_fmadd_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(kInv7225),
                                               _mm256_set1_ps(kInv7225 / 2)));
  }
  static std::uint32_t movemask(vec v) {
    return static_cast<std::uint32_t>(_mm256_movemask_epi8(v));
  }
  static bool all_zero(vec v) { return _mm256_testz_si256(v, v); }
};

}  // namespace

std::size_t encode_avx2(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces) {
  return encode_lanes<avx2_policy>(in, groups, out, a, stop_zero, stop_spaces);
}

std::size_t compact_avx2(const char* in, std::size_t n, char* out, std::size_t cap,
                         const std::uint8_t* cls, std::size_t& consumed) {
  return compact_lanes<avx2_policy>(in, n, out, cap, cls, consumed);
}

const kernels kAvx2Kernels = {
    .encode = encode_avx2, .decode = decode_lanes<avx2_policy>, .compact = compact_avx2};

}  // namespace simdex::base85
