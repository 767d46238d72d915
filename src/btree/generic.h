// The tree algorithms, written once and instantiated per ISA level: Policy is a node-search
// kernel (scalar_policy / avx2_policy / avx512_policy), so every instantiation is a distinct type
// and the linker can never mix code built for different levels. Include only from the
// per-level files (scalar.cc, avx2.cc, avx512.cc). Uses no std templates for the same reason.
//
// impl below is the table of contents: every function with a one-line comment, grouped by the
// file that defines it (leaf_edits.h, inner_edits.h, search.h, mutation.h, included at the end,
// each templated on the same Policy). The declarations say inline, as definitions inside the
// class would: GCC's inliner weighs that, and without it descend() stays a call at u64.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "simdex/btree/detail.h"

namespace simdex::btree_detail {

template <class Policy, std::size_t VS>
struct impl {
  using S = typename Policy::key;
  using T = tree<S, VS>;
  using LL = leaf_layout<S, VS>;
  using IL = inner_layout<S>;
  using H = leaf_header<S>;
  static constexpr S kMax = std::numeric_limits<S>::max();
  static constexpr unsigned B = LL::kBlocks;
  static constexpr unsigned kCap = LL::kCap;
  static constexpr unsigned kF = kFanout;
  static constexpr unsigned kMaxDepth = 24;
  struct path {
    std::byte* node[kMaxDepth];
    unsigned idx[kMaxDepth];
  };

  // ---- page access (inline) ----------------------------------------------------------
  static H* hdr(std::byte* p) noexcept { return LL::hdr(p); }  // a leaf page's header
  // Keys in each block of page p (one byte per block).
  static std::uint8_t* cnt(std::byte* p) noexcept { return LL::cnt(p); }
  // Each block's first key (kMax for an unused block): the in-page index leaf_block searches.
  static S* idx(std::byte* p) noexcept { return LL::idx(p); }
  // Block b's 16 key lanes.
  static S* keys(std::byte* p, unsigned b) noexcept { return LL::keys(p, b); }
  // The value slot of (b, s).
  static std::byte* val(std::byte* p, unsigned b, unsigned s) noexcept {
    return LL::vals(p, b) + s * VS;
  }
  static S first_key(std::byte* p) noexcept { return keys(p, 0)[0]; }  // page p's smallest key

  // ---- leaf-page edits (leaf_edits.h) -----------------------------------------------------------
  // A carry longer than this many blocks respreads the page instead (far_gap).
  static constexpr unsigned kNearBlocks = 6;
  // Key (and value) buffers that gather() fills or pack() reads keep this many lanes to
  // spare: both copy whole blocks.
  static constexpr unsigned kPad = kBlockKeys;
  // Keys in a page that a bulk build or a batch merge lays out: two free lanes per block, so
  // a batch of up to an eighth of a bulk-built tree's size, or as many single inserts per
  // page, goes in without splitting pages (built full, the first batch split every page in
  // two half-empty ones, which doubled the tree's memory for good: docs/btree-bench.md).
  static constexpr unsigned kFill = kCap - 2 * B;
  // Copies a value in (zeros when src is null).
  static inline void copy_val(std::byte* dst, const void* src) noexcept;
  // A new empty leaf.
  static inline std::byte* new_leaf(T& t);
  // A new leaf that pack() fills right away (header cleared only).
  static inline std::byte* new_leaf_for_pack(T& t);
  // Every block empty, every index slot and lane kMax.
  static inline void init_empty_leaf(std::byte* p) noexcept;
  // Copies page p's keys (and values) out in order; returns the count.
  static inline unsigned gather(std::byte* p, S* ks, std::byte* vs) noexcept;
  // Lays n sorted keys over min(n, B) blocks evenly.
  static inline void pack(std::byte* p, const S* ks, const std::byte* vs, unsigned n) noexcept;
  // A set's page laid out as pack(merge(old, fk)) would: old holds its a keys (kPad lanes
  // readable past them), fk f new keys, ascending, none among old, fr their ranks in old;
  // a + f <= kCap.
  static inline void merge_pack(std::byte* p, const S* old, unsigned a, const S* fk,
                                const std::uint32_t* fr, unsigned f) noexcept;
  // The value slots of a block follow its keys: v into slot s of a block of c < 16 values;
  // slot s out of a block of c values.
  static inline void vals_open(std::byte* vb, unsigned s, unsigned c, const std::byte* v) noexcept;
  static inline void vals_close(std::byte* vb, unsigned s, unsigned c) noexcept;
  // Inserts k at (b, s) of a non-full page, carrying overflow to the nearest gap.
  static inline void leaf_insert_at(std::byte* p, unsigned b, unsigned s, S k,
                                    const void* v) noexcept;
  // The nearest block with room is more than kNearBlocks away.
  static inline bool far_gap(std::byte* p, unsigned b) noexcept;
  // Spreads a page's keys evenly over its blocks again.
  static inline void respread(std::byte* p) noexcept;
  // Removes (b, s); an emptied block closes.
  static inline void leaf_erase_at(std::byte* p, unsigned b, unsigned s) noexcept;
  // P's upper fence from another page's.
  static inline void set_hi(std::byte* p, const H* from) noexcept;
  // P's lower fence from another page's.
  static inline void set_lo(std::byte* p, const H* from) noexcept;
  // The fence between two neighbouring pages.
  static inline void set_sep(std::byte* left, std::byte* right, S sep) noexcept;
  // Links r into the leaf chain after p.
  static inline void link_after(T& t, std::byte* p, std::byte* r) noexcept;
  // Takes p out of the leaf chain.
  static inline void unlink(T& t, std::byte* p) noexcept;
  // Returns a page to the arena.
  static inline void free_leaf(T& t, std::byte* p) noexcept;

