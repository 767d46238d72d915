// Shared by the binding files. Each component binds itself into the one extension module from
// simdex/_ext/<component>.cc, which defines
//   void simdex::py::bind_<component>(nb::module_& m);
// module.cc calls every one of them (python/CMakeLists.txt generates the list).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <optional>
#include <string>

namespace simdex::py {

namespace nb = nanobind;

// A file system path from Python: str (encoded as the file system encodes names, so a name
// that is not UTF-8, which os.listdir and argv give escaped, opens as it is), bytes or
// os.PathLike. A NUL inside is kept for the callee to refuse in its own words.
inline std::string fs_path(nb::handle p) {
  nb::object path = nb::steal(PyOS_FSPath(p.ptr()));
  if (!path.is_valid()) throw nb::python_error();
  nb::object b =
      PyBytes_Check(path.ptr()) ? path : nb::steal(PyUnicode_EncodeFSDefault(path.ptr()));
  if (!b.is_valid()) throw nb::python_error();
  return std::string(PyBytes_AsString(b.ptr()), static_cast<std::size_t>(PyBytes_Size(b.ptr())));
}

// Calls that touch this many bytes or more run with the GIL released; below it releasing and
// taking it back costs more than other threads gain.
inline constexpr std::size_t kReleaseGilBytes = 64 * 1024;

// fn(), with the GIL released while it runs when it touches at least kReleaseGilBytes.
template <class Fn>
decltype(auto) maybe_without_gil(std::size_t bytes, Fn&& fn) {
  std::optional<nb::gil_scoped_release> release;
  if (bytes >= kReleaseGilBytes) release.emplace();
  return fn();
}

// A C-contiguous 1-D array argument, and a new 1-D numpy array result.
template <class T>
using array_in = nb::ndarray<const T, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <class T>
using array_out = nb::ndarray<nb::numpy, T, nb::ndim<1>>;

// A numpy array of n elements that owns its storage; *data points at it (never null, so the
// caller may write through it even when n == 0).
template <class T>
array_out<T> new_array(std::size_t n, T** data) {
  T* p = new T[n > 0 ? n : 1];
  nb::capsule owner(p, [](void* x) noexcept { delete[] static_cast<T*>(x); });
  *data = p;
  return array_out<T>(p, {n}, owner);
}

}  // namespace simdex::py
