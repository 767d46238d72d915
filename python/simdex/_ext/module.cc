#include "bind.h"

namespace nb = nanobind;

NB_MODULE(_simdex, m) {
  m.doc() = "simdex native core";
  nb::list components;  // what this build compiled in; tests of absent components are skipped
  for (const char* c : {"cpu", "primitives"}) components.append(c);
  simdex::py::bind_cpu(m);
  simdex::py::bind_primitives(m);
#if SIMDEX_HAVE_BASE85
  simdex::py::bind_base85(m);
  components.append("base85");
#endif
#if SIMDEX_HAVE_BLOOM
  simdex::py::bind_bloom(m);
  components.append("bloom");
#endif
#if SIMDEX_HAVE_BTREE
  simdex::py::bind_btree(m);
  components.append("btree");
#endif
#if SIMDEX_HAVE_KV
  simdex::py::bind_kv(m);
  components.append("kv");
#endif
  m.attr("components") = components;
}
