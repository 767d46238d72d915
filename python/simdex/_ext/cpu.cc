#include "simdex/cpu.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

#include "bind.h"

namespace simdex::py {

void bind_cpu(nb::module_& m) {
  m.def(
      "active_isa",
      [] {
        try {
          return std::string(isa_name(active_isa()));
        } catch (const std::invalid_argument& e) {
          throw nb::value_error(e.what());
        }
      },
      "The ISA level in use (SIMDEX_ISA caps it). Raises ValueError naming the accepted values "
      "for an unknown SIMDEX_ISA; `import simdex` calls it, so such a value fails at once.");
  m.def(
      "cpu_info",
      [] {
        const auto& f = features();
        nb::dict d;
        d["vendor"] = f.vendor;
        d["brand"] = f.brand;
        d["features"] = f.flag_names();
        d["detected_isa"] = isa_name(detected_isa());
        try {
          d["isa"] = isa_name(active_isa());
        } catch (const std::invalid_argument& e) {
          throw nb::value_error(e.what());
        }
        nb::list kernels;
        for (const auto& k : kernel_report()) {
          nb::dict row;
          row["family"] = k.family;
          row["isa"] = isa_name(k.level);
          kernels.append(row);
        }
        d["kernels"] = kernels;
        nb::list levels;
        for (int l = 0; l < kIsaCount; ++l) levels.append(isa_name(static_cast<isa>(l)));
        d["levels"] = levels;
        return d;
      },
      "CPU vendor and model, detected features, the ISA level in use (SIMDEX_ISA caps it) and "
      "the level each kernel family runs. Raises ValueError for an unknown SIMDEX_ISA.");
}

}  // namespace simdex::py
