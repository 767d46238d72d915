// Streaming decoder. With no partial group pending, runs of whole groups go through the bulk
// kernel straight from the input. Where skipped chars (line breaks) stop it, the text goes
// through a staging buffer that the kernel decodes: line bodies copied as they are when the
// text has fixed-width lines, else compacted block by block by compact(). Anything else
// ('z'/'y',
// framing, a chunk boundary, an error) is handled one char at a time until a group boundary,
// and that path alone decides errors and their positions. With adobe the body is what lies
// between an optional leading "<~" and the final two chars, which must be "~>" (CPython's
// rule), so the last two chars seen wait until more input or finish() shows what they are.
#include <emmintrin.h>

#include <algorithm>
#include <bit>

#include "kernels.h"

namespace simdex::base85 {

decode_options default_decode_options(variant v) {
  decode_options o;
  o.var = v;
  if (v == variant::a85) o.ignore = char_set(kWhitespace);
  return o;
}

decoder::decoder(const decode_options& opt, const kernels* k)
    : opt_(opt),
      k_(k ? k : &active_kernels()),
      a_(&alphabet_of(opt.var)),
      decode_groups_(k_->decode) {
  if (opt_.var != variant::a85) opt_.adobe = opt_.fold_spaces = false;
  // The built-in table costs nothing to take, so line breaks in short text are staged too.
  // Word by word from the argument: a 32-byte compare of the member just copied waits for
  // the copy's stores to drain (64 B decodes went 19 -> 26 ns).
  static constexpr char_set kWhitespaceSet(kWhitespace);
  bool whitespace = true;
  for (int w = 0; w < 4; ++w) whitespace &= opt.ignore.bits[w] == kWhitespaceSet.bits[w];
  if (whitespace) cls_ = kWhitespaceClasses[static_cast<int>(opt_.var)].cls;
}

namespace {

constexpr std::size_t kStage = 4000;  // chars per staged block: a multiple of 5
// A rest of wrapped lines up to this long goes in one stage (4 KiB of data is 5,120 chars; two
// stages cost some 300 instructions more). Longer input keeps kStage-char stages: 8,000-char
// ones made 64 MiB 5-10% slower (memory-bound; copy and decode alternate less often).
constexpr std::size_t kLineStage = 8000;
constexpr std::size_t kMinLineStage = 320;  // after a line stage stopped at a bad group

// Where the run of class-k chars from in[i] ends, at most at end. Kept chars (k == 0) that form
// one range (Ascii85) are scanned 16 at a time with SSE2, as the decoder is compiled for the
// baseline: a scalar scan of the first two lines cost some 500 instructions a call.
std::size_t run_end(const char* in, std::size_t i, std::size_t end, const std::uint8_t* cls,
                    std::uint8_t k) {
  if (k == 0 && cls[kKeptRun] != 0) {
    const __m128i first = _mm_set1_epi8(static_cast<char>(cls[kKeptFirst]));
    const __m128i span = _mm_set1_epi8(static_cast<char>(128 - cls[kKeptRun]));
    for (; i + 16 <= end; i += 16) {
      __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
      // Bit 7 set where c - first >= run: outside the range (saturating, so no wrap).
      auto out =
          static_cast<unsigned>(_mm_movemask_epi8(_mm_adds_epu8(_mm_sub_epi8(c, first), span)));
      if (out != 0) return i + static_cast<std::size_t>(std::countr_zero(out));
    }
  }
  while (i < end && cls[static_cast<unsigned char>(in[i])] == k) ++i;
  return i;
}

// Fixed-width lines at the start of in[0, n): a body of alphabet chars, a run of skipped chars,
// a body as long as the first can be, and the same length of run again.
bool find_lines(const char* in, std::size_t n, const std::uint8_t* cls, line_layout& lines) {
  const std::size_t end = std::min<std::size_t>(n, 600);
  const std::size_t s1 = run_end(in, 0, end, cls, 0), e1 = run_end(in, s1, end, cls, 1);
  const std::size_t s2 = run_end(in, e1, end, cls, 0), e2 = run_end(in, s2, end, cls, 1);
  if (e1 == s1 || e2 - s2 != e1 - s1 || e2 >= end || s2 - s1 < 10) return false;
  lines = {.period = s2 - s1, .run = e1 - s1, .next = s1};
  return true;
}

// Copies the line bodies of in[0, n) to stage, at most cap chars, and checks the runs between
// them; stops at the end of the input or before a run that is not all skipped chars. The
// bodies are not checked here: the decode kernel stops at any char outside the alphabet.
std::size_t copy_lines(const char* in, std::size_t n, char* stage, std::size_t cap,
                       const std::uint8_t* cls, const line_layout& l, const kernels& k) {
  line_cursor c{.m = 0, .i = 0, .b = l.next};
  auto copy = [&](std::size_t len) {
    if (c.i + len + 16 <= n) {  // whole 16-byte moves; the stage has room for the excess
      for (std::size_t j = 0; j < len; j += 16) std::memcpy(stage + c.m + j, in + c.i + j, 16);
    } else {
      std::memcpy(stage + c.m, in + c.i, len);
    }
    c.m += len, c.i += len;
  };
  copy(std::min({c.b, cap, n}));
  if (c.i != c.b || c.b + l.run > n || !all_skipped(in + c.b, l.run, cls)) return c.m;
  c.i = c.b + l.run;
  c.b += l.period;
  if (!k.copy_lines(in, n, stage, cap, cls, l, c)) return c.m;
  // The last lines, which the kernel's moves would read past the input's end.
  while (c.b + l.run <= n && c.m + (c.b - c.i) <= cap) {
    copy(c.b - c.i);
    if (!all_skipped(in + c.b, l.run, cls)) return c.m;
    c.i = c.b + l.run;
    c.b += l.period;
  }
  copy(std::min({c.b - c.i, cap - c.m, n - c.i}));
  return c.m;
}

// Runs passed by the first s chars copy_lines copied (not one right after them).
std::size_t runs_behind(std::size_t s, const line_layout& l) {
  return s <= l.next ? 0 : 1 + (s - 1 - l.next) / (l.period - l.run);
}

}  // namespace

// Whole groups of in[0, n) with skipped chars (line breaks) passed over, decoded through a
// staging buffer: line bodies copied where the text has fixed-width lines, else compacted
// block by block. Returns bytes written and sets `used`; stops at any other char, or at a bad
// group, which the char-by-char path then finds and places.
std::size_t decoder::compacted(const char* in, std::size_t n, std::uint8_t* out,
                               std::size_t& used) {
  if (!cls_) {  // built on first use: small inputs never pay for it
    build_classes(own_cls_, *a_, opt_.ignore, opt_.var == variant::a85, opt_.fold_spaces);
    cls_ = own_cls_;
  }
  alignas(64) char buf[std::max(kStage, kLineStage) + 64 + 4096];
  // Place the stage 2 KiB away from the input modulo 4 KiB: the loads and stores that fill it
  // advance at nearly the same rate, and equal low 12 address bits stall loads (4K aliasing).
  auto stage_for = [&](const char* from) {
    auto gap =
        reinterpret_cast<std::uintptr_t>(from) + 2048 - reinterpret_cast<std::uintptr_t>(buf);
    return buf + (gap & 4032);
  };
  std::size_t written = 0;
  used = 0;
  bool look_for_lines = true;  // until a look finds none
  while (used < n) {
    line_layout lines;
    if (look_for_lines && (look_for_lines = find_lines(in + used, n - used, cls_, lines))) {
      // Stages grow while they decode whole; one that stops at a bad group restarts small,
      // so that text with many 'z' folds does not copy much more than it decodes.
      for (;;) {
        char* stage = stage_for(in + used);
        const std::size_t cap =
            line_stage_ == kStage && n - used <= kLineStage ? kLineStage : line_stage_;
        std::size_t m = copy_lines(in + used, n - used, stage, cap, cls_, lines, *k_);
        std::size_t groups = m / 5;
        std::size_t done = groups ? k_->decode(stage, groups, out + written, *a_) : 0;
        std::size_t runs = runs_behind(5 * done, lines);
        std::size_t behind = 5 * done + runs * lines.run;
        lines.next = lines.next + runs * lines.period - behind;
        written += 4 * done;
        used += behind;
        if (done < groups) line_stage_ = kMinLineStage;
        if (done < groups || m < cap || used == n) break;
        line_stage_ = std::min(2 * line_stage_, kStage);
      }
      // No whole group in what is left (a final line break): compact() would keep none.
      if (n - used < 5) break;
    }
    char* stage = stage_for(in + used);
    std::size_t consumed = 0;
    std::size_t m = k_->compact(in + used, n - used, stage, kStage, cls_, consumed);
    std::size_t groups = m / 5;
    if (groups == 0) break;
    if (m % 5 != 0)  // end on a group boundary
      m = k_->compact(in + used, n - used, stage, 5 * groups, cls_, consumed);
    if (k_->decode(stage, groups, out + written, *a_) != groups) break;
    written += 4 * groups;
    used += consumed;
    if (m != kStage) break;
  }
  return written;
}

std::size_t decoder::max_output(std::size_t n) const {
  if (opt_.var == variant::a85) return 4 * n + 4;  // each 'z' is 4 bytes from 1 char
  return (ndigits_ + n) / 5 * 4;
}

void decoder::fail(error_kind kind, std::uint64_t pos, std::uint8_t byte) {
  error_ = kind;
  error_pos_ = pos;
  error_byte_ = byte;
}

// inline: a short one-shot decode pays for every call around the kernel.
inline result decoder::state(std::size_t written) const {
  if (error_ == error_kind::none) return {written, error_kind::none, 0};
  return {written, error_, error_pos_, error_byte_};
}

bool decoder::is_fold(unsigned char c) const {
  return opt_.var == variant::a85 && (c == 'z' || (c == 'y' && opt_.fold_spaces));
}

// Writes the pending group padded with digit 84, keeping `keep` bytes; false on overflow.
bool decoder::flush_group(std::uint8_t*& out, int keep) {
  for (int i = ndigits_; i < 5; ++i) digits_[i] = 84;
  std::uint64_t v = digits_value(digits_);
  if (v > 0xffffffffu) {
    fail(error_kind::overflow, group_start_);
    return false;
  }
  std::uint8_t word[4];
  store_be32(word, static_cast<std::uint32_t>(v));
  std::memcpy(out, word, static_cast<std::size_t>(keep));
  out += keep;
  ndigits_ = 0;
  return true;
}

// Consumes one char at pos_ (not yet advanced); false after an error.
bool decoder::slow_char(unsigned char c, std::uint8_t*& out) {
  const std::uint64_t pos = pos_;
  if (lt_pending_) {  // '<' at offset 0: with '~' after it the opening "<~", else a digit
    lt_pending_ = false;
    if (c == '~') return true;
    digits_[0] = a_->dec[static_cast<unsigned char>('<')];
    ndigits_ = 1;
    group_start_ = 0;
  }
  if (std::uint8_t d = a_->dec[c]; d != kInvalid) {
    if (opt_.adobe && pos == 0 && c == '<') {
      lt_pending_ = true;
      return true;
    }
    if (ndigits_ == 0) group_start_ = pos;
    digits_[ndigits_++] = d;
    return ndigits_ < 5 || flush_group(out, 4);
  }
  if (is_fold(c)) {
    if (ndigits_ != 0) {  // only whole groups fold
      fail(error_kind::invalid_char, pos, c);
      return false;
    }
    std::memset(out, c == 'z' ? 0 : 0x20, 4);
    out += 4;
    return true;
  }
  if (opt_.ignore.contains(c)) return true;
  fail(error_kind::invalid_char, pos, c);
  return false;
}

// One group from the alphabet chars at the start of in[0, n), passing over skipped chars;
// returns the chars it used, or 0 (nothing written) if another char or a bad group comes first.
std::size_t decoder::gather_group(const char* in, std::size_t n, std::uint8_t* out) const {
  char g[5];
  std::size_t m = 0, j = 0;
  for (; m < 5 && j < n; ++j) {
    const std::uint8_t k = cls_[static_cast<unsigned char>(in[j])];
    if (k == 0) {
      g[m++] = in[j];
    } else if (k != 1) {
      return 0;
    }
  }
  return m == 5 && decode_group(g, out, *a_) ? j : 0;
}

// A skipped '\n' at chars 64..95 (where lines of 64 to 95 chars end): the text is wrapped,
// and the kernel would only decode up to it and fail its block (some 480 instructions on 4 KiB
// wrapped at 76). Two 16-byte compares: a class scan of the first line cost unwrapped text 120
// instructions, memchr 70. n >= kStageFrom.
bool decoder::starts_wrapped(const char* in, std::size_t) const {
  const __m128i nl = _mm_set1_epi8('\n');
  const __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 64)), nl);
  const __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + 80)), nl);
  return _mm_movemask_epi8(_mm_or_si128(a, b)) != 0 && cls_[static_cast<unsigned char>('\n')] == 1;
}