  // ---- inner-node edits (inner_edits.h) ---------------------------------------------------------
  // A new inner node with no children.
  static inline std::byte* new_inner(T& t);
  // Keys under an inner node.
  static inline std::uint64_t inner_total(const std::byte* in) noexcept;
  // Links a new right sibling in above a split child, splitting upwards.
  static inline void inner_insert(T& t, path& P, int d, S sep, std::uintptr_t c,
                                  std::uint64_t moved);
  // Child c at position j of a node with room.
  static inline void insert_slot(std::byte* in, unsigned j, S sep, std::uintptr_t c,
                                 std::uint64_t count) noexcept;
  // Drops child j, then merges or collapses underfull nodes.
  static inline void remove_child(T& t, path& P, int d, unsigned j);
  // Appends node r (and the separator between) to node l.
  // Children j and j + 1 of P.node[d] (inner nodes) become one.
  static inline void merge_children(T& t, path& P, int d, unsigned j);
  static inline void merge_inner(std::byte* l, std::byte* r, S sep) noexcept;
  // Appends a child to the rightmost node of a level (bulk build).
  static inline void push_child(T& t, path& P, unsigned& levels, unsigned d, S k, std::uintptr_t c,
                                std::uint64_t count);

  // ---- search and batches (search.h) ------------------------------------------------------------
  // Group prefetching: descend kGroup queries level by level, so their misses overlap.
  static constexpr unsigned kGroup = 32;
  // Lines [from, from + lines) of p.
  static inline void prefetch_lines(const std::byte* p, unsigned from, unsigned lines) noexcept;
  // The lines a child's search reads, as soon as its pointer is known.
  // kCounts: a leaf's block counts too (kIdxLines), else its index keys only.
  template <bool kCounts = true>
  static inline void prefetch_child(std::uintptr_t c) noexcept;
  // The child of an inner node whose range holds k (kNotMax: the caller knows k != kMax).
  template <bool kNotMax = false>
  static inline unsigned inner_child(const std::byte* in, S k) noexcept;
  // The block of page p whose range holds k.
  [[gnu::always_inline]] static inline unsigned leaf_block(std::byte* p, S k) noexcept;
  // A leaf's index entries one vector of compares covers: the window around the guessed blocks.
  static constexpr unsigned kWin = kLine / sizeof(S);
  static constexpr unsigned kNoBlock = ~0u;
  // Where a window starts (index entry w), and the counts of entries <= k in it that settle
  // k's block: c - lo <= span (unsigned). The default settles nothing.
  struct window {
    unsigned w = 0, lo = kWin + 1, span = 0;
  };
  // k's block from the window when it settles it, else kNoBlock.
  static inline unsigned window_block(std::byte* p, S k, window v) noexcept;
  // Trees with this many inner nodes (512 KiB of them) or more fetch a leaf's parent whole.
  static constexpr std::size_t kWholeInnersMin = (std::size_t{512} << 10) / kInnerBytes;
  // Root to the leaf whose range holds k, prefetching each node's lines (and the leaf's likely
  // blocks) as soon as its pointer is read; records the path in *P when kPath.
  // With win, *win is the leaf's index window around the guess (window_block).
  template <bool kPath, bool kCounts = true, bool kNotMax = false>
  [[gnu::always_inline]] static inline std::byte* walk(const T& t, S k, path* P,
                                                       window* win = nullptr) noexcept;
  // Root to the leaf whose range holds k.
  [[gnu::always_inline]] static inline std::byte* descend(const T& t, S k) noexcept;
  // The same, recording the path for an edit.
  [[gnu::always_inline]] static inline std::byte* descend_path(const T& t, S k, path& P) noexcept;
  // First position >= k in page p, or past its end.
  static inline pos leaf_lb(std::byte* p, S k) noexcept;
  // A position past a page becomes the next page's first.
  static inline pos normalize(pos r) noexcept;
  // K lies within page p's fences.
  static inline bool in_fences(std::byte* p, S k) noexcept;
  // A lookup's answer from k's block b of page p: find_in, block_has, lower_in, upper_in.
  template <auto Step>
  using step_t = decltype(Step(nullptr, 0u, S{}));
  // Walk (kCounts, kNotMax as there) and answer Step in the block the window settles, else
  // through far<Step>. The table's find, lower_bound and upper_bound are this itself, with
  // find_in, lower_in and upper_in: a function of their own around it returned far's
  // position through a copy, and GCC then called far with an aligned stack frame instead of
  // jumping to it.
  template <auto Step, bool kCounts = true, bool kNotMax = false>
  [[gnu::always_inline]] static inline step_t<Step> windowed(const T& t, S k) noexcept;
  // Step in leaf p's block from its whole index, where the window did not settle it: out of
  // line and called last, so the lookups keep no stack frame (a call they return from made
  // GCC align one for every lookup).
  template <auto Step>
  [[gnu::noinline, gnu::cold]] static step_t<Step> far(std::byte* p, S k) noexcept;
  // Whether block b of page p holds k.
  static inline bool block_has(std::byte* p, unsigned b, S k) noexcept;
  // Position of k in block b of page p, or none (find).
  static inline pos find_in(std::byte* p, unsigned b, S k) noexcept;
  // First position >= k from block b of page p on (the next block's first when past b).
  static inline pos block_lb(std::byte* p, unsigned b, S k) noexcept;
  // The first position >= k (lower_bound) and > k (upper_bound) from k's block b of page p.
  static inline pos lower_in(std::byte* p, unsigned b, S k) noexcept;
  static inline pos upper_in(std::byte* p, unsigned b, S k) noexcept;
  // Whether k is present: find without building a position.
  static inline bool contains(const T& t, S k) noexcept;
  // Keys < k.
  static inline std::size_t rank(const T& t, S k) noexcept;
  // The i-th key's position.
  static inline pos select(const T& t, std::size_t i) noexcept;
  // Descends m queries together to their leaves and blocks, ranks gathered when rk is set.
  static inline void descend_group(const T& t, const S* q, unsigned m, std::uintptr_t* cur,
                                   unsigned* blk, std::uint64_t* rk) noexcept;
  // Lower_bound (and rank) of n keys, in groups that overlap their misses.
  static inline void lower_bound_batch(const T& t, const S* ks, std::size_t n, pos* out,
                                       std::uint64_t* ranks) noexcept;
  // Membership of n keys, in groups.
  static inline void contains_batch(const T& t, const S* ks, std::size_t n, bool* out) noexcept;
  // Membership and rank of ascending keys along the leaf chain.
  static inline void lookup_sorted(const T& t, const S* ks, const std::uint32_t* at, std::size_t n,
                                   bool* found, std::uint64_t* ranks) noexcept;
  // Its membership-only case: one pass that prefetches the next page ahead of the queries.
  static inline void contains_sorted(const T& t, const S* ks, const std::uint32_t* at,
                                     std::size_t n, bool* found) noexcept;

