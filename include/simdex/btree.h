// simdex::btree_set<K> / btree_map<K, V>: ordered set and map of fixed-width keys.
//
//   simdex::btree_set<std::uint64_t> s;             // 2 MiB huge-page arena by default
//   s.insert(42); s.contains(42); s.erase(42);
//   for (auto it = s.lower_bound(10); it != s.end(); ++it) use(*it);
//   s.contains_batch(queries, out);                  // many misses in flight
//   simdex::btree_map<std::int64_t, double> m({.pages = simdex::page_size::small});
//   m.insert(7, 1.5); if (auto it = m.find(7); it != m.end()) it.value() += 1;
//
// API summary (K: uint32_t, int32_t, uint64_t, int64_t, float, double; V: trivially
// copyable, at most 16 bytes):
//   insert / erase / contains / find / lower_bound / upper_bound / predecessor / successor,
//   begin / end (bidirectional iterators), erase(it) -> next, erase(first, last),
//   rank(k) (#keys < k) / nth(i), size, clear,
//   build_sorted(span) (strictly ascending, else std::invalid_argument with the position),
//   build(span) (any order, duplicates dropped), batch insert / erase / contains /
//   lower_bound / rank over spans, memory_usage(), reserved_bytes(), huge_bytes(), validate(),
//   filter_bytes() (the membership filter that large batches of absent keys build).
// build / build_sorted replace the contents, and one that throws (bad input, out of memory)
// leaves the tree as it was: the new tree is built apart, so a build over a non-empty tree
// holds both until it is done.
// Floats are ordered by IEEE totalOrder (-0.0 and +0.0 are two distinct keys, -0.0 first);
// a NaN key throws std::invalid_argument.
//
// Iterators: iterator and const_iterator, as std::map: the lookups and begin/end/rbegin/rend/
// nth/equal_range of a const tree (and cbegin/cend always) give const_iterators, whose
// value() is a const V&; an iterator's value() is a V& and it converts to a const_iterator,
// and the two compare with each other. erase(it) and erase(first, last) take either. Both
// are std::bidirectional_iterators (std::ranges algorithms work on a tree), but operator*
// returns the value_type (K, or std::pair<K, V>) by value, since keys are stored encoded and
// apart from the values: `for (auto [k, v] : m)` works, `for (auto& [k, v] : m)` cannot.
// operator-> returns a proxy holding that value (it->first, it->second); through a map's
// mutable iterator it->second is the V& in the tree. key() and value() read in place.
//
// Iterator invalidation: any insert or erase (single, batch, range, build, clear) invalidates
// every iterator, except the iterator that erase(it) / erase(first, last) returns, and except
// an insert or insert_batch whose keys are all present (a map's batch without assignment) or
// an erase or erase_batch whose keys are all absent: those move nothing. Iterators are (page,
// block, slot) positions; they never copy keys out of the tree.
// Not thread-safe: concurrent readers are fine only while no thread modifies the tree.
//
// Layout (see docs/btree.md): inner nodes of 64 children searched with SIMD; leaves are 4 KiB
// pages holding an in-page index over 16-key blocks; the search code is instantiated per ISA
// level (scalar, AVX2, AVX-512) and chosen once when the tree is constructed.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "simdex/btree/detail.h"
#include "simdex/btree/membership.h"
#include "simdex/cpu.h"
#include "simdex/memory.h"

