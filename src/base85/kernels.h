// Internals shared by the base85 kernel files: the alphabet tables and the one-group scalar
// codec every level falls back to. Everything inline has internal linkage, so each level's
// file keeps its own copy compiled with its own flags.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <utility>

#include "simdex/base85.h"

namespace simdex::base85 {

// Digit <-> char tables of one alphabet (see kernel_tables()).
struct alphabet;
const alphabet& alphabet_of(variant v) noexcept;

// Text wrapped at a fixed width: a run of `run` skipped chars (a line break) every `period`
// chars, the next run starting `next` chars on.
struct line_layout {
  std::size_t period = 0, run = 0, next = 0;
};
// Where a copy of wrapped lines to a stage stands: m chars copied, the next input char at i
// (right after a run), the next run at b.
struct line_cursor {
  std::size_t m = 0, i = 0, b = 0;
};

// One variant of the bulk kernels; dispatch::pick chooses a table per process.
struct kernels {
  // Encodes whole groups in[4i..4i+4) -> out[5i..5i+5) for i < groups, stopping before the
  // first group whose word is 0 (if stop_zero) or 0x20202020 (if stop_spaces); returns the
  // number of groups written.
  std::size_t (*encode)(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces);
  // Decodes whole groups in[5i..5i+5) -> out[4i..4i+4), stopping before the first group that
  // has a char outside the alphabet or overflows; returns the number of groups written.
  std::size_t (*decode)(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a);
  // Copies the chars of in[0, n) with cls[c] == 0 (alphabet) to out, drops those with
  // cls[c] == 1 (skipped), and stops before the first char with cls[c] == 2 (anything else) or
  // right after the `cap`-th kept char; returns the kept count and sets `consumed` to the input
  // length processed. cls holds kClassBytes (see add_class_rows); cls[c] must be 2 for
  // c >= 128. May write up to 64 bytes past out + cap.
  std::size_t (*compact)(const char* in, std::size_t n, char* out, std::size_t cap,
                         const std::uint8_t* cls, std::size_t& consumed);
  // Copies whole lines of in[0, n) laid out as `l` to out from c (c.i right after a run) while
  // a line body fits under cap, checking each run after it; false at a run that is not all
  // skipped chars (cls[c] == 1). Stops early near the end of the input (the caller copies the
  // rest). May write up to 64 bytes past out + cap. See copy_lines_by.
  bool (*copy_lines)(const char* in, std::size_t n, char* out, std::size_t cap,
                     const std::uint8_t* cls, const line_layout& l, line_cursor& c);
};
const dispatch::by_level<kernels>& kernel_tables();
const kernels& active_kernels();  // dispatch::pick(kernel_tables()), cached

// compact()'s class table: cls[c] for the 256 byte values, then classes 0 and 1 of the chars
// below 128 as rows for a nibble lookup (bit c >> 4 of row[c & 15]), then the first kept char
// and the length of the run of kept chars from it if they are all the kept chars (else 0);
// built once by add_class_rows, so that a call does not rebuild them.
inline constexpr std::size_t kKeepRows = 256, kSkipRows = 272, kKeptFirst = 288, kKeptRun = 289,
                             kClassBytes = 320;
constexpr void add_class_rows(std::uint8_t* cls) {
  for (std::size_t i = kKeepRows; i < kClassBytes; ++i) cls[i] = 0;
  int first = -1, last = -1, kept = 0;
  for (int c = 0; c < 128; ++c) {
    const int bit = 1 << (c >> 4);
    cls[kKeepRows + (c & 15)] |= static_cast<std::uint8_t>(cls[c] == 0 ? bit : 0);
    cls[kSkipRows + (c & 15)] |= static_cast<std::uint8_t>(cls[c] == 1 ? bit : 0);
    if (cls[c] == 0) {
      first = first < 0 ? c : first;
      last = c;
      ++kept;
    }
  }
  if (kept > 0 && last - first + 1 == kept) {
    cls[kKeptFirst] = static_cast<std::uint8_t>(first);
    cls[kKeptRun] = static_cast<std::uint8_t>(kept);
  }
}

// 2^32-1 = 85 * 50529027: with x = the first four digits in base 85, a group overflows iff
// x > kMaxPrefix, or x == kMaxPrefix and the last digit is not 0.
inline constexpr std::uint32_t kMaxPrefix = 50529027;
inline constexpr std::uint8_t kInvalid = 0xff;

struct alphabet {
  alignas(64) std::uint8_t enc[128];  // digit -> char; unused entries 0
  alignas(64) std::uint8_t dec[256];  // char -> digit, kInvalid outside the alphabet
  bool contiguous;                    // enc[d] == enc[0] + d (Ascii85): lookups are one add
  // Digits [0,10), [10,36) and [36,62) are runs of consecutive chars (true of all three
  // alphabets): enc[d] = d + run_offset[run] for d < 62, + run_offset[2] + punct_fix[d-62]
  // above. punct_fix as two vpshufb rows, the second XORed with the first, so an index made
  // negative by the subtraction of 16 selects zero and the XOR of both gives entry 16..22.
  bool runs;
  std::uint8_t run_offset[3];
  alignas(16) std::uint8_t punct_fix_rows[2][16];
  // dec[32..128) as 6 rows of 16, each XORed with the row before it (see generic.h dec_xor).
  alignas(16) std::uint8_t dec_xor_rows[6][16];
};

extern const alphabet kAlphabets[3];  // in variant order (tables.cc)
inline const alphabet& alphabet_of(variant v) noexcept { return kAlphabets[static_cast<int>(v)]; }

// A decoder's class table for compact(): its alphabet 0, then the ignored chars that are
// neither in it nor a85 folds (which stay folds, as in CPython: the char-by-char path takes
// them) 1, everything else 2 (bytes >= 128 too, left to the char-by-char path).
struct class_table {
  alignas(64) std::uint8_t cls[kClassBytes];
};
constexpr void build_classes(std::uint8_t* cls, const alphabet& a, const char_set& ignore, bool a85,
                             bool fold_spaces) {
  for (int c = 0; c < 256; ++c) {
    const bool fold = a85 && (c == 'z' || (c == 'y' && fold_spaces));
    cls[c] = a.dec[c] != kInvalid                                                 ? 0
             : c < 128 && !fold && ignore.contains(static_cast<unsigned char>(c)) ? 1
                                                                                  : 2;
  }
  add_class_rows(cls);
}
// The tables of the three variants with kWhitespace ignored (a85's default, the command
// line's for every variant; 'y' is not whitespace, so fold_spaces does not change them): built
// at compile time, where building one per decoder cost some 3,300 instructions a call.
extern const class_table kWhitespaceClasses[3];

extern const kernels kScalarKernels;
extern const kernels kSse42Kernels;
extern const kernels kAvx2Kernels;
extern const kernels kAvx512Kernels;
extern const kernels kAvx512VbmiKernels;

// AVX2 kernels (avx2.cc) that the AVX-512 levels use too, whole or for their last groups.
std::size_t encode_avx2(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces);
std::size_t decode_avx2(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a);
std::size_t compact_avx2(const char* in, std::size_t n, char* out, std::size_t cap,
                         const std::uint8_t* cls, std::size_t& consumed);
bool copy_lines_avx2(const char* in, std::size_t n, char* out, std::size_t cap,
                     const std::uint8_t* cls, const line_layout& l, line_cursor& c);

namespace {

inline std::uint32_t load_be32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return __builtin_bswap32(v);
}
inline void store_be32(std::uint8_t* p, std::uint32_t v) {
  v = __builtin_bswap32(v);
  std::memcpy(p, &v, 4);
}

inline void encode_word(std::uint32_t w, char* out, const alphabet& a) {
  for (int i = 4; i >= 0; --i) {
    out[i] = static_cast<char>(a.enc[w % 85]);
    w /= 85;
  }
}

// Group value of five digits (each < 85) in 64 bits, so overflow is visible.
inline std::uint64_t digits_value(const std::uint8_t d[5]) {
  std::uint64_t v = 0;
  for (int i = 0; i < 5; ++i) v = v * 85 + d[i];
  return v;
}

// Decodes one 5-char group; false on a char outside the alphabet or an overflow.
inline bool decode_group(const char* in, std::uint8_t* out, const alphabet& a) {
  std::uint8_t d[5];
  std::uint8_t bad = 0;
  for (int i = 0; i < 5; ++i) bad |= d[i] = a.dec[static_cast<unsigned char>(in[i])];
  if (bad & 0x80) return false;
  std::uint64_t v = digits_value(d);
  if (v > 0xffffffffu) return false;
  store_be32(out, static_cast<std::uint32_t>(v));
  return true;
}

inline bool is_stop(std::uint32_t w, bool stop_zero, bool stop_spaces) {
  return (stop_zero && w == 0) || (stop_spaces && w == 0x20202020u);
}

// Scalar bulk loops; SIMD kernels finish their tails and failed blocks with them.
inline std::size_t encode_groups_scalar(const std::uint8_t* in, std::size_t groups, char* out,
                                        const alphabet& a, bool stop_zero, bool stop_spaces) {
  for (std::size_t i = 0; i < groups; ++i) {
    std::uint32_t w = load_be32(in + 4 * i);
    if (is_stop(w, stop_zero, stop_spaces)) return i;
    encode_word(w, out + 5 * i, a);
  }
  return groups;
}

inline std::size_t decode_groups_scalar(const char* in, std::size_t groups, std::uint8_t* out,
                                        const alphabet& a) {
  for (std::size_t i = 0; i < groups; ++i)
    if (!decode_group(in + 5 * i, out + 4 * i, a)) return i;
  return groups;
}

inline std::size_t compact_scalar(const char* in, std::size_t n, char* out, std::size_t cap,
                                  const std::uint8_t* cls, std::size_t& consumed) {
  std::size_t m = 0, i = 0;
  for (; i < n && m < cap; ++i) {
    std::uint8_t k = cls[static_cast<unsigned char>(in[i])];
    if (k == 2) break;
    out[m] = in[i];  // kept only if m advances
    m += k == 0;
  }
  consumed = i;
  return m;
}

inline bool all_skipped(const char* p, std::size_t len, const std::uint8_t* cls) {
  for (std::size_t r = 0; r < len; ++r)
    if (cls[static_cast<unsigned char>(p[r])] != 1) return false;
  return true;
}

// copy_lines with Move::kBytes-byte moves (V). N = 1..128/V: the body is N moves, unrolled,
// and a run is at most V chars; N = 0: any body or run. OneChar: runs of one char ("\n", the
// common wrap), checked by one lookup. The line count is computed up front and the loop runs on
// pointers: a store through char* would make every reference and bound a reload. A loop of
// 16-byte moves and a loop over the run cost some 50 instructions a 76-char line, about as many
// as decoding it.
template <class Move, std::size_t N, bool OneChar>
bool copy_whole_lines(const char* in, std::size_t n, char* stage, std::size_t cap,
                      const std::uint8_t* cls, const line_layout& l, line_cursor& c) {
  constexpr std::size_t V = Move::kBytes;
  const std::size_t run = OneChar ? 1 : l.run, period = l.period, w = period - run;
  // Moves read up to V - 1 chars past a body, so V chars from each run on must be input.
  std::size_t lines =
      std::min(cap - c.m >= w ? (cap - c.m) / w : 0, n >= c.b + V ? (n - V - c.b) / period + 1 : 0);
  if constexpr (N == 0) lines = std::min(lines, n >= c.b + run ? (n - run - c.b) / period + 1 : 0);
  const char* src = in + c.i;
  const char* brk = in + c.b;
  char* dst = stage + c.m;
  bool ok = true;
  for (; lines > 0; --lines, src += period, brk += period) {
    if constexpr (N > 0) {
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        (Move::copy(dst + V * K, src + V * K), ...);
      }
      (std::make_index_sequence<N>());
    } else {
      for (std::size_t k = 0; k < w; k += V) Move::copy(dst + k, src + k);
    }
    dst += w;
    if (cls[static_cast<unsigned char>(brk[0])] != 1 ||
        (!OneChar && !all_skipped(brk + 1, run - 1, cls))) {
      ok = false;
      break;
    }
  }
  c.m = static_cast<std::size_t>(dst - stage);
  c.b = static_cast<std::size_t>(brk - in);
  c.i = ok ? c.b - period + run : static_cast<std::size_t>(src - in);
  return ok;
}

