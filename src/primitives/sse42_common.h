// 128-bit building blocks shared by the SSE4.2, AVX2 and AVX-512 files. Everything here has
// internal linkage, so each level's file gets its own copy compiled with its own flags and
// no inline definition crosses levels through the linker.
#pragma once

#include <immintrin.h>

#include <cstring>

#include "kernels.h"

namespace simdex::primitives {
namespace {

// Bit i set when p[i] < key (unsigned), via the sign flip: x ^ 0x80 orders like signed.
inline unsigned lt_mask16(const std::uint8_t* p, __m128i key_flipped) {
  __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)),
                            _mm_set1_epi8(static_cast<char>(0x80)));
  return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmplt_epi8(x, key_flipped)));
}

inline __m128i flip_key(std::uint8_t key) { return _mm_set1_epi8(static_cast<char>(key ^ 0x80)); }

// Bit i set for i < n (< 16) when p[i] < key. Reading 16 bytes is safe when they stay in
// p's page (pages are mapped whole); the bytes past n are masked off. ASan would still see
// the read past the object, so it is told not to check this one load.
__attribute__((no_sanitize("address"))) inline unsigned lt_mask16_short(const std::uint8_t* p,
                                                                        std::size_t n,
                                                                        __m128i key_flipped) {
  unsigned live = (1u << n) - 1;
  if ((reinterpret_cast<std::uintptr_t>(p) & 4095) <= 4096 - 16) {
    __m128i x = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)),
                              _mm_set1_epi8(static_cast<char>(0x80)));  // the load ASan must skip
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_cmplt_epi8(x, key_flipped))) & live;
  }
  alignas(16) std::uint8_t buf[16] = {};
  std::memcpy(buf, p, n);
  return lt_mask16(buf, key_flipped) & live;
}

// The counting loops of the 16- and 32-byte levels; lt(i) is the less-than mask of the W bytes
// at data + i.
template <unsigned W, class Lt>
std::size_t count_padded(std::size_t n, Lt lt) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; i += W) {
    unsigned m = lt(i);
    if (n - i < W) m &= (1u << (n - i)) - 1;
    count += static_cast<std::size_t>(__builtin_popcount(m));
  }
  return count;
}

// Whole W-byte steps from i, then the last W bytes reloaded with the lanes already counted
// dropped. Needs n >= W; sets i = n.
template <unsigned W, class Lt>
std::size_t count_unpadded(std::size_t& i, std::size_t n, Lt lt) {
  std::size_t count = 0;
  for (; i + W <= n; i += W) count += static_cast<std::size_t>(__builtin_popcount(lt(i)));
  if (i < n) count += static_cast<std::size_t>(__builtin_popcount(lt(n - W) >> (W - (n - i))));
  i = n;
  return count;
}

// Counts bytes < key in [i, n) with 16-byte steps.
inline std::size_t lower_bound_tail16(const std::uint8_t* data, std::size_t i, std::size_t n,
                                      std::uint8_t key) {
  __m128i kf = flip_key(key);
  if (n >= 16)
    return count_unpadded<16>(i, n, [&](std::size_t j) { return lt_mask16(data + j, kf); });
  if (i == n) return 0;  // an empty array may sit at nullptr: no load at all
  return static_cast<std::size_t>(__builtin_popcount(lt_mask16_short(data + i, n - i, kf)));
}

inline void remap_tail(const std::uint8_t* in, std::uint8_t* out, std::size_t i, std::size_t n,
                       const std::uint8_t* lut) {
  for (; i < n; ++i) out[i] = static_cast<std::uint8_t>((lut[in[i] >> 4] << 4) | (in[i] & 15));
}

// The 16-entry table moved to the high nibble: pshufb then yields the new high nibble.
inline __m128i remap_lut16(const std::uint8_t* lut) {
  __m128i t =
      _mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lut)), _mm_set1_epi8(0x0f));
  return _mm_slli_epi16(t, 4);  // values <= 0x0f, so no bit crosses into the next byte
}

inline __m128i remap16(__m128i x, __m128i lut_hi) {
  __m128i lo_mask = _mm_set1_epi8(0x0f);
  __m128i hi = _mm_and_si128(_mm_srli_epi16(x, 4), lo_mask);
  return _mm_or_si128(_mm_shuffle_epi8(lut_hi, hi), _mm_and_si128(x, lo_mask));
}

inline __m128i load128(const std::uint16_t* p) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
}

// The SSE4.2 level's table entries (see table_of); the AVX2 and AVX-512 levels derive from it
// and keep what they do not redefine.
struct sse42_level {
  static std::size_t lower_bound(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
    return lower_bound_tail16(data, 0, n, key);
  }

  static std::size_t lower_bound_padded(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
    __m128i kf = flip_key(key);
    return count_padded<16>(n, [&](std::size_t j) { return lt_mask16(data + j, kf); });
  }

  // Also the tail of the wider levels' remap.
  static void remap_branches(const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                             const std::uint8_t* lut) {
    __m128i lut_hi = remap_lut16(lut);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
      __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), remap16(x, lut_hi));
    }
    remap_tail(in, out, i, n, lut);
  }

  // Exclusive prefix sum of (counts[i] != 0) by four shifted adds (log2 16 steps).
  static void rank_table(const std::uint8_t* counts, std::uint8_t* ranks) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(counts));
    __m128i ones = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_setzero_si128()), _mm_set1_epi8(1));
    __m128i sum = _mm_add_epi8(ones, _mm_slli_si128(ones, 1));
    sum = _mm_add_epi8(sum, _mm_slli_si128(sum, 2));
    sum = _mm_add_epi8(sum, _mm_slli_si128(sum, 4));
    sum = _mm_add_epi8(sum, _mm_slli_si128(sum, 8));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(ranks), _mm_sub_epi8(sum, ones));
  }

  static std::size_t find_u32x16(const std::uint32_t* slots, std::size_t size,
                                 std::uint32_t needle) {
    __m128i n = _mm_set1_epi32(static_cast<int>(needle));
    auto eq = [&](int k) {
      return _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(slots + 4 * k)), n);
    };
    __m128i b = _mm_packs_epi16(_mm_packs_epi32(eq(0), eq(1)), _mm_packs_epi32(eq(2), eq(3)));
    unsigned mask = static_cast<unsigned>(_mm_movemask_epi8(b)) | (1u << size);
    return static_cast<std::size_t>(__builtin_ctz(mask));
  }

  // First index of the minimum: PHMINPOSUW finds the value, equality masks find the first lane.
  template <std::size_t N>
  static std::size_t find_min(const std::uint16_t* v) {
    __m128i m = load128(v);
    for (std::size_t k = 8; k < N; k += 8) m = _mm_min_epu16(m, load128(v + k));
    __m128i minv = _mm_set1_epi16(static_cast<short>(_mm_cvtsi128_si32(_mm_minpos_epu16(m))));
    std::uint64_t mask = 0;  // every lane's equality, then one tzcnt: no data-dependent branch
    for (std::size_t k = 0; k < N; k += 16) {
      __m128i eq = _mm_packs_epi16(_mm_cmpeq_epi16(load128(v + k), minv),
                                   _mm_cmpeq_epi16(load128(v + k + 8), minv));
      mask |= static_cast<std::uint64_t>(static_cast<unsigned>(_mm_movemask_epi8(eq))) << k;
    }
    return static_cast<std::size_t>(__builtin_ctzll(mask));
  }
};

}  // namespace
}  // namespace simdex::primitives
