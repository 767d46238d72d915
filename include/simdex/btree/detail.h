// Internals of simdex::btree_set / btree_map shared by the public header and the per-ISA
// implementation: key encoding, page layouts, tree state, the per-level operations table.
// Nothing here is SIMD code, so it is safe to include from every translation unit.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "simdex/cpu.h"
#include "simdex/memory.h"

namespace simdex::btree_detail {

// ---- keys ---------------------------------------------------------------------------------
// Every key is stored as a signed integer of its width whose signed order is the key's order
// (IEEE totalOrder for floats), so one set of signed SIMD compares serves all six key types.
template <class K>
struct codec;

// Unsigned keys flip the top bit, which maps unsigned order onto signed order.
template <class U, class I>
struct unsigned_codec {
  using stored = I;
  static constexpr U kTop = U{1} << (8 * sizeof(U) - 1);
  static stored encode(U k) noexcept { return static_cast<stored>(k ^ kTop); }
  static U decode(stored s) noexcept { return static_cast<U>(s) ^ kTop; }
};
template <class I>
struct signed_codec {
  using stored = I;
  static stored encode(I k) noexcept { return k; }
  static I decode(stored s) noexcept { return s; }
};
template <>
struct codec<std::uint32_t> : unsigned_codec<std::uint32_t, std::int32_t> {};
template <>
struct codec<std::int32_t> : signed_codec<std::int32_t> {};
template <>
struct codec<std::uint64_t> : unsigned_codec<std::uint64_t, std::int64_t> {};
template <>
struct codec<std::int64_t> : signed_codec<std::int64_t> {};

// Floats: negative values get their magnitude bits flipped, which makes the bit pattern's
// signed order equal IEEE totalOrder (-inf < ... < -0.0 < +0.0 < ... < +inf). NaN is refused.
template <class F, class I>
struct float_codec {
  using stored = I;
  static constexpr I kMag = std::numeric_limits<I>::max();
  static bool is_nan(F k) noexcept { return k != k; }
  static stored encode(F k) {
    if (is_nan(k)) throw std::invalid_argument("simdex::btree: NaN is not a valid key");
    I b = std::bit_cast<I>(k);
    return b < 0 ? static_cast<I>(b ^ kMag) : b;
  }
  static F decode(stored s) noexcept {
    return std::bit_cast<F>(s < 0 ? static_cast<I>(s ^ kMag) : s);
  }
};
template <>
struct codec<float> : float_codec<float, std::int32_t> {};
template <>
struct codec<double> : float_codec<double, std::int64_t> {};

template <class K>
inline constexpr bool is_key_type =
    std::is_same_v<K, std::uint32_t> || std::is_same_v<K, std::int32_t> ||
    std::is_same_v<K, std::uint64_t> || std::is_same_v<K, std::int64_t> ||
    std::is_same_v<K, float> || std::is_same_v<K, double>;

// Values are stored as opaque bytes in slots of 0 (set), 4, 8 or 16 bytes.
template <class V>
struct value_traits {
  static constexpr bool ok = std::is_trivially_copyable_v<V> && sizeof(V) <= 16;
  static constexpr std::size_t slot = sizeof(V) <= 4 ? 4 : sizeof(V) <= 8 ? 8 : 16;
};
template <>
struct value_traits<void> {
  static constexpr bool ok = true;
  static constexpr std::size_t slot = 0;
};
template <class V>
inline constexpr std::size_t value_slot = value_traits<V>::slot;

// ---- leaf page ----------------------------------------------------------------------------
// A leaf is one 4 KiB page holding a two-level sub-tree: an in-page index (the first key of
// every block, one to four cache lines right after the header) over blocks of 16 keys
// (one cache line of 4-byte keys, two of 8-byte keys). Blocks are kept in key order and each
// used block holds at least one key; unused key lanes hold the maximum stored value, so a
// block is searched with one "count keys < x" over all 16 lanes. A point lookup in a page
// touches the index lines (prefetched together the moment the page address is known) and
// one block: two dependent misses, against three in a nested three-level sub-tree.
inline constexpr std::size_t kPageBytes = 4096;
inline constexpr std::size_t kBlockKeys = 16;
inline constexpr std::size_t kLine = 64;

template <class S>
struct leaf_header {
  std::uint16_t n;     // keys in the page
  std::uint8_t nb;     // blocks in use, [1, kBlocks] (0 only while the page is being built)
  std::uint8_t flags;  // kHasLo / kHasHi: which fences are finite
  std::uint32_t reserved;
  std::byte* prev;  // neighbouring leaves, for iteration
  std::byte* next;
  S lo;  // fence keys: every key k in the page has lo <= k < hi
  S hi;
  static constexpr std::uint8_t kHasLo = 1, kHasHi = 2;
};

constexpr std::size_t round_up(std::size_t x, std::size_t a) { return (x + a - 1) / a * a; }

template <class S, std::size_t VS>
struct leaf_layout {
  static constexpr std::size_t kIdxOff = kLine;  // index lines follow the header line
  static constexpr std::size_t meta_end(std::size_t b) {
    return round_up(kLine + b * sizeof(S) + b, kLine);
  }
  static constexpr std::size_t blocks_for() {
    std::size_t b = 1;
    while (b < 64 && meta_end(b + 1) + (b + 1) * kBlockKeys * (sizeof(S) + VS) <= kPageBytes) ++b;
    return b;
  }
  static constexpr std::size_t kBlocks = blocks_for();
  static constexpr std::size_t kCap = kBlocks * kBlockKeys;
  static constexpr std::size_t kCntOff = kIdxOff + kBlocks * sizeof(S);
  static constexpr std::size_t kKeysOff = meta_end(kBlocks);
  static constexpr std::size_t kValsOff = kKeysOff + kCap * sizeof(S);
  static constexpr std::size_t kIdxLines = (kCntOff + kBlocks - 1) / kLine;  // after header
  // The index keys alone (no counts): what a membership test reads before its block.
  static constexpr std::size_t kKeyIdxLines = (kCntOff + kLine - 1) / kLine - 1;
  static_assert(kValsOff + kCap * VS <= kPageBytes);
  static_assert(kBlocks >= 8);

