// The membership filter of a btree: a split-block bloom filter over the tree's stored keys
// that large batch lookups consult before the tree, so that absent keys cost a probe of a
// filter a seventh of the tree's size instead of a trip through its leaves. It answers "maybe
// present" for every key the tree holds (inserts add to it; erases leave their bits, which
// only costs false positives), so the tree is asked about the maybes alone. See docs/btree.md,
// "Batch lookups of absent keys".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "simdex/memory.h"

namespace simdex::btree_detail {

class membership {
 public:
  // Trees smaller than this answer large batches from the caches anyway: no filter.
  static constexpr std::size_t kMinKeys = std::size_t{1} << 16;
  // Keys of a width of 4 or 8 bytes (the tree's stored keys), sized for `keys` of them.
  membership(std::size_t keys, std::size_t width, page_size pages);
  ~membership();
  membership(const membership&) = delete;
  membership& operator=(const membership&) = delete;

  void add(const void* keys, std::size_t n);
  // One key: hash() it and ask for its block's line first (before the tree's own edit, so the
  // two misses overlap), add_hash() once the key went in.
  std::uint64_t hash(const void* key) const noexcept;
  void add_hash(std::uint64_t h) noexcept;
  // Bit i of maybe[i / 64] (LSB first; the last word zero-padded) is 0 when keys[i] is surely
  // absent, else 1; returns how many are 1. A batch that probes most of the filter's lines
  // reads it in order first, so a cold filter streams in instead of arriving one random miss
  // at a time.
  std::size_t check(const void* keys, std::size_t n, std::uint64_t* maybe) const;
  std::size_t bytes() const noexcept;

  // Keys added and erased since the build. Past a limit the filter is dropped (and rebuilt
  // for a later batch at the tree's new size): added ones fill it up, erased ones linger.
  void added(std::size_t n) noexcept { added_ += n; }
  void erased(std::size_t n) noexcept { erased_ += n; }
  bool worn() const noexcept { return added_ > built_for_ || erased_ > built_for_ / 2; }

 private:
  struct impl;
  std::unique_ptr<impl> p_;
  std::size_t width_, built_for_, added_ = 0, erased_ = 0;
};

}  // namespace simdex::btree_detail
