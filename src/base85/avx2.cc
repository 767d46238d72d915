// AVX2 kernels. vpshufb does not cross 128-bit lanes, so a step of 8 groups (32 bytes <-> 40
// chars) works as 4 groups per lane. The main loops take 4 steps at once so that the fifth
// digit of 32 groups (d0 on encode, d4 on decode) shares one alphabet lookup: 5 lookups per
// 32 groups instead of 8. Digit -> char: an offset per run of consecutive chars plus two
// vpshufb rows for the 23 punctuation digits; char -> digit: one vpshufb per row of 16 chars
// merged by a blend tree on bits 4-6 of the char; Ascii85's contiguous alphabet is one add.
// Decode arithmetic as in avx512_common.h; encode has its own digit split and output layout
// (split_digits, emit8), cheaper in multiplies, shifts and shuffles. Compaction (dropping line
// breaks before decoding) left-packs 8-byte chunks with vpshufb masks from a 256-entry table.
#include <immintrin.h>

#include "kernels.h"
#include "lane_layout.h"
#include "simd_constants.h"

namespace simdex::base85 {
namespace {

inline __m256i load(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }
inline void store16(char* p, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(p), v); }

// A vector the optimizer cannot see through. The encode loop needs more constants than there
// are ymm registers, and gcc rebuilds a literal splat inside it (mov, vmovd, vpbroadcast) where
// reloading a spilled opaque one is a single load.
inline __m256i opaque(__m256i v) {
  __asm__("" : "+x"(v));
  return v;
}

// Digit -> char (operator() of the enc_* types) and char -> digit with a flag vector whose
// bit 7 marks an invalid char (the dec_* types).
// Runs of consecutive chars (b85, z85): two blends on bit 7 of d + (128 - first digit of the
// run) pick the run's offset, and two vpshufb rows add the fix for the 23 punctuation digits
// (zero below 62, whose index is negative).
struct enc_runs {
  __m256i off0, off1, off2, fix0, fix1;
  __m256i from10 = opaque(_mm256_set1_epi8(128 - 10)), from36 = opaque(_mm256_set1_epi8(128 - 36));
  __m256i minus62 = opaque(_mm256_set1_epi8(-62)), minus78 = opaque(_mm256_set1_epi8(-78));
  explicit enc_runs(const alphabet& a)
      : off0(_mm256_set1_epi8(static_cast<char>(a.run_offset[0]))),
        off1(_mm256_set1_epi8(static_cast<char>(a.run_offset[1]))),
        off2(_mm256_set1_epi8(static_cast<char>(a.run_offset[2]))),
        fix0(_mm256_broadcastsi128_si256(
            _mm_load_si128(reinterpret_cast<const __m128i*>(a.punct_fix_rows[0])))),
        fix1(_mm256_broadcastsi128_si256(
            _mm_load_si128(reinterpret_cast<const __m128i*>(a.punct_fix_rows[1])))) {}
  __m256i operator()(__m256i d) const {
    __m256i off = _mm256_blendv_epi8(off0, off1, _mm256_add_epi8(d, from10));
    off = _mm256_blendv_epi8(off, off2, _mm256_add_epi8(d, from36));
    __m256i fix = _mm256_xor_si256(_mm256_shuffle_epi8(fix0, _mm256_add_epi8(d, minus62)),
                                   _mm256_shuffle_epi8(fix1, _mm256_add_epi8(d, minus78)));
    return _mm256_add_epi8(_mm256_add_epi8(d, off), fix);
  }
};

struct enc_add {
  __m256i first;
  explicit enc_add(const alphabet& a) : first(_mm256_set1_epi8(static_cast<char>(a.enc[0]))) {}
  __m256i operator()(__m256i d) const { return _mm256_add_epi8(d, first); }
};

// 128-entry lookup as a blend tree: one vpshufb per row of 16 chars (rows 2..7, chars
// 32..127), then bits 4, 5 and 6 of the char pick the row. Chars below 32 or from 128 up are
// flagged by the compare.
struct dec_tree {
  __m256i row[6];
  explicit dec_tree(const alphabet& a) {
    for (int r = 0; r < 6; ++r)
      row[r] = _mm256_broadcastsi128_si256(
          _mm_load_si128(reinterpret_cast<const __m128i*>(a.dec + 32 + 16 * r)));
  }
  __m256i operator()(__m256i c, __m256i& flags) const {
    __m256i bit4 = _mm256_slli_epi16(c, 3), bit5 = _mm256_slli_epi16(c, 2),
            bit6 = _mm256_slli_epi16(c, 1);
    __m256i r23 =
        _mm256_blendv_epi8(_mm256_shuffle_epi8(row[0], c), _mm256_shuffle_epi8(row[1], c), bit4);
    __m256i r45 =
        _mm256_blendv_epi8(_mm256_shuffle_epi8(row[2], c), _mm256_shuffle_epi8(row[3], c), bit4);
    __m256i r67 =
        _mm256_blendv_epi8(_mm256_shuffle_epi8(row[4], c), _mm256_shuffle_epi8(row[5], c), bit4);
    __m256i d = _mm256_blendv_epi8(r23, _mm256_blendv_epi8(r45, r67, bit5), bit6);
    flags = _mm256_or_si256(flags, _mm256_or_si256(d, _mm256_cmpgt_epi8(_mm256_set1_epi8(32), c)));
    return d;
  }
};

struct dec_add {
  __m256i first;
  explicit dec_add(const alphabet& a) : first(_mm256_set1_epi8(static_cast<char>(a.enc[0]))) {}
  __m256i operator()(__m256i c, __m256i& flags) const {
    __m256i d = _mm256_sub_epi8(c, first);
    flags = _mm256_or_si256(flags, _mm256_adds_epu8(d, _mm256_set1_epi8(128 - 85)));  // d >= 85
    return d;
  }
};

inline __m256i bswap32(__m256i v) {
  const __m256i s = _mm256_setr_epi8(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1,
                                     0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);
  return _mm256_shuffle_epi8(v, s);
}

// --- encode ----------------------------------------------------------------------------------

// Layout of 8 groups (two lanes of 4): the word of group g sits in dword kWordAt[g] of its lane,
// so that lane 0's last group (chars 16..19) lands in dword 2 and lane 1's (chars 36..39) in
// dword 3: one 32-byte store of the X chars at char 8 then puts both in place (see emit8).
constexpr int kWordAt[8] = {0, 1, 3, 2, 0, 1, 2, 3};
// The dwords of those last groups, one bit per dword of the vector (vpblendd mask).
constexpr int kLastWords = 1 << kWordAt[3] | 1 << (4 + kWordAt[7]);

struct enc_tables {
  alignas(32) std::uint8_t load[32];  // bswap32 of the input words into kWordAt order
  alignas(32) std::uint8_t head[32];  // chars 0..15 of a lane from X (d1 d2 d3 d4) with the
                                      // lane's 4 d0 chars in its last group's dword
};

constexpr enc_tables make_enc_tables() {
  enc_tables t{};
  for (int lane = 0; lane < 2; ++lane)
    for (int j = 0; j < 16; ++j) {
      int g = j / 5, k = j % 5, w = kWordAt[4 * lane + g], last = kWordAt[4 * lane + 3];
      t.load[16 * lane + 4 * kWordAt[4 * lane + j / 4] + 3 - j % 4] = static_cast<std::uint8_t>(j);
      t.head[16 * lane + j] = static_cast<std::uint8_t>(k == 0 ? 4 * last + w : 4 * w + k - 1);
    }
  return t;
}
constexpr enc_tables kEnc = make_enc_tables();

// Digits of 8 groups in kWordAt order: x lanes hold [d1 d2 d3 d4], d0 lanes hold d0 (< 83).
// q2 = n / 85^2 by 64-bit multiply-high (even and odd dwords apart), d0 = q2 / 85^2 by a float
// FMA. The remainders mid = q2 - 85^2 d0 (d1 d2) and lo = n - 85^2 q2 (d3 d4) are both < 85^2,
// so one wrapping expression gives them as the 16-bit halves mid | lo << 16, which divide by
// 85 together; and q | (w - 85 q) << 8 for each half w is (w << 8) + q (1 - 85 * 256) mod 2^16.
struct split_digits {
  __m256i div7225 = opaque(_mm256_set1_epi64x(kDiv7225));
  __m256i lo_up = opaque(_mm256_set1_epi32(1 - 7225 * 65536)),
          k7225 = opaque(_mm256_set1_epi32(7225));
  __m256i div85 = opaque(_mm256_set1_epi16(static_cast<short>(kDiv85)));
  __m256i join = opaque(_mm256_set1_epi16(1 - 85 * 256));
  void operator()(__m256i raw, __m256i& x, __m256i& d0) const {
    __m256i n = _mm256_shuffle_epi8(raw, load(kEnc.load));
    __m256i even = _mm256_srli_epi64(_mm256_mul_epu32(n, div7225), kDiv7225Shift);
    __m256i odd = _mm256_srli_epi64(_mm256_mul_epu32(_mm256_shuffle_epi32(n, 0xf5), div7225),
                                    kDiv7225Shift - 32);
    __m256i q2 = _mm256_blend_epi32(even, odd, 0xaa);
    d0 = _mm256_cvttps_epi32(_mm256_fmadd_ps(_mm256_cvtepi32_ps(q2), _mm256_set1_ps(kInv7225),
                                             _mm256_set1_ps(kInv7225 / 2)));
    __m256i pair =
        _mm256_sub_epi32(_mm256_add_epi32(_mm256_slli_epi32(n, 16), _mm256_mullo_epi32(q2, lo_up)),
                         _mm256_mullo_epi32(d0, k7225));
    __m256i q = _mm256_srli_epi16(_mm256_mulhi_epu16(pair, div85), 4);
    x = _mm256_add_epi16(_mm256_slli_epi16(pair, 8), _mm256_mullo_epi16(q, join));
  }
};

// d0 of 4 steps in one vector, step s in dword s of each lane (byte w: the group in dword w;
// values < 83: no saturation), so that they share one alphabet lookup.
inline __m256i pack4(__m256i d0, __m256i d1, __m256i d2, __m256i d3) {
  return _mm256_packus_epi16(_mm256_packus_epi32(d0, d1), _mm256_packus_epi32(d2, d3));
}

// Writes the 40 chars of 8 groups from their X chars and D0 chars (packed, step s). The X
// chars go out as they are at char 8, which leaves chars 16..19 and 36..39 final. Their dwords
// then take the step's d0 chars (vpshufd and vpblendd, which issue on more ports than
// vpshufb), and one vpshufb gives chars 0..15 and 20..35 of the lanes, overwriting the rest.
template <int s>
inline void emit8(__m256i xc, __m256i dc, char* o) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + 8), xc);
  __m256i m = _mm256_blend_epi32(xc, _mm256_shuffle_epi32(dc, s * 0x55), kLastWords);
  __m256i head = _mm256_shuffle_epi8(m, load(kEnc.head));
  store16(o, _mm256_castsi256_si128(head));
  store16(o + 20, _mm256_extracti128_si256(head, 1));
}

