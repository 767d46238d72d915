// SSE4.2 level: 16-byte compares (sign-flipped bytes), PSHUFB remap, PHMINPOSUW min; the
// code is in sse42_common.h, where the levels above find what they inherit.
#include "sse42_common.h"

namespace simdex::primitives {

const kernels kSse42Kernels = table_of<sse42_level>();

}  // namespace simdex::primitives
