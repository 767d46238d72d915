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
  SIMDEX_BASE85_LANE_OPS(_mm256, 256)
  static vec odd_dwords(vec even, vec odd) { return _mm256_blend_epi32(even, odd, 0xaa); }
  static vec blend_last(vec x, vec d) {
    return _mm256_blend_epi32(x, d, 1 << word_at(2, 0, 3) | 1 << (4 + word_at(2, 1, 3)));
  }
  static vec div7225_small(vec q) {
    return _mm256_cvttps_epi32(_mm256_fmadd_ps(_mm256_cvtepi32_ps(q), _mm256_set1_ps(kInv7225),
                                               _mm256_set1_ps(kInv7225 / 2)));
  }
};

}  // namespace

std::size_t encode_avx2(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces) {
  return encode_lanes<avx2_policy>(in, groups, out, a, stop_zero, stop_spaces);
}

std::size_t decode_avx2(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a) {
  return decode_lanes<avx2_policy>(in, groups, out, a);
}

std::size_t compact_avx2(const char* in, std::size_t n, char* out, std::size_t cap,
                         const std::uint8_t* cls, std::size_t& consumed) {
  return compact_lanes<avx2_policy>(in, n, out, cap, cls, consumed);
}

namespace {
// 32-byte moves for wrapped lines: a memcpy of 32 bytes compiles to two 16-byte moves here.
struct move32 {
  static constexpr std::size_t kBytes = 32;
  static void copy(char* dst, const char* src) { avx2_policy::store(dst, avx2_policy::load(src)); }
};
}  // namespace
bool copy_lines_avx2(const char* in, std::size_t n, char* out, std::size_t cap,
                     const std::uint8_t* cls, const line_layout& l, line_cursor& c) {
  return copy_lines_by<move32>(in, n, out, cap, cls, l, c);
}

const kernels kAvx2Kernels = {.encode = encode_avx2,
                              .decode = decode_avx2,
                              .compact = compact_avx2,
                              .copy_lines = copy_lines_avx2};

}  // namespace simdex::base85
