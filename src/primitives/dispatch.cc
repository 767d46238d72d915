// Public entry points: one table chosen per process, no CPU check per call.
#include <stdexcept>
#include <string>

#include "kernels.h"

namespace simdex::primitives {

const dispatch::by_level<kernels>& kernel_tables() {
  static const dispatch::by_level<kernels> tables = {.scalar = &kScalarKernels,
                                                     .sse42 = &kSse42Kernels,
                                                     .avx2 = &kAvx2Kernels,
                                                     .avx512 = &kAvx512Kernels};
  return tables;
}

namespace {
const kernels& active_kernels() { return dispatch::active<kernels, kernel_tables>(); }
}  // namespace

std::size_t lower_bound(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
  return active_kernels().lower_bound(data, n, key);
}
std::size_t lower_bound_padded(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
  return active_kernels().lower_bound_padded(data, n, key);
}
void remap_branches(const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                    const std::uint8_t lut[16]) {
  active_kernels().remap_branches(in, out, n, lut);
}
void rank_table(const std::uint8_t counts[16], std::uint8_t ranks[16]) {
  active_kernels().rank_table(counts, ranks);
}
std::size_t find_u32x16(const std::uint32_t slots[16], std::size_t size, std::uint32_t needle) {
  // The kernels shift a bit by size: past 16 they answer wrongly, and past 31 it is undefined.
  if (size > 16)
    throw std::invalid_argument("find_u32x16: size " + std::to_string(size) + " is over 16");
  return active_kernels().find_u32x16(slots, size, needle);
}
std::size_t find_min_index_32(const std::uint16_t values[32]) {
  return active_kernels().find_min_index_32(values);
}
std::size_t find_min_index_64(const std::uint16_t values[64]) {
  return active_kernels().find_min_index_64(values);
}

}  // namespace simdex::primitives

namespace simdex {
void primitives_kernel_report(std::vector<kernel_choice>& out) {
  out.push_back({"primitives", dispatch::pick(primitives::kernel_tables()).level});
}
}  // namespace simdex