namespace simdex {

struct btree_options {
  page_size pages = page_size::huge;  // arena backing: 2 MiB THP or 4 KiB pages
  // Force one ISA level's code (tests): scalar, avx2 or avx512, the levels the tree has code
  // for (another, or one this CPU lacks, throws std::invalid_argument); default: the best.
  std::optional<isa> level = std::nullopt;
  // Large batch lookups that find most keys absent build a membership filter (about 1.5
  // bytes a key) that later such batches consult before the tree; false: never.
  bool batch_filter = true;
};

namespace btree_detail {
// What a btree iterator yields: K for a set, std::pair<K, V> for a map; and what its
// operator-> points at: the same by value, except through a map's mutable iterator, where
// second is the V& in the tree (it->second = v writes, as with std::map).
template <class K, class V, bool Const>
struct iter_types {
  using value_type = std::pair<K, V>;
  using value_ref = std::conditional_t<Const, const V&, V&>;
  using arrow = std::conditional_t<Const, std::pair<K, V>, std::pair<const K, V&>>;
};
template <class K, bool Const>
struct iter_types<K, void, Const> {
  using value_type = K;
  using value_ref = void;  // sets have no value()
  using arrow = K;
};
// The "arrow proxy": holds a value built on the fly and lends its address to ->.
template <class T>
struct arrow_proxy {
  T v;
  const T* operator->() const noexcept { return &v; }
};
}  // namespace btree_detail

template <class K, class V>
class basic_btree {
  static_assert(btree_detail::is_key_type<K>, "key must be u32, i32, u64, i64, float or double");
  static_assert(btree_detail::value_traits<V>::ok,
                "value must be trivially copyable and at most 16 bytes");

 protected:
  using codec = btree_detail::codec<K>;
  using S = typename codec::stored;
  static constexpr std::size_t VS = btree_detail::value_slot<V>;
  using tree_t = btree_detail::tree<S, VS>;
  using kernels_t = btree_detail::kernels<S, VS>;
  using L = btree_detail::leaf_layout<S, VS>;

 public:
  using key_type = K;
  using size_type = std::size_t;

  // One iterator class for both constnesses (Const: const_iterator). operator* yields the
  // value_type by value (keys are stored encoded and apart from the values, so there is no
  // pair in the tree to refer to); operator-> returns an arrow proxy holding that value.
  template <bool Const>
  class basic_iterator {
    using types = btree_detail::iter_types<K, V, Const>;

   public:
    using iterator_concept = std::bidirectional_iterator_tag;
    using iterator_category = std::bidirectional_iterator_tag;
    using difference_type = std::ptrdiff_t;
    using value_type = typename types::value_type;
    using reference = value_type;  // by value: operator* builds it
    using pointer = btree_detail::arrow_proxy<typename types::arrow>;
    basic_iterator() = default;
    // iterator -> const_iterator (not back).
    template <bool C>
    basic_iterator(const basic_iterator<C>& o) noexcept requires(Const && !C)
        : t_(o.t_), p_(o.p_) {}

    K key() const noexcept { return codec::decode(L::keys(p_.page, p_.block)[p_.slot]); }
    // The value in the tree: V& from an iterator, const V& from a const_iterator.
    template <class W = V>
    requires(!std::is_void_v<W>) typename types::value_ref value() const noexcept {
      return *reinterpret_cast<W*>(L::vals(p_.page, p_.block) + p_.slot * VS);
    }
    value_type operator*() const noexcept {
      if constexpr (std::is_void_v<V>)
        return key();
      else
        return {key(), value()};
    }
    // it->first / it->second (a map's iterator: second is the V& in the tree), *it's members.
    pointer operator->() const noexcept {
      if constexpr (std::is_void_v<V>)
        return {key()};
      else
        return {{key(), value()}};
    }
    basic_iterator& operator++() noexcept {
      const auto* h = L::hdr(p_.page);
      if (++p_.slot < L::cnt(p_.page)[p_.block]) return *this;
      p_.slot = 0;
      if (++p_.block < h->nb) return *this;
      p_.block = 0;
      p_.page = h->next;
      return *this;
    }
    basic_iterator& operator--() noexcept {  // --begin() gives end()
      if (p_.page == nullptr) {
        p_.page = t_->last;
      } else if (p_.slot > 0) {
        --p_.slot;
        return *this;
      } else if (p_.block > 0) {
        --p_.block;
        p_.slot = L::cnt(p_.page)[p_.block] - 1u;
        return *this;
      } else {
        p_.page = L::hdr(p_.page)->prev;
      }
      if (p_.page == nullptr) return *this;
      p_.block = L::hdr(p_.page)->nb - 1u;
      p_.slot = L::cnt(p_.page)[p_.block] - 1u;
      return *this;
    }
    basic_iterator operator++(int) noexcept {
      basic_iterator r = *this;
      ++*this;
      return r;
    }
    basic_iterator operator--(int) noexcept {
      basic_iterator r = *this;
      --*this;
      return r;
    }
    // An iterator and a const_iterator compare through the conversion.
    friend bool operator==(const basic_iterator& a, const basic_iterator& b) noexcept {
      return a.p_.page == b.p_.page && a.p_.block == b.p_.block && a.p_.slot == b.p_.slot;
    }

