// Python numbers as btree keys (int64, uint64, float64), with Python's value semantics: a
// lookup answers by value whatever the number's type (2.0 finds 2; 2**63, 2.5, None or "x"
// in an int64 container are simply absent), bisect places any real number by value order, and
// an insert takes only what the container can store exactly, raising ValueError or TypeError.
// Only the limited C API is used, so the binding builds for Python's stable ABI.
#pragma once

#include <Python.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace simdex::py {

template <class K>
constexpr const char* dtype_name() {
  if constexpr (std::is_same_v<K, std::int64_t>) return "int64";
  if constexpr (std::is_same_v<K, std::uint64_t>) return "uint64";
  return "float64";
}

// Where a Python object falls among the values of K.
enum class spot : std::uint8_t {
  exact,       // equal to `at`
  before,      // between two keys: `at` is the smallest K above it
  below,       // below every K
  above,       // above every K
  nan,         // a float NaN
  not_number,  // not a real number (None, str, complex, ...); no Python error set
  error,       // converting raised; the Python error is set
};

template <class K>
struct place {
  spot where;
  K at{};
};

template <class K>
PyObject* key_object(K k) {
  if constexpr (std::is_same_v<K, std::int64_t>) return PyLong_FromLongLong(k);
  if constexpr (std::is_same_v<K, std::uint64_t>) return PyLong_FromUnsignedLongLong(k);
  if constexpr (std::is_same_v<K, double>) return PyFloat_FromDouble(k);
}

namespace keys_detail {

inline constexpr double kTwo63 = 9223372036854775808.0;
inline constexpr double kTwo64 = 18446744073709551616.0;

// x < y / x == y between a Python object and a double; -1 on error.
inline int compare(PyObject* x, double y, int op) {
  PyObject* f = PyFloat_FromDouble(y);
  if (f == nullptr) return -1;
  int r = PyObject_RichCompareBool(x, f, op);
  Py_DECREF(f);
  return r;
}

// A double's place among the K values. Floats keep Python's equality: -0.0 is 0.0.
template <class K>
place<K> of_double(double d) {
  if (std::isnan(d)) return {spot::nan};
  if constexpr (std::is_same_v<K, double>) {
    return {spot::exact, d == 0.0 ? 0.0 : d};
  } else {
    constexpr double lo = std::is_same_v<K, std::int64_t> ? -kTwo63 : 0.0;
    constexpr double hi = std::is_same_v<K, std::int64_t> ? kTwo63 : kTwo64;
    double c = std::ceil(d);
    if (c >= hi) return {spot::above};
    if (c < lo) return {spot::below};
    K at = static_cast<K>(c);
    return {c == d ? spot::exact : spot::before, at};
  }
}

// The double next above d among the float64 keys (+inf has none).
inline place<double> after(double d) {
  if (d == std::numeric_limits<double>::infinity()) return {spot::above};
  return {spot::before, std::nextafter(d, std::numeric_limits<double>::infinity())};
}

// An exact int of magnitude below 2^63 read straight from its digits, where CPython's layout
// is part of the headers this build sees (3.11; 3.12+ outside the stable ABI, small ints
// only): a third of the cost of PyLong_AsLongLongAndOverflow, which `in` and `add` pay per
// call. False: use the general conversion.
inline bool fast_long(PyObject* o, long long& v) {
#if !defined(Py_LIMITED_API) && PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000
  if (!PyLong_CheckExact(o)) return false;
  Py_ssize_t size = Py_SIZE(o);
  Py_ssize_t n = size < 0 ? -size : size;
  constexpr Py_ssize_t kMax = (63 + PyLong_SHIFT - 1) / PyLong_SHIFT;  // digits of 63 bits
  if (n > kMax) return false;
  const digit* d = reinterpret_cast<PyLongObject*>(o)->ob_digit;
  if (n > 0 && (static_cast<unsigned long long>(d[n - 1]) >> (63 - (n - 1) * PyLong_SHIFT)) != 0)
    return false;
  unsigned long long u = 0;
  for (Py_ssize_t i = n; i-- > 0;) u = (u << PyLong_SHIFT) | d[i];
  v = size < 0 ? -static_cast<long long>(u) : static_cast<long long>(u);
  return true;
#elif !defined(Py_LIMITED_API) && PY_VERSION_HEX >= 0x030C0000
  if (!PyLong_CheckExact(o) || !PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject*>(o)))
    return false;
  v = PyUnstable_Long_CompactValue(reinterpret_cast<PyLongObject*>(o));
  return true;
#else
  (void)o;
  (void)v;
  return false;
#endif
}

// A Python int's place.
template <class K>
place<K> of_long(PyObject* o) {
  int overflow = 0;
  long long v;
  if (!fast_long(o, v)) {
    v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow == 0 && v == -1 && PyErr_Occurred()) return {spot::error};
  }
  if constexpr (std::is_same_v<K, std::int64_t>) {
    if (overflow != 0) return {overflow > 0 ? spot::above : spot::below};
    return {spot::exact, static_cast<K>(v)};
  } else if constexpr (std::is_same_v<K, std::uint64_t>) {
    if (overflow < 0 || (overflow == 0 && v < 0)) return {spot::below};
    if (overflow == 0) return {spot::exact, static_cast<K>(v)};
    unsigned long long u = PyLong_AsUnsignedLongLong(o);
    if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
      PyErr_Clear();
      return {spot::above};
    }
    return {spot::exact, static_cast<K>(u)};
  } else {
    double d;
    if (overflow == 0) {
      d = static_cast<double>(v);
      // Exact, or d is the nearest double: the ceiling is d or the next one up.
      if (d < kTwo63 && static_cast<long long>(d) == v) return {spot::exact, d};
      if (d >= kTwo63 || static_cast<long long>(d) > v) return {spot::before, d};
      return after(d);
    }
    d = PyLong_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) {  // beyond every finite double
      PyErr_Clear();
      return {spot::before, overflow > 0 ? std::numeric_limits<double>::infinity()
                                         : -std::numeric_limits<double>::max()};
    }
    int eq = compare(o, d, Py_EQ);
    if (eq < 0) return {spot::error};
    if (eq) return {spot::exact, d};
    int lt = compare(o, d, Py_LT);
    if (lt < 0) return {spot::error};
    return lt ? place<K>{spot::before, d} : after(d);
  }
}