using copy_lines_fn = bool (*)(const char*, std::size_t, char*, std::size_t, const std::uint8_t*,
                               const line_layout&, line_cursor&);
template <class Move, bool OneChar, std::size_t... N>
constexpr std::array<copy_lines_fn, sizeof...(N)> copy_lines_table(std::index_sequence<N...>) {
  return {copy_whole_lines<Move, N, OneChar>...};
}

// kernels::copy_lines: the unrolled copy for the body width and run length at hand.
template <class Move>
bool copy_lines_by(const char* in, std::size_t n, char* stage, std::size_t cap,
                   const std::uint8_t* cls, const line_layout& l, line_cursor& c) {
  constexpr std::size_t V = Move::kBytes, kMaxN = 128 / V;
  static constexpr auto kOne = copy_lines_table<Move, true>(std::make_index_sequence<kMaxN + 1>());
  static constexpr auto kAny = copy_lines_table<Move, false>(std::make_index_sequence<kMaxN + 1>());
  const std::size_t chunks = (l.period - l.run + V - 1) / V;
  const std::size_t at = l.run <= V && chunks <= kMaxN ? chunks : 0;
  return (l.run == 1 ? kOne : kAny)[at](in, n, stage, cap, cls, l, c);
}

// 16-byte moves, the baseline's (scalar and SSE4.2 levels).
struct move16 {
  static constexpr std::size_t kBytes = 16;
  static void copy(char* dst, const char* src) { std::memcpy(dst, src, 16); }
};

}  // namespace
}  // namespace simdex::base85
