// Per-level table selection: done once per (key, value) shape and process.
#include "kernels.h"

namespace simdex::btree_detail {

template <class S, std::size_t VS>
const ops_tables<S, VS>& tables() {
  static const ops_tables<S, VS> t = {scalar_ops<S, VS>(), nullptr, avx2_ops<S, VS>(),
                                      avx512_ops<S, VS>(), nullptr};
  return t;
}

template <class S, std::size_t VS>
const ops<S, VS>& active_ops() {
  static const ops<S, VS>* t = dispatch::pick(tables<S, VS>()).table;
  return *t;
}

#define SIMDEX_BTREE_DISPATCH(S, VS)                     \
  template const ops_tables<S, VS>& tables<S, VS>();   \
  template const ops<S, VS>& active_ops<S, VS>();
SIMDEX_BTREE_DISPATCH(std::int32_t, 0)
SIMDEX_BTREE_DISPATCH(std::int32_t, 4)
SIMDEX_BTREE_DISPATCH(std::int32_t, 8)
SIMDEX_BTREE_DISPATCH(std::int32_t, 16)
SIMDEX_BTREE_DISPATCH(std::int64_t, 0)
SIMDEX_BTREE_DISPATCH(std::int64_t, 4)
SIMDEX_BTREE_DISPATCH(std::int64_t, 8)
SIMDEX_BTREE_DISPATCH(std::int64_t, 16)

}  // namespace simdex::btree_detail

namespace simdex {
void btree_kernel_report(std::vector<kernel_choice>& out) {
  out.push_back({"btree", dispatch::pick(btree_detail::tables<std::int32_t, 0>()).level});
}
}  // namespace simdex