   private:
    friend class basic_btree;
    template <bool>
    friend class basic_iterator;
    basic_iterator(const tree_t* t, btree_detail::pos p) noexcept : t_(t), p_(p) {}
    const tree_t* t_ = nullptr;
    btree_detail::pos p_;
  };
  using iterator = basic_iterator<false>;
  using const_iterator = basic_iterator<true>;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  explicit basic_btree(btree_options o = {})
      : t_(o.pages), kernels_(&pick(o)), batch_filter_(o.batch_filter) {}
  basic_btree(basic_btree&& o) noexcept
      : t_(std::move(o.t_)),
        kernels_(o.kernels_),
        batch_filter_(o.batch_filter_),
        filter_(o.filter_.exchange(nullptr, std::memory_order_relaxed)) {
    o.reset_moved();
  }
  basic_btree& operator=(basic_btree&& o) noexcept {
    if (this != &o) {
      clear();
      t_ = std::move(o.t_);
      kernels_ = o.kernels_;
      batch_filter_ = o.batch_filter_;
      filter_.store(o.filter_.exchange(nullptr, std::memory_order_relaxed),
                    std::memory_order_relaxed);
      o.reset_moved();
    }
    return *this;
  }
  basic_btree(const basic_btree&) = delete;
  basic_btree& operator=(const basic_btree&) = delete;
  ~basic_btree() { clear(); }

  std::size_t size() const noexcept { return t_.size; }
  bool empty() const noexcept { return t_.size == 0; }
  void clear() noexcept {
    btree_detail::destroy(t_);
    drop_filter();
  }

  bool contains(K k) const { return kernels_->contains(t_, codec::encode(k)); }
  // Lookups and positions: a const_iterator from a const tree, an iterator otherwise (each
  // non-const overload forwards to the const one), as std::map.
  const_iterator find(K k) const { return {&t_, kernels_->find(t_, codec::encode(k))}; }
  iterator find(K k) { return unconst(std::as_const(*this).find(k)); }
  const_iterator lower_bound(K k) const {
    return {&t_, kernels_->lower_bound(t_, codec::encode(k))};
  }
  iterator lower_bound(K k) { return unconst(std::as_const(*this).lower_bound(k)); }
  const_iterator upper_bound(K k) const {
    return {&t_, kernels_->upper_bound(t_, codec::encode(k))};
  }
  iterator upper_bound(K k) { return unconst(std::as_const(*this).upper_bound(k)); }
  // Largest key < k / smallest key > k; end() when there is none.
  const_iterator predecessor(K k) const {
    const_iterator it = lower_bound(k);
    if (it == begin()) return end();
    return --it;
  }
  iterator predecessor(K k) { return unconst(std::as_const(*this).predecessor(k)); }
  const_iterator successor(K k) const { return upper_bound(k); }
  iterator successor(K k) { return upper_bound(k); }
  const_iterator begin() const noexcept { return {&t_, {t_.first, 0, 0}}; }
  iterator begin() noexcept { return unconst(std::as_const(*this).begin()); }
  const_iterator end() const noexcept { return {&t_, {}}; }
  iterator end() noexcept { return unconst(std::as_const(*this).end()); }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator crbegin() const noexcept { return rbegin(); }
  const_reverse_iterator crend() const noexcept { return rend(); }
  // As std::set / std::map: keys are unique, so 0 or 1, and [lower_bound, upper_bound).
  std::size_t count(K k) const { return contains(k) ? 1 : 0; }
  std::pair<const_iterator, const_iterator> equal_range(K k) const {
    const_iterator lo = lower_bound(k);
    const_iterator hi = lo;
    if (hi != end() && codec::encode(hi.key()) == codec::encode(k)) ++hi;  // -0.0 is not 0.0
    return {lo, hi};
  }
  std::pair<iterator, iterator> equal_range(K k) {
    auto [lo, hi] = std::as_const(*this).equal_range(k);
    return {unconst(lo), unconst(hi)};
  }

