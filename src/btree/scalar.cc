// scalar level: the tree algorithms instantiated over the scalar node-search policy.
#include "generic.h"
#include "kernels.h"
#include "scalar_policy.h"

namespace simdex::btree_detail {

#define SIMDEX_BTREE_LEVEL(S, VS) \
  template const kernels<S, VS>* level_kernels<scalar_policy, S, VS>();
SIMDEX_BTREE_SHAPES(SIMDEX_BTREE_LEVEL)
#undef SIMDEX_BTREE_LEVEL

}  // namespace simdex::btree_detail
