// impl members: sorting a batch before it goes into the tree.
#pragma once

#include <algorithm>
#include <bit>
#include <memory>

#include "generic.h"

namespace simdex::btree_detail {

// Each key's place is the number of keys below it plus the equal ones before it: two block
// compares and two popcounts a key, with no data-dependent branch, where an insertion sort
// mispredicted about once a key.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::rank_place(const S* a, unsigned c, S* out) noexcept {
  unsigned live = (1u << c) - 1u;
  for (unsigned i = 0; i < c; ++i) {
    S x = a[i];
    unsigned below = Policy::lt_mask16(a, x) & live;
    unsigned same_before = Policy::eq_mask16(a, x) & ((1u << i) - 1u);
    out[std::popcount(below) + std::popcount(same_before)] = x;
  }
}

// The keys spread over about n/8 buckets of equal key range (group_by_range), each bucket is
// ranked into place, and one pass drops repeats: no pass per radix digit.
template <class Policy, std::size_t VS>
std::size_t impl<Policy, VS>::sort_unique(S* keys, std::byte* vals, std::size_t n, bool keep_last) {
  if (vals != nullptr || n < kBucketSortMin || n > 0xffffffffu)
    return btree_detail::sort_unique<S>(keys, vals, VS, n, keep_last);
  std::unique_ptr<S[]> tmp(new S[n + kBlockKeys]);  // a bucket's block may read past the last
  std::fill_n(tmp.get() + n, kBlockKeys, S{0});
  unsigned bits = std::clamp(static_cast<unsigned>(std::bit_width(n / 8)), 8u, 22u);
  std::vector<std::uint32_t> start = group_by_range(keys, n, bits, tmp.get(), nullptr);
  for (std::size_t b = 0; b + 1 < start.size(); ++b) {
    std::uint32_t lo = start[b], c = start[b + 1] - lo;
    if (c <= kBlockKeys) {
      rank_place(tmp.get() + lo, c, keys + lo);
    } else {  // a crowded bucket (skewed batches, repeats)
      std::copy_n(tmp.get() + lo, c, keys + lo);
      sort_keys(keys + lo, c);
    }
  }
  return static_cast<std::size_t>(std::unique(keys, keys + n) - keys);
}

}  // namespace simdex::btree_detail
