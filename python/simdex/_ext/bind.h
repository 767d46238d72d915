// Shared by the binding files. Each component binds itself into the one extension module from
// simdex/_ext/<component>.cc, which defines
//   void simdex::py::bind_<component>(nb::module_& m);
// module.cc calls every one of them (python/CMakeLists.txt generates the list).
#pragma once

#include <nanobind/nanobind.h>

namespace simdex::py {

namespace nb = nanobind;

}  // namespace simdex::py
