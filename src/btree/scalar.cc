// scalar level: the tree algorithms instantiated over the scalar node-search kernel.
#include "impl.h"
#include "kern_scalar.h"
#include "kernels.h"

namespace simdex::btree_detail {

template <class S, std::size_t VS>
const ops<S, VS>* scalar_ops() {
  static constexpr ops<S, VS> table = impl<kern_scalar<S>, VS>::table();
  return &table;
}
SIMDEX_BTREE_INSTANTIATE(scalar_ops)

}  // namespace simdex::btree_detail
