// Per-level table selection: done once per (key, value) shape and process.
#include "kernels.h"

namespace simdex::btree_detail {

template <class S, std::size_t VS>
const dispatch::by_level<kernels<S, VS>>& kernel_tables() {
  static const dispatch::by_level<kernels<S, VS>> tables = {
      .scalar = level_kernels<scalar_policy, S, VS>(),
      .avx2 = level_kernels<avx2_policy, S, VS>(),
      .avx512 = level_kernels<avx512_policy, S, VS>()};
  return tables;
}

template <class S, std::size_t VS>
const kernels<S, VS>& active_kernels() {
  static const kernels<S, VS>* table = dispatch::pick(kernel_tables<S, VS>()).table;
  return *table;
}

#define SIMDEX_BTREE_DISPATCH(S, VS)                                         \
  template const dispatch::by_level<kernels<S, VS>>& kernel_tables<S, VS>(); \
  template const kernels<S, VS>& active_kernels<S, VS>();
SIMDEX_BTREE_SHAPES(SIMDEX_BTREE_DISPATCH)
#undef SIMDEX_BTREE_DISPATCH

}  // namespace simdex::btree_detail

namespace simdex {
void btree_kernel_report(std::vector<kernel_choice>& out) {
  out.push_back({"btree", dispatch::pick(btree_detail::kernel_tables<std::int32_t, 0>()).level});
}
}  // namespace simdex
