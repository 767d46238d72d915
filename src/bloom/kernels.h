// Per-level kernel tables of the bloom family; each is defined in its level's file.
#pragma once

#include "simdex/bloom.h"

namespace simdex::bloom {

// What an empty (default-constructed or moved-from) filter runs: checks say false, inserts
// and bulk calls do nothing, so such a filter is safe to probe.
extern const kernels kEmptyKernels;

// Every level's table (nullptr where a level has none of its own), for tests and benchmarks.
const dispatch::by_level<kernels>& kernel_tables();
// The table this process uses (chosen once; throws std::invalid_argument for a bad SIMDEX_ISA).
const kernels& active_kernels();

extern const kernels kScalarKernels;
extern const kernels kSse42Kernels;
extern const kernels kAvx2Kernels;
extern const kernels kAvx512Kernels;

}  // namespace simdex::bloom