inline bool has_stop(__m256i raw, bool stop_zero, bool stop_spaces) {
  __m256i hit = _mm256_setzero_si256();
  if (stop_zero) hit = _mm256_cmpeq_epi32(raw, hit);
  if (stop_spaces)
    hit = _mm256_or_si256(hit, _mm256_cmpeq_epi32(raw, _mm256_set1_epi32(0x20202020)));
  return !_mm256_testz_si256(hit, hit);
}

template <class ToChar>
std::size_t encode_impl(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces) {
  const ToChar to_char(a);
  const split_digits digits8;
  const bool stops = stop_zero || stop_spaces;
  std::size_t i = 0;
  for (; i + 32 <= groups; i += 32) {
    const std::uint8_t* p = in + 4 * i;
    __m256i raw[4], x[4], d[4];
    bool stop = false;
    for (int j = 0; j < 4; ++j) {
      raw[j] = load(p + 32 * j);
      if (stops) stop |= has_stop(raw[j], stop_zero, stop_spaces);
    }
    if (stop) return i + encode_groups_scalar(p, 32, out + 5 * i, a, stop_zero, stop_spaces);
    for (int j = 0; j < 4; ++j) digits8(raw[j], x[j], d[j]);
    __m256i dc = to_char(pack4(d[0], d[1], d[2], d[3]));
    char* o = out + 5 * i;
    emit8<0>(to_char(x[0]), dc, o);
    emit8<1>(to_char(x[1]), dc, o + 40);
    emit8<2>(to_char(x[2]), dc, o + 80);
    emit8<3>(to_char(x[3]), dc, o + 120);
  }
  for (; i + 8 <= groups; i += 8) {
    __m256i raw = load(in + 4 * i), x, d;
    if (stops && has_stop(raw, stop_zero, stop_spaces))
      return i + encode_groups_scalar(in + 4 * i, 8, out + 5 * i, a, stop_zero, stop_spaces);
    digits8(raw, x, d);
    emit8<0>(to_char(x), to_char(pack4(d, d, d, d)), out + 5 * i);
  }
  return i + encode_groups_scalar(in + 4 * i, groups - i, out + 5 * i, a, stop_zero, stop_spaces);
}

