// Every primitive at every usable level against the scalar reference on arbitrary bytes.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "primitives/kernels.h"

using namespace simdex;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const auto& tables = primitives::kernel_tables();
  const primitives::kernels& ref = *tables.scalar;
  std::uint8_t key = data[0];
  const std::uint8_t* body = data + 1;
  std::size_t n = size - 1;
  std::vector<std::uint8_t> padded(body, body + n);
  padded.resize(n + primitives::kLowerBoundPadding, 0);
  std::uint8_t lut[16] = {};
  std::memcpy(lut, body, n < 16 ? n : 16);
  std::vector<std::uint8_t> want(n), got(n);
  ref.remap_branches(body, want.data(), n, lut);
  std::uint8_t counts[16] = {}, want_rank[16], got_rank[16];
  std::memcpy(counts, body, n < 16 ? n : 16);
  ref.rank_table(counts, want_rank);
  std::uint32_t slots[16] = {};
  std::memcpy(slots, body, n < 64 ? n : 64);
  std::uint16_t values[64] = {};
  std::memcpy(values, body, n < 128 ? n : 128);
  for (int l = 1; l < kIsaCount; ++l) {
    const primitives::kernels* t = dispatch::exact(tables, static_cast<isa>(l));
    if (!t) continue;
    if (t->lower_bound(body, n, key) != ref.lower_bound(body, n, key)) std::abort();
    if (t->lower_bound_padded(padded.data(), n, key) != ref.lower_bound(body, n, key)) std::abort();
    t->remap_branches(body, got.data(), n, lut);
    if (got != want) std::abort();
    t->rank_table(counts, got_rank);
    if (std::memcmp(got_rank, want_rank, 16) != 0) std::abort();
    std::size_t sz = key % 17;
    if (t->find_u32x16(slots, sz, slots[key & 15]) != ref.find_u32x16(slots, sz, slots[key & 15]))
      std::abort();
    if (t->find_min_index_32(values) != ref.find_min_index_32(values)) std::abort();
    if (t->find_min_index_64(values) != ref.find_min_index_64(values)) std::abort();
  }
  return 0;
}
