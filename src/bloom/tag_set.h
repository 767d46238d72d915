// An open-addressing set of 64-bit tags, each with the index of the item it came from: the
// distinct-value count behind a filter's size and the key sets a dataset lookup matches rows
// against. Slots are picked by the top bits of a multiplicative mix (tags that are XXH64 hashes
// need none; raw integer keys chosen to share low bits do), probed linearly.
#pragma once

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
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

// A byte string's tag for these sets, where equality is checked anyway: every byte counts,
// folded 8 at a time by multiply-xorshift (the last word overlapping), several times cheaper
// than XXH64 on short strings. Not a Parquet hash.
inline std::uint64_t bytes_tag(const std::uint8_t* p, std::size_t n) noexcept {
  auto load = [](const std::uint8_t* q, auto w) {
    std::memcpy(&w, q, sizeof(w));
    return static_cast<std::uint64_t>(w);
  };
  auto fold = [](std::uint64_t h, std::uint64_t w) {
    h = (h ^ w) * 0xBF58476D1CE4E5B9ull;
    return h ^ (h >> 31);
  };
  std::uint64_t h = 0x9E3779B97F4A7C15ull * (n + 1);
  if (n >= 8) {
    const std::uint8_t* last = p + n - 8;
    for (; p < last; p += 8) h = fold(h, load(p, std::uint64_t{}));
    return fold(h, load(last, std::uint64_t{}));
  }
  std::uint64_t w = 0;
  if (n >= 4)
    w = load(p, std::uint32_t{}) | load(p + n - 4, std::uint32_t{}) << 32;
  else if (n)
    w = std::uint64_t{p[0]} | std::uint64_t{p[n / 2]} << 8 | std::uint64_t{p[n - 1]} << 16;
  return fold(h, w);
}

// k byte-string keys (key j = data[offsets[j], offsets[j + 1]), not copied: the caller keeps
// them, offsets already checked) in a tag_set, a quarter full so a miss mostly ends at its
// first slot.
class byte_key_set {
 public:
  byte_key_set(const std::uint8_t* data, const std::int64_t* offsets, std::size_t k)
      : data_(data), offsets_(offsets), set_(k, 4) {
    for (std::size_t j = 0; j < k; ++j) {
      const std::uint8_t* p = key(j);
      const std::size_t n = len(j);
      longest_ = std::max(longest_, n);
      set_.add(bytes_tag(p, n), static_cast<std::uint32_t>(j),
               [&](std::uint32_t i) { return len(i) == n && std::memcmp(key(i), p, n) == 0; });
    }
  }
  // The index of the key equal to p[0, n) (the first of equal keys), or -1.
  // A value longer than every key is not read: a page's values can be far longer than the page
  // (DELTA_BYTE_ARRAY prefixes), and this keeps matching one to the longest key's length.
  std::int32_t find(const std::uint8_t* p, std::size_t n) const {
    std::int32_t found = -1;
    if (n > longest_) return found;
    set_.find(bytes_tag(p, n), [&](std::uint32_t j) {
      if (len(j) != n || std::memcmp(key(j), p, n) != 0) return false;
      found = static_cast<std::int32_t>(j);
      return true;
    });
    return found;
  }

 private:
  const std::uint8_t* key(std::size_t j) const { return data_ + offsets_[j]; }
  std::size_t len(std::size_t j) const {
    return static_cast<std::size_t>(offsets_[j + 1] - offsets_[j]);
  }
  const std::uint8_t* data_;
  const std::int64_t* offsets_;
  tag_set set_;
  std::size_t longest_ = 0;
};

}  // namespace simdex::bloom::detail
