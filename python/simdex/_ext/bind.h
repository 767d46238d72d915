// Each component binds itself into the one extension module from its own file.
#pragma once

#include <nanobind/nanobind.h>

namespace simdex::py {

namespace nb = nanobind;

void bind_cpu(nb::module_& m);
void bind_primitives(nb::module_& m);
void bind_base85(nb::module_& m);
void bind_bloom(nb::module_& m);
void bind_btree(nb::module_& m);
void bind_kv(nb::module_& m);

}  // namespace simdex::py