  // Number of keys < k, and the i-th smallest key (end() when i >= size()).
  std::size_t rank(K k) const { return kernels_->rank(t_, codec::encode(k)); }
  const_iterator nth(std::size_t i) const { return {&t_, kernels_->select(t_, i)}; }
  iterator nth(std::size_t i) { return unconst(std::as_const(*this).nth(i)); }

  bool erase(K k) {
    bool r = kernels_->erase(t_, codec::encode(k));
    if (r) filter_erased(1);
    return r;
  }
  // Erases the key at `it` (which must be dereferenceable); returns the next position.
  iterator erase(const_iterator it) {
    K k = it.key();
    erase(k);
    return upper_bound(k);
  }
  // Erases [first, last); returns the position after the last erased key.
  iterator erase(const_iterator first, const_iterator last) {
    if (first == last) return unconst(last);
    if (last == end()) {
      // Erase the tail [first, end) as a sorted batch.
      std::vector<S> ks;
      for (const_iterator it = first; it != last; ++it)
        ks.push_back(L::keys(it.p_.page, it.p_.block)[it.p_.slot]);
      filter_erased(kernels_->erase_sorted(t_, ks.data(), ks.size()));
      return end();
    }
    K stop = last.key();
    std::vector<S> ks;
    for (const_iterator it = first; it != last; ++it)
      ks.push_back(L::keys(it.p_.page, it.p_.block)[it.p_.slot]);
    filter_erased(kernels_->erase_sorted(t_, ks.data(), ks.size()));
    return lower_bound(stop);
  }

  // Batch operations over spans: keys need not be sorted. Inserts/erases sort a copy first
  // and walk the leaves in order; lookups interleave many descents (group prefetching).
  std::size_t erase_batch(std::span<const K> keys) {
    std::vector<S> ks = encode_all(keys);
    std::size_t n = kernels_->sort_unique(ks.data(), nullptr, ks.size(), false);
    std::size_t r = kernels_->erase_sorted(t_, ks.data(), n);
    filter_erased(r);
    return r;
  }
  void contains_batch(std::span<const K> keys, bool* out) const {
    std::vector<S> buf;
    std::span<const S> ks = encoded(keys, buf);
    if (!use_sweep(ks.size())) return kernels_->contains_batch(t_, ks.data(), ks.size(), out);
    if (filtered(ks, out)) return;
    sweep(ks, out, nullptr);
    build_filter_if_absent_mostly(ks.size(), out);
  }
  // out[i]: lower_bound(keys[i]); const_iterators from a const tree, as lower_bound.
  void lower_bound_batch(std::span<const K> keys, const_iterator* out) const {
    lower_bound_batch_into(keys, out);
  }
  void lower_bound_batch(std::span<const K> keys, iterator* out) {
    lower_bound_batch_into(keys, out);
  }
  void rank_batch(std::span<const K> keys, std::uint64_t* out) const {
    std::vector<S> buf;
    std::span<const S> ks = encoded(keys, buf);
    if (use_sweep(ks.size())) return sweep(ks, nullptr, out);
    std::vector<btree_detail::pos> ps(ks.size());
    kernels_->lower_bound_batch(t_, ks.data(), ks.size(), ps.data(), out);
  }

