// impl members: sorting a batch before it goes into the tree.
#pragma once

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "generic.h"

namespace simdex::btree_detail {

// Each key's place is the number of keys below it plus the equal ones before it: two block
// compares and two popcounts a key, with no data-dependent branch, where an insertion sort
// mispredicted about once a key. Equal keys keep their order, so a key's input position (ai,
// when given) travels with it and repeats stay in input order.
template <class Policy, std::size_t VS>
bool impl<Policy, VS>::rank_place(const S* a, unsigned c, S* out, const std::uint32_t* ai,
                                  std::uint32_t* ao) noexcept {
  unsigned live = (1u << c) - 1u, repeats = 0;
  for (unsigned i = 0; i < c; ++i) {
    S x = a[i];
    unsigned below = Policy::lt_mask16(a, x) & live;
    unsigned same_before = Policy::eq_mask16(a, x) & ((1u << i) - 1u);
    unsigned r = static_cast<unsigned>(std::popcount(below) + std::popcount(same_before));
    out[r] = x;
    if (ai) ao[r] = ai[i];
    repeats |= same_before;
  }
  return repeats != 0;
}

// The keys spread over about n/8 buckets of equal key range (group_by_range), each bucket is
// ranked into place, and one pass drops repeats: no pass per radix digit. With values, each
// key's input position goes along, and the values are gathered by it at the end.
template <class Policy, std::size_t VS>
std::size_t impl<Policy, VS>::sort_unique(S* keys, std::byte* vals, std::size_t n, bool keep_last) {
  if (n < kBucketSortMin || n > 0xffffffffu)
    return btree_detail::sort_unique<S>(keys, vals, VS, n, keep_last);
  const bool with_vals = VS > 0 && vals != nullptr;
  std::unique_ptr<S[]> tmp(new S[n + kBlockKeys]);  // a bucket's block may read past the last
  std::fill_n(tmp.get() + n, kBlockKeys, S{0});
  std::unique_ptr<std::uint32_t[]> at, order;
  if (with_vals) {
    at.reset(new std::uint32_t[n]);
    order.reset(new std::uint32_t[n]);
  }
  unsigned bits = std::clamp(static_cast<unsigned>(std::bit_width(n / 8)), 8u, 22u);
  std::vector<std::uint32_t> start = group_by_range(keys, n, bits, tmp.get(), at.get());
  if (!with_vals) {
    // Each bucket drops its own repeats (rank_place says whether it has any) and lands right
    // after the last: no pass over the whole batch for them.
    std::size_t w = 0;
    for (std::size_t b = 0; b + 1 < start.size(); ++b) {
      std::uint32_t lo = start[b], c = start[b + 1] - lo;
      S* to = keys + w;
      bool repeats = true;
      if (c <= kBlockKeys) {
        repeats = rank_place(tmp.get() + lo, c, to, nullptr, nullptr);
      } else {  // a crowded bucket (skewed batches, repeats)
        std::copy_n(tmp.get() + lo, c, to);
        sort_keys(to, c);
      }
      w += repeats ? static_cast<std::size_t>(std::unique(to, to + c) - to) : c;
    }
    return w;
  }
  for (std::size_t b = 0; b + 1 < start.size(); ++b) {
    std::uint32_t lo = start[b], c = start[b + 1] - lo;
    if (c <= kBlockKeys) {
      rank_place(tmp.get() + lo, c, keys + lo, at.get() + lo, order.get() + lo);
    } else {  // crowded: by key, then input position
      std::vector<std::pair<S, std::uint32_t>> kp(c);
      for (std::uint32_t i = 0; i < c; ++i) kp[i] = {tmp[lo + i], at[lo + i]};
      std::sort(kp.begin(), kp.end());
      for (std::uint32_t i = 0; i < c; ++i) std::tie(keys[lo + i], order[lo + i]) = kp[i];
    }
  }
  // Repeats sit in input order: keep the first of each run, or the last with keep_last.
  std::unique_ptr<std::byte[]> old(new std::byte[n * VS]);
  std::memcpy(old.get(), vals, n * VS);
  std::size_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    bool repeat = m > 0 && keys[m - 1] == keys[i];
    if (repeat && !keep_last) continue;
    std::size_t to = repeat ? m - 1 : m++;
    keys[to] = keys[i];
    std::memcpy(vals + to * VS, old.get() + std::size_t{order[i]} * VS, VS);
  }
  return m;
}

}  // namespace simdex::btree_detail
