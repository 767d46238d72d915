// The kernel family's tables and the one chosen for this process.
#include "kernels.h"

namespace simdex::bloom {

const dispatch::by_level<kernels>& kernel_tables() {
  static const dispatch::by_level<kernels> tables = {&kScalarKernels, &kSse42Kernels, &kAvx2Kernels,
                                                     &kAvx512Kernels, nullptr};
  return tables;
}

const kernels& active_kernels() {
  static const kernels* table = dispatch::pick(kernel_tables()).table;
  return *table;
}

}  // namespace simdex::bloom
