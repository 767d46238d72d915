// The btree's membership filter (include/simdex/btree/membership.h) on the bloom component's
// split-block filter and its vectorized XXH64 of 4- and 8-byte values.
#include "simdex/btree/membership.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "simdex/bloom.h"

namespace simdex::btree_detail {

namespace {
// 12 bits a key: about 0.5% false positives, 1.5 bytes a key against the tree's 5-11.
constexpr std::size_t kBitsPerKey = 12;
// Hashes go through a buffer this long, so it stays in the first-level cache.
constexpr std::size_t kChunk = 1024;
}  // namespace

struct membership::impl {
  bloom::filter f;
};

membership::membership(std::size_t keys, std::size_t width, page_size pages)
    : p_(new impl{bloom::filter::with_blocks(
          std::max<std::size_t>(
              1, (keys * kBitsPerKey + 8 * bloom::kBlockBytes - 1) / (8 * bloom::kBlockBytes)),
          pages)}),
      width_(width),
      built_for_(keys) {}

membership::~membership() = default;

void membership::add(const void* keys, std::size_t n) {
  std::uint64_t h[kChunk];
  const auto* p = static_cast<const std::byte*>(keys);
  for (std::size_t i = 0; i < n; i += kChunk) {
    std::size_t m = std::min(kChunk, n - i);
    bloom::hash_fixed(p + i * width_, width_, m, h);
    p_->f.insert(std::span<const std::uint64_t>(h, m));
  }
}

std::uint64_t membership::hash(const void* key) const noexcept {
  std::uint64_t h;
  if (width_ == 8) {
    std::int64_t k;
    std::memcpy(&k, key, 8);
    h = bloom::hash_int64(k);
  } else {
    std::int32_t k;
    std::memcpy(&k, key, 4);
    h = bloom::hash_int32(k);
  }
  const bloom::filter& f = p_->f;
  __builtin_prefetch(f.words() + 8 * bloom::block_index(h, f.num_blocks()), 1, 3);
  return h;
}

void membership::add_hash(std::uint64_t h) noexcept { p_->f.insert(h); }

std::size_t membership::check(const void* keys, std::size_t n, std::uint64_t* maybe) const {
  const bloom::filter& f = p_->f;
  constexpr std::size_t kLine = 64;
  if (n * kLine >= f.size_bytes()) {
    // One load a line, in address order: the hardware prefetchers stream the filter in at
    // the memory's sequential rate (about 2 ns a probe saved on a cold 2 MiB filter).
    const auto* w = reinterpret_cast<const volatile std::uint8_t*>(f.words());
    std::uint8_t acc = 0;
    for (std::size_t b = 0; b < f.size_bytes(); b += kLine) acc ^= w[b];
    __asm__ volatile("" : : "r"(acc));  // the loads' result is used
  }
  std::uint64_t h[kChunk];
  const auto* p = static_cast<const std::byte*>(keys);
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; i += kChunk) {
    std::size_t m = std::min(kChunk, n - i);
    bloom::hash_fixed(p + i * width_, width_, m, h);
    std::uint64_t* bits = maybe + i / 64;  // kChunk is a multiple of 64
    f.check_bits(std::span<const std::uint64_t>(h, m), bits);
    for (std::size_t w = 0; w < (m + 63) / 64; ++w) count += std::popcount(bits[w]);
  }
  return count;
}

std::size_t membership::bytes() const noexcept { return p_->f.size_bytes() + sizeof(*this); }

}  // namespace simdex::btree_detail
