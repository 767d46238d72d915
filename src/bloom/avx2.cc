// AVX2 level: one block per ymm (broadcast, vpmulld, shifts, vptest).
#include "avx2_policy.h"
#include "generic.h"
#include "kernels.h"

namespace simdex::bloom {

const kernels kAvx2Kernels = make_kernels<avx2_policy>();

}  // namespace simdex::bloom
