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
      "The ISA level in use: the detected one, capped by SIMDEX_ISA. Raises ValueError naming "
      "the accepted values for an unknown SIMDEX_ISA. `import simdex` does not check it (the "
      "first kernel call raises, and every simdex command checks it first): call this at "
      "startup to fail there.");
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
      "A dict describing this CPU: vendor, brand (the model name), features (names of the "
      "detected features), detected_isa (the highest level it supports), isa (the level in use: "
      "detected_isa capped by SIMDEX_ISA), levels (every level, lowest first) and kernels (one "
      "{family, isa} dict per kernel family: the level whose code it runs). Raises ValueError "
      "for an unknown SIMDEX_ISA.");
}

}  // namespace simdex::py
