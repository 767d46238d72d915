// Streaming decoder. With no partial group pending, runs of whole groups go through the bulk
// kernel straight from the input. Where skipped chars (line breaks) stop it, the text goes
// through a staging buffer that the kernel decodes: line bodies copied as they are when the
// text has fixed-width lines, else compacted block by block by compact(). Anything else
// ('z'/'y',
// framing, a chunk boundary, an error) is handled one char at a time until a group boundary,
// and that path alone decides errors and their positions. With adobe the body is what lies
// between an optional leading "<~" and the final two chars, which must be "~>" (CPython's
// rule), so the last two chars seen wait until more input or finish() shows what they are.
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
}

namespace {

constexpr std::size_t kStage = 4000;        // chars per staged block: a multiple of 5
constexpr std::size_t kMinLineStage = 320;  // after a line stage stopped at a bad group
constexpr std::size_t kStageFrom = 400;     // input chars left that make staging worth its setup

// Text wrapped at a fixed width: a run of `run` skipped chars (a line break) every `period`
// chars, the next run starting `next` chars on.
struct line_layout {
  std::size_t period = 0, run = 0, next = 0;
};

// Fixed-width lines at the start of in[0, n): a body of alphabet chars, a run of skipped chars,
// a body as long as the first can be, and the same length of run again.
bool find_lines(const char* in, std::size_t n, const std::uint8_t* cls, line_layout& lines) {
  const std::size_t end = std::min<std::size_t>(n, 600);
  auto run_from = [&](std::size_t i, std::uint8_t k) {
    while (i < end && cls[static_cast<unsigned char>(in[i])] == k) ++i;
    return i;
  };
  const std::size_t s1 = run_from(0, 0), e1 = run_from(s1, 1);
  const std::size_t s2 = run_from(e1, 0), e2 = run_from(s2, 1);
  if (e1 == s1 || e2 - s2 != e1 - s1 || e2 >= end || s2 - s1 < 10) return false;
  lines = {.period = s2 - s1, .run = e1 - s1, .next = s1};
  return true;
}

// Whole lines, the common case of copy_lines: from in + i (right after a run) while a line
// fits under cap and the input holds 16 chars from the next run at b on; false at a run that is
// not all skipped chars. N = 1..8: the body is N 16-byte moves, unrolled, and the run is at
// most 16 chars (so within the input); N = 0: any body or run. A loop of moves and a loop over
// the run cost some 50 instructions a 76-char line, about as many as decoding it.
bool all_skipped(const char* p, std::size_t len, const std::uint8_t* cls) {
  for (std::size_t r = 0; r < len; ++r)
    if (cls[static_cast<unsigned char>(p[r])] != 1) return false;
  return true;
}

template <std::size_t N>
bool copy_whole_lines(const char* in, std::size_t n, char* stage, std::size_t cap,
                      const std::uint8_t* cls, const line_layout& l, std::size_t& m, std::size_t& i,
                      std::size_t& b) {
  const std::size_t run = l.run, period = l.period, w = period - run;
  // The line count up front and pointers in the loop: a store through char* would make every
  // reference and bound a reload.
  std::size_t lines =
      std::min(cap - m >= w ? (cap - m) / w : 0, n >= b + 16 ? (n - 16 - b) / period + 1 : 0);
  if constexpr (N == 0) lines = std::min(lines, n >= b + run ? (n - run - b) / period + 1 : 0);
  const char* src = in + i;
  const char* brk = in + b;
  char* dst = stage + m;
  bool ok = true;
  for (; lines > 0; --lines, src += period, brk += period) {
    if constexpr (N > 0) {
      for (std::size_t k = 0; k < N; ++k) std::memcpy(dst + 16 * k, src + 16 * k, 16);
    } else {
      for (std::size_t k = 0; k < w; k += 16) std::memcpy(dst + k, src + k, 16);
    }
    dst += w;
    if (cls[static_cast<unsigned char>(brk[0])] != 1 ||
        (run > 1 && !all_skipped(brk + 1, run - 1, cls))) {
      ok = false;
      break;
    }
  }
  m = static_cast<std::size_t>(dst - stage);
  b = static_cast<std::size_t>(brk - in);
  i = ok ? b - period + run : static_cast<std::size_t>(src - in);
  return ok;
}
using copy_whole_lines_fn = bool (*)(const char*, std::size_t, char*, std::size_t,
                                     const std::uint8_t*, const line_layout&, std::size_t&,
                                     std::size_t&, std::size_t&);
constexpr copy_whole_lines_fn kCopyWholeLines[9] = {
    copy_whole_lines<0>, copy_whole_lines<1>, copy_whole_lines<2>,
    copy_whole_lines<3>, copy_whole_lines<4>, copy_whole_lines<5>,
    copy_whole_lines<6>, copy_whole_lines<7>, copy_whole_lines<8>};

// Copies the line bodies of in[0, n) to stage, at most cap chars, and checks the runs between
// them; stops at the end of the input or before a run that is not all skipped chars. The
// bodies are not checked here: the decode kernel stops at any char outside the alphabet.
std::size_t copy_lines(const char* in, std::size_t n, char* stage, std::size_t cap,
                       const std::uint8_t* cls, const line_layout& l) {
  std::size_t m = 0, i = 0, b = l.next;
  auto copy = [&](std::size_t len) {
    if (i + len + 16 <= n) {  // whole 16-byte moves; the stage has room for the excess
      for (std::size_t k = 0; k < len; k += 16) std::memcpy(stage + m + k, in + i + k, 16);
    } else {
      std::memcpy(stage + m, in + i, len);
    }
    m += len, i += len;
  };
  copy(std::min({b, cap, n}));
  if (i != b || b + l.run > n || !all_skipped(in + b, l.run, cls)) return m;
  i = b + l.run;
  b += l.period;
  const std::size_t chunks = (l.period - l.run + 15) / 16;
  if (!kCopyWholeLines[l.run <= 16 && chunks < 9 ? chunks : 0](in, n, stage, cap, cls, l, m, i, b))
    return m;
  copy(std::min({b - i, cap - m, n - i}));
  return m;
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
  if (!cls_) {  // on first use: small inputs never pay for it
    if (opt_.ignore.bits == char_set(kWhitespace).bits) {
      cls_ = kWhitespaceClasses[static_cast<int>(opt_.var)].cls;
    } else {
      build_classes(own_cls_, *a_, opt_.ignore, opt_.var == variant::a85, opt_.fold_spaces);
      cls_ = own_cls_;
    }
  }
  alignas(64) char buf[kStage + 64 + 4096];
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
        std::size_t m = copy_lines(in + used, n - used, stage, line_stage_, cls_, lines);
        std::size_t groups = m / 5;
        std::size_t done = groups ? k_->decode(stage, groups, out + written, *a_) : 0;
        std::size_t runs = runs_behind(5 * done, lines);
        std::size_t behind = 5 * done + runs * lines.run;
        lines.next = lines.next + runs * lines.period - behind;
        written += 4 * done;
        used += behind;
        if (done < groups) line_stage_ = kMinLineStage;
        if (done < groups || m < line_stage_ || used == n) break;
        line_stage_ = std::min(2 * line_stage_, kStage);
      }
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

// Decodes in[0, n) as body text; returns the bytes written (check error_ after).
std::size_t decoder::run(const char* in, std::size_t n, std::uint8_t* out, bool stopped) {
  std::uint8_t* o = out;
  std::size_t i = 0;
  while (error_ == error_kind::none && i < n) {
    bool plain = ndigits_ == 0 && !lt_pending_ && !(opt_.adobe && pos_ == 0);
    if (plain && n - i >= 5) {
      if (!stopped) {
        std::size_t groups = (n - i) / 5;
        std::size_t done = k_->decode(in + i, groups, o, *a_);
        i += done * 5, pos_ += done * 5, o += done * 4;
        if (done == groups && i == n) break;
      }
      stopped = false;
      // Staging pays for its setup (and, for an ignore set other than whitespace, for building
      // its class table once per decoder); below a few hundred chars the char-by-char path
      // between kernel runs costs less.
      if (!opt_.ignore.empty() && n - i >= 5 && (cls_ || n - i >= kStageFrom)) {
        std::size_t used = 0;
        if (std::size_t got = compacted(in + i, n - i, o, used); got > 0) {
          i += used, pos_ += used, o += got;
          continue;
        }
      }
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
