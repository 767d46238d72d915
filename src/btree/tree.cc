// Baseline helpers of the tree that need no SIMD: teardown and batch input preparation.
#include <algorithm>
#include <bit>
#include <memory>
#include <numeric>
#include <type_traits>

#include "kernels.h"
#include "simdex/btree/detail.h"

namespace simdex::btree_detail {

template <class S, std::size_t VS>
void destroy(tree<S, VS>& t) noexcept {
  t.mem.release();
  t.root = 0;
  t.height = 0;
  t.size = 0;
  t.first = t.last = nullptr;
  t.leaves = t.inners = 0;
}

namespace {

// LSD radix sort of signed keys by 11-bit digits (the sign bit flipped so that unsigned
// digit order is signed order); a pass whose digit is the same for every key is skipped.
template <class S>
void radix_sort(S* keys, std::size_t n) {
  using U = std::make_unsigned_t<S>;
  constexpr unsigned kBits = 11, kBuckets = 1u << kBits;
  constexpr unsigned kPasses = (sizeof(S) * 8 + kBits - 1) / kBits;
  constexpr U kSign = U{1} << (sizeof(S) * 8 - 1);
  std::vector<U> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<U>(keys[i]) ^ kSign;
  std::vector<std::size_t> hist(kPasses * kBuckets, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (unsigned p = 0; p < kPasses; ++p)
      ++hist[p * kBuckets + ((a[i] >> (p * kBits)) & (kBuckets - 1))];
  for (unsigned p = 0; p < kPasses; ++p) {
    std::size_t* h = hist.data() + p * kBuckets;
    if (h[(a[0] >> (p * kBits)) & (kBuckets - 1)] == n) continue;  // one digit value only
    std::size_t sum = 0;
    for (unsigned d = 0; d < kBuckets; ++d) {
      std::size_t c = h[d];
      h[d] = sum;
      sum += c;
    }
    for (std::size_t i = 0; i < n; ++i) b[h[(a[i] >> (p * kBits)) & (kBuckets - 1)]++] = a[i];
    a.swap(b);
  }
  for (std::size_t i = 0; i < n; ++i) keys[i] = static_cast<S>(a[i] ^ kSign);
}

// Where a key falls among 2^bits buckets that split [lo, hi] into equal key ranges: the top
// bits of key - lo (keys as unsigned, sign flipped, so order is kept). Keys outside [lo, hi]
// may land in bucket 2^bits, one past the last.
template <class S>
struct range_buckets {
  using U = std::make_unsigned_t<S>;
  static constexpr U kSign = U{1} << (sizeof(S) * 8 - 1);
  U lo = 0;
  unsigned shift = 0;
  std::size_t last = 0;  // 2^bits, the bucket of keys outside [lo, hi]
  range_buckets(U lo_u, U hi_u, unsigned bits) : lo(lo_u), last(std::size_t{1} << bits) {
    unsigned width = static_cast<unsigned>(std::bit_width(static_cast<U>(hi_u - lo_u)));
    shift = width > bits ? width - bits : 0;
  }
  static range_buckets of_batch(const S* keys, std::size_t n, unsigned bits) {
    U mn = ~U{0}, mx = 0;
    for (std::size_t i = 0; i < n; ++i) {
      U u = static_cast<U>(keys[i]) ^ kSign;
      mn = u < mn ? u : mn;
      mx = u > mx ? u : mx;
    }
    return n ? range_buckets(mn, mx, bits) : range_buckets(0, 0, bits);
  }
  std::size_t of(S k) const noexcept {
    U d = ((static_cast<U>(k) ^ kSign) - lo) >> shift;
    return d < last ? static_cast<std::size_t>(d) : last;
  }
};

// Counting pass, then the keys (and their positions) spread over the buckets; returns the
// buckets' starts (2^bits + 2 entries: the last bucket, outside the range, may be empty).
template <class S>
std::vector<std::uint32_t> spread(const range_buckets<S>& rb, const S* keys, std::size_t n, S* out,
                                  std::uint32_t* at) {
  std::vector<std::uint32_t> start(rb.last + 2, 0);
  for (std::size_t i = 0; i < n; ++i) ++start[rb.of(keys[i]) + 1];
  for (std::size_t b = 0; b <= rb.last; ++b) start[b + 1] += start[b];
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t d = fill[rb.of(keys[i])]++;
    out[d] = keys[i];
    if (at) at[d] = static_cast<std::uint32_t>(i);
  }
  return start;
}

}  // namespace

// A bucket holds a handful of keys: insertion sort; long runs, which only skewed batches
// make, go to the radix sort or std::sort.
template <class S>
void sort_keys(S* a, std::size_t n) {
  if (n > 32) {
    if (n >= 4096)
      radix_sort(a, n);
    else
      std::sort(a, a + n);
    return;
  }
  for (std::size_t i = 1; i < n; ++i) {
    S x = a[i];
    std::size_t j = i;
    for (; j > 0 && a[j - 1] > x; --j) a[j] = a[j - 1];
    a[j] = x;
  }
}

template <class S>
std::vector<std::uint32_t> group_by_range(const S* keys, std::size_t n, unsigned bits, S* out,
                                          std::uint32_t* at) {
  std::vector<std::uint32_t> start =
      spread(range_buckets<S>::of_batch(keys, n, bits), keys, n, out, at);
  start.pop_back();  // the bucket past the batch's own range is empty
  return start;
}

template <class S>
std::vector<std::uint32_t> group_in_range(const S* keys, std::size_t n, S lo, S hi, unsigned bits,
                                          S* out, std::uint32_t* at) {
  using rb = range_buckets<S>;
  using U = typename rb::U;
  return spread(rb(static_cast<U>(lo) ^ rb::kSign, static_cast<U>(hi) ^ rb::kSign, bits), keys, n,
                out, at);
}

#define SIMDEX_BTREE_GROUPS(S)                                                                     \
  template void sort_keys<S>(S*, std::size_t);                                                     \
  template std::vector<std::uint32_t> group_by_range<S>(const S*, std::size_t, unsigned, S*,       \
                                                        std::uint32_t*);                           \
  template std::vector<std::uint32_t> group_in_range<S>(const S*, std::size_t, S, S, unsigned, S*, \
                                                        std::uint32_t*);
SIMDEX_BTREE_GROUPS(std::int32_t)
SIMDEX_BTREE_GROUPS(std::int64_t)
#undef SIMDEX_BTREE_GROUPS

template <class S>
std::size_t sort_unique(S* keys, std::byte* vals, std::size_t vs, std::size_t n, bool keep_last) {
  if (vals == nullptr || vs == 0) {  // the level kernels' bucket sort takes large batches
    sort_keys(keys, n);
    return static_cast<std::size_t>(std::unique(keys, keys + n) - keys);
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  std::vector<S> k2;
  std::vector<std::byte> v2;
  k2.reserve(n);
  v2.reserve(n * vs);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t o = order[i];
    bool dup = !k2.empty() && k2.back() == keys[o];
    if (dup && !keep_last) continue;
    if (dup) {
      std::memcpy(v2.data() + (k2.size() - 1) * vs, vals + o * vs, vs);
      continue;
    }
    k2.push_back(keys[o]);
    v2.insert(v2.end(), vals + o * vs, vals + (o + 1) * vs);
  }
  std::copy(k2.begin(), k2.end(), keys);
  std::copy(v2.begin(), v2.end(), vals);
  return k2.size();
}

template std::size_t sort_unique<std::int32_t>(std::int32_t*, std::byte*, std::size_t, std::size_t,
                                               bool);
template std::size_t sort_unique<std::int64_t>(std::int64_t*, std::byte*, std::size_t, std::size_t,
                                               bool);

#define SIMDEX_BTREE_DESTROY(S, VS) template void destroy<S, VS>(tree<S, VS>&) noexcept;
SIMDEX_BTREE_SHAPES(SIMDEX_BTREE_DESTROY)
#undef SIMDEX_BTREE_DESTROY

}  // namespace simdex::btree_detail