  // ---- mutation drivers (mutation.h) ------------------------------------------------------------
  // Below this many keys for a page, key-by-key insert is cheaper; a set's merge (merge_pack)
  // pays from 16.
  static constexpr unsigned kMergeMin = VS == 0 ? 16 : 32;
  static constexpr unsigned kMergeRun = 4 * kCap;  // keys merged per step (stack buffers)
  // Adds delta to the subtree counts along a path.
  static inline void add_counts(const T& t, const path& P, std::int64_t delta) noexcept;
  // Room for k in full page p: append, shift to a sibling, or split.
  // Full page p evens out with its right or left neighbour when that one has room.
  static inline bool shift_to_sibling(path& P, int d, std::byte* p, bool right) noexcept;
  static inline void make_room(T& t, path& P, std::byte* p, S k);
  // An underfull or empty page after an erase: merge or drop it.
  // Children j and j + 1 of P.node[d] (leaves) become one.
  static inline void merge_leaves(T& t, path& P, int d, unsigned j);
  static inline void leaf_underflow(T& t, path& P, std::byte* p);
  // The first key of an empty tree.
  static inline void first_leaf(T& t, S k, const void* v);
  // Inserts (or assigns) one key; false when it was present.
  static inline bool insert(T& t, S k, const void* v, bool assign);
  // Erases one key; false when it was absent.
  static inline bool erase(T& t, S k);
  // Inserts ascending keys, merging runs that share a page.
  static inline std::size_t insert_sorted(T& t, const S* ks, const std::byte* vs, std::size_t n,
                                          bool assign);
  // Merges a sorted run into page p, overflowing into new pages.
  static inline unsigned merge_into(T& t, path& P, std::byte* p, const S* in, const std::byte* iv,
                                    unsigned m, bool assign);
  // Erases ascending keys along the leaf chain.
  static inline std::size_t erase_sorted(T& t, const S* ks, std::size_t n);
  // Bottom-up build of an empty tree from sorted unique keys.
  static inline void build_sorted(T& t, const S* ks, const std::byte* vs, std::size_t n);
  static inline void build_nodes(T& t, const S* ks, const std::byte* vs, std::size_t n);

