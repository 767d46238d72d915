#include "simdex/primitives.h"

#include <nanobind/ndarray.h>

#include <stdexcept>

#include "bind.h"

namespace simdex::py {

void bind_primitives(nb::module_& m) {
  auto p = m.def_submodule("primitives", "psitri node primitives");
  using u8 = nb::ndarray<const std::uint8_t, nb::ndim<1>, nb::c_contig>;
  p.def(
      "lower_bound",
      [](u8 a, int key) {
        if (key < 0 || key > 255) throw nb::value_error("key must be a byte (0..255)");
        return primitives::lower_bound(a.data(), a.shape(0), static_cast<std::uint8_t>(key));
      },
      nb::arg("data"), nb::arg("key"),
      "Number of bytes in data (a uint8 array) less than key: the lower_bound index when sorted.");
  p.def(
      "find_min_index",
      [](nb::ndarray<const std::uint16_t, nb::ndim<1>, nb::c_contig> v) {
        if (v.shape(0) == 32) return primitives::find_min_index_32(v.data());
        if (v.shape(0) == 64) return primitives::find_min_index_64(v.data());
        throw nb::value_error("find_min_index takes exactly 32 or 64 uint16 values");
      },
      nb::arg("values"), "Index of the first minimum of 32 or 64 uint16 values.");
}

}  // namespace simdex::py