  // Bytes the tree holds: its live leaf pages and inner nodes plus this object. Falls as
  // erases merge nodes away; ~sizeof(*this) when empty. Like an allocator-level count, it
  // leaves out freed nodes kept for reuse and the uncarved rest of the last region.
  std::size_t memory_usage() const noexcept {
    const btree_detail::membership* m = filter_.load(std::memory_order_acquire);
    return t_.leaves * btree_detail::kPageBytes + t_.inners * btree_detail::kInnerBytes +
           sizeof(*this) + (m != nullptr ? m->bytes() : 0);
  }
  // Bytes of the membership filter (0 when there is none); memory_usage() counts them.
  std::size_t filter_bytes() const noexcept {
    const btree_detail::membership* m = filter_.load(std::memory_order_acquire);
    return m != nullptr ? m->bytes() : 0;
  }
  // Bytes the arena has mapped (whole 2 MiB regions): memory_usage()'s nodes plus free-listed
  // ones and slack. Only clear(), a move-from or destruction gives regions back.
  std::size_t reserved_bytes() const noexcept { return t_.mem.mapped_bytes(); }
  // Bytes of the arena backed by transparent huge pages right now (slow: reads smaps).
  std::size_t huge_bytes() const { return t_.mem.huge_bytes(); }
  page_size pages() const noexcept { return t_.mem.pages(); }
  const char* isa() const noexcept { return kernels_->level_name; }
  std::size_t height() const noexcept { return t_.root ? t_.height + 1 : 0; }
  std::size_t leaf_pages() const noexcept { return t_.leaves; }
  // Full structure check; empty string when every invariant holds, else what is broken.
  std::string validate() const { return btree_detail::validate(t_); }