std::size_t encode_avx2(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces) {
  if (a.contiguous) return encode_impl<enc_add>(in, groups, out, a, stop_zero, stop_spaces);
  return encode_impl<enc_runs>(in, groups, out, a, stop_zero, stop_spaces);  // b85, z85
}

// --- decode ----------------------------------------------------------------------------------

// Raw chars of 8 groups: prefix lanes hold chars [5g..5g+3], last lanes char 5g+4 in byte 0.
// L = chars 0..15 | 20..35 and M = chars 4..19 | 24..39 come from three overlapping loads and
// dword blends, which keeps them off the shuffle ports (unlike vinserti128).
inline void split8(const char* p, __m256i& prefix, __m256i& last) {
  __m256i at4 = load(p + 4);
  __m256i l = _mm256_blend_epi32(load(p), at4, 0xf0),
          m = _mm256_blend_epi32(at4, load(p + 8), 0xf0);
  prefix = _mm256_or_si256(_mm256_shuffle_epi8(l, load(kLayout.dec_prefix_l)),
                           _mm256_shuffle_epi8(m, load(kLayout.dec_prefix_m)));
  last = _mm256_shuffle_epi8(m, load(kLayout.dec_last));
}

// Big-endian words from prefix digits and last digits; overflowing lanes set in `flags`.
inline __m256i combine8(__m256i prefix, __m256i last, __m256i& flags) {
  __m256i x = _mm256_madd_epi16(_mm256_maddubs_epi16(prefix, _mm256_set1_epi16(85 | 1 << 8)),
                                _mm256_set1_epi32(7225 | 1 << 16));
  // x <= 52200624, so the sum compares correctly as signed.
  __m256i carry = _mm256_min_epu32(last, _mm256_set1_epi32(1));
  flags =
      _mm256_or_si256(flags, _mm256_cmpgt_epi32(_mm256_add_epi32(x, carry),
                                                _mm256_set1_epi32(static_cast<int>(kMaxPrefix))));
  return bswap32(_mm256_add_epi32(_mm256_mullo_epi32(x, _mm256_set1_epi32(85)), last));
}

