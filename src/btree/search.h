// Search: the descent through inner nodes, the block of a leaf, point and range queries, rank
// and select, and the batched lookups that overlap the misses of many queries.
// Part of impl (generic.h); included only through it.
#pragma once

#include "generic.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace simdex::btree_detail {

// A prefetch the optimizer cannot drop: GCC 12's mod/ref analysis removed __builtin_prefetch
// calls whose addresses came from the leaf-block guess below when they sat in a helper or
// member template (docs/btree-bench.md).
inline void prefetch_line(const std::byte* p) noexcept {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("prefetcht0 %0" : : "m"(*p));
#else
  __builtin_prefetch(p);
#endif
}

// A clamp GCC 12 cannot turn into compare-and-jump on data just loaded (it did, with the
// conditional form): a mispredicted branch there discards the lookups started after it.
inline double min_double(double f, double hi) noexcept {
#if defined(__SSE2__)
  return _mm_cvtsd_f64(_mm_min_sd(_mm_set_sd(f), _mm_set_sd(hi)));
#else
  return f < hi ? f : hi;
#endif
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::prefetch_lines(const std::byte* p, unsigned from, unsigned lines) noexcept {
  for (unsigned i = 0; i < lines; ++i) prefetch_line(p + (from + i) * kLine);
}

// Early prefetch: as soon as a child pointer is read, fetch the lines its search needs.
template <class Policy, std::size_t VS>
template <bool kCounts>
void impl<Policy, VS>::prefetch_child(std::uintptr_t c) noexcept {
  if (c & kLeafTag)
    prefetch_lines(untag(c), 1, kCounts ? LL::kIdxLines : LL::kKeyIdxLines);
  else if constexpr (IL::kSummary)
    __builtin_prefetch(untag(c) + IL::kSumOff);
  else
    prefetch_lines(untag(c), 0, IL::kKeysBytes / kLine);
}

template <class Policy, std::size_t VS>
template <bool kNotMax>
unsigned impl<Policy, VS>::inner_child(const std::byte* in, S k) noexcept {
  unsigned c;
  if constexpr (IL::kSummary) {
    // Separators 0..8j-1 are <= k and 8j+7.. are > k.
    unsigned j = Policy::count_le(IL::summary(in), IL::kSumKeys, k);
    c = 8 * j + Policy::count_le(IL::keys(in) + 8 * j, 7, k);
  } else {
    // Every separator slot: a fixed number of compares, where a count up to n branched on n
    // (mispredicted in a tree of varied nodes: independent lookups at 16M 4-byte keys lost 17%).
    c = Policy::count_le(IL::keys(in), kF - 1, k);
  }
  // Unused slots hold kMax, so only k == kMax counts past the last child; without that
  // possibility nothing waits on n.
  if constexpr (kNotMax) return c;
  const unsigned m = IL::n(in) - 1;
  return c < m ? c : m;
}

// Block of page p whose range holds k (the last block whose first key <= k, or 0).
template <class Policy, std::size_t VS>
unsigned impl<Policy, VS>::leaf_block(std::byte* p, S k) noexcept {
  unsigned c = Policy::count_le(idx(p) + 1, B - 1, k);
  if (k == kMax) {  // unused index slots hold kMax too
    unsigned last = hdr(p)->nb - 1u;
    if (c > last) c = last;
  }
  return c;
}

// A leaf's block search waits for its index lines and then for the block: two trips to memory
// once the tree outgrows the caches. The parent's separators bound the leaf's keys, and pages
// are filled evenly enough that k's share of that range names its block about half the time,
// and that block or its neighbour on the side k leans to four times in five; fetching those two
// blocks with the index lines lets the second trip mostly overlap the first. The search itself
// does not change, so a wrong guess costs two lines of traffic, never an answer. No branches
// in the guess, not even at a node's first or last child (a mispredicted one costs the
// lookups started after this one), and few operations: every one of them waits for the
// parent's lines, and such operations are what bound how many lookups the core overlaps
// (docs/btree-bench.md, "Operations that wait on memory"). The walk is always inlined: as a call it
// cost independent lookups more than the prefetches gave them (docs/btree-bench.md, "A leaf's
// block guessed from its separators").
// Entries idx[w .. w + kWin - 1] <= k number c. Those before w are <= k too (sorted), so with
// c >= 1 (or w = 1, where block 0 is the only one before) and c < kWin (or the window ends at
// the last entry) k's block is w - 1 + c: one vector of compares where the index takes four,
// and fewer operations waiting for the leaf (docs/btree-bench.md, "The leaf's index searched
// in a window around the guess").
template <class Policy, std::size_t VS>
unsigned impl<Policy, VS>::window_block(std::byte* p, S k, window v) noexcept {
  if constexpr (B <= kWin) return kNoBlock;  // walk sets no window
  const unsigned c = Policy::count_le(idx(p) + v.w, kWin, k);
  return c - v.lo > v.span ? kNoBlock : v.w - 1 + c;
}

template <class Policy, std::size_t VS>
template <bool kPath, bool kCounts, bool kNotMax>
std::byte* impl<Policy, VS>::walk(const T& t, S k, path* P, window* win) noexcept {
  // The parents of leaves are most of the inner nodes (7 MB of them at 64M 8-byte keys), and
  // once they outgrow the second-level cache each one's search at 8-byte keys waits on memory
  // three times in a row (summary, separator line, pointer line). Fetching all its separator
  // and pointer lines with the summary makes that one trip (docs/btree-bench.md, "Parents of
  // leaves fetched whole").
  const bool whole = t.inners >= kWholeInnersMin;
  std::uintptr_t c = t.root;
  for (unsigned h = t.height; h > 0; --h) {
    std::byte* in = untag(c);
    const unsigned i = inner_child<kNotMax>(in, k);
    if constexpr (kPath) {
      P->node[t.height - h] = in;
      P->idx[t.height - h] = i;
      // An edit then writes this node's subtree count of child i: in a large tree the parent
      // of a leaf is rarely cached, so ask for that line now, beside the leaf's.
      if (h == 1 && whole) prefetch_line(reinterpret_cast<const std::byte*>(IL::count(in) + i));
    }
    c = IL::child(in)[i];
    prefetch_child<kCounts>(c);
    if (h > 1) {
      if constexpr (IL::kSummary)  // 4-byte keys' nodes: no gain measured at 64M
        if (h == 2 && whole) prefetch_lines(untag(c), 0, IL::kSearchLines);
      continue;
    }
    // g is k's share of [lo, hi) in blocks less half a block: its whole part is the first of
    // the two blocks nearest k (k's block and the neighbour k leans to), one run of lines.
    // Halved to convert as int64 (an unsigned conversion branches), the span's low bit set so
    // it is never 0. At the first child lo is a separator above k, at the last hi is an unused
    // slot (kMax) or, in a full node, the slot past the separators (still in the node): a
    // wasted guess, clamped into the page.
    const unsigned il = i - (i != 0), ih = i;
    using U = std::make_unsigned_t<S>;
    const U lo = static_cast<U>(IL::keys(in)[il]), hi = static_cast<U>(IL::keys(in)[ih]);
    const auto half = [](U x) { return static_cast<double>(static_cast<std::int64_t>(x >> 1)); };
    const double g =
        min_double(half(static_cast<U>(k) - lo) / half((hi - lo) | 2) * B - 0.5, B - 2.0);
    const unsigned q = static_cast<unsigned>(g);  // g > -1: truncates to 0 below 0
    constexpr unsigned kBlockLines = sizeof(S) * kBlockKeys / kLine;
    prefetch_lines(untag(c) + LL::kKeysOff + q * kBlockLines * kLine, 0, 2 * kBlockLines);
    if constexpr (B > kWin)  // a map's pages with wide values may have fewer blocks
      if (win) {
        // The pair in the middle of the blocks w .. w + kWin - 2 the window settles.
        constexpr int kBack = static_cast<int>(kWin / 2) - 2, kLast = static_cast<int>(B - kWin);
        int w = static_cast<int>(q) - kBack;
        w = w < 1 ? 1 : w;
        w = w > kLast ? kLast : w;
        const unsigned lo = w != 1, hi = w != kLast ? kWin - 1 : kWin;
        // kMax counts past the used blocks (unused index entries hold it): never settled.
        if (kNotMax || k != kMax) *win = {static_cast<unsigned>(w), lo, hi - lo};
      }
  }
  return untag(c);
}

template <class Policy, std::size_t VS>
std::byte* impl<Policy, VS>::descend(const T& t, S k) noexcept {
  return walk<false>(t, k, nullptr);
}

template <class Policy, std::size_t VS>
std::byte* impl<Policy, VS>::descend_path(const T& t, S k, path& P) noexcept {
  return walk<true>(t, k, &P);
}

template <class Policy, std::size_t VS>
pos impl<Policy, VS>::block_lb(std::byte* p, unsigned b, S k) noexcept {
  unsigned s = Policy::count_lt16(keys(p, b), k);
  if (s < cnt(p)[b]) return {p, b, s};
  return {p, b + 1u, 0};
}

// First position >= k in page p, or {p, nb, 0} meaning "past this page".
template <class Policy, std::size_t VS>
pos impl<Policy, VS>::leaf_lb(std::byte* p, S k) noexcept {
  return block_lb(p, leaf_block(p, k), k);
}

template <class Policy, std::size_t VS>
pos impl<Policy, VS>::normalize(pos r) noexcept {
  if (r.page != nullptr && r.block >= hdr(r.page)->nb) return {hdr(r.page)->next, 0, 0};
  return r;
}

// Sorted, unique keys: consecutive keys that stay inside the current page's fences skip
// the descent (the fence keys in the page header say so).
template <class Policy, std::size_t VS>
bool impl<Policy, VS>::in_fences(std::byte* p, S k) noexcept {
  const H* h = hdr(p);
  return (!(h->flags & H::kHasLo) || h->lo <= k) && (!(h->flags & H::kHasHi) || k < h->hi);
}

template <class Policy, std::size_t VS>
pos impl<Policy, VS>::find_in(std::byte* p, unsigned b, S k) noexcept {
  unsigned s = Policy::count_lt16(keys(p, b), k);
  if (s < cnt(p)[b] && keys(p, b)[s] == k) return {p, b, s};
  return {};
}

// The shape of a lookup: the walk places k's window, one vector of the leaf's index settles
// its block (window_block) and Step answers there; what the window leaves open goes to
// far<Step>, a tail call. An empty tree answers step_t<Step>{}.
template <class Policy, std::size_t VS>
template <auto Step, bool kCounts, bool kNotMax>
auto impl<Policy, VS>::windowed(const T& t, S k) noexcept -> step_t<Step> {
  if (t.root == 0) return {};
  window v;
  std::byte* p = walk<false, kCounts, kNotMax>(t, k, nullptr, &v);
  const unsigned b = window_block(p, k, v);
  if (b == kNoBlock) [[unlikely]]
    return far<Step>(p, k);
  return Step(p, b, k);
}

template <class Policy, std::size_t VS>
template <auto Step>
auto impl<Policy, VS>::far(std::byte* p, S k) noexcept -> step_t<Step> {
  return Step(p, leaf_block(p, k), k);
}

// An equality mask over the block: unused lanes hold kMax, so only a query for kMax itself
// needs the block's count, and nothing waits on the slot a count would give.
template <class Policy, std::size_t VS>
bool impl<Policy, VS>::block_has(std::byte* p, unsigned b, S k) noexcept {
  if constexpr (requires { Policy::any_eq16(keys(p, b), k); })
    if (k != kMax) return Policy::any_eq16(keys(p, b), k);
  unsigned m = Policy::eq_mask16(keys(p, b), k);
  if (k == kMax) m &= (1u << cnt(p)[b]) - 1u;
  return m != 0;
}

// Only k = kMax needs a child index clamped to n - 1; it walks apart, as it did before the
// shared template: folded into windowed<&block_has> it changed the function's layout and read
// a few percent slower (docs/btree-bench.md). windowed asks for the empty tree again, folded.
template <class Policy, std::size_t VS>
bool impl<Policy, VS>::contains(const T& t, S k) noexcept {
  if (t.root == 0) return false;
  if (k == kMax) [[unlikely]] {
    std::byte* p = walk<false, false>(t, k, nullptr);
    return block_has(p, leaf_block(p, k), k);
  }
  return windowed<&block_has, false, true>(t, k);
}

template <class Policy, std::size_t VS>
pos impl<Policy, VS>::lower_in(std::byte* p, unsigned b, S k) noexcept {
  return normalize(block_lb(p, b, k));
}

// The keys <= k in block b: for k = kMax that counts the unused lanes too, past the block
// either way.
template <class Policy, std::size_t VS>
pos impl<Policy, VS>::upper_in(std::byte* p, unsigned b, S k) noexcept {
  const unsigned s = Policy::count_le(keys(p, b), kBlockKeys, k);
  return normalize(s < cnt(p)[b] ? pos{p, b, s} : pos{p, b + 1u, 0});
}

template <class Policy, std::size_t VS>
std::size_t impl<Policy, VS>::rank(const T& t, S k) noexcept {
  if (t.root == 0) return 0;
  std::uint64_t r = 0;
  std::uintptr_t c = t.root;
  for (unsigned h = t.height; h > 0; --h) {
    const std::byte* in = untag(c);
    unsigned i = inner_child(in, k);
    for (unsigned j = 0; j < i; ++j) r += IL::count(in)[j];
    c = IL::child(in)[i];
    prefetch_child(c);
  }
  std::byte* p = untag(c);
  pos q = leaf_lb(p, k);
  for (unsigned b = 0; b < q.block; ++b) r += cnt(p)[b];
  return static_cast<std::size_t>(r + q.slot);
}

template <class Policy, std::size_t VS>
pos impl<Policy, VS>::select(const T& t, std::size_t i) noexcept {
  if (i >= t.size) return {};
  std::uint64_t r = i;
  std::uintptr_t c = t.root;
  for (unsigned h = t.height; h > 0; --h) {
    const std::byte* in = untag(c);
    unsigned j = 0;
    while (r >= IL::count(in)[j]) r -= IL::count(in)[j++];
    c = IL::child(in)[j];
  }
  std::byte* p = untag(c);
  unsigned b = 0;
  while (r >= cnt(p)[b]) r -= cnt(p)[b++];
  return {p, b, static_cast<std::uint32_t>(r)};
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::descend_group(const T& t, const S* q, unsigned m, std::uintptr_t* cur,
                                     unsigned* blk, std::uint64_t* rk) noexcept {
  for (unsigned i = 0; i < m; ++i) {
    cur[i] = t.root;
    if (rk) rk[i] = 0;
  }
  for (unsigned h = t.height; h > 0; --h) {
    for (unsigned i = 0; i < m; ++i) {
      const std::byte* in = untag(cur[i]);
      unsigned j = inner_child(in, q[i]);
      if (rk)
        for (unsigned x = 0; x < j; ++x) rk[i] += IL::count(in)[x];
      cur[i] = IL::child(in)[j];
      prefetch_child(cur[i]);
    }
  }
  for (unsigned i = 0; i < m; ++i) {
    std::byte* p = untag(cur[i]);
    blk[i] = leaf_block(p, q[i]);
    prefetch_lines(reinterpret_cast<const std::byte*>(keys(p, blk[i])), 0, sizeof(S) * 16 / kLine);
  }
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::lower_bound_batch(const T& t, const S* ks, std::size_t n, pos* out,
                                         std::uint64_t* ranks) noexcept {
  if (t.root == 0) {
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = {};
      if (ranks) ranks[i] = 0;
    }
    return;
  }
  std::uintptr_t cur[kGroup];
  unsigned blk[kGroup];
  std::uint64_t rk[kGroup];
  for (std::size_t base = 0; base < n; base += kGroup) {
    unsigned m = static_cast<unsigned>(n - base < kGroup ? n - base : kGroup);
    const S* q = ks + base;
    descend_group(t, q, m, cur, blk, ranks ? rk : nullptr);
    for (unsigned i = 0; i < m; ++i) {
      std::byte* p = untag(cur[i]);
      unsigned b = blk[i];
      unsigned s = Policy::count_lt16(keys(p, b), q[i]);
      pos r = s < cnt(p)[b] ? pos{p, b, s} : pos{p, b + 1u, 0};
      if (ranks) {
        std::uint64_t x = rk[i] + r.slot;
        for (unsigned y = 0; y < r.block; ++y) x += cnt(p)[y];
        ranks[base + i] = x;
      }
      out[base + i] = normalize(r);
    }
  }
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::contains_batch(const T& t, const S* ks, std::size_t n, bool* out) noexcept {
  if (t.root == 0) {
    for (std::size_t i = 0; i < n; ++i) out[i] = false;
    return;
  }
  std::uintptr_t cur[kGroup];
  unsigned blk[kGroup];
  for (std::size_t base = 0; base < n; base += kGroup) {
    unsigned m = static_cast<unsigned>(n - base < kGroup ? n - base : kGroup);
    const S* q = ks + base;
    descend_group(t, q, m, cur, blk, nullptr);
    for (unsigned i = 0; i < m; ++i) {
      std::byte* p = untag(cur[i]);
      const S* bk = keys(p, blk[i]);
      unsigned s = Policy::count_lt16(bk, q[i]);
      out[base + i] = s < cnt(p)[blk[i]] && bk[s] == q[i];
    }
  }
}

// Membership of queries grouped by key range (see lookup_sorted), one pass per query: the
// queries of a page are many (the sweep runs only for dense batches), so rather than prefetching
// each query's block, every query prefetches two lines of the next page, and by the time the
// sweep gets there the whole page is in the first-level cache. The page's fences are kept as
// one unsigned range test, and the block answers with an equality mask (block_has).
template <class Policy, std::size_t VS>
void impl<Policy, VS>::contains_sorted(const T& t, const S* ks, const std::uint32_t* at,
                                       std::size_t n, bool* found) noexcept {
  using U = std::make_unsigned_t<S>;
  constexpr unsigned kPageLines = static_cast<unsigned>(LL::kValsOff / kLine);
  std::byte* p = nullptr;
  U lo = 0, span = 0;  // page p holds the keys k with U(k) - lo <= span
  std::uintptr_t ahead = 0;
  unsigned line = kPageLines;
  for (std::size_t i = 0; i < n; ++i) {
    S k = ks[i];
    if (p == nullptr || static_cast<U>(static_cast<U>(k) - lo) > span) {
      // A group that straddles two pages moves back and forth between them: try the
      // neighbour on k's side before descending.
      std::byte* q = p == nullptr ? nullptr : k < static_cast<S>(lo) ? hdr(p)->prev : hdr(p)->next;
      p = q != nullptr && in_fences(q, k) ? q : descend(t, k);
      const H* h = hdr(p);
      lo = static_cast<U>(h->flags & H::kHasLo ? h->lo : std::numeric_limits<S>::min());
      U hi = static_cast<U>(h->flags & H::kHasHi ? static_cast<S>(h->hi - 1) : kMax);
      span = static_cast<U>(hi - lo);
      ahead = reinterpret_cast<std::uintptr_t>(h->next);
      line = ahead ? 0 : kPageLines;
    }
    if (line < kPageLines) {
      __builtin_prefetch(reinterpret_cast<const void*>(ahead + line * kLine));
      __builtin_prefetch(reinterpret_cast<const void*>(ahead + (line + 1) * kLine));
      line += 2;
    }
    found[at[i]] = block_has(p, leaf_block(p, k), k);
  }
}

// Queries ascending or grouped by key range: walk the leaves in order, descending again only
// when a query leaves the current page's fences (any order is answered correctly, just with
// more descents); answer i goes to
// position at[i] of found and ranks. Queries go in groups: the first pass finds each one's page and
// block and prefetches the block's keys, the second searches the blocks, so the key-line misses of
// a group overlap instead of each stalling its query. found and ranks may each be null.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::lookup_sorted(const T& t, const S* ks, const std::uint32_t* at,
                                     std::size_t n, bool* found, std::uint64_t* ranks) noexcept {
  if (t.root == 0) {
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t o = at[i];
      if (found) found[o] = false;
      if (ranks) ranks[o] = 0;
    }
    return;
  }
  if (ranks == nullptr) {
    if (found) contains_sorted(t, ks, at, n, found);
    return;
  }
  std::byte* p = nullptr;
  std::uint64_t base = 0;  // keys before page p
  std::byte* page[kGroup];
  unsigned blk[kGroup];
  std::uint64_t before[kGroup];
  for (std::size_t g = 0; g < n; g += kGroup) {
    unsigned m = static_cast<unsigned>(n - g < kGroup ? n - g : kGroup);
    for (unsigned i = 0; i < m; ++i) {
      S k = ks[g + i];
      if (p == nullptr || !in_fences(p, k)) {
        base = 0;
        std::uintptr_t c = t.root;
        for (unsigned h = t.height; h > 0; --h) {
          const std::byte* in = untag(c);
          unsigned j = inner_child(in, k);
          if (ranks)
            for (unsigned x = 0; x < j; ++x) base += IL::count(in)[x];
          c = IL::child(in)[j];
        }
        p = untag(c);
        if (hdr(p)->next != nullptr) prefetch_lines(hdr(p)->next, 1, LL::kIdxLines);
      }
      unsigned b = leaf_block(p, k);
      page[i] = p;
      blk[i] = b;
      before[i] = base;
      prefetch_lines(reinterpret_cast<const std::byte*>(keys(p, b)), 0, sizeof(S) * 16 / kLine);
    }
    for (unsigned i = 0; i < m; ++i) {
      std::byte* q = page[i];
      unsigned b = blk[i];
      S k = ks[g + i];
      const S* bk = keys(q, b);
      unsigned s = Policy::count_lt16(bk, k);
      std::size_t o = at[g + i];
      if (found) found[o] = s < cnt(q)[b] && bk[s] == k;
      std::uint64_t r = before[i] + s;
      for (unsigned x = 0; x < b; ++x) r += cnt(q)[x];
      ranks[o] = r;
    }
  }
}

}  // namespace simdex::btree_detail
