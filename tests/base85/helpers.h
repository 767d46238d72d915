// Shared helpers of the base85 tests: random data and one-shot wrappers returning strings.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "simdex/base85.h"

namespace simdex::base85::testing {

inline std::vector<std::uint8_t> random_bytes(std::size_t n, std::mt19937_64& g) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(g());
  return v;
}
inline std::vector<std::uint8_t> bytes_of(std::string_view s) { return {s.begin(), s.end()}; }

inline std::string enc(std::span<const std::uint8_t> in, const encode_options& o) {
  std::string out(encoded_size(in.size(), o), '\0');
  result r = encode(in, std::span<char>(out.data(), out.size()), o);
  out.resize(r.written);
  return out;
}
inline std::string enc(std::string_view s, const encode_options& o) { return enc(bytes_of(s), o); }

// Decoded bytes as a string, or "ERR:<kind>@<pos>".
inline std::string dec(std::string_view in, const decode_options& o) {
  std::vector<std::uint8_t> out(max_decoded_size(in, o));  // the tight bound must hold
  result r = decode(in, out, o);
  if (!r.ok()) return "ERR:" + std::string(error_name(r.error)) + "@" + std::to_string(r.position);
  return std::string(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(r.written));
}

// Feeds text to d one byte at a time, which never reaches the bulk kernels: an independent
// reference. Returns the first error, or success, with `written` the total bytes written.
inline result bytewise(decoder& d, std::string_view text, std::uint8_t* out) {
  result r;
  std::size_t w = 0;
  for (std::size_t i = 0; i < text.size() && r.ok(); ++i) {
    r = d.update(text.data() + i, 1, out + w);
    w += r.written;
  }
  r.written = w;
  return r;
}

inline encode_options eo(variant v, bool pad = false) {
  encode_options o;
  o.var = v;
  o.pad = pad;
  return o;
}
inline decode_options doo(variant v) { return default_decode_options(v); }

}  // namespace simdex::base85::testing