  static leaf_header<S>* hdr(std::byte* p) noexcept { return reinterpret_cast<leaf_header<S>*>(p); }
  static const leaf_header<S>* hdr(const std::byte* p) noexcept {
    return reinterpret_cast<const leaf_header<S>*>(p);
  }
  static S* idx(std::byte* p) noexcept { return reinterpret_cast<S*>(p + kIdxOff); }
  static const S* idx(const std::byte* p) noexcept {
    return reinterpret_cast<const S*>(p + kIdxOff);
  }
  static std::uint8_t* cnt(std::byte* p) noexcept {
    return reinterpret_cast<std::uint8_t*>(p + kCntOff);
  }
  static const std::uint8_t* cnt(const std::byte* p) noexcept {
    return reinterpret_cast<const std::uint8_t*>(p + kCntOff);
  }
  static S* keys(std::byte* p, std::size_t b = 0) noexcept {
    return reinterpret_cast<S*>(p + kKeysOff) + b * kBlockKeys;
  }
  static const S* keys(const std::byte* p, std::size_t b = 0) noexcept {
    return reinterpret_cast<const S*>(p + kKeysOff) + b * kBlockKeys;
  }
  static std::byte* vals(std::byte* p, std::size_t b = 0) noexcept {
    return p + kValsOff + b * kBlockKeys * VS;
  }
};

// ---- inner node ---------------------------------------------------------------------------
// Up to 64 children. Separators (first key of children 1..n-1) fill the first lines and are
// searched with SIMD "count <= x"; then the child pointers and the per-child key counts
// (which give rank/select). Child pointers carry a tag in bit 0: set when the child is a leaf
// page, so the descent knows which lines of the child to prefetch as soon as it reads the
// pointer, a level before it searches them.
inline constexpr std::size_t kFanout = 64;
inline constexpr std::size_t kInnerBytes = 2048;
inline constexpr std::uintptr_t kLeafTag = 1;

// 8-byte separators span eight lines, so those nodes also keep a summary line: every 8th
// separator (keys[8j + 7], j < 7) and n. A search reads the summary, then the one key line
// it names: two lines instead of eight, which keeps the inner levels small in cache.
template <class S>
struct inner_layout {
  static constexpr std::size_t kKeysBytes =
      kFanout * sizeof(S);  // 63 separators (+ n without a summary)
  static constexpr std::size_t kChildOff = kKeysBytes;
  static constexpr std::size_t kCountOff = kChildOff + kFanout * sizeof(std::uintptr_t);
  static constexpr bool kSummary = sizeof(S) == 8;
  static constexpr std::size_t kSumKeys = kFanout / 8 - 1;  // the 8th slot holds n
  static constexpr std::size_t kSumOff = kCountOff + kFanout * sizeof(std::uint64_t);
  // The lines a search reads from: the separators and the child pointers.
  static constexpr std::size_t kSearchLines = kCountOff / kLine;
  static constexpr std::size_t kNOff =
      kSummary ? kSumOff + kSumKeys * sizeof(S) : (kFanout - 1) * sizeof(S);
  static_assert(kSumOff + (kSummary ? kLine : 0) <= kInnerBytes);
  static S* keys(std::byte* p) noexcept { return reinterpret_cast<S*>(p); }
  static const S* keys(const std::byte* p) noexcept { return reinterpret_cast<const S*>(p); }
  static const S* summary(const std::byte* p) noexcept {
    return reinterpret_cast<const S*>(p + kSumOff);
  }
  // Call after any change to the separators (no-op for 4-byte keys).
  static void summarize(std::byte* p) noexcept {
    if constexpr (kSummary) {
      S* sum = reinterpret_cast<S*>(p + kSumOff);
      for (std::size_t j = 0; j < kSumKeys; ++j) sum[j] = keys(p)[8 * j + 7];
    }
  }
  static std::uint32_t& n(std::byte* p) noexcept {
    return *reinterpret_cast<std::uint32_t*>(p + kNOff);
  }
  static std::uint32_t n(const std::byte* p) noexcept {
    return *reinterpret_cast<const std::uint32_t*>(p + kNOff);
  }
  static std::uintptr_t* child(std::byte* p) noexcept {
    return reinterpret_cast<std::uintptr_t*>(p + kChildOff);
  }
  static const std::uintptr_t* child(const std::byte* p) noexcept {
    return reinterpret_cast<const std::uintptr_t*>(p + kChildOff);
  }
  static std::uint64_t* count(std::byte* p) noexcept {
    return reinterpret_cast<std::uint64_t*>(p + kCountOff);
  }
  static const std::uint64_t* count(const std::byte* p) noexcept {
    return reinterpret_cast<const std::uint64_t*>(p + kCountOff);
  }
};

inline std::byte* untag(std::uintptr_t p) noexcept {
  return reinterpret_cast<std::byte*>(p & ~kLeafTag);
}

// ---- arena --------------------------------------------------------------------------------
// 2 MiB regions (simdex::page_buffer) carved into 4 KiB leaf pages and 2 KiB inner nodes;
// freed nodes go to free lists and are reused. One arena per tree, never shared.
class arena {
 public:
  explicit arena(page_size pages) : pages_(pages) {}
  arena(arena&& o) noexcept { *this = std::move(o); }
  arena& operator=(arena&& o) noexcept {
    if (this != &o) {
      pages_ = o.pages_;
      regions_ = std::move(o.regions_);
      used_in_last_ = o.used_in_last_;
      free_pages_ = o.free_pages_;
      free_inners_ = o.free_inners_;
      spare_pages_ = o.spare_pages_;
      spare_inners_ = o.spare_inners_;
      o.regions_.clear();
      o.used_in_last_ = kRegionBytes;
      o.free_pages_ = o.free_inners_ = nullptr;
      o.spare_pages_ = o.spare_inners_ = 0;
    }
    return *this;
  }
  std::byte* alloc_page();  // 4 KiB aligned, contents unspecified
  void free_page(std::byte* p) noexcept;
  std::byte* alloc_inner();  // 2 KiB aligned
  void free_inner(std::byte* p) noexcept;
  // Makes the next `pages` alloc_page and `inners` alloc_inner calls unable to fail (they
  // come from the free lists), so an edit reserves first and changes the tree only after.
  // Throws std::bad_alloc (arena still valid) when it cannot.
  void reserve(std::size_t pages, std::size_t inners) {
    if (spare_pages_ < pages || spare_inners_ < inners) refill(pages, inners);
  }
  void release() noexcept;  // drop every region
  page_size pages() const noexcept { return pages_; }
  std::size_t mapped_bytes() const noexcept { return regions_.size() * kRegionBytes; }
  std::size_t huge_bytes() const;  // slow: reads /proc/self/smaps
  static constexpr std::size_t kRegionBytes = std::size_t{2} << 20;
  // Test hook: the n-th page carved from here on in this thread throws std::bad_alloc as if
  // a region could not be mapped (0: never). See carve() for why pages, not regions.
  static void fail_nth_carve(std::size_t n) noexcept;

