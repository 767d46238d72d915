// kernel_report(): which level's variant each kernel family runs in this process. Each
// component adds its families here, under its SIMDEX_HAVE_<COMPONENT> guard.
#include "simdex/cpu.h"
#include "simdex/primitives.h"
#if SIMDEX_HAVE_BTREE
#include "simdex/btree.h"
#endif
#if SIMDEX_HAVE_BASE85
#include "simdex/base85.h"
#endif
#if SIMDEX_HAVE_BLOOM
#include "simdex/bloom.h"
#endif

namespace simdex {

std::vector<kernel_choice> kernel_report() {
  std::vector<kernel_choice> out;
  out.push_back({"primitives", dispatch::pick(primitives::kernel_tables()).level});
#if SIMDEX_HAVE_BASE85
  {
    // One table holds encode and decode for all three variants (the alphabet is a parameter).
    isa l = dispatch::pick(base85::kernel_tables()).level;
    for (const char* f : {"base85.b85.encode", "base85.b85.decode", "base85.z85.encode",
                          "base85.z85.decode", "base85.a85.encode", "base85.a85.decode"})
      out.push_back({f, l});
  }
#endif
#if SIMDEX_HAVE_BLOOM
  out.push_back({"bloom", dispatch::pick(bloom::kernel_tables()).level});
#endif
#if SIMDEX_HAVE_BTREE
  out.push_back({"btree", dispatch::pick(btree_detail::tables<std::int32_t, 0>()).level});
#endif
  return out;
}

}  // namespace simdex
