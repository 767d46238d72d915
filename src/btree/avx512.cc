// avx512 level: the tree algorithms instantiated over the avx512 node-search policy.
#include "avx512_policy.h"
#include "generic.h"
#include "kernels.h"

#define SIMDEX_BTREE_POLICY avx512_policy
namespace simdex::btree_detail {
SIMDEX_BTREE_SHAPES(SIMDEX_BTREE_LEVEL_TABLE)
}  // namespace simdex::btree_detail
