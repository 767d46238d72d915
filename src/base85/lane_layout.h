// Per-128-bit-lane byte layouts of 4 groups (16 bytes <-> 20 chars) for the vpshufb-based
// kernels (decode: AVX2 and AVX-512BW; encode: AVX-512BW, avx2.cc has its own); tables hold
// two lanes, broadcast as needed. Internal linkage.
#pragma once

#include <cstdint>

namespace simdex::base85 {
namespace {

struct layout_tables {
  alignas(32) std::uint8_t enc_a_x[32];  // output chars 0..15 of a lane from X (d3 d4 d1 d2)
  alignas(32) std::uint8_t enc_a_d[32];  // ... and from D0 (byte 4g)
  alignas(32) std::uint8_t enc_b_x[32];  // output chars 4..19 of a lane
  alignas(32) std::uint8_t enc_b_d[32];
  alignas(32) std::uint8_t dec_prefix_l[32];  // lane g: chars 5g..5g+3 from L (chars 0..15)
  alignas(32) std::uint8_t dec_prefix_m[32];  //   ... from M (chars 4..19)
  alignas(32) std::uint8_t dec_last[32];      // lane g byte 0: char 5g+4 from M
};

constexpr std::uint8_t kZero = 0x80;  // vpshufb index that yields 0

constexpr layout_tables make_layout() {
  layout_tables t{};
  constexpr int kPick[5] = {-1, 2, 3, 0, 1};  // digit k of a group at byte 4g+kPick[k] of X
  for (int lane = 0; lane < 2; ++lane)
    for (int j = 0; j < 16; ++j) {
      int b = 16 * lane + j;
      for (int half = 0; half < 2; ++half) {  // half 0: chars j, half 1: chars j + 4
        int c = j + 4 * half, g = c / 5, k = c % 5;
        std::uint8_t from_x = k == 0 ? kZero : static_cast<std::uint8_t>(4 * g + kPick[k]);
        std::uint8_t from_d = k == 0 ? static_cast<std::uint8_t>(4 * g) : kZero;
        (half ? t.enc_b_x : t.enc_a_x)[b] = from_x;
        (half ? t.enc_b_d : t.enc_a_d)[b] = from_d;
      }
      int g = j / 4, k = j % 4, c = 5 * g + k;
      t.dec_prefix_l[b] = c < 15 ? static_cast<std::uint8_t>(c) : kZero;
      t.dec_prefix_m[b] = c < 15 ? kZero : static_cast<std::uint8_t>(c - 4);
      t.dec_last[b] = k == 0 ? static_cast<std::uint8_t>(5 * g) : kZero;
    }
  return t;
}
inline constexpr layout_tables kLayout = make_layout();

}  // namespace
}  // namespace simdex::base85