 protected:
  // The iterator at a const_iterator's position (the non-const overloads' one conversion).
  static iterator unconst(const_iterator it) noexcept { return {it.t_, it.p_}; }
  template <class It>
  void lower_bound_batch_into(std::span<const K> keys, It* out) const {
    std::vector<S> ks = encode_all(keys);
    std::vector<btree_detail::pos> ps(ks.size());
    kernels_->lower_bound_batch(t_, ks.data(), ks.size(), ps.data(), nullptr);
    for (std::size_t i = 0; i < ps.size(); ++i) out[i] = It(&t_, ps[i]);
  }
  static const kernels_t& pick(const btree_options& o) {
    if (!o.level) return btree_detail::active_kernels<S, VS>();
    const kernels_t* t = dispatch::exact(btree_detail::kernel_tables<S, VS>(), *o.level);
    if (t == nullptr)
      throw std::invalid_argument(std::string("simdex::btree: no usable variant for level ") +
                                  isa_name(*o.level));
    return *t;
  }
  // Stored keys of a batch: signed integer keys are stored as they are, so the batch itself;
  // else encoded into buf.
  static std::span<const S> encoded(std::span<const K> keys, std::vector<S>& buf) {
    if constexpr (std::is_same_v<K, S>) {
      return keys;
    } else {
      buf = encode_all(keys);
      return buf;
    }
  }
  static std::vector<S> encode_all(std::span<const K> keys) {
    if constexpr (std::is_same_v<K, S>) return std::vector<S>(keys.begin(), keys.end());
    std::vector<S> ks(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) ks[i] = codec::encode(keys[i]);
    return ks;
  }
  // The contents become n sorted unique keys (and their value slots): built apart in a tree of
  // the same page mode and swapped in once complete, so a build that throws leaves this one as
  // it was; meanwhile both are held.
  void rebuild(const S* ks, const std::byte* vs, std::size_t n) {
    tree_t fresh(t_.mem.pages());
    kernels_->build_sorted(fresh, ks, vs, n);
    clear();
    t_ = std::move(fresh);
  }
  // Checks strictly ascending input; throws naming the first bad position.
  static void check_sorted(const std::vector<S>& ks) {
    for (std::size_t i = 1; i < ks.size(); ++i)
      if (!(ks[i - 1] < ks[i]))
        throw std::invalid_argument(
            "simdex::btree: build_sorted input not strictly ascending at position " +
            std::to_string(i));
  }
  // Large batches (one query per 32 keys or more) are cheaper grouped by key range: the
  // leaves are then visited in order and each page is fetched once. The groups need not be
  // sorted inside: a bucket spans about a quarter of a leaf's keys, so the queries of one
  // bucket stay in one page and the lookup descends again only when a page's fences say so.
  bool use_sweep(std::size_t n) const noexcept {
    return t_.size != 0 && n >= 4096 && n <= 0xffffffffu && n * 32 >= t_.size;
  }
  void sweep(std::span<const S> ks, bool* found, std::uint64_t* ranks) const {
    std::size_t n = ks.size();
    std::unique_ptr<S[]> grouped(new S[n]);  // no zero fill: every slot is written
    std::unique_ptr<std::uint32_t[]> at(new std::uint32_t[n]);
    unsigned bits = static_cast<unsigned>(std::bit_width(4 * t_.leaves));
    bits = bits < 8 ? 8 : bits > 16 ? 16 : bits;
    // Buckets over the tree's own key range: keys outside it form one last group.
    const std::byte* last = t_.last;
    unsigned b = L::hdr(last)->nb - 1u;
    S hi = L::keys(last, b)[L::cnt(last)[b] - 1u];
    btree_detail::group_in_range<S>(ks.data(), n, L::keys(t_.first, 0)[0], hi, bits, grouped.get(),
                                    at.get());
    kernels_->lookup_sorted(t_, grouped.get(), at.get(), n, found, ranks);
  }
  // The membership filter (simdex/btree/membership.h). Batch lookups are const and may run
  // in several threads at once, so the one that builds it publishes it atomically; writers
  // (never concurrent with readers) add their keys to it, count their erases, and drop it
  // once worn. Large batches of mostly absent keys go through it; false when not used.
  bool filtered(std::span<const S> ks, bool* out) const {
    const btree_detail::membership* m = filter_.load(std::memory_order_acquire);
    if (m == nullptr) return false;
    std::size_t n = ks.size();
    std::unique_ptr<std::uint64_t[]> maybe(new std::uint64_t[(n + 63) / 64]);
    constexpr std::size_t kSample = 256;  // use_sweep's batches are longer; a multiple of 64
    if (m->check(ks.data(), kSample, maybe.get()) * 4 > kSample) return false;
    std::size_t count = m->check(ks.data() + kSample, n - kSample, maybe.get() + kSample / 64);
    std::vector<S> ask;
    std::vector<std::uint32_t> at;
    ask.reserve(count + kSample);
    at.reserve(count + kSample);
    std::fill(out, out + n, false);
    for (std::size_t w = 0; w < (n + 63) / 64; ++w)
      for (std::uint64_t bits = maybe[w]; bits != 0; bits &= bits - 1) {
        std::size_t i = w * 64 + static_cast<std::size_t>(std::countr_zero(bits));
        ask.push_back(ks[i]);
        at.push_back(static_cast<std::uint32_t>(i));
      }
    if (ask.empty()) return true;
    std::unique_ptr<bool[]> got(new bool[ask.size()]);
    if (use_sweep(ask.size()))
      sweep(ask, got.get(), nullptr);
    else
      kernels_->contains_batch(t_, ask.data(), ask.size(), got.get());
    for (std::size_t j = 0; j < ask.size(); ++j) out[at[j]] = got[j];
    return true;
  }
  // After a large batch answered by the tree found at most a quarter of its keys: expect more
  // such batches and build the filter (about a third of a sweep's time per tree key).
  void build_filter_if_absent_mostly(std::size_t n, const bool* found) const {
    if (!batch_filter_ || t_.size < btree_detail::membership::kMinKeys ||
        filter_.load(std::memory_order_acquire) != nullptr)
      return;
    std::size_t hits = 0;
    for (std::size_t i = 0; i < n; ++i) hits += found[i];
    if (hits * 4 > n) return;
    std::unique_ptr<btree_detail::membership> m;
    try {
      m = std::make_unique<btree_detail::membership>(t_.size, sizeof(S), t_.mem.pages());
    } catch (const std::bad_alloc&) {
      return;  // the lookups were answered; batches go on without a filter
    }
    constexpr std::size_t kBuf = 1024;  // a page's keys and more: one hash call per page
    S buf[kBuf];
    std::size_t used = 0;
    for (const std::byte* p = t_.first; p != nullptr; p = L::hdr(p)->next)
      for (unsigned b = 0; b < L::hdr(p)->nb; ++b) {
        unsigned c = L::cnt(p)[b];
        if (used + c > kBuf) {
          m->add(buf, used);
          used = 0;
        }
        std::copy_n(L::keys(p, b), c, buf + used);
        used += c;
      }
    m->add(buf, used);
    btree_detail::membership* none = nullptr;
    if (filter_.compare_exchange_strong(none, m.get(), std::memory_order_acq_rel)) m.release();
  }
  // insert_sorted, then the filter. A batch that runs out of memory partway has placed keys the
  // filter never saw, and the filter must never call a present key absent: it goes.
  std::size_t insert_sorted_filtered(const S* ks, const std::byte* vs, std::size_t n, bool assign) {
    std::size_t r;
    try {
      r = kernels_->insert_sorted(t_, ks, vs, n, assign);
    } catch (...) {
      drop_filter();
      throw;
    }
    filter_added(ks, n, r);
    return r;
  }
  void filter_added(const S* ks, std::size_t n, std::size_t fresh) {
    btree_detail::membership* m = filter_.load(std::memory_order_relaxed);
    if (m == nullptr) return;
    m->add(ks, n);
    m->added(fresh);
    if (m->worn()) drop_filter();
  }
  // One key into the tree and, when it is new, into the filter: the key's filter line is asked
  // for before the tree's edit, so the two misses overlap.
  bool insert_one(S s, const std::byte* slot, bool assign) {
    btree_detail::membership* m = filter_.load(std::memory_order_relaxed);
    std::uint64_t h = m != nullptr ? m->hash(&s) : 0;
    bool r;
    try {
      r = kernels_->insert(t_, s, slot, assign);
    } catch (...) {  // out of memory: whether k went in is not known, so the filter goes
      drop_filter();
      throw;
    }
    if (r && m != nullptr) {
      m->add_hash(h);
      m->added(1);
      if (m->worn()) drop_filter();
    }
    return r;
  }
  void filter_erased(std::size_t n) noexcept {
    btree_detail::membership* m = filter_.load(std::memory_order_relaxed);
    if (m == nullptr) return;
    m->erased(n);
    if (m->worn()) drop_filter();
  }
  void drop_filter() noexcept { delete filter_.exchange(nullptr, std::memory_order_acq_rel); }
  void reset_moved() noexcept {
    t_.root = 0;
    t_.height = 0;
    t_.size = 0;
    t_.first = t_.last = nullptr;
    t_.leaves = t_.inners = 0;
  }

