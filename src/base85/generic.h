// The base85 kernels of the levels whose vectors are 128-bit lanes (SSE4.2: one lane, AVX2:
// two), written once over a policy P that wraps the intrinsics (sse42.cc, avx2.cc). vpshufb
// works within a lane, so each lane holds 4 groups (16 bytes <-> 20 chars), and a step of
// G = 4 * P::kLanes groups is one vector. Main loops take 4 steps at once so that the fifth
// digit of 4 steps (d0 on encode, d4 on decode) shares one alphabet lookup.
//
// Digit -> char: an offset per run of consecutive chars plus two vpshufb rows for the 23
// punctuation digits; char -> digit: one vpshufb per row of 16 chars, merged by a blend tree
// on bits 4-6 of the char (AVX2) or XORed together (SSE4.2, see dec_xor); Ascii85's contiguous
// alphabet is one add either way. Compaction (dropping line breaks before decoding) shifts the
// block past at most two skipped chars with two blends, or left-packs 8-byte chunks with vpshufb
// masks from a 256-entry table.
//
// Included only by per-level files: everything has internal linkage or is a template over the
// level's policy, so each level's object file has its own copy.
#pragma once

#include <immintrin.h>

#include <bit>
#include <type_traits>

#include "kernels.h"
#include "lane_layout.h"
#include "simd_constants.h"

