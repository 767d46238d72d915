// JudyL, the radix-trie peer: keys are Word_t (u32 keys widen), values a Word_t slot (unused
// for the set). libJudy allocates through JudyMalloc/JudyFree, which peers_judy.cc interposes
// to route its nodes to the same counting page arena as every other peer.
#pragma once

#include <Judy.h>

#include <cstdint>
#include <memory>
#include <span>

#include "arena.h"

namespace simdex::bench::btree {

// The arena JudyMalloc draws from; set before every call that may allocate or free.
extern arena* g_judy_arena;

template <class K, bool Map>
class judy_adapter {
 public:
  using key_type = K;
  static constexpr bool kMap = Map, kOrdered = true, kMutable = true, kBatch = false;

  explicit judy_adapter(page_size pages) : arena_(std::make_unique<arena>(pages)) {}
  ~judy_adapter() { reset(); }

  void reset() {
    g_judy_arena = arena_.get();
    JudyLFreeArray(&j_, PJE0);
    j_ = nullptr;
    count_ = 0;
    arena_->reset();
  }
  bool insert(K k, std::uint64_t v) {
    g_judy_arena = arena_.get();
    Word_t* slot = reinterpret_cast<Word_t*>(JudyLIns(&j_, static_cast<Word_t>(k), PJE0));
    // A fresh slot reads 0; the set stores 1 and the map stores value + 1 to tell them apart.
    // Like std::map::try_emplace, an existing key keeps its value.
    if (*slot != 0) return false;
    *slot = Map ? v + 1 : 1;
    ++count_;
    return true;
  }
  bool erase(K k) {
    g_judy_arena = arena_.get();
    bool gone = JudyLDel(&j_, static_cast<Word_t>(k), PJE0) == 1;
    count_ -= gone;
    return gone;
  }
  bool contains(K k) const { return JudyLGet(j_, static_cast<Word_t>(k), PJE0) != nullptr; }
  bool find(K k, std::uint64_t& v) const {
    auto* slot = reinterpret_cast<Word_t*>(JudyLGet(j_, static_cast<Word_t>(k), PJE0));
    if (!slot) return false;
    v = Map ? *slot - 1 : k;
    return true;
  }
  bool assign(K k, std::uint64_t v) {
    auto* slot = reinterpret_cast<Word_t*>(JudyLGet(j_, static_cast<Word_t>(k), PJE0));
    if (!slot) return false;
    if (Map) *slot = v + 1;
    return true;
  }
  bool add_to(K k, std::uint64_t d) {
    auto* slot = reinterpret_cast<Word_t*>(JudyLGet(j_, static_cast<Word_t>(k), PJE0));
    if (!slot) return false;
    if (Map) *slot += d;
    return true;
  }
  bool lower_bound(K k, K& out) const {
    Word_t idx = k;
    if (!JudyLFirst(j_, &idx, PJE0)) return false;
    out = static_cast<K>(idx);
    return true;
  }
  std::uint64_t scan(K from, std::size_t n) const {
    std::uint64_t sum = 0;
    Word_t idx = from;
    for (auto* s = reinterpret_cast<Word_t*>(JudyLFirst(j_, &idx, PJE0)); n && s;
         s = reinterpret_cast<Word_t*>(JudyLNext(j_, &idx, PJE0)), --n)
      sum += Map ? *s - 1 : idx;
    return sum;
  }
  // JudyL has no bulk loader; sorted insertion is its fastest build.
  void build_sorted(std::span<const K> keys) { build_unsorted(keys); }
  void build_unsorted(std::span<const K> keys) {
    for (K k : keys) insert(k, k);
  }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return arena_->live_bytes(); }
  std::size_t own_bytes() const { return JudyLMemUsed(j_); }  // Judy's own count, a cross-check

 private:
  std::unique_ptr<arena> arena_;
  Pvoid_t j_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace simdex::bench::btree
