// Baseline helpers of the tree that need no SIMD: teardown and batch input preparation.
#include <algorithm>
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

}  // namespace

template <class S>
void sort_with_index(S* keys, std::uint32_t* index, std::size_t n) {
  using U = std::make_unsigned_t<S>;
  constexpr unsigned kBits = 11, kBuckets = 1u << kBits;
  constexpr unsigned kPasses = (sizeof(S) * 8 + kBits - 1) / kBits;
  constexpr U kSign = U{1} << (sizeof(S) * 8 - 1);
  struct item {
    U key;
    std::uint32_t at;
  };
  std::vector<item> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i)
    a[i] = {static_cast<U>(keys[i]) ^ kSign, static_cast<std::uint32_t>(i)};
  std::vector<std::size_t> hist(kPasses * kBuckets, 0);
  for (std::size_t i = 0; i < n; ++i)
    for (unsigned p = 0; p < kPasses; ++p)
      ++hist[p * kBuckets + ((a[i].key >> (p * kBits)) & (kBuckets - 1))];
  for (unsigned p = 0; p < kPasses && n > 0; ++p) {
    std::size_t* h = hist.data() + p * kBuckets;
    if (h[(a[0].key >> (p * kBits)) & (kBuckets - 1)] == n) continue;
    std::size_t sum = 0;
    for (unsigned d = 0; d < kBuckets; ++d) {
      std::size_t c = h[d];
      h[d] = sum;
      sum += c;
    }
    for (std::size_t i = 0; i < n; ++i) b[h[(a[i].key >> (p * kBits)) & (kBuckets - 1)]++] = a[i];
    a.swap(b);
  }
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = static_cast<S>(a[i].key ^ kSign);
    index[i] = a[i].at;
  }
}
template void sort_with_index<std::int32_t>(std::int32_t*, std::uint32_t*, std::size_t);
template void sort_with_index<std::int64_t>(std::int64_t*, std::uint32_t*, std::size_t);

template <class S>
std::size_t sort_unique(S* keys, std::byte* vals, std::size_t vs, std::size_t n, bool keep_last) {
  if (vals == nullptr || vs == 0) {
    if (n >= 4096)
      radix_sort(keys, n);
    else
      std::sort(keys, keys + n);
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
