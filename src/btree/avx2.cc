// avx2 level: the tree algorithms instantiated over the avx2 node-search policy.
#include "avx2_policy.h"
#include "generic.h"
#include "kernels.h"

namespace simdex::btree_detail {

#define SIMDEX_BTREE_LEVEL(S, VS) \
  template const kernels<S, VS>* level_kernels<avx2_policy, S, VS>();
SIMDEX_BTREE_SHAPES(SIMDEX_BTREE_LEVEL)
#undef SIMDEX_BTREE_LEVEL

}  // namespace simdex::btree_detail