  tree_t t_;
  const kernels_t* kernels_;
  bool batch_filter_;
  mutable std::atomic<btree_detail::membership*> filter_{nullptr};
};

template <class K>
class btree_set : public basic_btree<K, void> {
  using base = basic_btree<K, void>;
  using base::kernels_;
  using base::t_;
  using typename base::S;

 public:
  using value_type = K;
  using base::base;

  // True when k was not present.
  bool insert(K k) { return this->insert_one(base::codec::encode(k), nullptr, false); }
  // Returns how many keys were new.
  std::size_t insert_batch(std::span<const K> keys) {
    std::vector<S> ks = base::encode_all(keys);
    std::size_t n = kernels_->sort_unique(ks.data(), nullptr, ks.size(), false);
    return this->insert_sorted_filtered(ks.data(), nullptr, n, false);
  }
  // Replace the contents (or throw, keeping them). build_sorted wants strictly ascending keys.
  void build_sorted(std::span<const K> keys) {
    std::vector<S> ks = base::encode_all(keys);
    base::check_sorted(ks);
    this->rebuild(ks.data(), nullptr, ks.size());
  }
  void build(std::span<const K> keys) {
    std::vector<S> ks = base::encode_all(keys);
    std::size_t n = kernels_->sort_unique(ks.data(), nullptr, ks.size(), false);
    this->rebuild(ks.data(), nullptr, n);
  }
};

template <class K, class V>
class btree_map : public basic_btree<K, V> {
  using base = basic_btree<K, V>;
  using base::kernels_;
  using base::t_;
  using base::VS;
  using typename base::S;

