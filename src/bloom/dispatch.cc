// The kernel family's tables and the one chosen for this process.
#include "kernels.h"

namespace simdex::bloom {

const dispatch::by_level<kernels>& kernel_tables() {
  static const dispatch::by_level<kernels> tables = {.scalar = &kScalarKernels,
                                                     .sse42 = &kSse42Kernels,
                                                     .avx2 = &kAvx2Kernels,
                                                     .avx512 = &kAvx512Kernels};
  return tables;
}

const kernels& active_kernels() { return dispatch::active<kernels, kernel_tables>(); }

}  // namespace simdex::bloom

namespace simdex {
void bloom_kernel_report(std::vector<kernel_choice>& out) {
  out.push_back({"bloom", dispatch::pick(bloom::kernel_tables()).level});
}
}  // namespace simdex
