// Scalar reference for every primitive: the definition the SIMD levels are tested against.
#include "kernels.h"

namespace simdex::primitives {
namespace {

struct scalar_level {
  static std::size_t lower_bound(const std::uint8_t* data, std::size_t n, std::uint8_t key) {
    std::size_t count = 0;
    for (std::size_t i = 0; i < n; ++i) count += data[i] < key;
    return count;
  }
  // Reads no byte past n, so the padded form is the same function.
  static constexpr auto lower_bound_padded = &lower_bound;

  static void remap_branches(const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                             const std::uint8_t* lut) {
    for (std::size_t i = 0; i < n; ++i)
      out[i] = static_cast<std::uint8_t>((lut[in[i] >> 4] << 4) | (in[i] & 15));
  }

  static void rank_table(const std::uint8_t* counts, std::uint8_t* ranks) {
    std::uint8_t r = 0;
    for (int i = 0; i < 16; ++i) {
      ranks[i] = r;
      r = static_cast<std::uint8_t>(r + (counts[i] != 0));
    }
  }

  static std::size_t find_u32x16(const std::uint32_t* slots, std::size_t size,
                                 std::uint32_t needle) {
    for (std::size_t i = 0; i < size; ++i)
      if (slots[i] == needle) return i;
    return size;
  }

  template <std::size_t N>
  static std::size_t find_min(const std::uint16_t* v) {
    std::size_t best = 0;
    for (std::size_t i = 1; i < N; ++i)
      if (v[i] < v[best]) best = i;
    return best;
  }
};

}  // namespace

const kernels kScalarKernels = table_of<scalar_level>();

}  // namespace simdex::primitives
