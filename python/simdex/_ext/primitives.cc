#include "simdex/primitives.h"

#include <nanobind/ndarray.h>

#include <array>
#include <cstring>
#include <stdexcept>

#include "bind.h"

namespace simdex::py {

namespace {

// A fixed-size table argument (lut, counts): exactly n values, or ValueError naming it.
template <class T>
const T* exactly(const array_in<T>& a, std::size_t n, const char* what) {
  if (a.shape(0) != n) {
    throw nb::value_error((std::string(what) + " must hold exactly " + std::to_string(n) +
                           " values, not " + std::to_string(a.shape(0)))
                              .c_str());
  }
  return a.data();
}

// A new uint8 array of n bytes, written by fill(out).
template <class Fill>
array_out<std::uint8_t> bytes_out(std::size_t n, Fill&& fill) {
  std::uint8_t* out = nullptr;
  auto result = new_array<std::uint8_t>(n, &out);
  fill(out);
  return result;
}

}  // namespace

void bind_primitives(nb::module_& m) {
  auto p = m.def_submodule(
      "primitives",
      "The five node kernels of the psitri radix trie, at the ISA level this process runs: "
      "lower_bound, remap_branches, rank_table, find_u32x16 and find_min_index.");
  p.def(
      "lower_bound",
      [](array_in<std::uint8_t> a, int key) {
        if (key < 0 || key > 255) throw nb::value_error("key must be a byte (0..255)");
        return primitives::lower_bound(a.data(), a.shape(0), static_cast<std::uint8_t>(key));
      },
      nb::arg("data"), nb::arg("key"),
      "Number of bytes in data (a uint8 array) less than key: the lower_bound index when sorted.");
  p.def(
      "remap_branches",
      [](array_in<std::uint8_t> codes, array_in<std::uint8_t> lut) {
        const std::uint8_t* table = exactly(lut, 16, "lut");
        return bytes_out(codes.shape(0), [&](std::uint8_t* out) {
          primitives::remap_branches(codes.data(), out, codes.shape(0), table);
        });
      },
      nb::arg("codes"), nb::arg("lut"),
      "New uint8 array: each branch code with its high nibble replaced by lut[code >> 4] & 15 "
      "and its low nibble kept (lut: 16 uint8 values).");
  p.def(
      "rank_table",
      [](array_in<std::uint8_t> counts) {
        const std::uint8_t* c = exactly(counts, 16, "counts");
        return bytes_out(16, [&](std::uint8_t* out) { primitives::rank_table(c, out); });
      },
      nb::arg("counts"),
      "For 16 uint8 counts, a uint8 array whose entry i is the number of non-zero counts before "
      "i: an old slot's index once the empty slots are dropped.");
  p.def(
      "find_u32x16",
      [](array_in<std::uint32_t> slots, std::int64_t needle) {
        if (slots.shape(0) > 16) throw nb::value_error("find_u32x16 takes at most 16 slots");
        if (needle < 0 || needle > 0xffffffff) throw nb::value_error("needle must be a uint32");
        // The kernel reads all 16 slots; a shorter array is copied into a padded one.
        std::array<std::uint32_t, 16> padded{};
        if (slots.shape(0) > 0) std::memcpy(padded.data(), slots.data(), 4 * slots.shape(0));
        return primitives::find_u32x16(padded.data(), slots.shape(0),
                                       static_cast<std::uint32_t>(needle));
      },
      nb::arg("slots"), nb::arg("needle"),
      "Index of the first slot equal to needle among up to 16 uint32 slots, or len(slots) if "
      "there is none.");
  p.def(
      "find_min_index",
      [](array_in<std::uint16_t> v) {
        if (v.shape(0) == 32) return primitives::find_min_index_32(v.data());
        if (v.shape(0) == 64) return primitives::find_min_index_64(v.data());
        throw nb::value_error("find_min_index takes exactly 32 or 64 uint16 values");
      },
      nb::arg("values"), "Index of the first minimum of 32 or 64 uint16 values.");
}

}  // namespace simdex::py
