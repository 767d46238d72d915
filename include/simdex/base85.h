// Base85 codecs: RFC 1924 / git / Python `b85`, ZeroMQ Z85 and Adobe Ascii85, with scalar,
// AVX2, AVX-512BW and AVX-512 VBMI kernels chosen once per process.
//
// Every variant maps 4 bytes (big-endian u32) to 5 digits, most significant first. A final
// partial group of n = 1..3 bytes is zero-padded and written as n+1 chars (or 5 with `pad`);
// on decode a final group of k = 2..4 chars is padded with digit 84 and gives k-1 bytes, and a
// 1-char final group is an error. Any 5-char group worth more than 2^32-1 is an error.
//
// Output goes to caller-provided buffers sized with encoded_size() / max_decoded_size() (or
// the streaming objects' max_output()); nothing here allocates per call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "simdex/cpu.h"

namespace simdex::base85 {

enum class variant : std::uint8_t {
  b85,  // 0-9A-Za-z!#$%&()*+-;<=>?@^_`{|}~  (RFC 1924 charset, git, Mercurial, Python b85)
  z85,  // 0-9a-zA-Z.-:+=^!/*?&<>()[]{}@%$#  (ZeroMQ RFC 32; tails as Python 3.13 z85encode)
  a85,  // '!'..'u' (Adobe/btoa Ascii85): 'z' = 4 zero bytes, optional 'y' = 4 spaces
};
const char* variant_name(variant v) noexcept;  // "b85", "z85", "a85"

enum class error_kind : std::uint8_t {
  none,
  invalid_char,  // a byte outside the alphabet and the ignore set, or a z/y inside a group
  overflow,      // a group worth more than 2^32-1; position = the group's first char
  bad_tail,      // a 1-char final group; position = that char
  short_output,  // the one-shot output buffer is smaller than the documented bound
  unterminated,  // adobe: the input does not end with "~>"; position = the input's length
};
const char* error_name(error_kind k) noexcept;

// 256-bit set of byte values (the chars a decoder skips).
struct char_set {
  std::array<std::uint64_t, 4> bits{};
  constexpr char_set() = default;
  constexpr explicit char_set(std::string_view chars) {
    for (char ch : chars) {
      const auto c = static_cast<unsigned char>(ch);
      bits[c >> 6] |= std::uint64_t{1} << (c & 63);
    }
  }
  constexpr bool contains(unsigned char c) const { return (bits[c >> 6] >> (c & 63)) & 1; }
  constexpr bool empty() const { return (bits[0] | bits[1] | bits[2] | bits[3]) == 0; }
};
inline constexpr std::string_view kWhitespace = " \t\n\r\v";  // CPython a85decode's default

struct encode_options {
  variant var = variant::b85;
  bool pad = false;          // write whole 5-char groups for a partial final group
  bool fold_spaces = false;  // a85: write 'y' for 0x20202020 (btoa extension)
  bool adobe = false;        // a85: frame with "<~" ... "~>"
  std::size_t wrap = 0;      // > 0: insert '\n' after every `wrap` chars (CPython wrapcol)
};

struct decode_options {
  variant var = variant::b85;
  bool fold_spaces = false;  // a85: accept 'y' for four spaces
  // a85, as CPython's a85decode: the input must end with "~>" and a leading "<~" is dropped;
  // between them '~' is an ordinary char (skipped if in `ignore`, else invalid).
  bool adobe = false;
  // Bytes skipped anywhere (CPython a85decode: kWhitespace). Alphabet chars, and a85's 'z'
  // (and 'y' with fold_spaces), keep their meaning even when listed here, as in CPython.
  char_set ignore = {};
};
// CPython's defaults for `v`: whitespace ignored for a85, nothing for b85/z85.
decode_options default_decode_options(variant v);

// Chars a one-shot encode of n bytes writes: exact for b85/z85, an upper bound for a85 (where
// 'z'/'y' shorten the output). Includes framing and line breaks.
std::size_t encoded_size(std::size_t n, const encode_options& opt);
// Bytes a one-shot decode of n chars may write: exact for b85/z85 without skipped chars, an
// upper bound otherwise (a85: each 'z' gives 4 bytes from 1 char).
std::size_t max_decoded_size(std::size_t n, const decode_options& opt);
// The same bound from the text itself: for a85 it counts the 'z'/'y' chars (one pass), so it
// stays near 4/5 of the input instead of 4x.
std::size_t max_decoded_size(std::string_view in, const decode_options& opt);

struct result {
  std::size_t written = 0;  // bytes or chars written to the output
  error_kind error = error_kind::none;
  std::uint64_t position = 0;  // byte offset of the error in the whole input stream
  std::uint8_t byte = 0;       // invalid_char: the byte at `position`
  bool ok() const { return error == error_kind::none; }
};

// The bulk kernels the streaming classes run (src/base85/kernels.h); nullptr picks this
// process's level. Tests and benchmarks pass one level's table to compare levels.
struct kernels;
struct alphabet;

// --- streaming ---------------------------------------------------------------------------------

// Encodes a byte stream given in chunks of any size. update() writes at most max_output(n)
// chars, finish() at most kMaxFinish; the concatenation equals a one-shot encode.
class encoder {
 public:
  static constexpr std::size_t kMaxFinish = 16;
  explicit encoder(const encode_options& opt = {}, const kernels* k = nullptr);
  std::size_t max_output(std::size_t n) const;
  std::size_t update(const std::uint8_t* in, std::size_t n, char* out);
  std::size_t finish(char* out);
  const encode_options& options() const { return opt_; }

