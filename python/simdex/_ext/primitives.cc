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

// An array argument of exactly dtype T (as `name`), or TypeError: nanobind would otherwise
// convert any numeric array silently (300 as a uint8 is 44, -1 a 65535, 3.5 a 3) and the kernel
// would answer for other values. Contiguity is still arranged by a copy. The probe is nb::ro:
// the kernels only read, and a writable probe refused read-only arrays (np.frombuffer of bytes,
// a read-only memmap) as "not ndarray of dtype uint8".
template <class T>
array_in<T> typed(nb::handle h, const char* what, const char* name) {
  array_in<T> a;
  // The usual argument (a contiguous array of dtype T) in one cast, without conversion: the
  // checks below took a second cast and were most of a small call's cost.
  if (nb::try_cast(h, a, false)) return a;
  nb::ndarray<nb::ro, nb::ndim<1>, nb::device::cpu> any;
  if (!nb::try_cast(h, any, false) || any.dtype() != nb::dtype<T>()) {
    // str() of attributes (the stable ABI has no tp_name field and no PyUnicode_AsUTF8)
    auto text = [](nb::handle o) {
      const nb::object t = nb::steal(PyObject_Str(o.ptr()));
      if (!t.is_valid()) throw nb::python_error();
      return std::string(nb::borrow<nb::str>(t).c_str());
    };
    std::string got = text(h.type().attr("__qualname__"));
    if (nb::hasattr(h, "dtype")) got += " of dtype " + text(h.attr("dtype"));
    throw nb::type_error(
        (std::string(what) + " must be a 1-D numpy array of " + name + ", not " + got).c_str());
  }
  if (nb::try_cast(h, a)) return a;
  // A strided buffer that is not a numpy array (memoryview(b)[::2]): nanobind copies only numpy
  // arrays into C order, and its failed cast surfaced as RuntimeError('std::bad_cast').
  return nb::cast<array_in<T>>(nb::module_::import_("numpy").attr("ascontiguousarray")(h));
}

// An integer argument within [lo, hi], or ValueError naming it (any Python int, however large).
// Anything with __index__ counts, as for operator.index: a key taken from an array is a numpy
// integer (np.uint8), which a PyLong_Check refused; a float still raises TypeError.
std::int64_t int_in(nb::handle h, std::int64_t lo, std::int64_t hi, const char* what) {
  const nb::object index = nb::steal(PyNumber_Index(h.ptr()));
  if (!index.is_valid()) {
    PyErr_Clear();
    throw nb::type_error((std::string(what) + " must be an int").c_str());
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
  if (overflow != 0 || v < lo || v > hi)
    throw nb::value_error(
        (std::string(what) + " must be in " + std::to_string(lo) + ".." + std::to_string(hi))
            .c_str());
  return v;
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
      "lower_bound, remap_branches, rank_table, find_u32x16 and find_min_index. Array arguments "
      "are 1-D numpy arrays of exactly the dtype named (any stride; another dtype or a list is a "
      "TypeError, never converted); a wrong length or a value out of range is a ValueError.");
  p.def(
      "lower_bound",
      [](nb::handle data, nb::handle key) {
        const auto a = typed<std::uint8_t>(data, "data", "uint8");
        const auto k = static_cast<std::uint8_t>(int_in(key, 0, 255, "key (a byte)"));
        return primitives::lower_bound(a.data(), a.shape(0), k);
      },
      nb::arg("data"), nb::arg("key"),
      nb::sig("def lower_bound(data: numpy.ndarray, key: int) -> int"),
      "Number of bytes in data (a uint8 array, any length) less than key (an int in 0..255): "
      "the lower_bound index when data is sorted. TypeError if data is not a uint8 array, "
      "ValueError if key is out of range.");
  p.def(
      "remap_branches",
      [](nb::handle codes_in, nb::handle lut_in) {
        const auto codes = typed<std::uint8_t>(codes_in, "codes", "uint8");
        const auto lut = typed<std::uint8_t>(lut_in, "lut", "uint8");
        const std::uint8_t* table = exactly(lut, 16, "lut");
        return bytes_out(codes.shape(0), [&](std::uint8_t* out) {
          primitives::remap_branches(codes.data(), out, codes.shape(0), table);
        });
      },
      nb::arg("codes"), nb::arg("lut"),
      nb::sig("def remap_branches(codes: numpy.ndarray, lut: numpy.ndarray) -> numpy.ndarray"),
      "New uint8 array of len(codes): each branch code (codes: a uint8 array, any length) with "
      "its high nibble replaced by lut[code >> 4] & 15 and its low nibble kept. TypeError if "
      "codes or lut is not a uint8 array, ValueError if lut does not hold exactly 16 values.");
  p.def(
      "rank_table",
      [](nb::handle counts_in) {
        const auto counts = typed<std::uint8_t>(counts_in, "counts", "uint8");
        const std::uint8_t* c = exactly(counts, 16, "counts");
        return bytes_out(16, [&](std::uint8_t* out) { primitives::rank_table(c, out); });
      },
      nb::arg("counts"), nb::sig("def rank_table(counts: numpy.ndarray) -> numpy.ndarray"),
      "For counts, a uint8 array of exactly 16 values, a new uint8 array of 16 whose entry i is "
      "the number of non-zero counts before i: an old slot's index once the empty slots are "
      "dropped. TypeError if counts is not a uint8 array, ValueError if it does not hold 16.");
  p.def(
      "find_u32x16",
      [](nb::handle slots_in, nb::handle needle_in) {
        const auto slots = typed<std::uint32_t>(slots_in, "slots", "uint32");
        if (slots.shape(0) > 16) throw nb::value_error("find_u32x16 takes at most 16 slots");
        const auto needle = int_in(needle_in, 0, 0xffffffff, "needle (a uint32)");
        // The kernel reads all 16 slots; a shorter array is copied into a padded one.
        std::array<std::uint32_t, 16> padded{};
        if (slots.shape(0) > 0) std::memcpy(padded.data(), slots.data(), 4 * slots.shape(0));
        return primitives::find_u32x16(padded.data(), slots.shape(0),
                                       static_cast<std::uint32_t>(needle));
      },
      nb::arg("slots"), nb::arg("needle"),
      nb::sig("def find_u32x16(slots: numpy.ndarray, needle: int) -> int"),
      "Index of the first slot equal to needle (an int in 0..2**32-1) among slots (a uint32 "
      "array of at most 16), or len(slots) if there is none. TypeError if slots is not a "
      "uint32 array, ValueError if it holds more than 16 or needle is out of range.");
  p.def(
      "find_min_index",
      [](nb::handle values) {
        const auto v = typed<std::uint16_t>(values, "values", "uint16");
        if (v.shape(0) == 32) return primitives::find_min_index_32(v.data());
        if (v.shape(0) == 64) return primitives::find_min_index_64(v.data());
        throw nb::value_error("find_min_index takes exactly 32 or 64 uint16 values");
      },
      nb::arg("values"), nb::sig("def find_min_index(values: numpy.ndarray) -> int"),
      "Index of the first minimum of values, a uint16 array of exactly 32 or 64. TypeError if "
      "values is not a uint16 array, ValueError for another length.");
}

}  // namespace simdex::py
