// Byte layout of 4 groups (20 chars -> 16 bytes) in one 128-bit lane for the vpshufb-based
// decoders (SSE4.2, AVX2 and AVX-512BW), broadcast to every lane. Internal linkage.
#pragma once

#include <cstdint>

namespace simdex::base85 {
namespace {

struct layout_tables {
  alignas(16) std::uint8_t dec_prefix_l[16];  // dword g: chars 5g..5g+3 from L (chars 0..15)
  alignas(16) std::uint8_t dec_prefix_m[16];  //   ... from M (chars 4..19)
  alignas(16) std::uint8_t dec_last[16];      // dword g byte 0: char 5g+4 from M
};

constexpr std::uint8_t kZero = 0x80;  // vpshufb index that yields 0

constexpr layout_tables make_layout() {
  layout_tables t{};
  for (int j = 0; j < 16; ++j) {
    int g = j / 4, k = j % 4, c = 5 * g + k;
    t.dec_prefix_l[j] = c < 15 ? static_cast<std::uint8_t>(c) : kZero;
    t.dec_prefix_m[j] = c < 15 ? kZero : static_cast<std::uint8_t>(c - 4);
    t.dec_last[j] = k == 0 ? static_cast<std::uint8_t>(5 * g) : kZero;
  }
  return t;
}
inline constexpr layout_tables kLayout = make_layout();

}  // namespace
}  // namespace simdex::base85
