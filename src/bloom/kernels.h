// Per-level kernel tables of the bloom family; each is defined in its level's file.
#pragma once

#include "simdex/bloom.h"

namespace simdex::bloom {

extern const kernels kScalarKernels;
extern const kernels kSse42Kernels;
extern const kernels kAvx2Kernels;
extern const kernels kAvx512Kernels;

}  // namespace simdex::bloom
