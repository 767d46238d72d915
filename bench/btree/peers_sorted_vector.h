// The read-only ceiling: a sorted std::vector searched with std::lower_bound (values, for the
// map form, in a parallel vector). It joins read workloads and bulk build only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "arena.h"

namespace simdex::bench::btree {

template <class K, bool Map>
class sorted_vector_adapter {
 public:
  using key_type = K;
  static constexpr bool kMap = Map, kOrdered = true, kMutable = false, kBatch = false;

  explicit sorted_vector_adapter(page_size pages) : arena_(std::make_unique<arena>(pages)) {
    reset();
  }
  ~sorted_vector_adapter() {
    keys_.reset();
    values_.reset();
  }

  void reset() {
    keys_.reset();
    values_.reset();
    arena_->reset();
    keys_.emplace(arena_alloc<K>(arena_.get()));
    values_.emplace(arena_alloc<std::uint64_t>(arena_.get()));
  }
  bool contains(K k) const {
    auto it = std::lower_bound(keys_->begin(), keys_->end(), k);
    return it != keys_->end() && *it == k;
  }
  bool find(K k, std::uint64_t& v) const {
    auto it = std::lower_bound(keys_->begin(), keys_->end(), k);
    if (it == keys_->end() || *it != k) return false;
    v = Map ? (*values_)[static_cast<std::size_t>(it - keys_->begin())] : k;
    return true;
  }
  bool lower_bound(K k, K& out) const {
    auto it = std::lower_bound(keys_->begin(), keys_->end(), k);
    if (it == keys_->end()) return false;
    out = *it;
    return true;
  }
  std::uint64_t scan(K from, std::size_t n) const {
    auto i = static_cast<std::size_t>(std::lower_bound(keys_->begin(), keys_->end(), from) -
                                      keys_->begin());
    std::size_t e = std::min(keys_->size(), i + n);
    std::uint64_t sum = 0;
    for (; i < e; ++i) sum += Map ? (*values_)[i] : (*keys_)[i];
    return sum;
  }
  void build_sorted(std::span<const K> keys) {
    keys_->assign(keys.begin(), keys.end());
    if constexpr (Map) values_->assign(keys.begin(), keys.end());
  }
  void build_unsorted(std::span<const K> keys) {
    keys_->assign(keys.begin(), keys.end());
    std::sort(keys_->begin(), keys_->end());
    if constexpr (Map) values_->assign(keys_->begin(), keys_->end());
  }
  std::size_t size() const { return keys_->size(); }
  std::size_t bytes() const { return arena_->live_bytes(); }

 private:
  std::unique_ptr<arena> arena_;
  std::optional<std::vector<K, arena_alloc<K>>> keys_;
  std::optional<std::vector<std::uint64_t, arena_alloc<std::uint64_t>>> values_;
};

}  // namespace simdex::bench::btree
