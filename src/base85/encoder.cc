// Streaming encoder: whole groups go through the bulk kernel, straight into the output when
// there is no line wrapping, else through a small staging buffer that put() breaks into lines.
#include <algorithm>

#include "kernels.h"

namespace simdex::base85 {

namespace {
// CPython's a85encode: wrapcol is at least 2 with adobe (so "<~" fits), at least 1 otherwise.
std::size_t effective_wrap(const encode_options& o) {
  if (o.wrap == 0) return 0;
  return std::max<std::size_t>(o.wrap, o.var == variant::a85 && o.adobe ? 2 : 1);
}
bool framed(const encode_options& o) { return o.var == variant::a85 && o.adobe; }
}  // namespace

encoder::encoder(const encode_options& opt, const kernels* k)
    : opt_(opt),
      k_(k ? k : &active_kernels()),
      a_(&alphabet_of(opt.var)),
      encode_groups_(k_->encode),
      wrap_(effective_wrap(opt)),
      plain_(wrap_ == 0 && opt.var != variant::a85) {}

std::size_t encoder::max_output(std::size_t n) const {
  std::size_t chars = (npending_ + n) / 4 * 5 + 2;  // + "<~"
  return wrap_ ? chars + chars / wrap_ + 2 : chars;
}

std::size_t encoder::put(const char* s, std::size_t n, char* out) {
  if (wrap_ == 0) {
    std::memcpy(out, s, n);
    return n;
  }
  char* o = out;
  while (n > 0) {
    if (column_ == wrap_) {  // break lazily, so the output never ends with '\n'
      *o++ = '\n';
      column_ = 0;
    }
    std::size_t take = std::min(n, wrap_ - column_);
    std::memcpy(o, s, take);
    o += take, s += take, n -= take, column_ += take;
  }
  return static_cast<std::size_t>(o - out);
}

std::size_t encoder::start(char* out) {
  started_ = true;
  return framed(opt_) ? put("<~", 2, out) : 0;
}

// Encodes whole groups, folding 'z'/'y' for a85; without wrapping the kernel writes in place.
std::size_t encoder::encode_groups(const std::uint8_t* in, std::size_t groups, char* out) {
  const bool stop_zero = opt_.var == variant::a85;
  const bool stop_spaces = stop_zero && opt_.fold_spaces;
  char* o = out;
  constexpr std::size_t kStage = 256;  // groups per staging round when wrapping
  char stage[kStage * 5];
  while (groups > 0) {
    std::size_t want = wrap_ ? std::min(groups, kStage) : groups;
    char* dst = wrap_ ? stage : o;
    std::size_t done = k_->encode(in, want, dst, *a_, stop_zero, stop_spaces);
    std::size_t chars = done * 5;
    if (done < want) {  // a folded group
      dst[chars++] = load_be32(in + 4 * done) == 0 ? 'z' : 'y';
      ++done;
    }
    o += wrap_ ? put(stage, chars, o) : chars;
    in += 4 * done;
    groups -= done;
  }
  return static_cast<std::size_t>(o - out);
}

std::size_t encoder::update_general(const std::uint8_t* in, std::size_t n, char* out) {
  char* o = out;
  if (!started_) o += start(o);
  if (n == 0) return static_cast<std::size_t>(o - out);  // `in` may be null
  if (npending_ > 0) {
    std::size_t take = std::min<std::size_t>(n, 4 - npending_);
    std::memcpy(pending_ + npending_, in, take);
    npending_ = static_cast<std::uint8_t>(npending_ + take);
    in += take, n -= take;
    if (npending_ < 4) return static_cast<std::size_t>(o - out);
    o += encode_groups(pending_, 1, o);
    npending_ = 0;
  }
  std::size_t groups = n / 4;
  o += encode_groups(in, groups, o);
  npending_ = static_cast<std::uint8_t>(n % 4);
  std::memcpy(pending_, in + 4 * groups, npending_);
  return static_cast<std::size_t>(o - out);
}

std::size_t encoder::finish_general(char* out) {
  char* o = out;
  if (!started_) o += start(o);
  if (npending_ > 0) {
    std::memset(pending_ + npending_, 0, 4 - npending_);
    if (opt_.pad) {
      o += encode_groups(pending_, 1, o);
    } else {  // a partial group is never folded
      char g[5];
      encode_word(load_be32(pending_), g, *a_);
      o += put(g, npending_ + 1u, o);
    }
    npending_ = 0;
  }
  if (framed(opt_)) {
    if (wrap_ && column_ + 2 > wrap_) {  // "~>" goes on a line of its own, as in CPython
      *o++ = '\n';
      column_ = 0;
    }
    std::memcpy(o, "~>", 2);
    o += 2;
    column_ += 2;
  }
  return static_cast<std::size_t>(o - out);
}

std::size_t encoded_size(std::size_t n, const encode_options& opt) {
  std::size_t tail = n % 4 == 0 ? 0 : (opt.pad ? 5 : n % 4 + 1);
  std::size_t body = n / 4 * 5 + tail + (framed(opt) ? 2 : 0);  // "<~" counts toward wrapping
  std::size_t wrap = effective_wrap(opt);
  std::size_t breaks = 0;
  if (wrap && body > 0) {
    breaks = (body - 1) / wrap;
    if (framed(opt) && body - breaks * wrap + 2 > wrap) ++breaks;
  }
  // a85: folding shortens the body, which can move "~>" onto a new line: one spare.
  std::size_t spare = opt.var == variant::a85 && wrap ? 1 : 0;
  return body + breaks + (framed(opt) ? 2 : 0) + spare;
}

}  // namespace simdex::base85
