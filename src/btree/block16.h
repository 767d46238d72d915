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

  // A block's one-lane shifts in registers, every lane computed (no branch on s): open16 puts
  // k at lane s and moves lanes [s, 15) up one (lane 15 drops out); close16 moves lanes
  // (s, 16) down one and fills lane 15.
  [[gnu::always_inline]] static void open16(S* kb, unsigned s, S k) noexcept {
    constexpr unsigned W = Lanes::kWidth, N = 16 / W;
    typename Lanes::vec v[N];
    for (unsigned j = 0; j < N; ++j) v[j] = Lanes::load(kb + j * W);
    for (unsigned j = 0; j < N; ++j) {
      auto up = Lanes::prev_lane(v[j], v[j == 0 ? 0 : j - 1]);
      Lanes::store(kb + j * W, Lanes::put(j * W, s, Lanes::pick(j * W, s + 1, v[j], up), k));
    }
  }
  // The block gets src's first c lanes and `fill` in the others.
  [[gnu::always_inline]] static void fill16(S* kb, const S* src, unsigned c, S fill) noexcept {
    constexpr unsigned W = Lanes::kWidth;
    auto f = Lanes::set1(fill);
    for (unsigned j = 0; j < 16; j += W)
      Lanes::store(kb + j, Lanes::pick(j, c, Lanes::load(src + j), f));
  }
  [[gnu::always_inline]] static void close16(S* kb, unsigned s, S fill) noexcept {
    constexpr unsigned W = Lanes::kWidth, N = 16 / W;
    typename Lanes::vec v[N + 1];
    for (unsigned j = 0; j < N; ++j) v[j] = Lanes::load(kb + j * W);
    v[N] = Lanes::set1(fill);
    for (unsigned j = 0; j < N; ++j)
      Lanes::store(kb + j * W, Lanes::pick(j * W, s, v[j], Lanes::next_lane(v[j], v[j + 1])));
  }
  static unsigned eq_mask16(const S* a, S x) noexcept { return mask16<true>(a, x); }
};

}  // namespace simdex::btree_detail