// Decodes in[0, n) as body text; returns the bytes written (check error_ after).
std::size_t decoder::run(const char* in, std::size_t n, std::uint8_t* out, bool stopped) {
  std::uint8_t* o = out;
  std::size_t i = 0;
  while (error_ == error_kind::none && i < n) {
    bool plain = ndigits_ == 0 && !lt_pending_ && !(opt_.adobe && pos_ == 0);
    if (plain && n - i >= 5) {
      if (!stopped && cls_ && n - i >= kStageFrom) stopped = starts_wrapped(in + i, n - i);
      if (!stopped) {
        std::size_t groups = (n - i) / 5;
        std::size_t done = k_->decode(in + i, groups, o, *a_);
        i += done * 5, pos_ += done * 5, o += done * 4;
        if (done == groups && i == n) break;
      }
      stopped = false;
      // A long rest is staged; in a short one the group the kernel stopped at is gathered
      // past its skipped chars and the kernel goes on after it (64 B of text wrapped at 76: 44
      // -> 31 ns; staging paid from some 160 chars, the char-by-char path never).
      if (!opt_.ignore.empty() && n - i >= 5 && n - i < kStageFrom && cls_) {
        if (std::size_t used = gather_group(in + i, n - i, o); used > 0) {
          i += used, pos_ += used, o += 4;
          continue;
        }
      } else if (!opt_.ignore.empty() && n - i >= kStageFrom) {
        std::size_t used = 0;
        if (std::size_t got = compacted(in + i, n - i, o, used); got > 0) {
          i += used, pos_ += used, o += got;
          continue;
        }
      }
    }
    // A run of skipped chars (a blank stretch, padding) passes in one go: char by char, each
    // step re-ran the staging above over everything after it (1 MiB of newlines: 30 s).
    if (cls_ && cls_[static_cast<unsigned char>(in[i])] == 1 && !lt_pending_ &&
        !(opt_.adobe && pos_ == 0)) {
      std::size_t j = i + 1;
      while (j < n && cls_[static_cast<unsigned char>(in[j])] == 1) ++j;
      pos_ += j - i, i = j;
      continue;
    }
    // One char through the general path; a kernel stop lands here too, and an error in
    // the group is found and placed by the same code.
    if (!slow_char(static_cast<unsigned char>(in[i]), o)) break;
    ++i, ++pos_;
  }
  return static_cast<std::size_t>(o - out);
}