namespace simdex::base85 {
namespace {

// The policy members that are one intrinsic of the same name at every width: PFX is the
// intrinsic prefix (_mm, _mm256), BITS the vector width. A policy adds load/store, its lane
// moves and the few operations whose form differs (see sse42.cc, avx2.cc).
#define SIMDEX_BASE85_LANE_OPS(PFX, BITS)                                                      \
  static vec zero() { return PFX##_setzero_si##BITS(); }                                       \
  static vec set1_8(int c) { return PFX##_set1_epi8(static_cast<char>(c)); }                   \
  static vec set1_16(int c) { return PFX##_set1_epi16(static_cast<short>(c)); }                \
  static vec set1_32(int c) { return PFX##_set1_epi32(c); }                                    \
  static vec set1_64(std::uint64_t c) { return PFX##_set1_epi64x(static_cast<long long>(c)); } \
  static vec and_(vec a, vec b) { return PFX##_and_si##BITS(a, b); }                           \
  static vec or_(vec a, vec b) { return PFX##_or_si##BITS(a, b); }                             \
  static vec xor_(vec a, vec b) { return PFX##_xor_si##BITS(a, b); }                           \
  static vec add8(vec a, vec b) { return PFX##_add_epi8(a, b); }                               \
  static vec sub8(vec a, vec b) { return PFX##_sub_epi8(a, b); }                               \
  static vec subs8(vec a, vec b) { return PFX##_subs_epi8(a, b); }                             \
  static vec adds_u8(vec a, vec b) { return PFX##_adds_epu8(a, b); }                           \
  static vec cmpgt8(vec a, vec b) { return PFX##_cmpgt_epi8(a, b); }                           \
  static vec cmpeq8(vec a, vec b) { return PFX##_cmpeq_epi8(a, b); }                           \
  static vec blendv8(vec a, vec b, vec m) { return PFX##_blendv_epi8(a, b, m); }               \
  static vec shuffle8(vec t, vec i) { return PFX##_shuffle_epi8(t, i); }                       \
  static vec add16(vec a, vec b) { return PFX##_add_epi16(a, b); }                             \
  static vec mullo16(vec a, vec b) { return PFX##_mullo_epi16(a, b); }                         \
  static vec mulhi_u16(vec a, vec b) { return PFX##_mulhi_epu16(a, b); }                       \
  static vec slli16(vec a, int n) { return PFX##_slli_epi16(a, n); }                           \
  static vec srli16(vec a, int n) { return PFX##_srli_epi16(a, n); }                           \
  static vec add32(vec a, vec b) { return PFX##_add_epi32(a, b); }                             \
  static vec sub32(vec a, vec b) { return PFX##_sub_epi32(a, b); }                             \
  static vec mullo32(vec a, vec b) { return PFX##_mullo_epi32(a, b); }                         \
  static vec min_u32(vec a, vec b) { return PFX##_min_epu32(a, b); }                           \
  static vec cmpgt32(vec a, vec b) { return PFX##_cmpgt_epi32(a, b); }                         \
  static vec cmpeq32(vec a, vec b) { return PFX##_cmpeq_epi32(a, b); }                         \
  static vec slli32(vec a, int n) { return PFX##_slli_epi32(a, n); }                           \
  static vec srli32(vec a, int n) { return PFX##_srli_epi32(a, n); }                           \
  static vec srli64(vec a, int n) { return PFX##_srli_epi64(a, n); }                           \
  static vec mul_u32(vec a, vec b) { return PFX##_mul_epu32(a, b); }                           \
  static vec maddubs(vec a, vec b) { return PFX##_maddubs_epi16(a, b); }                       \
  static vec madd(vec a, vec b) { return PFX##_madd_epi16(a, b); }                             \
  static vec packus32(vec a, vec b) { return PFX##_packus_epi32(a, b); }                       \
  static vec packus16(vec a, vec b) { return PFX##_packus_epi16(a, b); }                       \
  template <int imm>                                                                           \
  static vec shuffle32(vec a) {                                                                \
    return PFX##_shuffle_epi32(a, imm);                                                        \
  }                                                                                            \
  static std::uint32_t movemask(vec v) {                                                       \
    return static_cast<std::uint32_t>(PFX##_movemask_epi8(v));                                 \
  }                                                                                            \
  static bool all_zero(vec v) { return PFX##_testz_si##BITS(v, v); }

// A vector the optimizer cannot see through. The encode loop needs more constants than there
// are registers, and gcc rebuilds a literal splat inside it (mov, vmovd, vpbroadcast) where
// reloading a spilled opaque one is a single load.
template <class V>
inline V opaque(V v) {
  __asm__("" : "+x"(v));
  return v;
}

// vpshufb row reversing the bytes of each dword (big-endian words).
alignas(16) constexpr std::uint8_t kBswap32Row[16] = {3,  2,  1, 0, 7,  6,  5,  4,
                                                      11, 10, 9, 8, 15, 14, 13, 12};

// The decode constants as 16-byte rows, broadcast to every lane.
struct dec_consts {
  alignas(16) std::uint32_t byte0[4] = {0xff, 0xff, 0xff, 0xff};
  alignas(16) std::uint16_t pair85[8] = {85 | 1 << 8, 85 | 1 << 8, 85 | 1 << 8, 85 | 1 << 8,
                                         85 | 1 << 8, 85 | 1 << 8, 85 | 1 << 8, 85 | 1 << 8};
  alignas(16) std::uint32_t pair7225[4] = {7225 | 1 << 16, 7225 | 1 << 16, 7225 | 1 << 16,
                                           7225 | 1 << 16};
  alignas(16) std::uint32_t one[4] = {1, 1, 1, 1};
  alignas(16) std::uint32_t max_prefix[4] = {kMaxPrefix, kMaxPrefix, kMaxPrefix, kMaxPrefix};
  alignas(16) std::uint32_t k85[4] = {85, 85, 85, 85};
  alignas(16) std::uint8_t c32[16] = {32, 32, 32, 32, 32, 32, 32, 32,
                                      32, 32, 32, 32, 32, 32, 32, 32};
  alignas(16) std::uint8_t c16[16] = {16, 16, 16, 16, 16, 16, 16, 16,
                                      16, 16, 16, 16, 16, 16, 16, 16};
  // One lane: vpshufb rows that gather the last char of group g of step j into byte j of
  // dword g (from M, chars 4..19), and take it back out to byte 0 (a shift and a mask with
  // more lanes, where shuffles are the scarcer port).
  alignas(16) std::uint8_t last_to[4][16] = {};
  alignas(16) std::uint8_t last_from[4][16] = {};
  constexpr dec_consts() {
    for (int j = 0; j < 4; ++j)
      for (int b = 0; b < 16; ++b) {
        const int g = b / 4, at = b % 4;
        last_to[j][b] = at == j ? static_cast<std::uint8_t>(5 * g) : kZero;
        last_from[j][b] = at == 0 ? static_cast<std::uint8_t>(4 * g + j) : kZero;
      }
  }
};
inline constexpr dec_consts kDecConsts{};

// The constants of one decode block. With one lane (SSE4.2) they are read from memory at each
// use, through a pointer gcc cannot see through: hoisted out of the block loop they do not fit
// in 16 registers, and their spills cost a short input some 30 instructions a call.
template <class P, class T>
inline const T* launder_if(const T* p) {
  if constexpr (P::kLanes == 1) __asm__ volatile("" : "+r"(p));
  return p;
}
template <class P>
inline const dec_consts& block_consts() {
  return *launder_if<P>(&kDecConsts);
}
// A 16-byte aligned table row. With one lane an aligned load, which gcc folds into the memory
// operand of a legacy SSE instruction (an unaligned one it cannot).
template <class P>
inline typename P::vec table_row(const std::uint8_t* row16) {
  if constexpr (P::kLanes == 1) return P::load_aligned(row16);
  return P::rows(row16);
}

// One constant of dec_consts: a load with one lane, a splat of its (known) value otherwise.
template <class P, class T>
inline typename P::vec row_of(const T* row) {
  if constexpr (P::kLanes == 1) return P::load_aligned(row);
  if constexpr (sizeof(T) == 1) return opaque(P::set1_8(row[0]));
  if constexpr (sizeof(T) == 2) return opaque(P::set1_16(row[0]));
  if constexpr (sizeof(T) == 4) return opaque(P::set1_32(static_cast<int>(row[0])));
}

// --- alphabet lookups: digit -> char (enc_*), char -> digit with bit 7 of `flags` marking an
// invalid char (dec_*) ------------------------------------------------------------------------

// Runs of consecutive chars (b85, z85): two blends on bit 7 of d + (128 - first digit of the
// run) pick the run's offset, and two vpshufb rows add the fix for the 23 punctuation digits
// (zero below 62, whose index is negative).
template <class P>
struct enc_runs {
  using vec = typename P::vec;
  vec off0, off1, off2, fix0, fix1;
  vec from10 = opaque(P::set1_8(128 - 10)), from36 = opaque(P::set1_8(128 - 36));
  vec minus62 = opaque(P::set1_8(-62)), minus78 = opaque(P::set1_8(-78));
  explicit enc_runs(const alphabet& a)
      : off0(P::set1_8(static_cast<char>(a.run_offset[0]))),
        off1(P::set1_8(static_cast<char>(a.run_offset[1]))),
        off2(P::set1_8(static_cast<char>(a.run_offset[2]))),
        fix0(P::rows(a.punct_fix_rows[0])),
        fix1(P::rows(a.punct_fix_rows[1])) {}
  vec operator()(vec d) const {
    vec off = P::blendv8(off0, off1, P::add8(d, from10));
    off = P::blendv8(off, off2, P::add8(d, from36));
    vec fix =
        P::xor_(P::shuffle8(fix0, P::add8(d, minus62)), P::shuffle8(fix1, P::add8(d, minus78)));
    return P::add8(P::add8(d, off), fix);
  }
};

template <class P>
struct enc_add {
  typename P::vec first;
  explicit enc_add(const alphabet& a) : first(P::set1_8(static_cast<char>(a.enc[0]))) {}
  typename P::vec operator()(typename P::vec d) const { return P::add8(d, first); }
};

// 128-entry lookup as a blend tree: one vpshufb per row of 16 chars (rows 2..7, chars
// 32..127), then bits 4, 5 and 6 of the char pick the row. Chars below 32 or from 128 up are
// flagged by the compare. For several lanes (AVX2), whose registers hold the rows.
template <class P>
struct dec_tree {
  using vec = typename P::vec;
  vec row[6];
  explicit dec_tree(const alphabet& a) {
    for (int r = 0; r < 6; ++r) row[r] = P::rows(a.dec + 32 + 16 * r);
  }
  vec operator()(vec c, vec& flags, const dec_consts&) const {
    vec bit4 = P::slli16(c, 3), bit5 = P::slli16(c, 2), bit6 = P::slli16(c, 1);
    vec r23 = P::blendv8(P::shuffle8(row[0], c), P::shuffle8(row[1], c), bit4);
    vec r45 = P::blendv8(P::shuffle8(row[2], c), P::shuffle8(row[3], c), bit4);
    vec r67 = P::blendv8(P::shuffle8(row[4], c), P::shuffle8(row[5], c), bit4);
    vec d = P::blendv8(r23, P::blendv8(r45, r67, bit5), bit6);
    flags = P::or_(flags, P::or_(d, P::cmpgt8(opaque(P::set1_8(32)), c)));
    return d;
  }
};

// The same lookup as a chain for one lane (SSE4.2): the index c - 32 - 16r of row r is
// non-negative for the char's own row and those below it and negative (vpshufb gives 0)
// above, so with each row stored XORed with the one below (alphabet::dec_xor_rows) the
// lookups XOR together to the char's row. The signed saturating c - 32 is negative for chars
// below 32 or from 128 up, which flags them. Two-operand SSE must move each blend mask into
// xmm0, so the tree costs 38 instructions per 16 chars and the chain 26. The rows are loaded
// at each use: 16 registers cannot hold them.
template <class P>
struct dec_xor {
  using vec = typename P::vec;
  const std::uint8_t* rows;
  explicit dec_xor(const alphabet& a) : rows(a.dec_xor_rows[0]) {}
  // k.c16 from memory, not set1_8(16): gcc would fold the chain into 5 constants.
  vec operator()(vec c, vec& flags, const dec_consts& k) const {
    const vec step = row_of<P>(k.c16);
    vec x = P::subs8(c, row_of<P>(k.c32));
    flags = P::or_(flags, x);
    vec part[3];
    for (int r = 0; r < 6; r += 2) {
      vec lo = P::shuffle8(table_row<P>(rows + 16 * r), x);
      x = P::sub8(x, step);
      part[r / 2] = P::xor_(lo, P::shuffle8(table_row<P>(rows + 16 * r + 16), x));
      x = P::sub8(x, step);
    }
    vec d = P::xor_(P::xor_(part[0], part[1]), part[2]);
    flags = P::or_(flags, d);
    return d;
  }
};

template <class P>
struct dec_add {
  using vec = typename P::vec;
  vec first;
  explicit dec_add(const alphabet& a) : first(P::set1_8(static_cast<char>(a.enc[0]))) {}
  vec operator()(vec c, vec& flags, const dec_consts&) const {
    vec d = P::sub8(c, first);
    flags = P::or_(flags, P::adds_u8(d, opaque(P::set1_8(128 - 85))));  // d >= 85
    return d;
  }
};

// --- encode ----------------------------------------------------------------------------------

// The X chars of a step (d1..d4 of each group) are stored as they are at char 4 * L, where
// lane l's bytes land on chars 4L + 16l..: so the last group of lane l, chars 20l+16..20l+19,
// is final if its word sits in dword 4 + l - L of the lane. The other groups fill the other
// dwords in order. One vpshufb then writes chars 0..15 of every lane over the rest.
constexpr int word_at(int lanes, int lane, int g) {
  const int last = 4 + lane - lanes;
  return g == 3 ? last : g < last ? g : g + 1;
}

template <int L>
struct enc_tables {
  alignas(32) std::uint8_t load[16 * L];  // bswap32 of the input words into word_at order
  alignas(32) std::uint8_t head[16 * L];  // chars 0..15 of a lane from X (d1 d2 d3 d4) with
                                          // the lane's 4 d0 chars in its last group's dword
};

template <int L>
constexpr enc_tables<L> make_enc_tables() {
  enc_tables<L> t{};
  for (int lane = 0; lane < L; ++lane)
    for (int j = 0; j < 16; ++j) {
      int g = j / 5, k = j % 5, w = word_at(L, lane, g), last = word_at(L, lane, 3);
      t.load[16 * lane + 4 * word_at(L, lane, j / 4) + 3 - j % 4] = static_cast<std::uint8_t>(j);
      t.head[16 * lane + j] = static_cast<std::uint8_t>(k == 0 ? 4 * last + w : 4 * w + k - 1);
    }
  return t;
}
template <int L>
inline constexpr enc_tables<L> kEnc = make_enc_tables<L>();

// Digits of one step in word_at order: x holds [d1 d2 d3 d4], d0 holds d0 (< 83) per dword.
// q2 = n / 85^2 by 64-bit multiply-high (even and odd dwords apart), d0 = q2 / 85^2 in float
// (see simd_constants.h). The remainders mid = q2 - 85^2 d0 (d1 d2) and lo = n - 85^2 q2
// (d3 d4) are both < 85^2, so one wrapping expression gives them as the 16-bit halves
// mid | lo << 16, which divide by 85 together; and q | (w - 85 q) << 8 for each half w is
// (w << 8) + q (1 - 85 * 256) mod 2^16.
template <class P>
struct split_digits {
  using vec = typename P::vec;
  vec div7225 = opaque(P::set1_64(kDiv7225));
  vec lo_up = opaque(P::set1_32(1 - 7225 * 65536)), k7225 = opaque(P::set1_32(7225));
  vec div85 = opaque(P::set1_16(static_cast<short>(kDiv85)));
  vec join = opaque(P::set1_16(1 - 85 * 256));
  void operator()(vec raw, vec& x, vec& d0) const {
    vec n = P::shuffle8(raw, P::load(kEnc<P::kLanes>.load));
    vec even = P::srli64(P::mul_u32(n, div7225), kDiv7225Shift);
    vec odd = P::srli64(P::mul_u32(P::template shuffle32<0xf5>(n), div7225), kDiv7225Shift - 32);
    vec q2 = P::odd_dwords(even, odd);
    d0 = P::div7225_small(q2);
    vec pair = P::sub32(P::add32(P::slli32(n, 16), P::mullo32(q2, lo_up)), P::mullo32(d0, k7225));
    vec q = P::srli16(P::mulhi_u16(pair, div85), 4);
    x = P::add16(P::slli16(pair, 8), P::mullo16(q, join));
  }
};

// d0 of 4 steps in one vector, step s in dword s of each lane (byte w: the group in dword w;
// values < 83: no saturation), so that they share one alphabet lookup.
template <class P>
inline typename P::vec pack4(typename P::vec d0, typename P::vec d1, typename P::vec d2,
                             typename P::vec d3) {
  return P::packus16(P::packus32(d0, d1), P::packus32(d2, d3));
}

// Writes the 20 * L chars of one step from its X chars and the packed D0 chars (step s).
// The last groups' dwords take the step's d0 chars (vpshufd and vpblendd, which issue on more
// ports than vpshufb) before the one vpshufb of the heads.
template <class P, int s>
inline void emit(typename P::vec xc, typename P::vec dc, char* o) {
  P::store(o + 4 * P::kLanes, xc);
  auto m = P::blend_last(xc, P::template shuffle32<s * 0x55>(dc));
  auto head = P::shuffle8(m, P::load(kEnc<P::kLanes>.head));
  for (int l = 0; l < P::kLanes; ++l) P::store_lane(o + 20 * l, head, l);
}

template <class P>
inline bool has_stop(typename P::vec raw, bool stop_zero, bool stop_spaces) {
  auto hit = P::zero();
  if (stop_zero) hit = P::cmpeq32(raw, hit);
  if (stop_spaces) hit = P::or_(hit, P::cmpeq32(raw, P::set1_32(0x20202020)));
  return !P::all_zero(hit);
}

template <class P, class ToChar>
std::size_t encode_impl(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces) {
  using vec = typename P::vec;
  constexpr std::size_t G = 4 * P::kLanes;  // groups per step
  const ToChar to_char(a);
  const split_digits<P> digits;
  const bool stops = stop_zero || stop_spaces;
  std::size_t i = 0;
  for (; i + 4 * G <= groups; i += 4 * G) {
    const std::uint8_t* p = in + 4 * i;
    vec raw[4], x[4], d[4];
    bool stop = false;
    for (int j = 0; j < 4; ++j) {
      raw[j] = P::load(p + 4 * G * j);
      if (stops) stop |= has_stop<P>(raw[j], stop_zero, stop_spaces);
    }
    if (stop) return i + encode_groups_scalar(p, 4 * G, out + 5 * i, a, stop_zero, stop_spaces);
    for (int j = 0; j < 4; ++j) digits(raw[j], x[j], d[j]);
    vec dc = to_char(pack4<P>(d[0], d[1], d[2], d[3]));
    char* o = out + 5 * i;
    emit<P, 0>(to_char(x[0]), dc, o);
    emit<P, 1>(to_char(x[1]), dc, o + 5 * G);
    emit<P, 2>(to_char(x[2]), dc, o + 10 * G);
    emit<P, 3>(to_char(x[3]), dc, o + 15 * G);
  }
  // One step of G groups; false (nothing written) if one of them is a stop.
  auto step = [&](const std::uint8_t* src, char* dst) {
    vec raw = P::load(src), x, d;
    if (stops && has_stop<P>(raw, stop_zero, stop_spaces)) return false;
    digits(raw, x, d);
    emit<P, 0>(to_char(x), to_char(pack4<P>(d, d, d, d)), dst);
    return true;
  };
  for (; i + G <= groups; i += G)
    if (!step(in + 4 * i, out + 5 * i))
      return i + encode_groups_scalar(in + 4 * i, G, out + 5 * i, a, stop_zero, stop_spaces);
  const std::size_t rest = groups - i;
  if (rest >= 2) {  // as one step over a copy, padded with words that are no stop
    std::uint8_t src[4 * G];
    char dst[5 * G];
    std::memset(src, 1, sizeof src);
    std::memcpy(src, in + 4 * i, 4 * rest);
    if (step(src, dst)) {
      std::memcpy(out + 5 * i, dst, 5 * rest);
      return groups;
    }
  }
  return i + encode_groups_scalar(in + 4 * i, rest, out + 5 * i, a, stop_zero, stop_spaces);
}

template <class P>
std::size_t encode_lanes(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                         bool stop_zero, bool stop_spaces) {
  if (a.contiguous) return encode_impl<P, enc_add<P>>(in, groups, out, a, stop_zero, stop_spaces);
  return encode_impl<P, enc_runs<P>>(in, groups, out, a, stop_zero, stop_spaces);  // b85, z85
}

// --- decode ----------------------------------------------------------------------------------

// Raw chars of one step: prefix lanes hold chars [5g..5g+3], last lanes char 5g+4 in byte 0,
// from L (chars 0..15 of each lane) and M (chars 4..19).
template <class P>
inline void split_step(const char* p, typename P::vec& prefix, typename P::vec& last,
                       const layout_tables& t, const std::uint8_t* last_row) {
  auto l = P::load_lanes(p, 0), m = P::load_lanes(p, 4);
  prefix = P::or_(P::shuffle8(l, table_row<P>(t.dec_prefix_l)),
                  P::shuffle8(m, table_row<P>(t.dec_prefix_m)));
  last = P::shuffle8(m, table_row<P>(last_row));
}

// Big-endian words from prefix digits and last digits; overflowing groups set in `flags`.
template <class P>
inline typename P::vec combine(typename P::vec prefix, typename P::vec last, typename P::vec& flags,
                               const dec_consts& k) {
  auto x = P::madd(P::maddubs(prefix, row_of<P>(k.pair85)), row_of<P>(k.pair7225));
  // x <= 52200624, so the sum compares correctly as signed.
  auto carry = P::min_u32(last, row_of<P>(k.one));
  flags = P::or_(flags, P::cmpgt32(P::add32(x, carry), row_of<P>(k.max_prefix)));
  // A multiply by a row: gcc turns one by set1(85) into shifts and adds, 6 instructions with
  // the copies.
  auto w = P::add32(P::mullo32(x, row_of<P>(k.k85)), last);
  return P::shuffle8(w, table_row<P>(kBswap32Row));
}

// Decodes a block of 4 steps (16 * L groups, 80 * L chars) from p to out; false if it has a
// bad group (its words are written all the same, for the caller to redo). Each step's prefix
// digits are looked up at once and its last chars gathered into one vector for a shared
// lookup, which keeps few vectors live.
template <class P, class ToDigit>
inline bool decode_block(const ToDigit& to_digit, const char* p, std::uint8_t* out) {
  using vec = typename P::vec;
  const dec_consts& k = block_consts<P>();
  const layout_tables& t = *launder_if<P>(&kLayout);
  vec digits[4], lasts = P::zero(), flags = P::zero();
  for (int j = 0; j < 4; ++j) {
    vec prefix, last;
    split_step<P>(p + 20 * P::kLanes * j, prefix, last, t,
                  P::kLanes == 1 ? k.last_to[j] : t.dec_last);
    digits[j] = to_digit(prefix, flags, k);
    if (P::kLanes > 1 && j) last = P::slli32(last, 8 * j);
    lasts = j ? P::or_(lasts, last) : last;
  }
  lasts = to_digit(lasts, flags, k);
  for (int j = 0; j < 4; ++j) {
    vec l = P::kLanes == 1 ? P::shuffle8(lasts, table_row<P>(k.last_from[j]))
            : j < 3        ? P::and_(P::srli32(lasts, 8 * j), row_of<P>(k.byte0))
                           : P::srli32(lasts, 24);
    P::store(out + 16 * P::kLanes * j, combine<P>(digits[j], l, flags, k));
  }
  return P::movemask(flags) == 0;
}

// Steps of G groups from group i on, then the scalar tail; returns the groups decoded. Dword g
// of a step's flags is group g's (its chars' lookups and its overflow test), so a bad step
// shows where it stops. Out of line, with its own lookup object: the block loop's then stays in
// registers.
template <class P, class ToDigit>
[[gnu::noinline]] std::size_t decode_steps(const char* in, std::size_t i, std::size_t groups,
                                           std::uint8_t* out, const alphabet& a) {
  using vec = typename P::vec;
  constexpr std::size_t G = 4 * P::kLanes;
  const ToDigit to_digit(a);
  // One step of G groups from src to dst; the mask of its bad groups' flag bytes.
  auto step = [&](const char* src, std::uint8_t* dst) {
    const dec_consts& k = block_consts<P>();
    const vec byte0 = row_of<P>(k.byte0);
    vec prefix, last, flags = P::zero(), last_flags = P::zero();
    const layout_tables& t = *launder_if<P>(&kLayout);
    split_step<P>(src, prefix, last, t, t.dec_last);
    vec d = to_digit(prefix, flags, k);
    vec l = P::and_(to_digit(last, last_flags, k), byte0);
    flags = P::or_(flags, P::and_(last_flags, byte0));  // only byte 0 is a char
    P::store(dst, combine<P>(d, l, flags, k));
    return P::movemask(flags);
  };
  for (; i + G <= groups; i += G)
    if (const std::uint32_t bad = step(in + 5 * i, out + 4 * i); bad != 0)
      return i + static_cast<std::size_t>(std::countr_zero(bad)) / 4;
  const std::size_t rest = groups - i;
  if (rest < 2) return i + decode_groups_scalar(in + 5 * i, rest, out + 4 * i, a);
  // The last groups as one step over a copy padded with digit-0 chars: a scalar group costs
  // about as much as a whole step (80 B of wrapped text ends in 15 groups, 7 of them scalar).
  char src[5 * G];
  std::uint8_t dst[4 * G];
  std::memset(src, a.enc[0], sizeof src);
  std::memcpy(src, in + 5 * i, 5 * rest);
  const std::uint32_t bad = step(src, dst);
  const std::size_t good =
      bad ? static_cast<std::size_t>(std::countr_zero(bad)) / 4 : rest;  // pads are never bad
  std::memcpy(out + 4 * i, dst, 4 * good);
  return i + good;
}

template <class P, class ToDigit>
std::size_t decode_impl(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a) {
  constexpr std::size_t G = 4 * P::kLanes;
  if (groups < 4 * G) return decode_steps<P, ToDigit>(in, 0, groups, out, a);
  const ToDigit to_digit(a);
  std::size_t i = 0;
  // A block with a bad group goes on step by step (a scalar loop over the block cost a line of
  // wrapped text some 700 instructions).
  for (; i + 4 * G <= groups; i += 4 * G)
    if (!decode_block<P>(to_digit, in + 5 * i, out + 4 * i))
      return decode_steps<P, ToDigit>(in, i, groups, out, a);
  return i == groups ? i : decode_steps<P, ToDigit>(in, i, groups, out, a);
}

template <class P>
std::size_t decode_lanes(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a) {
  return a.contiguous ? decode_impl<P, dec_add<P>>(in, groups, out, a)
                      : decode_impl<P, std::conditional_t<P::kLanes == 1, dec_xor<P>, dec_tree<P>>>(
                            in, groups, out, a);
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

// Left-packs the bytes of `lane` selected by the 16-bit mask `m` to out; returns the count.
inline std::size_t pack16(__m128i lane, unsigned m, char* out) {
  unsigned lo = m & 0xff, hi = m >> 8;
  __m128i idx =
      _mm_set_epi64x(static_cast<long long>(__builtin_bit_cast(std::uint64_t, kPack.idx[hi]) +
                                            0x0808080808080808ull),
                     static_cast<long long>(__builtin_bit_cast(std::uint64_t, kPack.idx[lo])));
  __m128i packed = _mm_shuffle_epi8(lane, idx);  // index 0x88 keeps bit 7: still selects 0
  std::size_t k = static_cast<std::size_t>(__builtin_popcount(lo));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), packed);
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out + k), _mm_unpackhi_epi64(packed, packed));
  return k + static_cast<std::size_t>(__builtin_popcount(hi));
}

// Set membership of bytes < 128 by two vpshufb: row bits by low nibble & bit of the row.
template <class P>
inline std::uint32_t in_set(typename P::vec rows, typename P::vec lo, typename P::vec row_bit) {
  auto hit = P::and_(P::shuffle8(rows, lo), row_bit);
  return ~P::movemask(P::cmpeq8(hit, P::zero())) & P::kFullMask;
}

// Row bit of each char: 1 << (c >> 4) for c < 128, 0 for c >= 128 (never kept nor skipped).
alignas(16) constexpr std::uint8_t kRowBits[16] = {1, 2, 4, 8, 16, 32, 64, 128};
struct byte_index {
  alignas(32) std::uint8_t at[32];
};
constexpr byte_index make_byte_index() {
  byte_index t{};
  for (int j = 0; j < 32; ++j) t.at[j] = static_cast<std::uint8_t>(j);
  return t;
}
constexpr byte_index kByteIndex = make_byte_index();  // byte j holds j

// Bytes outside the kept set, as a mask: a range test when the kept chars are consecutive
// (Ascii85), else a nibble lookup.
template <class P>
struct outside_range {
  typename P::vec first, span;
  explicit outside_range(const std::uint8_t* cls)
      : first(P::set1_8(cls[kKeptFirst])), span(P::set1_8(128 - cls[kKeptRun])) {}
  std::uint32_t operator()(typename P::vec c) const {
    return P::movemask(P::adds_u8(P::sub8(c, first), span));  // c - first >= run
  }
};
template <class P>
struct outside_rows {
  typename P::vec rows, row_bits = P::rows(kRowBits), nibble = P::set1_8(15);
  explicit outside_rows(const std::uint8_t* cls) : rows(P::rows(cls + kKeepRows)) {}
  std::uint32_t operator()(typename P::vec c) const {
    auto row_bit = P::shuffle8(row_bits, P::and_(P::srli16(c, 4), nibble));
    return ~in_set<P>(rows, P::and_(c, nibble), row_bit) & P::kFullMask;
  }
};

// A vector of chars at a time while no char stops and W more fit under the cap; the scalar
// loop finishes. Skipped chars are rare (a line break every 60-80 chars): a vector without
// any is stored as it is, one with one or two is shifted past them by two blends of loads one
// and two chars on, and only denser ones go through the pack table.
template <class P, class Outside>
std::size_t compact_impl(const char* in, std::size_t n, char* out, std::size_t cap,
                         const std::uint8_t* cls, std::size_t& consumed) {
  using vec = typename P::vec;
  constexpr std::size_t W = 16 * P::kLanes;
  const Outside outside(cls);
  const vec skip_rows = P::rows(cls + kSkipRows), row_bits = P::rows(kRowBits);
  const vec nibble = P::set1_8(15), index = P::load(kByteIndex.at);
  std::size_t m = 0, i = 0;
  for (; i + W + 2 <= n && m + W <= cap; i += W) {
    vec c = P::load(in + i);
    const std::uint32_t other = outside(c);
    if (other == 0) {
      P::store(out + m, c);
      m += W;
      continue;
    }
    vec row_bit = P::shuffle8(row_bits, P::and_(P::srli16(c, 4), nibble));
    const std::uint32_t skip = in_set<P>(skip_rows, P::and_(c, nibble), row_bit);
    if (other & ~skip) break;  // a char that stops
    const std::uint32_t more = skip & (skip - 1);
    if ((more & (more - 1)) == 0) {
      // Output byte j comes from j, j + 1 (from the first skipped char s1 on) or j + 2 (from
      // s2 - 1 on, with s2 the second; none counts as 64, beyond every byte).
      const int s1 = std::countr_zero(skip), s2 = std::countr_zero(std::uint64_t{more});
      vec v = P::blendv8(c, P::load(in + i + 1), P::cmpgt8(index, P::set1_8(s1 - 1)));
      v = P::blendv8(v, P::load(in + i + 2), P::cmpgt8(index, P::set1_8(s2 - 2)));
      P::store(out + m, v);
    } else {
      const std::uint32_t keep = ~other & P::kFullMask;
      std::size_t k = m;
      for (int l = 0; l < P::kLanes; ++l)
        k += pack16(P::lane(c, l), keep >> (16 * l) & 0xffff, out + k);
    }
    m += W - static_cast<std::size_t>(__builtin_popcount(skip));
  }
  std::size_t rest = 0;
  m += compact_scalar(in + i, n - i, out + m, cap - m, cls, rest);
  consumed = i + rest;
  return m;
}

template <class P>
std::size_t compact_lanes(const char* in, std::size_t n, char* out, std::size_t cap,
                          const std::uint8_t* cls, std::size_t& consumed) {
  if (cls[kKeptRun]) return compact_impl<P, outside_range<P>>(in, n, out, cap, cls, consumed);
  return compact_impl<P, outside_rows<P>>(in, n, out, cap, cls, consumed);
}

}  // namespace
}  // namespace simdex::base85