inline bool any_flag(__m256i flags) { return _mm256_movemask_epi8(flags) != 0; }

template <class ToDigit>
std::size_t decode_impl(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a) {
  const ToDigit to_digit(a);
  const __m256i byte0 = _mm256_set1_epi32(0xff);
  std::size_t i = 0;
  for (; i + 32 <= groups; i += 32) {
    const char* p = in + 5 * i;
    __m256i prefix[4], last[4], words[4], flags = _mm256_setzero_si256();
    for (int j = 0; j < 4; ++j) split8(p + 40 * j, prefix[j], last[j]);
    __m256i lasts = to_digit(
        _mm256_or_si256(
            _mm256_or_si256(last[0], _mm256_slli_epi32(last[1], 8)),
            _mm256_or_si256(_mm256_slli_epi32(last[2], 16), _mm256_slli_epi32(last[3], 24))),
        flags);
    words[0] = combine8(to_digit(prefix[0], flags), _mm256_and_si256(lasts, byte0), flags);
    words[1] = combine8(to_digit(prefix[1], flags),
                        _mm256_and_si256(_mm256_srli_epi32(lasts, 8), byte0), flags);
    words[2] = combine8(to_digit(prefix[2], flags),
                        _mm256_and_si256(_mm256_srli_epi32(lasts, 16), byte0), flags);
    words[3] = combine8(to_digit(prefix[3], flags), _mm256_srli_epi32(lasts, 24), flags);
    if (any_flag(flags)) {  // the scalar loop stops at the first bad group
      std::size_t k = decode_groups_scalar(p, 32, out + 4 * i, a);
      if (k < 32) return i + k;
      continue;
    }
    for (int j = 0; j < 4; ++j)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4 * i + 32 * j), words[j]);
  }
  for (; i + 8 <= groups; i += 8) {
    const char* p = in + 5 * i;
    __m256i prefix, last, flags = _mm256_setzero_si256(), last_flags = _mm256_setzero_si256();
    split8(p, prefix, last);
    __m256i d = to_digit(prefix, flags);
    __m256i l = _mm256_and_si256(to_digit(last, last_flags), byte0);
    flags = _mm256_or_si256(flags, _mm256_and_si256(last_flags, byte0));  // only byte 0 is a char
    __m256i w = combine8(d, l, flags);
    if (any_flag(flags)) {
      std::size_t k = decode_groups_scalar(p, 8, out + 4 * i, a);
      if (k < 8) return i + k;
      continue;
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4 * i), w);
  }
  return i + decode_groups_scalar(in + 5 * i, groups - i, out + 4 * i, a);
}

