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
  // A block's one-lane shifts (block16 has the SIMD ones): open16 puts k at lane s and moves
  // lanes [s, 15) up one; close16 moves lanes (s, 16) down one and fills lane 15; fill16 copies
  // src's first c lanes and fills the rest.
  static void open16(S* kb, unsigned s, S k) noexcept {
    for (unsigned i = 15; i > s; --i) kb[i] = kb[i - 1];
    kb[s] = k;
  }
  static void close16(S* kb, unsigned s, S fill) noexcept {
    for (unsigned i = s; i < 15; ++i) kb[i] = kb[i + 1];
    kb[15] = fill;
  }
  static void fill16(S* kb, const S* src, unsigned c, S fill) noexcept {
    for (unsigned i = 0; i < 16; ++i) kb[i] = i < c ? src[i] : fill;
  }
  // The same over lanes of another width (a map's 4- and 8-byte value slots).
  template <class E>
  using block_of = scalar_policy<E>;
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
