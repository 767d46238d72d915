// The extension module: every component's bindings, in SIMDEX_COMPONENTS order.
#include "bind.h"
#include "bindings.h"

namespace simdex::py {
#define SIMDEX_DECLARE_BINDING(component) void bind_##component(nb::module_& m);
SIMDEX_FOR_EACH_BINDING(SIMDEX_DECLARE_BINDING)
#undef SIMDEX_DECLARE_BINDING
}  // namespace simdex::py

NB_MODULE(_simdex, m) {
  m.doc() = "simdex native core";
#define SIMDEX_CALL_BINDING(component) simdex::py::bind_##component(m);
  SIMDEX_FOR_EACH_BINDING(SIMDEX_CALL_BINDING)
#undef SIMDEX_CALL_BINDING
  // What this build compiled in, and every component there is (tests of the absent ones are
  // skipped; the Python side discovers commands, benchmarks and report sections from these).
  nanobind::list components, all_components, bench_components;
  for (const char* c : {SIMDEX_BUILT_COMPONENTS}) components.append(c);
  for (const char* c : {SIMDEX_ALL_COMPONENTS}) all_components.append(c);
  for (const char* c : {SIMDEX_BENCH_COMPONENTS}) bench_components.append(c);
  m.attr("components") = components;
  m.attr("all_components") = all_components;
  m.attr("bench_components") = bench_components;
}
