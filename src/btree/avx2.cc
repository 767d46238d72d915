// avx2 level: the tree algorithms instantiated over the avx2 node-search kernel.
#include "impl.h"
#include "kern_avx2.h"
#include "kernels.h"

namespace simdex::btree_detail {

template <class S, std::size_t VS>
const ops<S, VS>* avx2_ops() {
  static constexpr ops<S, VS> table = impl<kern_avx2<S>, VS>::table();
  return &table;
}
SIMDEX_BTREE_INSTANTIATE(avx2_ops)

}  // namespace simdex::btree_detail
