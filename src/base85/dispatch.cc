// Kernel tables by level; the public entry points pick one per process.
#include "kernels.h"

namespace simdex::base85 {

const dispatch::by_level<kernels>& kernel_tables() {
  // SSE4.2 has no variant of its own (it runs scalar).
  static const dispatch::by_level<kernels> tables = {&kScalarKernels, nullptr, &kAvx2Kernels,
                                                     &kAvx512Kernels, &kAvx512VbmiKernels};
  return tables;
}

const kernels& active_kernels() {
  static const kernels* table = dispatch::pick(kernel_tables()).table;
  return *table;
}

}  // namespace simdex::base85
