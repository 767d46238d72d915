// AVX2 level: one block per ymm (broadcast, vpmulld, shifts, vptest).
#include "generic.h"
#include "kernels.h"
#include "x86_ops.h"

namespace simdex::bloom {

const kernels kAvx2Kernels = make_kernels<avx2_ops>();

}  // namespace simdex::bloom
