// scalar level: the tree algorithms instantiated over the scalar node-search policy.
#include "generic.h"
#include "kernels.h"
#include "scalar_policy.h"

#define SIMDEX_BTREE_POLICY scalar_policy
namespace simdex::btree_detail {
SIMDEX_BTREE_SHAPES(SIMDEX_BTREE_LEVEL_TABLE)
}  // namespace simdex::btree_detail
