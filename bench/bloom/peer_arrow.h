// Arrow C++ parquet::BlockSplitBloomFilter behind a plain interface, so Arrow's headers stay in
// one file. Each loop runs inside the adapter, calling Arrow's public API per key exactly as an
// Arrow user would (FindHash/InsertHash are virtual calls into libparquet).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace simdex::bench::arrow_peer {

const char* version();

class filter {
 public:
  // A copy of `bitset` (Arrow's Init copies into its own aligned buffer).
  filter(const void* bitset, std::uint32_t num_bytes);
  ~filter();
  filter(filter&&) noexcept;
  filter& operator=(filter&&) noexcept;
  std::size_t count_found(const std::uint64_t* hashes, std::size_t n) const;  // FindHash loop
  bool find(std::uint64_t h) const;
  void insert_each(const std::uint64_t* hashes, std::size_t n);    // InsertHash loop
  void insert_hashes(const std::uint64_t* hashes, std::size_t n);  // InsertHashes (batch)
  // Hash + FindHash of int64 values: per value, and with the batch Hashes() in chunks.
  std::size_t hash_find_each(const std::int64_t* v, std::size_t n) const;
  std::size_t hash_find_batch(const std::int64_t* v, std::size_t n) const;
  void hashes(const std::int64_t* v, std::size_t n, std::uint64_t* out) const;

 private:
  friend std::size_t count_found_routed(const filter*, const std::uint8_t*, const std::uint64_t*,
                                        std::size_t);
  struct impl;
  std::unique_ptr<impl> p_;
};

// A working set larger than Arrow's 128 MiB limit as several filters: key i goes to
// filters[ids[i]].
std::size_t count_found_routed(const filter* filters, const std::uint8_t* ids,
                               const std::uint64_t* hashes, std::size_t n);

// One hash against many filters: the loop an Arrow reader writes for row-group skipping.
std::size_t count_found_many(const filter* const* filters, std::size_t n, std::uint64_t hash);

}  // namespace simdex::bench::arrow_peer