 private:
  std::size_t put(const char* s, std::size_t n, char* out);  // copies with line breaks
  std::size_t encode_groups(const std::uint8_t* in, std::size_t groups, char* out);
  std::size_t start(char* out);
  std::size_t update_general(const std::uint8_t* in, std::size_t n, char* out);
  std::size_t finish_general(char* out);
  using encode_groups_fn = std::size_t (*)(const std::uint8_t*, std::size_t, char*, const alphabet&,
                                           bool, bool);

  encode_options opt_;
  const kernels* k_;
  const alphabet* a_;
  encode_groups_fn encode_groups_;  // k_->encode
  std::size_t wrap_;
  std::size_t column_ = 0;
  std::uint8_t pending_[4] = {};
  std::uint8_t npending_ = 0;
  bool started_ = false;
  bool plain_;  // no wrapping, no framing, no folds: whole groups go straight to the kernel
};

// Decodes a char stream given in chunks of any size. update() writes at most max_output(n)
// bytes, finish() at most kMaxFinish. After an error the decoder stays failed and returns it.
// With adobe the last two chars seen are held back (they may be the closing "~>"), so an
// error in them is reported by a later update() or by finish(). Adobe input with an error and
// no closing "~>" gives its first error here, where decode() reports `unterminated` first (as
// CPython does, which checks the end before decoding): a stream learns its end only at finish().
class decoder {
 public:
  static constexpr std::size_t kMaxFinish = 4;
  explicit decoder(const decode_options& opt, const kernels* k = nullptr);
  std::size_t max_output(std::size_t n) const;
  result update(const char* in, std::size_t n, std::uint8_t* out);
  result finish(std::uint8_t* out);
  // Input bytes taken so far: every byte given to update(), with adobe the opening "<~" and the
  // last two chars held back for a possible "~>" included, so after a clean finish() it is the
  // stream's length. After an error, the bytes before the one where decoding stopped.
  std::uint64_t consumed() const { return pos_ + nheld_; }

 private:
  // stopped: the kernel has just stopped at in[0] (a group it did not decode).
  std::size_t run(const char* in, std::size_t n, std::uint8_t* out, bool stopped = false);
  bool slow_char(unsigned char c, std::uint8_t*& out);
  std::size_t gather_group(const char* in, std::size_t n, std::uint8_t* out) const;
  bool is_fold(unsigned char c) const;  // a85 'z', or 'y' with fold_spaces
  void fail(error_kind kind, std::uint64_t pos, std::uint8_t byte = 0);
  bool flush_group(std::uint8_t*& out, int keep);
  result state(std::size_t written) const;
  bool on_boundary() const {  // no error, no partial group, no adobe chars held back
    return error_ == error_kind::none && ndigits_ == 0 && !opt_.adobe;
  }
  result update_tail(const char* in, std::size_t n, std::uint8_t* out, std::size_t done);
  result update_held(const char* in, std::size_t n, std::uint8_t* out);
  result finish_held(std::uint8_t* out);
  using decode_groups_fn = std::size_t (*)(const char*, std::size_t, std::uint8_t*,
                                           const alphabet&);

