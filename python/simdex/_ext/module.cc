#include "bind.h"

NB_MODULE(_simdex, m) {
  m.doc() = "simdex native core";
  simdex::py::bind_cpu(m);
  simdex::py::bind_primitives(m);
#if SIMDEX_HAVE_BASE85
  simdex::py::bind_base85(m);
#endif
#if SIMDEX_HAVE_BLOOM
  simdex::py::bind_bloom(m);
#endif
#if SIMDEX_HAVE_BTREE
  simdex::py::bind_btree(m);
#endif
}
