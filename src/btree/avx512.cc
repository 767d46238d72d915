// avx512 level: the tree algorithms instantiated over the avx512 node-search kernel.
#include "impl.h"
#include "kern_avx512.h"
#include "kernels.h"

namespace simdex::btree_detail {

template <class S, std::size_t VS>
const ops<S, VS>* avx512_ops() {
  static constexpr ops<S, VS> table = impl<kern_avx512<S>, VS>::table();
  return &table;
}
SIMDEX_BTREE_INSTANTIATE(avx512_ops)

}  // namespace simdex::btree_detail
