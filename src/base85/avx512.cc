// AVX-512BW kernels for CPUs without VBMI: the AVX2 method at 512 bits, 16 groups (64 bytes
// <-> 80 chars) per step. vpshufb works within 128-bit lanes, so each lane holds 4 groups
// (16 bytes <-> 20 chars, layouts in lane_layout.h); vpermt2d moves the dword-aligned 20-char
// lane slices to and from the flat 80-char text. Alphabet lookups as in avx2.cc (run offsets
// on encode, a masked vpshufb tree on decode, one add for Ascii85); the arithmetic is in
// avx512_common.h.
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
  alignas(
      64) std::uint32_t out_lo[16];  // text dwords 0..15 from lanes of A (chars 0..15) / B (4..19)
  alignas(64) std::uint32_t out_hi[16];  // text dwords 16..19
};

constexpr std::uint32_t text_dword_source(int d) {  // index into (A, B) for text dword d
  int k = d / 5, j = d % 5;
  return static_cast<std::uint32_t>(j < 4 ? 4 * k + j : 16 + 4 * k + 3);
}

constexpr dword_tables make_dword_tables() {
  dword_tables t{};
  for (int d = 0; d < 16; ++d) {
    t.lane_l[d] = static_cast<std::uint32_t>(5 * (d / 4) + d % 4);
    t.lane_m[d] = static_cast<std::uint32_t>(5 * (d / 4) + d % 4 + 1);
    t.out_lo[d] = text_dword_source(d);
    t.out_hi[d] = d < 4 ? text_dword_source(16 + d) : 0;
  }
  return t;
}
constexpr dword_tables kDw = make_dword_tables();

// Runs of consecutive chars (b85, z85): compares pick the run's offset, two vpshufb rows add
// the fix for the 23 punctuation digits (zero below 62, whose index is negative).
struct enc_runs {
  __m512i off0, step1, step2, fix0, fix1;
  explicit enc_runs(const alphabet& a)
      : off0(_mm512_set1_epi8(static_cast<char>(a.run_offset[0]))),
        step1(_mm512_set1_epi8(static_cast<char>(a.run_offset[1] - a.run_offset[0]))),
        step2(_mm512_set1_epi8(static_cast<char>(a.run_offset[2] - a.run_offset[1]))),
        fix0(lanes(a.punct_fix_rows[0])),
        fix1(lanes(a.punct_fix_rows[1])) {}
  __m512i operator()(__m512i d) const {
    __m512i c = _mm512_add_epi8(d, off0);
    c = _mm512_mask_add_epi8(c, _mm512_cmpgt_epi8_mask(d, _mm512_set1_epi8(9)), c, step1);
    c = _mm512_mask_add_epi8(c, _mm512_cmpgt_epi8_mask(d, _mm512_set1_epi8(35)), c, step2);
    __m512i idx = _mm512_sub_epi8(d, _mm512_set1_epi8(62));
    __m512i fix =
        _mm512_xor_si512(_mm512_shuffle_epi8(fix0, idx),
                         _mm512_shuffle_epi8(fix1, _mm512_sub_epi8(idx, _mm512_set1_epi8(16))));
    return _mm512_add_epi8(c, fix);
  }
};
struct enc_add {
  __m512i first;
  explicit enc_add(const alphabet& a) : first(_mm512_set1_epi8(static_cast<char>(a.enc[0]))) {}
  __m512i operator()(__m512i d) const { return _mm512_add_epi8(d, first); }
};
// Char -> digit; bit 7 of `flags` marks invalid chars (see avx2.cc).
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

template <class ToChar>
std::size_t encode_impl(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces) {
  const ToChar to_char(a);
  const __m512i ax = lanes(kLayout.enc_a_x), ad = lanes(kLayout.enc_a_d);
  const __m512i bx = lanes(kLayout.enc_b_x), bd = lanes(kLayout.enc_b_d);
  const __m512i out_lo = load512(kDw.out_lo), out_hi = load512(kDw.out_hi);
  std::size_t i = 0;
  for (; i + 16 <= groups; i += 16) {
    const std::uint8_t* p = in + 4 * i;
    __m512i raw = load512(p), x, d0;
    if (stop_words(raw, stop_zero, stop_spaces))
      return i + encode_groups_scalar(p, 16, out + 5 * i, a, stop_zero, stop_spaces);
    digits16(raw, x, d0);
    __m512i xc = to_char(x), dc = to_char(d0);
    __m512i ca = _mm512_or_si512(_mm512_shuffle_epi8(xc, ax), _mm512_shuffle_epi8(dc, ad));
    __m512i cb = _mm512_or_si512(_mm512_shuffle_epi8(xc, bx), _mm512_shuffle_epi8(dc, bd));
    char* o = out + 5 * i;
    _mm512_storeu_si512(o, _mm512_permutex2var_epi32(ca, out_lo, cb));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 64),
                     _mm512_castsi512_si128(_mm512_permutex2var_epi32(ca, out_hi, cb)));
  }
  return i + encode_groups_scalar(in + 4 * i, groups - i, out + 5 * i, a, stop_zero, stop_spaces);
}

std::size_t encode_avx512(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                          bool stop_zero, bool stop_spaces) {
  if (a.contiguous) return encode_impl<enc_add>(in, groups, out, a, stop_zero, stop_spaces);
  return encode_impl<enc_runs>(in, groups, out, a, stop_zero, stop_spaces);  // b85, z85
}

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
    if (_mm512_movepi8_mask(flags) || over) {  // the scalar loop stops at the first bad group
      std::size_t k = decode_groups_scalar(p, 16, out + 4 * i, a);
      if (k < 16) return i + k;
      continue;
    }
    _mm512_storeu_si512(out + 4 * i, words);
  }
  return i + decode_groups_scalar(in + 5 * i, groups - i, out + 4 * i, a);
}

std::size_t decode_avx512(const char* in, std::size_t groups, std::uint8_t* out,
                          const alphabet& a) {
  return a.contiguous ? decode_impl<dec_add>(in, groups, out, a)
                      : decode_impl<dec_tree>(in, groups, out, a);
}

}  // namespace

const kernels kAvx512Kernels = {
    .encode = encode_avx512, .decode = decode_avx512, .compact = compact_avx2};

}  // namespace simdex::base85
