// AVX-512BW decode for CPUs without VBMI: the lane method of generic.h at 512 bits, 16 groups
// (80 chars -> 64 bytes) per step. vpshufb works within 128-bit lanes, so each lane holds 4
// groups (20 chars -> 16 bytes, layout in lane_layout.h); vpermt2d moves the dword-aligned
// 20-char slices of the flat text into the lanes. The alphabet lookup is a masked vpshufb tree
// (one subtraction for Ascii85); the arithmetic is in avx512_common.h.
#include "avx512_common.h"
#include "lane_layout.h"

namespace simdex::base85 {
namespace {

inline __m512i lanes(const std::uint8_t* row16) {  // maskz: gcc 12 warns on the unmasked form
  return _mm512_maskz_broadcast_i32x4(0xffff,
                                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(row16)));
}

struct dword_tables {
  alignas(64) std::uint32_t lane_l[16];  // lane k <- text dwords 5k..5k+3 (chars 20k..20k+15)
  alignas(64) std::uint32_t lane_m[16];  // lane k <- text dwords 5k+1..5k+4 (chars 20k+4..20k+19)
};

constexpr dword_tables make_dword_tables() {
  dword_tables t{};
  for (int d = 0; d < 16; ++d) {
    t.lane_l[d] = static_cast<std::uint32_t>(5 * (d / 4) + d % 4);
    t.lane_m[d] = static_cast<std::uint32_t>(5 * (d / 4) + d % 4 + 1);
  }
  return t;
}
constexpr dword_tables kDw = make_dword_tables();

// Char -> digit; bit 7 of `flags` marks invalid chars (see generic.h).
// 128-entry lookup as a blend tree: one vpshufb per row of 16 chars (rows 2..7, chars
// 32..127), merged under masks from bits 4, 5 and 6 of the char. Chars below 32 or from 128
// up are flagged by the compare.
struct dec_tree {
  __m512i row[6];
  explicit dec_tree(const alphabet& a) {
    for (int r = 0; r < 6; ++r) row[r] = lanes(a.dec + 32 + 16 * r);
  }
  __m512i operator()(__m512i c, __m512i& flags) const {
    __mmask64 b4 = _mm512_test_epi8_mask(c, _mm512_set1_epi8(0x10));
    __mmask64 b5 = _mm512_test_epi8_mask(c, _mm512_set1_epi8(0x20));
    __mmask64 b6 = _mm512_test_epi8_mask(c, _mm512_set1_epi8(0x40));
    __m512i r23 = _mm512_mask_shuffle_epi8(_mm512_shuffle_epi8(row[0], c), b4, row[1], c);
    __m512i r45 = _mm512_mask_shuffle_epi8(_mm512_shuffle_epi8(row[2], c), b4, row[3], c);
    __m512i r67 = _mm512_mask_shuffle_epi8(_mm512_shuffle_epi8(row[4], c), b4, row[5], c);
    __m512i d = _mm512_mask_blend_epi8(b6, r23, _mm512_mask_blend_epi8(b5, r45, r67));
    __m512i low = _mm512_movm_epi8(_mm512_cmpgt_epi8_mask(_mm512_set1_epi8(32), c));
    flags = _mm512_or_si512(flags, _mm512_or_si512(d, low));
    return d;
  }
};
struct dec_add {
  __m512i first;
  explicit dec_add(const alphabet& a) : first(_mm512_set1_epi8(static_cast<char>(a.enc[0]))) {}
  __m512i operator()(__m512i c, __m512i& flags) const {
    __m512i d = _mm512_sub_epi8(c, first);
    flags = _mm512_or_si512(flags, _mm512_adds_epu8(d, _mm512_set1_epi8(128 - 85)));
    return d;
  }
};

template <class ToDigit>
std::size_t decode_impl(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a) {
  const ToDigit to_digit(a);
  const __m512i pl = lanes(kLayout.dec_prefix_l), pm = lanes(kLayout.dec_prefix_m);
  const __m512i pz = lanes(kLayout.dec_last);
  const __m512i lane_l = load512(kDw.lane_l), lane_m = load512(kDw.lane_m);
  const __m512i byte0 = _mm512_set1_epi32(0xff);
  std::size_t i = 0;
  for (; i + 16 <= groups; i += 16) {
    const char* p = in + 5 * i;
    __m512i c0 = load512(p);
    __m512i c1 = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 64)));
    __m512i l = _mm512_permutex2var_epi32(c0, lane_l, c1),
            m = _mm512_permutex2var_epi32(c0, lane_m, c1);
    __m512i flags = _mm512_setzero_si512(), last_flags = _mm512_setzero_si512();
    __m512i prefix =
        to_digit(_mm512_or_si512(_mm512_shuffle_epi8(l, pl), _mm512_shuffle_epi8(m, pm)), flags);
    __m512i last = _mm512_and_si512(to_digit(_mm512_shuffle_epi8(m, pz), last_flags), byte0);
    flags = _mm512_or_si512(flags, _mm512_and_si512(last_flags, byte0));  // only byte 0 is a char
    __mmask16 over;
    __m512i words = combine16(prefix, last, over);
    if (_mm512_movepi8_mask(flags) || over) {  // AVX2 steps find the first bad group
      std::size_t k = decode_avx2(p, 16, out + 4 * i, a);
      if (k < 16) return i + k;
      continue;
    }
    _mm512_storeu_si512(out + 4 * i, words);
  }
  return i == groups ? i : i + decode_avx2(in + 5 * i, groups - i, out + 4 * i, a);
}

std::size_t decode_avx512(const char* in, std::size_t groups, std::uint8_t* out,
                          const alphabet& a) {
  return a.contiguous ? decode_impl<dec_add>(in, groups, out, a)
                      : decode_impl<dec_tree>(in, groups, out, a);
}

}  // namespace

// Encode is AVX2's: a 512-bit encode on this method measured slower than the AVX2 one
// (docs/base85.md). Below VBMI2 there is no byte compress, so compaction is AVX2's too.
const kernels kAvx512Kernels = {.encode = encode_avx2,
                                .decode = decode_avx512,
                                .compact = compact_avx2,
                                .copy_lines = copy_lines_avx2};

}  // namespace simdex::base85
