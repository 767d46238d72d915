// The kernel algorithms written once over a per-level block policy:
//   Policy::mask_t, Policy::mask(key) -> the 8-word mask, Policy::test(block, mask) -> all mask
//   bits set, Policy::set(block, mask) -> OR the mask in.
// Bulk loops prefetch the block of key i + kAhead while testing key i, so up to kAhead misses
// are in flight even when the loop body itself is short. Internal linkage (see xxh64_fixed.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "simdex/bloom.h"
#include "xxh64_fixed.h"

namespace simdex::bloom {
namespace {

// 48 keys (about 300 ns of bulk work) covers a DRAM miss plus a nested-paging TLB walk on
// this KVM guest; 12 and 24 measured slower at 1 GiB. Override with -DSIMDEX_BLOOM_AHEAD=N.
#ifndef SIMDEX_BLOOM_AHEAD
#define SIMDEX_BLOOM_AHEAD 48
#endif
constexpr std::size_t kAhead = SIMDEX_BLOOM_AHEAD;

inline const std::uint32_t* block_ptr(const std::uint32_t* words, std::uint64_t blocks,
                                      std::uint64_t hash) {
  return words + 8 * block_index(hash, blocks);
}

template <class Policy>
bool check_one(const std::uint32_t* words, std::uint64_t blocks, std::uint64_t hash) {
  return Policy::test(block_ptr(words, blocks, hash),
                      Policy::mask(static_cast<std::uint32_t>(hash)));
}

template <class Policy>
void insert_one(std::uint32_t* words, std::uint64_t blocks, std::uint64_t hash) {
  Policy::set(words + 8 * block_index(hash, blocks),
              Policy::mask(static_cast<std::uint32_t>(hash)));
}

// Calls body(i) for i in [0, n), prefetching the block of hashes[i + kAhead] first.
template <int Rw, class Body>
inline void prefetched_loop(const std::uint32_t* words, std::uint64_t blocks,
                            const std::uint64_t* hashes, std::size_t n, Body&& body) {
  std::size_t i = 0;
  for (; i < n && i < kAhead; ++i) __builtin_prefetch(block_ptr(words, blocks, hashes[i]), Rw, 3);
  std::size_t steady = n > kAhead ? n - kAhead : 0;
  for (i = 0; i < steady; ++i) {
    __builtin_prefetch(block_ptr(words, blocks, hashes[i + kAhead]), Rw, 3);
    body(i);
  }
  for (; i < n; ++i) body(i);
}

// Filters up to this size stay in L2 (2 MiB and more per core on current x86 servers) once
// warm: their probes never wait on memory, so prefetching only costs instructions. Above it,
// the prefetched loop keeps kAhead misses in flight.
constexpr std::uint64_t kInCacheBlocks = (std::size_t{1} << 20) / kBlockBytes;

// Calls body(i, hit) for i in [0, n) with no prefetch of the blocks: keys are independent, so
// the core overlaps several probes by itself. The hashes are prefetched non-temporally a few
// lines ahead: streamed through L2 like any read, a long key array evicts the filter's lines
// there (1M keys: 1.13 -> 0.93 ns/key at 0.5 MiB on Zen 4). Unrolled; each result is handed on
// as soon as it is known (testing four keys first and then storing four results made the
// compiler merge the stores through shifts and ORs, slower here).
template <class Policy, class Body>
inline void unrolled_check(const std::uint32_t* words, std::uint64_t blocks,
                           const std::uint64_t* hashes, std::size_t n, Body&& body) {
  std::size_t i = 0;
  for (; i + 64 <= n; i += 8) {
    __builtin_prefetch(hashes + i + 56, 0, 0);
#pragma GCC unroll 8
    for (std::size_t j = i; j < i + 8; ++j) body(j, check_one<Policy>(words, blocks, hashes[j]));
  }
#pragma GCC unroll 4
  for (; i < n; ++i) body(i, check_one<Policy>(words, blocks, hashes[i]));
}

// body(i, hit) over all keys, by the loop that suits the filter's size.
template <class Policy, class Body>
inline void check_loop(const std::uint32_t* words, std::uint64_t blocks,
                       const std::uint64_t* hashes, std::size_t n, Body&& body) {
  if (blocks <= kInCacheBlocks)
    unrolled_check<Policy>(words, blocks, hashes, n, body);
  else
    prefetched_loop<0>(words, blocks, hashes, n, [&](std::size_t i) {
      body(i, check_one<Policy>(words, blocks, hashes[i]));
    });
}

template <class Policy>
void check_bulk(const std::uint32_t* words, std::uint64_t blocks, const std::uint64_t* hashes,
                std::size_t n, std::uint8_t* out) {
  check_loop<Policy>(words, blocks, hashes, n, [&](std::size_t i, bool hit) { out[i] = hit; });
}

template <class Policy>
void check_bulk_bits(const std::uint32_t* words, std::uint64_t blocks, const std::uint64_t* hashes,
                     std::size_t n, std::uint64_t* out) {
  std::uint64_t acc = 0;
  check_loop<Policy>(words, blocks, hashes, n, [&](std::size_t i, bool hit) {
    acc |= static_cast<std::uint64_t>(hit) << (i & 63);
    if ((i & 63) == 63) {
      out[i >> 6] = acc;
      acc = 0;
    }
  });
  if (n & 63) out[n >> 6] = acc;
}

// Each key's load-OR-store completes before the next key's load, so two keys that share a
// block both land (the prefetch only warms the line).
template <class Policy>
void insert_bulk(std::uint32_t* words, std::uint64_t blocks, const std::uint64_t* hashes,
                 std::size_t n) {
  prefetched_loop<1>(words, blocks, hashes, n,
                     [&](std::size_t i) { insert_one<Policy>(words, blocks, hashes[i]); });
}

template <class Policy>
void check_filters(const filter_view* filters, std::size_t n, std::uint64_t hash,
                   std::uint8_t* out) {
  const auto m = Policy::mask(static_cast<std::uint32_t>(hash));
  auto at = [&](std::size_t i) { return block_ptr(filters[i].words, filters[i].blocks, hash); };
  // Filters that together fit in L2 (judged from the first one: summing all sizes first costs
  // more than the probes; a wrong guess only costs speed): unrolled, no prefetch.
  if (n == 0) return;
  if (filters[0].blocks <= kInCacheBlocks / n) {
#pragma GCC unroll 4
    for (std::size_t i = 0; i < n; ++i) out[i] = Policy::test(at(i), m);
    return;
  }
  // One hash lands at the same offset in equal-sized filters, so with power-of-two sizes all
  // the lines map to one L1 set: prefetch into L2 (whose sets hold them) and a bounded distance.
  constexpr std::size_t ahead = 32;
  for (std::size_t i = 0; i < n && i < ahead; ++i) __builtin_prefetch(at(i), 0, 2);
  std::size_t i = 0;
  for (; i + ahead < n; ++i) {
    __builtin_prefetch(at(i + ahead), 0, 2);
    out[i] = Policy::test(at(i), m);
  }
  for (; i < n; ++i) out[i] = Policy::test(at(i), m);
}

template <class T>
inline T load_le(const void* p, std::size_t i) {
  T x;
  std::memcpy(&x, static_cast<const unsigned char*>(p) + i * sizeof(T), sizeof(T));
  return x;
}
inline void hash_u32s_scalar(const void* v, std::size_t n, std::uint64_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = xxh64_u32(load_le<std::uint32_t>(v, i));
}
inline void hash_u64s_scalar(const void* v, std::size_t n, std::uint64_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = xxh64_u64(load_le<std::uint64_t>(v, i));
}

template <class Policy>
constexpr kernels make_kernels() {
  return {.check = check_one<Policy>,
          .insert = insert_one<Policy>,
          .check_bulk = check_bulk<Policy>,
          .check_bulk_bits = check_bulk_bits<Policy>,
          .insert_bulk = insert_bulk<Policy>,
          .check_filters = check_filters<Policy>,
          .hash_u32s = hash_u32s_scalar,
          .hash_u64s = hash_u64s_scalar};
}

}  // namespace
}  // namespace simdex::bloom