// After update() decoded `done` whole groups on a group boundary: the stop and tail.
result decoder::update_tail(const char* in, std::size_t n, std::uint8_t* out, std::size_t done) {
  // The kernel stopped at in + 5 * done: run() does not call it there again.
  return state(4 * done + run(in + 5 * done, n - 5 * done, out + 4 * done, 5 * done < n - n % 5));
}

// update() off a group boundary (see base85.h for the common case).
result decoder::update_held(const char* in, std::size_t n, std::uint8_t* out) {
  if (error_ != error_kind::none) return state(0);
  if (!opt_.adobe) return state(run(in, n, out));
  // The stream so far is held_ + in; all of it but the last two chars is body.
  std::size_t total = nheld_ + n;
  if (total <= 2) {
    if (n > 0) std::memcpy(held_ + nheld_, in, n);
    nheld_ = static_cast<std::uint8_t>(total);
    return state(0);
  }
  std::size_t body = total - 2;
  std::size_t from_held = std::min<std::size_t>(nheld_, body);
  std::size_t w = run(held_, from_held, out);
  if (error_ == error_kind::none) w += run(in, body - from_held, out + w);
  if (error_ != error_kind::none) {  // decoding stopped at pos_: nothing after it is held
    nheld_ = 0;
    return state(w);
  }
  if (n >= 2) {
    std::memcpy(held_, in + n - 2, 2);
  } else {  // n == 1 after two held chars
    held_[0] = held_[1];
    held_[1] = in[0];
  }
  nheld_ = 2;
  return state(w);
}