 public:
  using mapped_type = V;
  using base::base;

  // insert keeps an existing value; insert_or_assign overwrites it. Both: true if k was new.
  bool insert(K k, const V& v) { return put(k, v, false); }
  bool insert_or_assign(K k, const V& v) { return put(k, v, true); }
  std::optional<V> get(K k) const {
    auto it = this->find(k);
    if (it == this->end()) return std::nullopt;
    return it.value();
  }
  // keys[i] -> values[i]; for duplicate keys in the batch the last one wins when assign.
  std::size_t insert_batch(std::span<const K> keys, std::span<const V> values,
                           bool assign = false) {
    if (keys.size() != values.size())
      throw std::invalid_argument(
          "simdex::btree_map::insert_batch: keys and values differ in length");
    std::vector<S> ks = base::encode_all(keys);
    std::vector<std::byte> vs = pack_values(values);
    std::size_t n = kernels_->sort_unique(ks.data(), vs.data(), ks.size(), assign);
    return this->insert_sorted_filtered(ks.data(), vs.data(), n, assign);
  }
  void build_sorted(std::span<const K> keys, std::span<const V> values) {
    if (keys.size() != values.size())
      throw std::invalid_argument(
          "simdex::btree_map::build_sorted: keys and values differ in length");
    std::vector<S> ks = base::encode_all(keys);
    base::check_sorted(ks);
    std::vector<std::byte> vs = pack_values(values);
    this->rebuild(ks.data(), vs.data(), ks.size());
  }
  void build(std::span<const K> keys, std::span<const V> values) {
    if (keys.size() != values.size())
      throw std::invalid_argument("simdex::btree_map::build: keys and values differ in length");
    std::vector<S> ks = base::encode_all(keys);
    std::vector<std::byte> vs = pack_values(values);
    std::size_t n = kernels_->sort_unique(ks.data(), vs.data(), ks.size(), true);
    this->rebuild(ks.data(), vs.data(), n);
  }

 private:
  bool put(K k, const V& v, bool assign) {
    S s = base::codec::encode(k);
    alignas(16) std::byte slot[VS] = {};  // the tree copies whole VS-byte slots
    std::memcpy(slot, &v, sizeof(V));
    return this->insert_one(s, slot, assign);
  }
  static std::vector<std::byte> pack_values(std::span<const V> values) {
    std::vector<std::byte> vs(values.size() * VS);
    for (std::size_t i = 0; i < values.size(); ++i)
      std::memcpy(vs.data() + i * VS, &values[i], sizeof(V));
    return vs;
  }
};

// operator* returns by value, which the C++20 iterator concepts allow (std::bidirectional_iterator
// asks nothing of the reference type); the C++17 iterator requirements would want a reference.
static_assert(std::bidirectional_iterator<btree_set<std::uint64_t>::iterator>);
static_assert(std::bidirectional_iterator<btree_set<std::uint64_t>::const_iterator>);
static_assert(std::bidirectional_iterator<btree_map<std::int64_t, double>::iterator>);
static_assert(std::bidirectional_iterator<btree_map<std::int64_t, double>::const_iterator>);

}  // namespace simdex
