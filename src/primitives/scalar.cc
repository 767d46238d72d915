// Scalar reference for every primitive: the definition the SIMD levels are tested against.
#include "kernels.h"

namespace simdex::primitives {
namespace {

std::size_t lower_bound_scalar(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) count += data[i] < key;
  return count;
}

void remap_scalar(const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                  const std::uint8_t* lut) {
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<std::uint8_t>((lut[in[i] >> 4] << 4) | (in[i] & 15));
}

void rank_scalar(const std::uint8_t* counts, std::uint8_t* ranks) {
  std::uint8_t r = 0;
  for (int i = 0; i < 16; ++i) {
    ranks[i] = r;
    r = static_cast<std::uint8_t>(r + (counts[i] != 0));
  }
}

std::size_t find_u32x16_scalar(const std::uint32_t* slots, std::size_t size, std::uint32_t needle) {
  for (std::size_t i = 0; i < size; ++i)
    if (slots[i] == needle) return i;
  return size;
}

template <std::size_t N>
std::size_t find_min_scalar(const std::uint16_t* v) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < N; ++i)
    if (v[i] < v[best]) best = i;
  return best;
}

}  // namespace

const kernels kScalarKernels = {
    .lower_bound = lower_bound_scalar,
    .lower_bound_padded = lower_bound_scalar,
    .remap_branches = remap_scalar,
    .rank_table = rank_scalar,
    .find_u32x16 = find_u32x16_scalar,
    .find_min_index_32 = find_min_scalar<32>,
    .find_min_index_64 = find_min_scalar<64>,
};

}  // namespace simdex::primitives
