// The filter object: aligned storage, dispatch to the active kernels, union, fill, folding.
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>

#include "kernels.h"

namespace simdex::bloom {

const kernels kEmptyKernels = {
    .check = [](const std::uint32_t*, std::uint64_t, std::uint64_t) { return false; },
    .insert = [](std::uint32_t*, std::uint64_t, std::uint64_t) {},
    .check_bulk =
        [](const std::uint32_t*, std::uint64_t, const std::uint64_t*, std::size_t n,
           std::uint8_t* out) {
          for (std::size_t i = 0; i < n; ++i) out[i] = 0;
        },
    .check_bulk_bits =
        [](const std::uint32_t*, std::uint64_t, const std::uint64_t*, std::size_t n,
           std::uint64_t* out) {
          for (std::size_t i = 0; i < (n + 63) / 64; ++i) out[i] = 0;
        },
    .insert_bulk = [](std::uint32_t*, std::uint64_t, const std::uint64_t*, std::size_t) {},
    .check_filters =
        [](const filter_view*, std::size_t n, std::uint64_t, std::uint8_t* out) {
          for (std::size_t i = 0; i < n; ++i) out[i] = 0;
        },
    .hash_u32s = [](const void*, std::size_t, std::uint64_t*) {},
    .hash_u64s = [](const void*, std::size_t, std::uint64_t*) {},
};

namespace {
constexpr std::size_t kPageThreshold = std::size_t{2} << 20;  // below this, heap memory

bool is_pow2(std::size_t x) { return x != 0 && (x & (x - 1)) == 0; }
}  // namespace

void filter::allocate(std::uint64_t blocks, page_size pages) {
  const std::size_t bytes = static_cast<std::size_t>(blocks) * kBlockBytes;
  if (bytes >= kPageThreshold) {
    auto buf = std::make_shared<page_buffer>(bytes, pages);  // zero-filled, 2 MiB-aligned
    words_ = reinterpret_cast<std::uint32_t*>(buf->data());
    pages_ = buf.get();
    storage_ = std::move(buf);
  } else {
    const std::size_t rounded = (bytes + 63) & ~std::size_t{63};
    void* p = std::aligned_alloc(64, rounded);  // 64-byte aligned: a block never straddles lines
    if (p == nullptr) throw std::bad_alloc();
    std::memset(p, 0, rounded);
    words_ = static_cast<std::uint32_t*>(p);
    pages_ = nullptr;
    storage_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
  }
  blocks_ = blocks;
  k_ = &active_kernels();
  check_ = k_->check;
}

const kernels* filter::empty_kernels() noexcept { return &kEmptyKernels; }

filter::filter(std::size_t num_bytes, page_size pages) {
  if (!is_pow2(num_bytes) || num_bytes < kMinBytes || num_bytes > kMaxBytes)
    throw std::invalid_argument("bloom filter size " + std::to_string(num_bytes) +
                                " bytes: must be a power of two in [32, 134217728]");
  allocate(num_bytes / kBlockBytes, pages);
}

filter filter::for_ndv(std::uint64_t ndv, double fpp, sizing s) {
  if (!(fpp > 0.0 && fpp < 1.0)) throw std::invalid_argument("fpp must be in (0, 1)");
  return filter(s == sizing::arrow ? arrow_num_bytes(ndv, fpp) : model_num_bytes(ndv, fpp));
}

filter filter::with_blocks(std::uint64_t blocks, page_size pages) {
  if (blocks == 0 || blocks > kMaxBlocks)
    throw std::invalid_argument("bloom filter block count " + std::to_string(blocks) +
                                ": must be in [1, 2^31 - 1]");
  filter f;
  f.allocate(blocks, pages);
  return f;
}

filter filter::from_bitset(const void* data, std::size_t size) {
  if (size == 0 || size % kBlockBytes != 0 || size / kBlockBytes > kMaxBlocks)
    throw std::invalid_argument(
        "bloom filter bitset of " + std::to_string(size) +
        " bytes: must be a non-zero multiple of 32 (at most 2^31 - 1 blocks)");
  filter f = with_blocks(size / kBlockBytes);
  std::memcpy(f.words_, data, size);
  return f;
}

filter::filter(const filter& other) {
  if (other.empty()) return;
  allocate(other.blocks_, page_size::huge);
  std::memcpy(words_, other.words_, size_bytes());
}

filter::filter(filter&& other) noexcept
    : blocks_(std::exchange(other.blocks_, 0)),
      words_(std::exchange(other.words_, nullptr)),
      storage_(std::move(other.storage_)),
      pages_(std::exchange(other.pages_, nullptr)),
      k_(std::exchange(other.k_, &kEmptyKernels)),
      check_(std::exchange(other.check_, check_nothing)) {}

filter& filter::operator=(filter&& other) noexcept {
  blocks_ = std::exchange(other.blocks_, 0);
  words_ = std::exchange(other.words_, nullptr);
  storage_ = std::move(other.storage_);
  pages_ = std::exchange(other.pages_, nullptr);
  k_ = std::exchange(other.k_, &kEmptyKernels);
  check_ = std::exchange(other.check_, check_nothing);
  return *this;
}

filter& filter::operator=(const filter& other) {
  if (this != &other) *this = filter(other);
  return *this;
}

void check_filters(std::span<const filter_view> filters, std::uint64_t hash, std::uint8_t* out) {
  active_kernels().check_filters(filters.data(), filters.size(), hash, out);
}

void check_filters(std::span<const filter_view> filters, std::span<const std::uint64_t> hashes,
                   std::uint8_t* out) {
  const kernels& k = active_kernels();
  const std::size_t n = hashes.size();
  for (std::size_t i = 0; i < filters.size(); ++i) {
    if (filters[i].blocks == 0)  // an empty view holds nothing (the bulk kernel wants blocks)
      std::memset(out + i * n, 0, n);
    else
      k.check_bulk(filters[i].words, filters[i].blocks, hashes.data(), n, out + i * n);
  }
}

void filter::merge(const filter& other) {
  if (other.blocks_ != blocks_)
    throw std::invalid_argument("bloom filter union needs equal sizes (" +
                                std::to_string(size_bytes()) + " vs " +
                                std::to_string(other.size_bytes()) + " bytes)");
  const std::size_t n = static_cast<std::size_t>(blocks_) * 8;
  for (std::size_t i = 0; i < n; ++i) words_[i] |= other.words_[i];
}

std::size_t filter::huge_page_bytes() const { return pages_ ? pages_->huge_bytes() : 0; }

void filter::clear() noexcept {
  if (words_) std::memset(words_, 0, size_bytes());
}

std::uint64_t filter::popcount() const noexcept {
  std::uint64_t c = 0;
  const std::size_t n = static_cast<std::size_t>(blocks_) * 8;
  for (std::size_t i = 0; i < n; ++i) c += static_cast<std::uint64_t>(std::popcount(words_[i]));
  return c;
}

double filter::fill() const noexcept {
  return empty() ? 0.0 : static_cast<double>(popcount()) / (static_cast<double>(blocks_) * 256.0);
}

double filter::estimated_fpp() const noexcept {
  if (empty()) return 0.0;
  double sum = 0;
  for (std::uint64_t b = 0; b < blocks_; ++b) {
    double p = 1.0;
    for (int i = 0; i < 8; ++i) p *= std::popcount(words_[b * 8 + i]) / 32.0;
    sum += p;
  }
  return sum / static_cast<double>(blocks_);
}

void filter::fold(int k) {
  if (k < 0 || k > 31 || blocks_ % (std::uint64_t{1} << k) != 0 || (k > 0 && empty()))
    throw std::invalid_argument("cannot fold " + std::to_string(blocks_) + " blocks by 2^" +
                                std::to_string(k));
  if (k == 0) return;
  // Block j of the folded filter is the OR of blocks j*2^k .. (j+1)*2^k - 1: for z divisible by
  // 2^k, ((h * z) >> 32) >> k == (h * (z >> k)) >> 32.
  const std::uint64_t group = std::uint64_t{1} << k, out_blocks = blocks_ >> k;
  filter f = with_blocks(out_blocks);
  for (std::uint64_t j = 0; j < out_blocks; ++j)
    for (std::uint64_t g = 0; g < group; ++g)
      for (int i = 0; i < 8; ++i) f.words_[j * 8 + i] |= words_[(j * group + g) * 8 + i];
  *this = std::move(f);
}

int filter::fold_to_fpp(double target_fpp) {
  // A NaN target compares false with every estimate and would fold down to one block.
  if (std::isnan(target_fpp)) throw std::invalid_argument("fold_to_fpp: target fpp is NaN");
  int k = 0;
  while (!empty() && blocks_ % 2 == 0) {  // an empty filter has nothing to fold
    filter candidate = *this;
    candidate.fold(1);
    if (candidate.estimated_fpp() > target_fpp) break;
    *this = std::move(candidate);
    ++k;
  }
  return k;
}

bool filter::operator==(const filter& other) const noexcept {
  return blocks_ == other.blocks_ &&
         (empty() || std::memcmp(words_, other.words_, size_bytes()) == 0);
}

}  // namespace simdex::bloom
