// Kernel tables by level; the public entry points pick one per process.
#include "kernels.h"

namespace simdex::base85 {

const dispatch::by_level<kernels>& kernel_tables() {
  static const dispatch::by_level<kernels> tables = {.scalar = &kScalarKernels,
                                                     .sse42 = &kSse42Kernels,
                                                     .avx2 = &kAvx2Kernels,
                                                     .avx512 = &kAvx512Kernels,
                                                     .avx512vbmi = &kAvx512VbmiKernels};
  return tables;
}

const kernels& active_kernels() { return dispatch::active<kernels, kernel_tables>(); }

}  // namespace simdex::base85

namespace simdex {
void base85_kernel_report(std::vector<kernel_choice>& out) {
  // One table holds encode and decode for all three variants (the alphabet is a parameter).
  isa l = dispatch::pick(base85::kernel_tables()).level;
  for (const char* f : {"base85.b85.encode", "base85.b85.decode", "base85.z85.encode",
                        "base85.z85.decode", "base85.a85.encode", "base85.a85.decode"})
    out.push_back({f, l});
}
}  // namespace simdex
