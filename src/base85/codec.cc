// One-shot encode/decode: the streaming objects run over the whole input at once.
#include "kernels.h"

namespace simdex::base85 {

result encode(std::span<const std::uint8_t> in, std::span<char> out, const encode_options& opt) {
  if (out.size() < encoded_size(in.size(), opt)) return {0, error_kind::short_output, 0};
  encoder e(opt);
  std::size_t n = e.update(in.data(), in.size(), out.data());
  n += e.finish(out.data() + n);
  return {n, error_kind::none, 0};
}

result decode(std::string_view in, std::span<std::uint8_t> out, const decode_options& opt) {
  if (out.size() < max_decoded_size(in, opt)) return {0, error_kind::short_output, 0};
  // CPython checks the closing "~>" before anything else; so does the one-shot call.
  if (opt.var == variant::a85 && opt.adobe && !in.ends_with("~>"))
    return {0, error_kind::unterminated, in.size()};
  decoder d(opt);
  result r = d.update(in.data(), in.size(), out.data());
  if (!r.ok()) return r;
  result f = d.finish(out.data() + r.written);
  f.written += r.written;
  return f;
}

}  // namespace simdex::base85
