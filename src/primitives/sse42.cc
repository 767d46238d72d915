// SSE4.2 level: 16-byte compares (sign-flipped bytes), PSHUFB remap, PHMINPOSUW min.
#include "sse42_common.h"

namespace simdex::primitives {
namespace {

std::size_t lower_bound_sse(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
  return lower_bound_tail16(data, 0, n, key);
}

}  // namespace

const kernels kSse42Kernels = {
    .lower_bound = lower_bound_sse,
    .lower_bound_padded = lower_bound_padded16,
    .remap_branches = remap_branches16,
    .rank_table = rank_table16,
    .find_u32x16 = find_u32x16_sse,
    .find_min_index_32 = find_min_sse<32>,
    .find_min_index_64 = find_min_sse<64>,
};

}  // namespace simdex::primitives