// finish() with a partial group, adobe chars held back or an error (see base85.h).
result decoder::finish_held(std::uint8_t* out) {
  std::uint8_t* o = out;
  if (error_ == error_kind::none) {
    if (opt_.adobe && (nheld_ < 2 || held_[0] != '~' || held_[1] != '>')) {
      fail(error_kind::unterminated, pos_ + nheld_);
    } else if (lt_pending_) {  // "<~>": the '~' opens and closes, the body is empty
      lt_pending_ = false;
    } else if (ndigits_ == 1) {
      fail(error_kind::bad_tail, group_start_);
    } else if (ndigits_ > 1) {
      flush_group(o, ndigits_ - 1);
    }
  }
  return state(static_cast<std::size_t>(o - out));
}
std::size_t max_decoded_size(std::size_t n, const decode_options& opt) {
  if (opt.var == variant::a85) return 4 * n;
  return n / 5 * 4 + (n % 5 > 1 ? n % 5 - 1 : 0);
}

}  // namespace simdex::base85

namespace simdex::base85 {

std::size_t max_decoded_size(std::string_view in, const decode_options& opt) {
  if (opt.var != variant::a85) return max_decoded_size(in.size(), opt);
  // Counted in blocks of 255 into a byte counter, a loop the compiler vectorizes.
  const unsigned char y = opt.fold_spaces ? 'y' : 'z';
  std::size_t folds = 0;
  for (std::size_t i = 0; i < in.size(); i += 255) {
    std::size_t end = std::min(in.size(), i + 255);
    std::uint8_t block = 0;
    for (std::size_t j = i; j < end; ++j) {
      unsigned char c = static_cast<unsigned char>(in[j]);
      block = static_cast<std::uint8_t>(block + ((c == 'z') | (c == y)));
    }
    folds += block;
  }
  // Whole groups of the other chars, a final group of at most 3 bytes, 4 bytes per fold.
  return (in.size() - folds) / 5 * 4 + 3 + 4 * folds;
}

}  // namespace simdex::base85