// The place of a number that is neither int nor float but converts to one (numpy scalars,
// Fraction, Decimal): by its float value, then checked against the candidate key, since the
// conversion may have rounded.
//
// For integer K, first by floor(o) as a Python int: o == floor(o) is that integer's place, else
// o lies strictly between floor(o) and floor(o) + 1, just before the latter. False (and no
// error) when o has no __floor__.
template <class K>
bool of_integral_real(PyObject* o, place<K>& out) {
  PyObject* fl = PyObject_CallMethod(o, "__floor__", nullptr);
  if (fl == nullptr || !PyLong_Check(fl)) {
    Py_XDECREF(fl);
    PyErr_Clear();
    return false;
  }
  int eq = PyObject_RichCompareBool(o, fl, Py_EQ);
  if (eq < 0) {
    Py_DECREF(fl);
    out = {spot::error};
    return true;
  }
  if (eq) {
    out = of_long<K>(fl);
    Py_DECREF(fl);
    return true;
  }
  PyObject* one = PyLong_FromLong(1);
  PyObject* up = one ? PyNumber_Add(fl, one) : nullptr;
  Py_XDECREF(one);
  Py_DECREF(fl);
  if (up == nullptr) {
    out = {spot::error};
    return true;
  }
  place<K> c = of_long<K>(up);
  Py_DECREF(up);
  out = c.where == spot::exact ? place<K>{spot::before, c.at} : c;
  return true;
}
template <class K>
place<K> of_other_real(PyObject* o, double d) {
  if constexpr (!std::is_same_v<K, double>) {
    // Integer keys: by the value's floor, exactly (a float holds integers only to 2^53, and
    // 2^63 - 1 rounds up past int64's range).
    if (place<K> p; of_integral_real<K>(o, p)) return p;
  }
  place<K> p = of_double<K>(d);
  if (p.where != spot::exact) return p;
  PyObject* k = key_object(p.at);
  if (k == nullptr) return {spot::error};
  int eq = PyObject_RichCompareBool(o, k, Py_EQ);
  int lt = eq == 0 ? PyObject_RichCompareBool(o, k, Py_LT) : 0;
  Py_DECREF(k);
  if (eq < 0 || lt < 0) return {spot::error};
  if (eq) return p;
  if (lt) return {spot::before, p.at};
  if constexpr (std::is_same_v<K, double>) {
    return after(p.at);
  } else {
    if (p.at == std::numeric_limits<K>::max()) return {spot::above};
    return {spot::before, static_cast<K>(p.at + 1)};
  }
}

}  // namespace keys_detail

// The place of any Python object among the values of K.
template <class K>
place<K> locate(PyObject* o) {
  using namespace keys_detail;
  if (PyLong_Check(o)) return of_long<K>(o);
  if (PyFloat_Check(o)) {
    double d = PyFloat_AsDouble(o);
    if (d == -1.0 && PyErr_Occurred()) return {spot::error};
    return of_double<K>(d);
  }
  if (PyIndex_Check(o)) {  // numpy integers and other integer types
    PyObject* i = PyNumber_Index(o);
    if (i == nullptr) return {spot::error};
    place<K> p = of_long<K>(i);
    Py_DECREF(i);
    return p;
  }
  double d = PyFloat_AsDouble(o);  // numpy floats, Fraction, Decimal
  if (d == -1.0 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_TypeError)) return {spot::error};
    PyErr_Clear();
    return {spot::not_number};
  }
  if (std::isnan(d)) return {spot::nan};
  return of_other_real<K>(o, d);
}

// A key to store: exactly representable as K, else ValueError (out of range, NaN, not exact)
// or TypeError (not a number; a float for an integer dtype). `what` names the caller for the
// message; `pos` >= 0 adds "at position pos".
template <class K>
bool to_stored_key(PyObject* o, K& out, const char* what, long long pos = -1) {
  constexpr bool is_int = !std::is_same_v<K, double>;
  bool integral = PyLong_Check(o) || PyIndex_Check(o);
  char where[48] = "";
  if (pos >= 0) PyOS_snprintf(where, sizeof(where), " at position %lld", pos);
  if (is_int && !integral) {
    PyErr_Format(PyExc_TypeError, "%s: %s keys must be integers, got %R%s", what, dtype_name<K>(),
                 o, where);
    return false;
  }
  place<K> p = locate<K>(o);
  switch (p.where) {
    case spot::exact:
      out = p.at;
      return true;
    case spot::error:
      return false;
    case spot::nan:
      PyErr_Format(PyExc_ValueError, "%s: NaN cannot be a key%s", what, where);
      return false;
    case spot::not_number:
      PyErr_Format(PyExc_TypeError, "%s: %s keys must be numbers, got %R%s", what, dtype_name<K>(),
                   o, where);
      return false;
    default:
      if (is_int)
        PyErr_Format(PyExc_ValueError, "%s: key %R out of range for %s%s", what, o, dtype_name<K>(),
                     where);
      else
        PyErr_Format(PyExc_ValueError, "%s: key %R is not exactly representable as float64%s", what,
                     o, where);
      return false;
  }
}

}  // namespace simdex::py
