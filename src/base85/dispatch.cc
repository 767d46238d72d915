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
  // One table holds encode and decode for all three variants (the alphabet is a parameter). A
  // level may run a lower level's kernel (AVX-512BW encodes with AVX2's): report where it is.
  const auto& tables = base85::kernel_tables();
  const isa enc = dispatch::home(tables, &base85::kernels::encode);
  const isa dec = dispatch::home(tables, &base85::kernels::decode);
  // VBMI's encode hands alphabets that are one add from the digits (Ascii85's) to AVX2's kernel
  // (encode_vbmi in avx512vbmi.cc).
  const isa a85_enc = enc == isa::avx512vbmi ? isa::avx2 : enc;
  for (const char* v : {"b85", "z85", "a85"}) {
    out.push_back({std::string("base85.") + v + ".encode", v[0] == 'a' ? a85_enc : enc});
    out.push_back({std::string("base85.") + v + ".decode", dec});
  }
}
}  // namespace simdex
