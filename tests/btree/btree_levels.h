// The ISA levels a btree test runs for one (key, value) shape: those with their own table.
#pragma once

#include <vector>

#include "isa_levels.h"
#include "simdex/btree.h"

namespace simdex::testing {

template <class K, class V>
std::vector<isa> btree_levels() {
  using S = typename btree_detail::codec<K>::stored;
  constexpr std::size_t VS = btree_detail::value_slot<V>;
  std::vector<isa> out;
  for (auto& [l, t] : usable_levels(btree_detail::kernel_tables<S, VS>())) out.push_back(l);
  return out;
}

}  // namespace simdex::testing