std::size_t decode_avx2(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a) {
  return a.contiguous ? decode_impl<dec_add>(in, groups, out, a)
                      : decode_impl<dec_tree>(in, groups, out, a);
}

// --- compact ---------------------------------------------------------------------------------

// kPack[m]: vpshufb indices that move the bytes selected by the 8-bit mask m to the front.
struct pack_table {
  std::uint8_t idx[256][8];
};
constexpr pack_table make_pack_table() {
  pack_table t{};
  for (int m = 0; m < 256; ++m) {
    int k = 0;
    for (int b = 0; b < 8; ++b)
      if (m >> b & 1) t.idx[m][k++] = static_cast<std::uint8_t>(b);
    for (; k < 8; ++k) t.idx[m][k] = 0x80;
  }
  return t;
}
constexpr pack_table kPack = make_pack_table();

// Set membership of bytes < 128 by two vpshufb: row bits by low nibble & bit of the row.
struct nibble_set {
  __m256i lo_rows;
  explicit nibble_set(const std::uint8_t* cls, std::uint8_t which) {
    alignas(16) std::uint8_t rows[16] = {};
    for (int c = 0; c < 128; ++c)
      if (cls[c] == which) rows[c & 15] = static_cast<std::uint8_t>(rows[c & 15] | 1 << (c >> 4));
    lo_rows = _mm256_broadcastsi128_si256(_mm_load_si128(reinterpret_cast<const __m128i*>(rows)));
  }
  std::uint32_t mask(__m256i lo, __m256i row_bit) const {
    __m256i hit = _mm256_and_si256(_mm256_shuffle_epi8(lo_rows, lo), row_bit);
    return ~static_cast<std::uint32_t>(
        _mm256_movemask_epi8(_mm256_cmpeq_epi8(hit, _mm256_setzero_si256())));
  }
};

// Left-packs the bytes of `half` selected by the 16-bit mask `m` to out; returns the count.
inline std::size_t pack16(__m128i half, unsigned m, char* out) {
  unsigned lo = m & 0xff, hi = m >> 8;
  __m128i idx =
      _mm_set_epi64x(static_cast<long long>(__builtin_bit_cast(std::uint64_t, kPack.idx[hi]) +
                                            0x0808080808080808ull),
                     static_cast<long long>(__builtin_bit_cast(std::uint64_t, kPack.idx[lo])));
  __m128i packed = _mm_shuffle_epi8(half, idx);  // index 0x88 keeps bit 7: still selects 0
  std::size_t k = static_cast<std::size_t>(__builtin_popcount(lo));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), packed);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out + k), _mm_unpackhi_epi64(packed, packed));
  return k + static_cast<std::size_t>(__builtin_popcount(hi));
}

}  // namespace

// 32 chars per step while no char stops and the cap is not reached; the scalar loop finishes.
std::size_t compact_avx2(const char* in, std::size_t n, char* out, std::size_t cap,
                         const std::uint8_t* cls, std::size_t& consumed) {
  const nibble_set keep_set(cls, 0), skip_set(cls, 1);
  // Row bit of each char: 1 << (c >> 4) for c < 128, 0 for c >= 128 (never kept nor skipped).
  const __m256i row_bits = _mm256_setr_epi8(1, 2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0, 1,
                                            2, 4, 8, 16, 32, 64, -128, 0, 0, 0, 0, 0, 0, 0, 0);
  const __m256i nibble = _mm256_set1_epi8(15);
  std::size_t m = 0, i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i c = load(in + i);
    __m256i lo = _mm256_and_si256(c, nibble);
    __m256i row_bit =
        _mm256_shuffle_epi8(row_bits, _mm256_and_si256(_mm256_srli_epi16(c, 4), nibble));
    std::uint32_t keep = keep_set.mask(lo, row_bit), skip = skip_set.mask(lo, row_bit);
    if ((keep | skip) != ~0u || m + static_cast<std::size_t>(__builtin_popcount(keep)) >= cap)
      break;
    m += pack16(_mm256_castsi256_si128(c), keep & 0xffff, out + m);
    m += pack16(_mm256_extracti128_si256(c, 1), keep >> 16, out + m);
  }
  std::size_t rest = 0;
  m += compact_scalar(in + i, n - i, out + m, cap - m, cls, rest);
  consumed = i + rest;
  return m;
}

const kernels kAvx2Kernels = {
    .encode = encode_avx2, .decode = decode_avx2, .compact = compact_avx2};

}  // namespace simdex::base85