  std::size_t compacted(const char* in, std::size_t n, std::uint8_t* out, std::size_t& used);
  // Input chars left from which skipped chars are passed over by staging (decoder.cc).
  static constexpr std::size_t kStageFrom = 160;
  // Whether in[0, n) (n >= kStageFrom, cls_ set) looks wrapped: a skipped '\n' at 64..95.
  bool starts_wrapped(const char* in, std::size_t n) const;

  decode_options opt_;
  const kernels* k_;
  const alphabet* a_;
  decode_groups_fn decode_groups_;         // k_->decode
  const std::uint8_t* cls_ = nullptr;      // for compact(): 0 alphabet, 1 skipped, 2 other
  alignas(64) std::uint8_t own_cls_[320];  // cls_ when the ignore set has no built-in table
  std::uint64_t pos_ = 0;                  // absolute offset of the next input byte
  std::uint64_t group_start_ = 0;          // absolute offset of the pending group's first char
  std::uint8_t digits_[5] = {};
  std::uint8_t ndigits_ = 0;
  char held_[2] = {};        // adobe: the last chars seen, not yet decoded
  std::uint8_t nheld_ = 0;   // after an error: 0 (consumed() is pos_)
  bool lt_pending_ = false;  // adobe: a leading '<' that may open "<~"
  error_kind error_ = error_kind::none;
  std::uint64_t error_pos_ = 0;
  std::uint8_t error_byte_ = 0;
  std::size_t line_stage_ = 4000;  // chars the next staged block of wrapped lines may take
};

// The common case inline (a one-shot decode, or a stream fed whole groups): on a group
// boundary the whole groups go straight to the kernel, and a short input that decodes whole
// pays for no more than the call.
inline result decoder::update(const char* in, std::size_t n, std::uint8_t* out) {
  if (!on_boundary()) return update_held(in, n, out);
  // Wrapped text goes to staging at once: the kernel would stop within its first line.
  if (cls_ != nullptr && n >= kStageFrom && starts_wrapped(in, n))
    return update_tail(in, n, out, 0);
  const std::size_t done = decode_groups_(in, n / 5, out, *a_);
  pos_ += 5 * done;
  if (5 * done == n) return {4 * done, error_kind::none, 0};
  return update_tail(in, n, out, done);
}

inline result decoder::finish(std::uint8_t* out) {
  if (on_boundary()) return {};
  return finish_held(out);
}

// The common case inline, as for the decoder: with nothing pending, a plain encoder hands the
// whole groups to the kernel in place (a 64-byte encode paid some 120 instructions around it).
inline std::size_t encoder::update(const std::uint8_t* in, std::size_t n, char* out) {
  if (!plain_ || npending_ != 0 || n < 4) return update_general(in, n, out);
  const std::size_t groups = n / 4;
  encode_groups_(in, groups, out, *a_, false, false);  // no folds: every group is encoded
  if (n % 4 == 0) return 5 * groups;
  return 5 * groups + update_general(in + 4 * groups, n % 4, out + 5 * groups);
}

inline std::size_t encoder::finish(char* out) {
  if (plain_ && npending_ == 0) return 0;
  return finish_general(out);
}

// --- one-shot ----------------------------------------------------------------------------------

// out.size() must be >= encoded_size(in.size(), opt), else short_output and nothing written.
result encode(std::span<const std::uint8_t> in, std::span<char> out, const encode_options& opt);
// out.size() must be >= max_decoded_size(in, opt), else short_output.
result decode(std::string_view in, std::span<std::uint8_t> out, const decode_options& opt);

}  // namespace simdex::base85
