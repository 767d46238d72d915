// Constants of the SIMD kernels that do not depend on vector width.
#pragma once

#include <cstdint>

namespace simdex::base85 {
namespace {

// floor(n / 7225) == (n * kDiv7225) >> 44 for every u32 n (checked exhaustively).
inline constexpr std::uint32_t kDiv7225 = 2434904643u;
inline constexpr int kDiv7225Shift = 44;
// floor(q / 7225) == (int)fma((float)q, kInv7225, kInv7225 / 2) for q < 594464 = 2^32 / 7225:
// the product is within 1e-5 of q / 7225 + 1/14450, which stays 6.9e-5 from an integer
// (checked exhaustively, and so is the multiply-then-add of SSE4.2, rounded twice). One float
// FMA instead of two 64-bit multiplies.
inline constexpr float kInv7225 = 1.0f / 7225.0f;
// floor(x / 85) == mulhi_u16(x, kDiv85) >> 4 for x < 7225 (checked exhaustively).
inline constexpr std::uint16_t kDiv85 = 12337;

}  // namespace
}  // namespace simdex::base85
