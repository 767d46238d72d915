// The three alphabets, built at compile time from their spec strings.
#include <iterator>

#include "kernels.h"

namespace simdex::base85 {
namespace {

constexpr alphabet make_alphabet(const char* chars) {
  alphabet a{};
  for (int i = 0; i < 256; ++i) a.dec[i] = kInvalid;
  for (int d = 0; d < 85; ++d) {
    a.enc[d] = static_cast<std::uint8_t>(chars[d]);
    a.dec[static_cast<unsigned char>(chars[d])] = static_cast<std::uint8_t>(d);
  }
  a.contiguous = true;
  for (int d = 0; d < 85; ++d) a.contiguous = a.contiguous && chars[d] == chars[0] + d;
  constexpr int kRunStart[4] = {0, 10, 36, 62};
  a.runs = true;
  for (int r = 0; r < 3; ++r) {
    a.run_offset[r] = static_cast<std::uint8_t>(chars[kRunStart[r]] - kRunStart[r]);
    for (int d = kRunStart[r]; d < kRunStart[r + 1]; ++d)
      a.runs = a.runs && chars[d] == chars[kRunStart[r]] + (d - kRunStart[r]);
  }
  std::uint8_t fix[32] = {};
  for (int d = 62; d < 85; ++d)
    fix[d - 62] = static_cast<std::uint8_t>(chars[d] - d - a.run_offset[2]);
  for (int i = 0; i < 16; ++i) {
    a.punct_fix_rows[0][i] = fix[i];
    a.punct_fix_rows[1][i] = fix[16 + i] ^ fix[i];
  }
  for (int c = 32; c < 128; ++c)
    a.dec_xor_rows[(c - 32) / 16][c % 16] = a.dec[c] ^ (c < 48 ? 0 : a.dec[c - 16]);
  return a;
}

constexpr char kB85[] =
    "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~";
constexpr char kZ85[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
constexpr char kA85[] =
    "!\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstu";
static_assert(sizeof kB85 == 86 && sizeof kZ85 == 86 && sizeof kA85 == 86);

}  // namespace

constexpr alphabet kAlphabets[3] = {make_alphabet(kB85), make_alphabet(kZ85), make_alphabet(kA85)};
namespace {
constexpr class_table whitespace_classes(int v) {
  class_table t{};
  build_classes(t.cls, kAlphabets[v], char_set(kWhitespace), v == 2, false);
  return t;
}
}  // namespace
constexpr class_table kWhitespaceClasses[3] = {whitespace_classes(0), whitespace_classes(1),
                                               whitespace_classes(2)};

// The vpshufb kernels (AVX2, AVX-512BW) encode through the runs.
static_assert(kAlphabets[0].runs && kAlphabets[1].runs && kAlphabets[2].runs);

// Names in enum order.
constexpr const char* kVariantNames[] = {"b85", "z85", "a85"};
constexpr const char* kErrorNames[] = {"none",
                                       "invalid character",
                                       "overflow",
                                       "1-char final group",
                                       "output buffer too small",
                                       "no closing ~>"};

const char* variant_name(variant v) noexcept {
  auto i = static_cast<std::size_t>(v);
  return i < std::size(kVariantNames) ? kVariantNames[i] : "?";
}

const char* error_name(error_kind k) noexcept {
  auto i = static_cast<std::size_t>(k);
  return i < std::size(kErrorNames) ? kErrorNames[i] : "?";
}

}  // namespace simdex::base85
