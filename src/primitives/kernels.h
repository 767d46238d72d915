// Per-level kernel tables of the primitives family; each is defined in its level's file.
#pragma once

#include "simdex/primitives.h"

namespace simdex::primitives {

extern const kernels kScalarKernels;
extern const kernels kSse42Kernels;
extern const kernels kAvx2Kernels;
extern const kernels kAvx512Kernels;

}  // namespace simdex::primitives
