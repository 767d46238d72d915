// kernel_report(): which level's variant each kernel family runs in this process. Each
// component adds its families here, under its SIMDEX_HAVE_<COMPONENT> guard.
#include "simdex/cpu.h"
#include "simdex/primitives.h"

namespace simdex {

std::vector<kernel_choice> kernel_report() {
  std::vector<kernel_choice> out;
  out.push_back({"primitives", dispatch::pick(primitives::kernel_tables()).level});
#if SIMDEX_HAVE_BASE85
#endif
#if SIMDEX_HAVE_BLOOM
#endif
#if SIMDEX_HAVE_BTREE
#endif
  return out;
}

}  // namespace simdex
