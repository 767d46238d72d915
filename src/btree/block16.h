// The per-block searches every SIMD policy shares: a 16-key block is 16 / kWidth vectors, and
// each vector's compare gives kWidth bits of the block's mask. `Lanes` supplies the width and
// the two compares of one vector against a broadcast key (lt_bits, eq_bits).
#pragma once

#include <immintrin.h>

namespace simdex::btree_detail {

template <class Lanes, class S>
struct block16 {
  // Bit i set where a[i] < x (lt) or a[i] == x (eq), over one 16-key block.
  template <bool kEq>
  static unsigned mask16(const S* a, S x) noexcept {
    auto kv = Lanes::set1(x);
    unsigned bits = 0;
    for (unsigned i = 0; i < 16; i += Lanes::kWidth)
      bits |= (kEq ? Lanes::eq_bits(a + i, kv) : Lanes::lt_bits(a + i, kv)) << i;
    return bits;
  }
  static unsigned count_lt16(const S* a, S x) noexcept {
    return static_cast<unsigned>(_mm_popcnt_u32(mask16<false>(a, x)));
  }
  static unsigned lt_mask16(const S* a, S x) noexcept { return mask16<false>(a, x); }
  static unsigned eq_mask16(const S* a, S x) noexcept { return mask16<true>(a, x); }
};

}  // namespace simdex::btree_detail