 private:
  std::byte* carve();
  void refill(std::size_t pages, std::size_t inners);
  void cut_page_into_inners();
  page_size pages_;
  std::vector<page_buffer> regions_;
  std::size_t used_in_last_ = kRegionBytes;
  std::byte* free_pages_ = nullptr;
  std::byte* free_inners_ = nullptr;
  std::size_t spare_pages_ = 0;  // lengths of the free lists
  std::size_t spare_inners_ = 0;
};

// ---- tree state and per-level operations --------------------------------------------------
template <class S, std::size_t VS>
struct tree {
  explicit tree(page_size pages) : mem(pages) {}
  std::uintptr_t root = 0;   // tagged; 0 when empty
  std::uint32_t height = 0;  // inner levels above the leaves
  std::size_t size = 0;
  std::byte* first = nullptr;  // leftmost / rightmost leaf
  std::byte* last = nullptr;
  std::size_t leaves = 0, inners = 0;
  arena mem;
};

// A key's place: page, block, slot. page == nullptr means "none" (end).
struct pos {
  std::byte* page = nullptr;
  std::uint32_t block = 0, slot = 0;
};

// One table per (stored key, value slot) and ISA level; each public call makes one indirect
// call into it, and everything below (descent, node search) is direct, inlined code.
template <class S, std::size_t VS>
struct kernels {
  using T = tree<S, VS>;
  bool (*insert)(T&, S key, const void* val, bool assign);
  bool (*erase)(T&, S key);
  pos (*find)(const T&, S key);
  bool (*contains)(const T&, S key);
  pos (*lower_bound)(const T&, S key);
  pos (*upper_bound)(const T&, S key);
  std::size_t (*rank)(const T&, S key);  // keys < key
  pos (*select)(const T&, std::size_t i);
  void (*contains_batch)(const T&, const S* keys, std::size_t n, bool* out);
  // ranks may be null.
  void (*lower_bound_batch)(const T&, const S* keys, std::size_t n, pos* out, std::uint64_t* ranks);
  // keys in any order, fastest when ascending or grouped by key range (a query inside the
  // previous one's page skips the descent); key i's answers go to position at[i] of found /
  // ranks (keys < key), either of which may be null.
  void (*lookup_sorted)(const T&, const S* keys, const std::uint32_t* at, std::size_t n,
                        bool* found, std::uint64_t* ranks);
  // keys sorted ascending, unique; vals: n slots of VS bytes (or null for sets).
  std::size_t (*insert_sorted)(T&, const S* keys, const std::byte* vals, std::size_t n,
                               bool assign);
  std::size_t (*erase_sorted)(T&, const S* keys, std::size_t n);
  // Tree must be empty; keys sorted ascending and unique.
  void (*build_sorted)(T&, const S* keys, const std::byte* vals, std::size_t n);
  // sort_unique (below) for a batch of this shape, vals being n slots of VS bytes or null.
  std::size_t (*sort_unique)(S* keys, std::byte* vals, std::size_t n, bool keep_last);
  const char* level_name;
};

// Defined in src/btree/dispatch.cc for every shape of SIMDEX_BTREE_SHAPES (src/btree/kernels.h):
// S in {int32_t, int64_t}, VS in {0, 4, 8, 16}.
template <class S, std::size_t VS>
const dispatch::by_level<kernels<S, VS>>& kernel_tables();
template <class S, std::size_t VS>
const kernels<S, VS>& active_kernels();

// Helpers in src/btree/tree.cc (baseline code): free all nodes; sort + dedupe; validator.
template <class S, std::size_t VS>
void destroy(tree<S, VS>& t) noexcept;
// Sorts keys (and their value slots) ascending, keeps the first of equal keys (or the last
// when keep_last); returns the new length.
template <class S>
std::size_t sort_unique(S* keys, std::byte* vals, std::size_t vs, std::size_t n, bool keep_last);
// Sorts n keys ascending: insertion sort for a few, else std::sort or a radix sort.
template <class S>
void sort_keys(S* keys, std::size_t n);
// Groups n (< 2^32) keys into 2^bits buckets that split the batch's [min, max] into equal
// key ranges: bucket b's keys, in input order, go to out[start[b], start[b + 1]) and their
// input positions to at (when not null). Returns start (2^bits + 1 entries).
template <class S>
std::vector<std::uint32_t> group_by_range(const S* keys, std::size_t n, unsigned bits, S* out,
                                          std::uint32_t* at);
// The same over a given range [lo, hi] (a tree's keys, so no pass over the batch for its own
// range): 2^bits + 2 starts, and the last group holds keys outside [lo, hi], in input order.
template <class S>
std::vector<std::uint32_t> group_in_range(const S* keys, std::size_t n, S lo, S hi, unsigned bits,
                                          S* out, std::uint32_t* at);
// Structure check: sortedness, fences, counts, block invariants, links. Empty string = ok.
template <class S, std::size_t VS>
std::string validate(const tree<S, VS>& t);

}  // namespace simdex::btree_detail
