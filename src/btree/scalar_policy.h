// Scalar node search: the reference every SIMD level is tested against.
#pragma once

#include <cstdint>

namespace simdex::btree_detail {

template <class S>
struct scalar_policy {
  using key = S;
  static constexpr const char* kName = "scalar";
  // Number of a[i] <= x for i < m (m <= 64).
  static unsigned count_le(const S* a, unsigned m, S x) noexcept {
    unsigned c = 0;
    for (unsigned i = 0; i < m; ++i) c += a[i] <= x;
    return c;
  }
  // Number of a[i] < x over one 16-key block.
  static unsigned count_lt16(const S* a, S x) noexcept {
    unsigned c = 0;
    for (unsigned i = 0; i < 16; ++i) c += a[i] < x;
    return c;
  }
  // Bit i set where a[i] < x, over one 16-key block.
  static unsigned lt_mask16(const S* a, S x) noexcept {
    unsigned m = 0;
    for (unsigned i = 0; i < 16; ++i) m |= unsigned{a[i] < x} << i;
    return m;
  }
  // Bit i set where a[i] == x, over one 16-key block.
  static unsigned eq_mask16(const S* a, S x) noexcept {
    unsigned m = 0;
    for (unsigned i = 0; i < 16; ++i) m |= unsigned{a[i] == x} << i;
    return m;
  }
};

}  // namespace simdex::btree_detail
