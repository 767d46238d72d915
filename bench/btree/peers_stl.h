// Standard-library-shaped peers: std::set/std::map, absl::btree_set/btree_map and
// absl::flat_hash_set/flat_hash_map, all on the counting page arena. One adapter serves them
// all because they share the std API; the ordered ones are built the way their range
// constructors do it (hinted insert at end() for sorted input).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <type_traits>

#include "arena.h"

namespace simdex::bench::btree {

template <class C, bool Ordered>
class stl_adapter {
 public:
  using key_type = typename C::key_type;
  static constexpr bool kMap = !std::is_same_v<typename C::value_type, key_type>;
  static constexpr bool kOrdered = Ordered, kMutable = true, kBatch = false;

  explicit stl_adapter(page_size pages) : arena_(std::make_unique<arena>(pages)) { reset(); }
  ~stl_adapter() { c_.reset(); }

  void reset() {
    c_.reset();
    arena_->reset();
    c_.emplace(typename C::allocator_type(arena_.get()));
  }
  bool insert(key_type k, std::uint64_t v) {
    if constexpr (kMap)
      return c_->try_emplace(k, v).second;
    else
      return c_->insert(k).second;
  }
  bool erase(key_type k) { return c_->erase(k) != 0; }
  bool contains(key_type k) const { return c_->contains(k); }
  bool find(key_type k, std::uint64_t& v) const {
    auto it = c_->find(k);
    if (it == c_->end()) return false;
    v = value_of(it);
    return true;
  }
  bool assign(key_type k, std::uint64_t v) {
    auto it = c_->find(k);
    if (it == c_->end()) return false;
    if constexpr (kMap) it->second = v;
    return true;
  }
  bool add_to(key_type k, std::uint64_t d) {
    auto it = c_->find(k);
    if (it == c_->end()) return false;
    if constexpr (kMap) it->second += d;
    return true;
  }
  bool lower_bound(key_type k, key_type& out) const requires Ordered {
    return key_at(c_->lower_bound(k), out);
  }
  bool upper_bound(key_type k, key_type& out) const requires Ordered {
    return key_at(c_->upper_bound(k), out);
  }
  std::uint64_t scan(key_type from, std::size_t n) const requires Ordered {
    std::uint64_t sum = 0;
    for (auto it = c_->lower_bound(from); n && it != c_->end(); ++it, --n) sum += value_of(it);
    return sum;
  }
  void build_sorted(std::span<const key_type> keys) {
    if constexpr (Ordered) {
      for (key_type k : keys) emplace_at_end(k);
    } else {
      build_unsorted(keys);
    }
  }
  void build_unsorted(std::span<const key_type> keys) {
    if constexpr (!Ordered) c_->reserve(keys.size());
    for (key_type k : keys) insert(k, k);
  }
  std::size_t size() const { return c_->size(); }
  std::size_t bytes() const { return arena_->live_bytes(); }

 private:
  // A bound's key into out; false at end().
  template <class It>
  bool key_at(It it, key_type& out) const {
    if (it == c_->end()) return false;
    out = key_of(it);
    return true;
  }
  template <class It>
  static key_type key_of(It it) {
    if constexpr (kMap)
      return it->first;
    else
      return *it;
  }
  template <class It>
  static std::uint64_t value_of(It it) {
    if constexpr (kMap)
      return it->second;
    else
      return *it;
  }
  void emplace_at_end(key_type k) {
    if constexpr (kMap)
      c_->emplace_hint(c_->end(), k, k);
    else
      c_->emplace_hint(c_->end(), k);
  }

  std::unique_ptr<arena> arena_;  // declared first: outlives the container
  std::optional<C> c_;
};

}  // namespace simdex::bench::btree
