// Probing a file's filters without reading them whole: a lookup of a few keys needs one 32-byte
// block per key per filter, so it reads those blocks (and the filter headers) and nothing else.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>

#include "kernels.h"
#include "simdex/bloom.h"

namespace simdex::bloom {

namespace {

// One pread costs about as much as copying this many bytes from the page cache, so a run of
// blocks is read alone only while it saves more than that; a whole bitset is read instead of
// its blocks once the separate reads would cost more than the bitset.
constexpr std::uint64_t kReadCostBytes = 8192;
constexpr std::uint64_t kMergeGapBytes = 4096;

struct block_storage {
  std::unique_ptr<std::uint32_t[], decltype(&std::free)> words{nullptr, &std::free};
  std::uint32_t* allocate(std::uint64_t bytes) {
    void* p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) throw std::bad_alloc();
    words.reset(static_cast<std::uint32_t*>(p));
    return words.get();
  }
};

}  // namespace

parquet_file::probe_stats parquet_file::probe(std::span<const column_chunk_info* const> chunks,
                                              std::span<const std::uint64_t> hashes,
                                              std::uint8_t* out,
                                              std::vector<std::string>& errors) const {
  probe_stats st;
  const std::size_t nh = hashes.size();
  errors.assign(chunks.size(), std::string());
  if (nh == 0) return st;
  // Per chunk, the words holding each hash's block: view[i * nh + j] (blocks == 1 for a block
  // read alone, so its index is 0; the whole bitset otherwise). nullptr: unreadable chunk.
  std::vector<filter_view> views(chunks.size() * nh, filter_view{nullptr, 0});
  std::vector<block_storage> storage(chunks.size());
  std::vector<bool> usable(chunks.size(), false), whole(chunks.size(), false);
  std::vector<std::uint64_t> idx(nh), order(nh);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const column_chunk_info& c = *chunks[i];
    if (!usable_filter(c)) continue;  // as a chunk without a filter: maybe for every hash
    try {
      const bitset_range r = locate_filter(c);  // one read of up to 256 bytes
      st.reads += 1;
      st.bytes += std::min<std::uint64_t>(256, size_ - static_cast<std::uint64_t>(c.bloom_offset));
      const std::uint64_t blocks = r.size / kBlockBytes;
      // Hashes as many as an eighth of the blocks leave gaps of a few blocks between the ones
      // they touch, so the block reads would cover most of the bitset anyway: it is read whole
      // without planning them. (The plan sorts the hashes: with a million hashes, pruning a
      // file of eight row groups took 0.366 s with the plan and takes 0.030 without.)
      const bool many = nh >= blocks / 8;
      std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;  // [first, last] block
      std::uint64_t run_bytes = 0;
      if (!many) {
        for (std::size_t j = 0; j < nh; ++j) idx[j] = block_index(hashes[j], blocks);
        std::iota(order.begin(), order.end(), std::uint64_t{0});
        std::sort(order.begin(), order.end(), [&](auto a, auto b) { return idx[a] < idx[b]; });
        // Runs of blocks close enough to read together.
        for (std::uint64_t j : order) {
          std::uint64_t b = idx[j];
          if (!runs.empty() && (b - runs.back().second) * kBlockBytes <= kMergeGapBytes)
            runs.back().second = b;
          else
            runs.emplace_back(b, b);
        }
        for (auto& [a, b] : runs) run_bytes += (b - a + 1) * kBlockBytes;
      }
      if (many || runs.size() * kReadCostBytes + run_bytes >= r.size + kReadCostBytes) {
        // The whole bitset: one filter, every hash, in the bulk kernel.
        std::uint32_t* w = storage[i].allocate(r.size);
        read_at(r.offset, w, static_cast<std::size_t>(r.size));
        st.reads += 1;
        st.bytes += r.size;
        active_kernels().check_bulk(w, blocks, hashes.data(), nh, out + i * nh);
        storage[i].words.reset();
        whole[i] = true;
      } else {
        std::uint32_t* w = storage[i].allocate(run_bytes);
        std::uint64_t at = 0;  // words offset of the current run in w, in bytes
        std::size_t k = 0;     // position in order
        for (auto& [a, b] : runs) {
          const std::uint64_t n = (b - a + 1) * kBlockBytes;
          read_at(r.offset + a * kBlockBytes, reinterpret_cast<std::uint8_t*>(w) + at,
                  static_cast<std::size_t>(n));
          st.reads += 1;
          st.bytes += n;
          for (; k < nh && idx[order[k]] <= b; ++k) {
            const std::uint64_t j = order[k];
            const auto* blk =
                reinterpret_cast<const std::uint8_t*>(w) + at + (idx[j] - a) * kBlockBytes;
            views[i * nh + j] = {reinterpret_cast<const std::uint32_t*>(blk), 1};
          }
          at += n;
        }
      }
      usable[i] = true;
    } catch (const parse_error& e) {
      errors[i] = e.what();
    } catch (const std::invalid_argument& e) {
      errors[i] = e.what();
    }
  }
  // The chunks read block by block: one hash against all their blocks at a time, in the
  // many-filter kernel.
  std::vector<std::size_t> live;
  for (std::size_t i = 0; i < chunks.size(); ++i)
    if (usable[i] && !whole[i]) live.push_back(i);
  std::vector<filter_view> row(live.size());
  std::vector<std::uint8_t> res(live.size());
  for (std::size_t i = 0; i < chunks.size(); ++i)
    if (!usable[i]) std::memset(out + i * nh, 1, nh);
  for (std::size_t j = 0; j < nh && !live.empty(); ++j) {
    for (std::size_t k = 0; k < live.size(); ++k) row[k] = views[live[k] * nh + j];
    check_filters(row, hashes[j], res.data());
    for (std::size_t k = 0; k < live.size(); ++k) out[live[k] * nh + j] = res[k] != 0;
  }
  return st;
}

}  // namespace simdex::bloom
