// Scalar level: the spec's loop (the golden reference) and the branchless OR-accumulator
// variant the kernel table uses.
#include "generic.h"
#include "kernels.h"

namespace simdex::bloom {

namespace spec {
bool check(const std::uint32_t* words, std::uint64_t blocks, std::uint64_t hash) noexcept {
  const std::uint32_t* block = words + 8 * block_index(hash, blocks);
  const auto key = static_cast<std::uint32_t>(hash);
  for (int i = 0; i < 8; ++i)
    if ((block[i] & (1u << ((key * kSalt[i]) >> 27))) == 0) return false;
  return true;
}
void insert(std::uint32_t* words, std::uint64_t blocks, std::uint64_t hash) noexcept {
  std::uint32_t* block = words + 8 * block_index(hash, blocks);
  const auto key = static_cast<std::uint32_t>(hash);
  for (int i = 0; i < 8; ++i) block[i] |= 1u << ((key * kSalt[i]) >> 27);
}
}  // namespace spec

namespace {
struct scalar_policy {
  struct mask_t {
    std::uint32_t w[8];
  };
  static mask_t mask(std::uint32_t key) {
    mask_t m;
    for (int i = 0; i < 8; ++i) m.w[i] = 1u << ((key * kSalt[i]) >> 27);
    return m;
  }
  // No early exit: a miss costs the same as a hit, with no branch to mispredict.
  static bool test(const std::uint32_t* block, const mask_t& m) {
    std::uint32_t missing = 0;
    for (int i = 0; i < 8; ++i) missing |= m.w[i] & ~block[i];
    return missing == 0;
  }
  static void set(std::uint32_t* block, const mask_t& m) {
    for (int i = 0; i < 8; ++i) block[i] |= m.w[i];
  }
};
}  // namespace

const kernels kScalarKernels = make_kernels<scalar_policy>();

}  // namespace simdex::bloom