  // ---- batch sort (batch_sort.h) ----------------------------------------------------------------
  // Batches at least this long go through the buckets; shorter ones to the baseline sort.
  static constexpr std::size_t kBucketSortMin = 4096;
  // Sorts and dedupes a batch (sort_unique in detail.h) through the buckets.
  static inline std::size_t sort_unique(S* keys, std::byte* vals, std::size_t n, bool keep_last);
  // Places c <= 16 keys of a (16 lanes readable) at out in ascending order, and their
  // positions ai (when not null) at ao alike; true when some key repeats.
  static inline bool rank_place(const S* a, unsigned c, S* out, const std::uint32_t* ai,
                                std::uint32_t* ao) noexcept;

  static constexpr kernels<S, VS> table() {
    return {.insert = &insert,
            .erase = &erase,
            .find = &windowed<&find_in>,
            .contains = &contains,
            .lower_bound = &windowed<&lower_in>,
            .upper_bound = &windowed<&upper_in>,
            .rank = &rank,
            .select = &select,
            .contains_batch = &contains_batch,
            .lower_bound_batch = &lower_bound_batch,
            .lookup_sorted = &lookup_sorted,
            .insert_sorted = &insert_sorted,
            .erase_sorted = &erase_sorted,
            .build_sorted = &build_sorted,
            .sort_unique = &sort_unique,
            .level_name = Policy::kName};
  }
};

template <template <class> class Policy, class S, std::size_t VS>
const kernels<S, VS>* level_kernels() {
  static constexpr kernels<S, VS> table = impl<Policy<S>, VS>::table();
  return &table;
}

}  // namespace simdex::btree_detail

// The member definitions, one file per section of impl.
#include "batch_sort.h"
#include "inner_edits.h"
#include "leaf_edits.h"
#include "mutation.h"
#include "search.h"
