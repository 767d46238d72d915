// Adapter over Arrow C++ (pyarrow wheel's libparquet): see peer_arrow.h.
#include "peer_arrow.h"

#include <parquet/bloom_filter.h>

#include <algorithm>

namespace simdex::bench::arrow_peer {

const char* version() { return SIMDEX_ARROW_VERSION; }

struct filter::impl {
  parquet::BlockSplitBloomFilter f;
};

filter::filter(const void* bitset, std::uint32_t num_bytes) : p_(std::make_unique<impl>()) {
  p_->f.Init(static_cast<const std::uint8_t*>(bitset), num_bytes);
}
filter::~filter() = default;
filter::filter(filter&&) noexcept = default;
filter& filter::operator=(filter&&) noexcept = default;

std::size_t filter::count_found(const std::uint64_t* hashes, std::size_t n) const {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += p_->f.FindHash(hashes[i]);
  return c;
}
bool filter::find(std::uint64_t h) const { return p_->f.FindHash(h); }
void filter::insert_each(const std::uint64_t* hashes, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) p_->f.InsertHash(hashes[i]);
}
void filter::insert_hashes(const std::uint64_t* hashes, std::size_t n) {
  p_->f.InsertHashes(hashes, static_cast<int>(n));
}
std::size_t filter::hash_find_each(const std::int64_t* v, std::size_t n) const {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += p_->f.FindHash(p_->f.Hash(v[i]));
  return c;
}
std::size_t filter::hash_find_batch(const std::int64_t* v, std::size_t n) const {
  constexpr std::size_t kChunk = 1024;
  std::uint64_t h[kChunk];
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; i += kChunk) {
    std::size_t m = std::min(kChunk, n - i);
    p_->f.Hashes(v + i, static_cast<int>(m), h);
    for (std::size_t j = 0; j < m; ++j) c += p_->f.FindHash(h[j]);
  }
  return c;
}
void filter::hashes(const std::int64_t* v, std::size_t n, std::uint64_t* out) const {
  p_->f.Hashes(v, static_cast<int>(n), out);
}

std::size_t count_found_routed(const filter* filters, const std::uint8_t* ids,
                               const std::uint64_t* hashes, std::size_t n) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += filters[ids[i]].p_->f.FindHash(hashes[i]);
  return c;
}

std::size_t count_found_many(const filter* const* filters, std::size_t n, std::uint64_t hash) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < n; ++i) c += filters[i]->find(hash);
  return c;
}

}  // namespace simdex::bench::arrow_peer
