// kernel_report(): which level's variant each kernel family runs in this process. Every
// component with kernel families (src/<component>/kernels.h) appends its own rows from its
// dispatch.cc; the list of them is generated from SIMDEX_COMPONENTS, so cpu names none.
#include "components.h"
#include "simdex/cpu.h"

namespace simdex {

#define SIMDEX_DECLARE_KERNEL_REPORT(component) \
  void component##_kernel_report(std::vector<kernel_choice>& out);
SIMDEX_FOR_EACH_KERNEL_COMPONENT(SIMDEX_DECLARE_KERNEL_REPORT)
#undef SIMDEX_DECLARE_KERNEL_REPORT

std::vector<kernel_choice> kernel_report() {
  std::vector<kernel_choice> out;
#define SIMDEX_CALL_KERNEL_REPORT(component) component##_kernel_report(out);
  SIMDEX_FOR_EACH_KERNEL_COMPONENT(SIMDEX_CALL_KERNEL_REPORT)
#undef SIMDEX_CALL_KERNEL_REPORT
  return out;
}

}  // namespace simdex
