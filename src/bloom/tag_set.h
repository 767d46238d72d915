// An open-addressing set of 64-bit tags, each with the index of the item it came from: the
// distinct-value count behind a filter's size and the key sets a dataset lookup matches rows
// against. Slots are picked by the top bits of a multiplicative mix (tags that are XXH64 hashes
// need none; raw integer keys chosen to share low bits do), probed linearly.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace simdex::bloom::detail {

class tag_set {
 public:
  // Room for `items` at most 1 / `slots_per_item` full.
  tag_set(std::size_t items, std::size_t slots_per_item) {
    std::size_t cap = 16;
    while (cap < slots_per_item * items) cap <<= 1;
    mask_ = cap - 1;
    shift_ = 64 - std::countr_zero(cap);
    tags_.resize(cap);
    index_.assign(cap, 0);
  }
  // Adds item i with its tag unless an item held with the same tag is equal to it (`same(j)`
  // for the held item j); returns whether it was added.
  template <class Same>
  bool add(std::uint64_t tag, std::uint32_t i, Same same) {
    std::size_t s = slot(tag);
    for (; index_[s]; s = (s + 1) & mask_)
      if (tags_[s] == tag && same(index_[s] - 1)) return false;
    tags_[s] = tag;
    index_[s] = i + 1;
    return true;
  }
  // Whether an item held with this tag satisfies `equal(its index)`.
  template <class Equal>
  bool find(std::uint64_t tag, Equal equal) const {
    for (std::size_t s = slot(tag); index_[s]; s = (s + 1) & mask_)
      if (tags_[s] == tag && equal(index_[s] - 1)) return true;
    return false;
  }

 private:
  std::size_t slot(std::uint64_t tag) const {
    return static_cast<std::size_t>((tag * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  std::vector<std::uint64_t> tags_;
  std::vector<std::uint32_t> index_;  // item index + 1; 0: empty slot
  std::size_t mask_ = 0;
  int shift_ = 0;
};

// Equal tags mean equal items (the tag is the value itself, or only the tag counts).
inline bool same_tag(std::uint32_t) { return true; }

}  // namespace simdex::bloom::detail
