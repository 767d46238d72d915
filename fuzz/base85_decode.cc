// Diffs every level's base85 decode (bulk kernel and the streaming decoder around it) against
// the scalar reference on arbitrary text, and checks encode -> decode round trips.
// Input: byte 0 picks the variant and options (with bit 5, byte 1 a line width to wrap the
// rest at), the rest is the text (and the binary data).
// The one-shot decode() must agree with the streams except where it reports a missing "~>"
// first (it checks the end before decoding, as CPython does).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base85/kernels.h"

using namespace simdex;
using namespace simdex::base85;

namespace {

[[noreturn]] void die() { std::abort(); }

result run_decoder(const decode_options& o, const kernels* k, const char* text, std::size_t n,
                   std::vector<std::uint8_t>& out) {
  decoder d(o, k);
  out.assign(d.max_output(n) + decoder::kMaxFinish, 0);
  result r = d.update(text, n, out.data());
  if (!r.ok()) return r;
  result f = d.finish(out.data() + r.written);
  f.written += r.written;
  return f;
}

// Byte-at-a-time streaming never reaches the bulk kernels or compaction: the char-by-char
// path alone, an independent reference for results and error positions.
result run_bytewise(const decode_options& o, const char* text, std::size_t n,
                    std::vector<std::uint8_t>& out) {
  decoder d(o, &kScalarKernels);
  out.assign(4 * n + decoder::kMaxFinish, 0);
  std::size_t w = 0;
  for (std::size_t i = 0; i < n; ++i) {
    result r = d.update(text + i, 1, out.data() + w);
    w += r.written;
    if (!r.ok()) return {w, r.error, r.position, r.byte};
  }
  result f = d.finish(out.data() + w);
  return {w + f.written, f.error, f.position, f.byte};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const variant v = static_cast<variant>(data[0] % 3);
  decode_options o = default_decode_options(v);
  o.fold_spaces = data[0] & 4;
  o.adobe = data[0] & 8;
  if (data[0] & 16) o.ignore = char_set(" \n~zy<>\x80");  // folds and frame chars listed too
  const char* text = reinterpret_cast<const char*>(data + 1);
  std::size_t n = size - 1;
  std::string lines;  // with bit 5: the text cut into lines of a fixed width, as wrapped text is
  if ((data[0] & 32) && n > 1) {
    const std::size_t width = 1 + static_cast<unsigned char>(text[0]) % 90;
    for (std::size_t i = 1; i < n; i += width)
      lines.append(text + i, std::min(width, n - i)) += '\n';
    text = lines.data(), n = lines.size();
    o.ignore = char_set(" \n");
  }
  const alphabet& a = alphabet_of(v);

  std::vector<std::uint8_t> ref_out, out;
  const result ref = run_decoder(o, &kScalarKernels, text, n, ref_out);
  {
    std::vector<std::uint8_t> slow_out;
    const result slow = run_bytewise(o, text, n, slow_out);
    if (slow.error != ref.error || slow.position != ref.position) die();
    if (ref.ok() && (slow.written != ref.written ||
                     std::memcmp(slow_out.data(), ref_out.data(), ref.written) != 0))
      die();
  }
  {
    std::vector<std::uint8_t> one(max_decoded_size(std::string_view(text, n), o));
    const result r = decode(std::string_view(text, n), one, o);
    if (r.error == error_kind::unterminated) {
      if (!o.adobe || (n >= 2 && text[n - 2] == '~' && text[n - 1] == '>')) die();
    } else if (r.error != ref.error || r.position != ref.position || r.byte != ref.byte ||
               (r.ok() &&
                (r.written != ref.written ||
                 (r.written > 0 && std::memcmp(one.data(), ref_out.data(), r.written) != 0)))) {
      die();
    }
  }
  std::vector<std::uint8_t> k_ref(n / 5 * 4 + 1), k_out(n / 5 * 4 + 1);
  const std::size_t k_groups = kScalarKernels.decode(text, n / 5, k_ref.data(), a);

  std::vector<char> encoded;
  // Encode with pad and wrapping from the option byte, compared char for char with the scalar
  // encoder: the round trip below would not see a level that wraps or pads differently.
  encode_options wrapped;
  wrapped.var = v;
  wrapped.fold_spaces = o.fold_spaces;
  wrapped.adobe = o.adobe;
  wrapped.pad = data[0] & 64;
  wrapped.wrap = (data[0] & 128) ? 1 + size % 80 : 0;
  auto encode_with = [&](const kernels* k, std::vector<char>& to) {
    encoder enc(wrapped, k);
    to.assign(enc.max_output(size - 1) + encoder::kMaxFinish, 0);
    std::size_t w = enc.update(data + 1, size - 1, to.data());
    w += enc.finish(to.data() + w);
    to.resize(w);
  };
  std::vector<char> wrapped_ref, wrapped_out;
  encode_with(&kScalarKernels, wrapped_ref);
  for (int l = 1; l < kIsaCount; ++l) {
    const kernels* k = dispatch::exact(kernel_tables(), static_cast<isa>(l));
    if (!k) continue;
    if (k->decode(text, n / 5, k_out.data(), a) != k_groups) die();
    if (std::memcmp(k_out.data(), k_ref.data(), 4 * k_groups) != 0) die();
    result r = run_decoder(o, k, text, n, out);
    if (r.error != ref.error || r.position != ref.position || r.written != ref.written) die();
    if (ref.ok() && std::memcmp(out.data(), ref_out.data(), ref.written) != 0) die();

    encode_with(k, wrapped_out);
    if (wrapped_out != wrapped_ref) die();

    // Round trip of the same bytes taken as binary data.
    encode_options e;
    e.var = v;
    e.fold_spaces = o.fold_spaces;
    e.adobe = o.adobe;
    encoder enc(e, k);
    encoded.assign(enc.max_output(size - 1) + encoder::kMaxFinish, 0);
    std::size_t w = enc.update(data + 1, size - 1, encoded.data());
    w += enc.finish(encoded.data() + w);
    result back = run_decoder(o, k, encoded.data(), w, out);
    if (!back.ok() || back.written != size - 1 ||
        (size > 1 && std::memcmp(out.data(), data + 1, size - 1) != 0))
      die();
  }
  return 0;
}
