// simdex::btree_set / btree_map through the same adapter shape as the peers. The tree keeps
// its own arena of 2 MiB regions; the page size under test goes in through btree_options, and
// bytes are its memory_usage() (live pages and inner nodes, as the peers' bytes handed out).
#pragma once

#if SIMDEX_HAVE_BTREE
#include <cstdint>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "simdex/btree.h"

namespace simdex::bench::btree {

template <class K, bool Map>
class simdex_adapter {
  using tree = std::conditional_t<Map, simdex::btree_map<K, std::uint64_t>, simdex::btree_set<K>>;

 public:
  using key_type = K;
  static constexpr bool kMap = Map, kOrdered = true, kMutable = true, kBatch = true;

  explicit simdex_adapter(page_size pages) : pages_(pages) { reset(); }

  void reset() {
    t_.reset();
    btree_options o;
    o.pages = pages_;
    t_.emplace(o);
  }
  bool insert(K k, std::uint64_t v) {
    if constexpr (Map)
      return t_->insert(k, v);
    else
      return t_->insert(k);
  }
  bool erase(K k) { return t_->erase(k); }
  bool contains(K k) const { return t_->contains(k); }
  bool find(K k, std::uint64_t& v) const {
    auto it = t_->find(k);
    if (it == t_->end()) return false;
    if constexpr (Map)
      v = it.value();
    else
      v = it.key();
    return true;
  }
  bool assign(K k, std::uint64_t v) {
    auto it = t_->find(k);
    if (it == t_->end()) return false;
    if constexpr (Map) it.value() = v;
    return true;
  }
  bool add_to(K k, std::uint64_t d) {
    auto it = t_->find(k);
    if (it == t_->end()) return false;
    if constexpr (Map) it.value() += d;
    return true;
  }
  bool lower_bound(K k, K& out) const { return key_at(t_->lower_bound(k), out); }
  bool upper_bound(K k, K& out) const { return key_at(t_->upper_bound(k), out); }
  std::uint64_t scan(K from, std::size_t n) const {
    std::uint64_t sum = 0;
    auto end = t_->end();
    for (auto it = t_->lower_bound(from); n && it != end; ++it, --n) {
      if constexpr (Map)
        sum += it.value();
      else
        sum += it.key();
    }
    return sum;
  }
  void build_sorted(std::span<const K> keys) {
    if constexpr (Map)
      t_->build_sorted(keys, widen(keys));
    else
      t_->build_sorted(keys);
  }
  void build_unsorted(std::span<const K> keys) {
    if constexpr (Map)
      t_->build(keys, widen(keys));
    else
      t_->build(keys);
  }
  void contains_batch(std::span<const K> keys, bool* out) const { t_->contains_batch(keys, out); }
  // Sums the keys found (`none` for end()), so a batch answer is consumed like a loop's.
  std::uint64_t lower_bound_batch(std::span<const K> keys, std::uint64_t none) const {
    its_.resize(keys.size());
    t_->lower_bound_batch(keys, its_.data());
    std::uint64_t sum = 0;
    auto end = t_->end();
    for (const auto& it : its_) sum += it == end ? none : static_cast<std::uint64_t>(it.key());
    return sum;
  }
  std::size_t size() const { return t_->size(); }
  std::size_t bytes() const { return t_->memory_usage(); }
  const char* isa() const { return t_->isa(); }

 private:
  // A bound's key into out; false at end().
  bool key_at(typename tree::const_iterator it, K& out) const {
    if (it == t_->end()) return false;
    out = it.key();
    return true;
  }
  static std::vector<std::uint64_t> widen(std::span<const K> keys) {
    return {keys.begin(), keys.end()};
  }
  page_size pages_;
  std::optional<tree> t_;
  mutable std::vector<typename tree::const_iterator> its_;  // lower_bound_batch is const
};

}  // namespace simdex::bench::btree
#endif
