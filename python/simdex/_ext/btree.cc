// Python binding of simdex::btree_set / btree_map: the native bases _Set and _Map that
// simdex.btree.SortedSet / SortedDict derive from. One class each; the key dtype (int64,
// uint64, float64) is chosen per instance and held as a variant of trees. The hot operations
// (in, len, [], del, iteration) are type slots and the single-key methods (get, pop, add,
// discard, bisect_left, ...) CPython fast-call methods, so they cost no nanobind dispatch; Python
// numbers become keys by value (btree_keys.h). Iterators check a modification counter, so changing
// a container while iterating raises instead of reading freed pages.
#include "simdex/btree.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <span>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "bind.h"
#include "btree_keys.h"

namespace simdex::py {
namespace {

// What an iterator yields; maps offer all three.
enum class yield_kind { keys, values, items };

// "auto" starts on 4 KiB pages, so a small container costs a few pages, and moves the tree
// to 2 MiB pages once its arena outgrows its first 2 MiB region (or builds there directly
// from a large input); "2m" and "4k" fix the backing.
enum class page_mode { automatic, huge, small };
constexpr std::size_t kRegionBytes = std::size_t{2} << 20;
constexpr std::size_t kBuildHugeKeys = std::size_t{1} << 16;
// A dict update of this many items or more sorts them and goes in as batches; fewer go key
// by key.
constexpr std::size_t kBatchAssignMin = 64;

page_mode parse_pages(const std::string& pages) {
  if (pages == "auto") return page_mode::automatic;
  if (pages == "2m" || pages == "huge") return page_mode::huge;
  if (pages == "4k" || pages == "small") return page_mode::small;
  throw nb::value_error("pages must be 'auto', '2m' or '4k'");
}

template <class K>
using set_tree = btree_set<K>;
template <class K>
using map_tree = btree_map<K, std::uint64_t>;  // key -> the value, a PyObject* (py_map)

template <class T>
using key_of = typename std::decay_t<T>::key_type;
template <class T>
constexpr bool is_map = !std::is_same_v<std::decay_t<T>, set_tree<key_of<T>>>;

// A sorted container of one key dtype: the tree, its page policy and a modification counter.
template <template <class> class Tree>
struct holder {
  using trees = std::variant<Tree<std::int64_t>, Tree<std::uint64_t>, Tree<double>>;
  trees t;
  page_mode mode;
  bool filter;                // btree_options::batch_filter for every tree this holder makes
  std::uint64_t version = 0;  // bumped by every change of the key set; iterators compare it

  holder(const std::string& dtype, const std::string& pages, bool batch_filter)
      : t(make(dtype, parse_pages(pages), batch_filter)),
        mode(parse_pages(pages)),
        filter(batch_filter) {}

  static trees make(const std::string& dtype, page_mode m, bool batch_filter) {
    btree_options o{.pages = m == page_mode::huge ? page_size::huge : page_size::small,
                    .batch_filter = batch_filter};
    if (dtype == "int64") return trees(std::in_place_index<0>, o);
    if (dtype == "uint64") return trees(std::in_place_index<1>, o);
    if (dtype == "float64") return trees(std::in_place_index<2>, o);
    throw nb::value_error("dtype must be 'int64', 'uint64' or 'float64'");
  }
  template <class F>
  decltype(auto) visit(F&& f) {
    return std::visit(std::forward<F>(f), t);
  }
  // Empties the tree; an "auto" one starts over on 4 KiB pages.
  void reset() {
    visit([&](auto& tree) {
      using T = std::decay_t<decltype(tree)>;
      if (mode == page_mode::automatic)
        tree = T(options(page_size::small));
      else
        tree.clear();
    });
  }
  btree_options options(page_size pages) const { return {.pages = pages, .batch_filter = filter}; }
  // The backing a tree about to hold n keys should start on.
  page_size pages_for(std::size_t n) const {
    if (mode == page_mode::huge) return page_size::huge;
    if (mode == page_mode::small) return page_size::small;
    return n >= kBuildHugeKeys ? page_size::huge : page_size::small;
  }
};

// Rebuilds tree with options o from its own keys (and values); the key set is unchanged.
template <class T>
void rebuild(T& tree, const btree_options& o) {
  using K = key_of<T>;
  std::vector<K> keys;
  keys.reserve(tree.size());
  std::vector<std::uint64_t> vals;
  if constexpr (is_map<T>) vals.reserve(tree.size());
  for (auto it = tree.begin(); it != tree.end(); ++it) {
    keys.push_back(it.key());
    if constexpr (is_map<T>) vals.push_back(it.value());
  }
  T fresh(o);
  if constexpr (is_map<T>)
    fresh.build_sorted(keys, vals);
  else
    fresh.build_sorted(keys);
  tree = std::move(fresh);
}

// After growth: an "auto" tree whose 4 KiB-page arena needs a second region moves to 2 MiB
// pages (once; about 2 MiB of nodes by then, so the huge page is mostly used).
template <class H, class T>
void maybe_grow_pages(H& h, T& tree) {
  if (h.mode != page_mode::automatic || tree.pages() != page_size::small) return;
  if (tree.reserved_bytes() < 2 * kRegionBytes) return;
  ++h.version;
  rebuild(tree, h.options(page_size::huge));
}

// A batch that adds only or removes only changed the key set exactly when it changed the size:
// bumps the version then (on return or an exception alike), so iterators live on through a
// batch that found nothing to do, as sortedcontainers' do and as single adds already did.
template <class H, class T>
struct bump_if_resized {
  H& h;
  const T& t;
  std::size_t before;
  bump_if_resized(H& holder, const T& tree) : h(holder), t(tree), before(tree.size()) {}
  ~bump_if_resized() {
    if (t.size() != before) ++h.version;
  }
  bump_if_resized(const bump_if_resized&) = delete;
  bump_if_resized& operator=(const bump_if_resized&) = delete;
};

struct py_set : holder<set_tree> {
  using holder::holder;
};

// Values are Python objects held in the tree itself: a key's 8-byte value is the PyObject* of
// an owned reference, so a lookup reads it from the leaf where it found the key (a table of
// values beside the tree was one more cache miss per d[k] at 1M keys). tp_traverse walks the
// tree for the garbage collector, so values referring back to the dict are collected.
struct py_map : holder<map_tree> {
  using holder::holder;
  py_map(const py_map&) = delete;  // the references are owned once
  py_map& operator=(const py_map&) = delete;
  // Nothing else reaches a dict being destroyed (nanobind untracks it from the garbage
  // collector first), so its values are released straight from the tree.
  ~py_map() {
    visit([](auto& t) { release_values(t); });
  }
  static PyObject* obj(std::uint64_t v) {
    return reinterpret_cast<PyObject*>(static_cast<std::uintptr_t>(v));
  }
  // v as a value to store: the tree takes over its reference.
  static std::uint64_t put(nb::object v) {
    return reinterpret_cast<std::uintptr_t>(v.release().ptr());
  }
  // The reference a stored value held, for the caller to drop once the tree is consistent.
  static nb::object take(std::uint64_t v) { return nb::steal(obj(v)); }
  template <class T>
  static void release_values(const T& t) noexcept {
    for (auto it = t.begin(); it != t.end(); ++it) Py_DECREF(obj(it.value()));
  }
  void clear_all() {
    ++version;
    visit([&](auto& t) {
      std::decay_t<decltype(t)> old(std::move(t));
      reset();
      release_values(old);  // after the container is consistent (their __del__ may look)
    });
  }
};

// ---- helpers shared by slots and methods -------------------------------------------------

template <class H>
H* self_of(PyObject* self) {
  if (!nb::inst_ready(self)) {
    PyErr_SetString(PyExc_TypeError, "container is not initialized (its __init__ did not run)");
    return nullptr;
  }
  return nb::inst_ptr<H>(self);
}

// A C++ exception escaping into a slot becomes a Python error.
template <class R, class F>
R guarded(R fail, F&& f) {
  try {
    return f();
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    using et = nb::exception_type;
    PyObject* type = e.type() == et::value_error   ? PyExc_ValueError
                     : e.type() == et::index_error ? PyExc_IndexError
                     : e.type() == et::key_error   ? PyExc_KeyError
                     : e.type() == et::type_error  ? PyExc_TypeError
                                                   : PyExc_RuntimeError;
    PyErr_SetString(type, e.what());
  } catch (const std::bad_alloc&) {
    PyErr_NoMemory();
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return fail;
}

// Position i (negative counts from the end) checked against n; -1 with IndexError if outside.
Py_ssize_t position(Py_ssize_t i, std::size_t n, const char* what) {
  Py_ssize_t sn = static_cast<Py_ssize_t>(n);
  if (i < 0) i += sn;
  if (i < 0 || i >= sn) {
    PyErr_Format(PyExc_IndexError, "%s index out of range", what);
    return -1;
  }
  return i;
}

void raise_key_error(PyObject* key) {
  PyObject* t = PyTuple_Pack(1, key);  // KeyError(key), even when key is a tuple
  if (t == nullptr) return;
  PyErr_SetObject(PyExc_KeyError, t);
  Py_DECREF(t);
}

// Number of keys < x (right: <= x) for any real number x, by value.
template <class T>
bool bisect(const T& tree, PyObject* x, bool right, std::size_t& out) {
  using K = key_of<T>;
  place<K> p = locate<K>(x);
  switch (p.where) {
    case spot::exact:
      out = tree.rank(p.at) + (right && tree.contains(p.at) ? 1 : 0);
      return true;
    case spot::before:
      out = tree.rank(p.at);
      return true;
    case spot::below:
      out = 0;
      return true;
    case spot::above:
      out = tree.size();
      return true;
    case spot::nan:
      PyErr_SetString(PyExc_ValueError, "NaN has no place in a sorted container");
      return false;
    case spot::not_number:
      PyErr_Format(PyExc_TypeError, "'<' not supported between %s keys and %R", dtype_name<K>(), x);
      return false;
    default:
      return false;
  }
}

// The tree's key at a lookup value, if the value can be a key: exact place and present.
template <class T>
int find_key(const T& tree, PyObject* x, typename T::const_iterator& it) {
  using K = key_of<T>;
  place<K> p = locate<K>(x);
  if (p.where == spot::error) return -1;
  if (p.where != spot::exact) return 0;
  it = tree.find(p.at);
  return it != tree.end() ? 1 : 0;
}

template <class K>
nb::object key_obj(K k) {
  return nb::steal(key_object(k));
}

// A numpy array of the tree's key type, or TypeError.
using any_array = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
template <class K>
std::span<const K> keys_of(const any_array& a) {
  if (a.dtype() != nb::dtype<K>())
    throw nb::type_error((std::string("expected a ") + dtype_name<K>() + " array").c_str());
  return {static_cast<const K*>(a.data()), a.shape(0)};
}

// ---- iterators -----------------------------------------------------------------------------

template <class T>
struct span_of {
  typename T::const_iterator cur, stop;  // iteration only reads
};

template <class H>
struct py_iter {
  nb::object owner;  // keeps the container alive
  H* h;
  std::uint64_t version;
  bool reverse;
  yield_kind what;
  std::variant<std::monostate, span_of<std::variant_alternative_t<0, typename H::trees>>,
               span_of<std::variant_alternative_t<1, typename H::trees>>,
               span_of<std::variant_alternative_t<2, typename H::trees>>>
      span;
};

template <class H, class It>
PyObject* yielded(H& h, const It& it, yield_kind what) {
  if constexpr (std::is_same_v<H, py_map>) {
    if (what == yield_kind::values) return nb::borrow(h.obj(it.value())).release().ptr();
    if (what == yield_kind::items)
      return nb::make_tuple(key_obj(it.key()), nb::borrow(h.obj(it.value()))).release().ptr();
  }
  return key_object(it.key());
}

template <class H>
PyObject* iter_next(PyObject* self) {
  auto* s = nb::inst_ptr<py_iter<H>>(self);
  if (s->h->version != s->version) {
    PyErr_SetString(PyExc_RuntimeError, "container changed during iteration");
    return nullptr;
  }
  return std::visit(
      [&](auto& sp) -> PyObject* {
        if constexpr (std::is_same_v<std::decay_t<decltype(sp)>, std::monostate>) {
          return nullptr;
        } else {
          if (sp.cur == sp.stop) return nullptr;  // StopIteration
          if (s->reverse) {
            --sp.stop;
            return yielded(*s->h, sp.stop, s->what);
          }
          // Step first: building an item's tuple can run a garbage collection, whose
          // finalizers (or the threads they let in) may change the tree under `cur`; the next
          // call then sees the new version instead of stepping a dead iterator.
          const auto at = sp.cur++;
          return yielded(*s->h, at, s->what);
        }
      },
      s->span);
}

// An iterator over the positions [a, b) of the container `self`.
template <class H>
nb::object make_iter(nb::handle self, std::size_t a, std::size_t b, bool reverse, yield_kind what) {
  // self is any object here (reversed() of a subclass whose __init__ skipped ours reads it).
  H* hp = self_of<H>(self.ptr());
  if (hp == nullptr) throw nb::python_error();
  H& h = *hp;
  py_iter<H> it{nb::borrow(self), &h, h.version, reverse, what, {}};
  h.visit([&](auto& t) {
    using T = std::decay_t<decltype(t)>;
    if (b < a) b = a;
    it.span.template emplace<span_of<T>>(span_of<T>{t.nth(a), t.nth(b)});
  });
  return nb::cast(std::move(it));
}

template <class H>
void bind_iter(nb::module_& m, const char* name) {
  static PyType_Slot slots[] = {{Py_tp_iter, reinterpret_cast<void*>(PyObject_SelfIter)},
                                {Py_tp_iternext, reinterpret_cast<void*>(iter_next<H>)},
                                {0, nullptr}};
  nb::class_<py_iter<H>>(m, name, nb::type_slots(slots));
}

// Slice positions in tree: start, step and count, as list slicing has them. The size is read
// after the bounds' __index__ ran, since that may change the container.
struct slice_pos {
  Py_ssize_t start, step, count;
};
template <class T>
bool unpack_slice(PyObject* s, const T& tree, slice_pos& out) {
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(s, &start, &stop, &step) < 0) return false;
  out.count = PySlice_AdjustIndices(static_cast<Py_ssize_t>(tree.size()), &start, &stop, step);
  out.start = start;
  out.step = step;
  return true;
}

// The keys at the positions of a slice, as a list.
template <class T>
PyObject* slice_keys(const T& tree, const slice_pos& s) {
  PyObject* list = PyList_New(s.count);
  if (list == nullptr || s.count == 0) return list;
  auto it = tree.nth(static_cast<std::size_t>(s.start));
  for (Py_ssize_t i = 0; i < s.count; ++i) {
    PyObject* k = key_object(it.key());
    if (k == nullptr) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SetItem(list, i, k);
    if (i + 1 == s.count) break;
    if (s.step > 0)
      for (Py_ssize_t j = 0; j < s.step; ++j) ++it;
    else
      for (Py_ssize_t j = 0; j < -s.step; ++j) --it;
  }
  return list;
}

// Erases the keys at the positions of a slice (or one position when count is 1).
template <class T>
void erase_positions(T& tree, const slice_pos& s, std::vector<std::uint64_t>* freed) {
  if (s.count <= 0) return;
  Py_ssize_t lo = s.step > 0 ? s.start : s.start + (s.count - 1) * s.step;
  Py_ssize_t step = s.step > 0 ? s.step : -s.step;
  auto first = tree.nth(static_cast<std::size_t>(lo));
  if (step == 1 || s.count == 1) {
    auto last = tree.nth(static_cast<std::size_t>(lo + s.count));
    if constexpr (is_map<T>)
      for (auto it = first; it != last; ++it) freed->push_back(it.value());
    tree.erase(first, last);
    return;
  }
  std::vector<key_of<T>> keys;
  keys.reserve(static_cast<std::size_t>(s.count));
  auto it = first;
  for (Py_ssize_t i = 0; i < s.count; ++i) {
    keys.push_back(it.key());
    if constexpr (is_map<T>) freed->push_back(it.value());
    if (i + 1 < s.count)
      for (Py_ssize_t j = 0; j < step; ++j) ++it;
  }
  tree.erase_batch(keys);
}

// ---- type slots ----------------------------------------------------------------------------

template <class H>
Py_ssize_t slot_len(PyObject* self) {
  H* h = self_of<H>(self);
  if (h == nullptr) return -1;
  return h->visit([](auto& t) { return static_cast<Py_ssize_t>(t.size()); });
}

template <class H>
int slot_contains(PyObject* self, PyObject* key) {
  H* h = self_of<H>(self);
  if (h == nullptr) return -1;
  return h->visit([&](auto& t) -> int {
    using K = key_of<decltype(t)>;
    place<K> p = locate<K>(key);
    if (p.where == spot::error) return -1;
    return p.where == spot::exact && t.contains(p.at);
  });
}

template <class H>
PyObject* slot_iter(PyObject* self) {
  H* h = self_of<H>(self);
  if (h == nullptr) return nullptr;
  return guarded<PyObject*>(nullptr, [&] {
    std::size_t n = h->visit([](auto& t) { return t.size(); });
    return make_iter<H>(self, 0, n, false, yield_kind::keys).release().ptr();
  });
}

// s[i] -> key, s[a:b:c] -> list of keys.
PyObject* set_subscript(PyObject* self, PyObject* index) {
  py_set* h = self_of<py_set>(self);
  if (h == nullptr) return nullptr;
  return h->visit([&](auto& t) -> PyObject* {
    if (PySlice_Check(index)) {
      slice_pos s;
      if (!unpack_slice(index, t, s)) return nullptr;
      return slice_keys(t, s);
    }
    Py_ssize_t i = PyNumber_AsSsize_t(index, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return nullptr;
    i = position(i, t.size(), "SortedSet");
    if (i < 0) return nullptr;
    return key_object(t.nth(static_cast<std::size_t>(i)).key());
  });
}

// del s[i], del s[a:b:c].
int set_ass_subscript(PyObject* self, PyObject* index, PyObject* value) {
  py_set* h = self_of<py_set>(self);
  if (h == nullptr) return -1;
  if (value != nullptr) {
    PyErr_SetString(PyExc_TypeError, "SortedSet does not support item assignment; use add()");
    return -1;
  }
  return guarded(-1, [&] {
    return h->visit([&](auto& t) -> int {
      slice_pos s{0, 1, 1};
      if (PySlice_Check(index)) {
        if (!unpack_slice(index, t, s)) return -1;
      } else {
        Py_ssize_t i = PyNumber_AsSsize_t(index, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred()) return -1;
        s.start = position(i, t.size(), "SortedSet");
        if (s.start < 0) return -1;
      }
      ++h->version;
      erase_positions(t, s, nullptr);
      return 0;
    });
  });
}

PyObject* map_subscript(PyObject* self, PyObject* key) {
  py_map* h = self_of<py_map>(self);
  if (h == nullptr) return nullptr;
  return h->visit([&](auto& t) -> PyObject* {
    typename std::decay_t<decltype(t)>::const_iterator it;
    int r = find_key(t, key, it);
    if (r < 0) return nullptr;
    if (r == 0) {
      raise_key_error(key);
      return nullptr;
    }
    return nb::borrow(py_map::obj(it.value())).release().ptr();
  });
}

// d[k] = v: a new key goes in; an existing one has its value replaced (iterators live on).
template <class T>
void map_assign(py_map& h, T& t, key_of<T> k, nb::object v) {
  auto it = t.find(k);
  if (it != t.end()) {
    nb::object old = h.take(it.value());  // released after the new value is in place
    it.value() = h.put(std::move(v));
    return;
  }
  ++h.version;
  std::uint64_t s = h.put(std::move(v));
  try {
    t.insert(k, s);
  } catch (...) {
    h.take(s);
    throw;
  }
  maybe_grow_pages(h, t);
}

int map_ass_subscript(PyObject* self, PyObject* key, PyObject* value) {
  py_map* h = self_of<py_map>(self);
  if (h == nullptr) return -1;
  return guarded(-1, [&] {
    return h->visit([&](auto& t) -> int {
      using K = key_of<decltype(t)>;
      if (value != nullptr) {
        K k;
        if (!to_stored_key<K>(key, k, "SortedDict")) return -1;
        map_assign(*h, t, k, nb::borrow(value));
        return 0;
      }
      typename std::decay_t<decltype(t)>::const_iterator it;
      int r = find_key(t, key, it);
      if (r <= 0) {
        if (r == 0) raise_key_error(key);
        return -1;
      }
      std::uint64_t s = it.value();
      ++h->version;
      t.erase(it.key());
      nb::object old = h->take(s);  // released after the tree is consistent
      return 0;
    });
  });
}

int map_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self)) return 0;
  return nb::inst_ptr<py_map>(self)->visit([&](auto& t) {
    for (auto it = t.cbegin(); it != t.cend(); ++it) Py_VISIT(py_map::obj(it.value()));
    return 0;
  });
}

int map_clear(PyObject* self) {
  if (nb::inst_ready(self)) nb::inst_ptr<py_map>(self)->clear_all();
  return 0;
}

// ---- single-key methods as CPython fast calls ----------------------------------------------
// The methods a loop calls once per key (d.get(k), d.pop(k), d.setdefault(k, v), s.add(k),
// s.discard(k), bisect_left(k), ...) are plain METH_FASTCALL methods in the type's dict rather
// than nanobind functions: CPython calls them with the arguments in place, without nanobind's
// overload dispatch and argument casts, which cost about as many instructions as the tree
// lookup itself.

// The arguments of a fast call by name: out[i] is the i-th of the n `names` (borrowed), given
// by position or keyword, nullptr where an optional one is missing. False with TypeError set.
bool fast_args(const char* fn, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               const char* const* names, Py_ssize_t n, std::size_t required, PyObject** out) {
  if (nargs > n) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %zd arguments (%zd given)", fn, n, nargs);
    return false;
  }
  for (Py_ssize_t i = 0; i < n; ++i) out[i] = i < nargs ? args[i] : nullptr;
  const Py_ssize_t nk = kwnames != nullptr ? PyTuple_Size(kwnames) : 0;
  for (Py_ssize_t j = 0; j < nk; ++j) {
    PyObject* name = PyTuple_GetItem(kwnames, j);
    Py_ssize_t i = 0;
    while (i < n && PyUnicode_CompareWithASCIIString(name, names[i]) != 0) ++i;
    if (i == n) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn, name);
      return false;
    }
    if (out[i] != nullptr) {
      PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn, names[i]);
      return false;
    }
    out[i] = args[nargs + j];
  }
  for (std::size_t i = 0; i < required; ++i) {
    if (out[i] == nullptr) {
      PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
      return false;
    }
  }
  return true;
}

// The instance and the arguments (as fast_args gives them) of a fast call to method `fn` of an
// H: nullptr with TypeError set for a wrong call, or for an instance whose __init__ did not
// run. The common all-positional call is sorted out inline (forced: as a call of its own it
// added a fifth to d.get's instructions outside the tree); the rest goes by name.
template <class H, std::size_t N>
[[gnu::always_inline]] inline H* fast_call(PyObject* self, const char* fn, PyObject* const* args,
                                           Py_ssize_t nargs, PyObject* kwnames,
                                           const char* const (&names)[N], std::size_t required,
                                           PyObject* (&out)[N]) {
  constexpr Py_ssize_t n = static_cast<Py_ssize_t>(N);
  if (kwnames == nullptr && nargs >= static_cast<Py_ssize_t>(required) && nargs <= n) {
    for (Py_ssize_t i = 0; i < n; ++i) out[i] = i < nargs ? args[i] : nullptr;
  } else if (!fast_args(fn, args, nargs, kwnames, names, n, required, out)) {
    return nullptr;
  }
  return self_of<H>(self);
}

// An optional index argument (nullptr: -1, the last) as Py_ssize_t; false with the error set.
// An int too large for one is an IndexError (as for a list), not a TypeError.
bool index_param(PyObject* index, Py_ssize_t& out) {
  out = index != nullptr ? PyNumber_AsSsize_t(index, PyExc_IndexError) : -1;
  return !(out == -1 && PyErr_Occurred());
}

// A new (key, value) tuple; takes over the reference `value` (dropped on failure too).
template <class K>
PyObject* item_tuple(K key, PyObject* value) {
  PyObject* k = key_object(key);
  PyObject* item = k != nullptr ? PyTuple_Pack(2, k, value) : nullptr;
  Py_XDECREF(k);
  Py_DECREF(value);
  return item;
}

PyObject* map_get(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* a[2];
  py_map* h = fast_call<py_map>(self, "get", args, nargs, kwnames, {"key", "default"}, 1, a);
  if (h == nullptr) return nullptr;
  return h->visit([&](auto& t) -> PyObject* {
    typename std::decay_t<decltype(t)>::const_iterator it;
    int r = find_key(t, a[0], it);
    if (r < 0) return nullptr;
    PyObject* v = r ? py_map::obj(it.value()) : a[1] != nullptr ? a[1] : Py_None;
    Py_INCREF(v);
    return v;
  });
}

// d.pop(key[, default]): default= by keyword too, as sortedcontainers and dict.pop's docs name it.
PyObject* map_pop(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* a[2];
  py_map* h = fast_call<py_map>(self, "pop", args, nargs, kwnames, {"key", "default"}, 1, a);
  if (h == nullptr) return nullptr;
  return guarded<PyObject*>(nullptr, [&]() -> PyObject* {
    return h->visit([&](auto& t) -> PyObject* {
      typename std::decay_t<decltype(t)>::const_iterator it;
      int r = find_key(t, a[0], it);
      if (r < 0) return nullptr;
      if (r == 0) {
        if (a[1] == nullptr) {
          raise_key_error(a[0]);
          return nullptr;
        }
        Py_INCREF(a[1]);
        return a[1];
      }
      std::uint64_t s = it.value();
      ++h->version;
      t.erase(it.key());
      return py_map::obj(s);  // the tree's reference, now the caller's
    });
  });
}

PyObject* map_setdefault(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                         PyObject* kwnames) {
  PyObject* a[2];
  py_map* h = fast_call<py_map>(self, "setdefault", args, nargs, kwnames, {"key", "default"}, 1, a);
  if (h == nullptr) return nullptr;
  PyObject* dflt = a[1] != nullptr ? a[1] : Py_None;
  return guarded<PyObject*>(nullptr, [&]() -> PyObject* {
    return h->visit([&](auto& t) -> PyObject* {
      using K = key_of<decltype(t)>;
      place<K> p = locate<K>(a[0]);
      if (p.where == spot::exact) {
        auto it = t.find(p.at);
        if (it != t.end()) {
          PyObject* v = py_map::obj(it.value());
          Py_INCREF(v);
          return v;
        }
      }
      K k;  // absent: stored only if the key can be (to_stored_key raises as d[k] = v does)
      if (p.where == spot::error || !to_stored_key<K>(a[0], k, "SortedDict")) return nullptr;
      map_assign(*h, t, k, nb::borrow(dflt));
      Py_INCREF(dflt);
      return dflt;
    });
  });
}

// d.popitem(index=-1) (Pop true) and d.peekitem(index=-1): the (key, value) pair at index.
template <bool Pop>
PyObject* map_item_at(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* a[1];
  const char* fn = Pop ? "popitem" : "peekitem";
  py_map* h = fast_call<py_map>(self, fn, args, nargs, kwnames, {"index"}, 0, a);
  Py_ssize_t i;
  if (h == nullptr || !index_param(a[0], i)) return nullptr;
  return guarded<PyObject*>(nullptr, [&]() -> PyObject* {
    return h->visit([&](auto& t) -> PyObject* {
      if (Pop && t.size() == 0) {
        PyErr_SetString(PyExc_KeyError, "popitem(): SortedDict is empty");
        return nullptr;
      }
      i = position(i, t.size(), Pop ? "popitem" : "SortedDict");
      if (i < 0) return nullptr;
      auto it = t.nth(static_cast<std::size_t>(i));
      auto k = it.key();
      PyObject* v = py_map::obj(it.value());
      // The value's reference is ours before making the tuple, which can run a garbage
      // collection whose finalizers change the dict: popitem takes the tree's, peekitem its own.
      if (Pop) {
        ++h->version;
        t.erase(k);
      } else {
        Py_INCREF(v);
      }
      return item_tuple(k, v);
    });
  });
}

PyObject* set_add(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* a[1];
  py_set* h = fast_call<py_set>(self, "add", args, nargs, kwnames, {"value"}, 1, a);
  if (h == nullptr) return nullptr;
  return guarded<PyObject*>(nullptr, [&]() -> PyObject* {
    return h->visit([&](auto& t) -> PyObject* {
      using K = key_of<decltype(t)>;
      K k;
      if (!to_stored_key<K>(a[0], k, "SortedSet.add")) return nullptr;
      if (t.insert(k)) {
        ++h->version;
        maybe_grow_pages(*h, t);
      }
      Py_RETURN_NONE;
    });
  });
}

// s.remove(value) (Must true: KeyError if absent) and s.discard(value).
template <bool Must>
PyObject* set_erase(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* a[1];
  const char* fn = Must ? "remove" : "discard";
  py_set* h = fast_call<py_set>(self, fn, args, nargs, kwnames, {"value"}, 1, a);
  if (h == nullptr) return nullptr;
  return guarded<PyObject*>(nullptr, [&]() -> PyObject* {
    return h->visit([&](auto& t) -> PyObject* {
      using K = key_of<decltype(t)>;
      place<K> p = locate<K>(a[0]);
      if (p.where == spot::error) return nullptr;
      if (p.where == spot::exact && t.erase(p.at)) {
        ++h->version;
      } else if (Must) {
        raise_key_error(a[0]);
        return nullptr;
      }
      Py_RETURN_NONE;
    });
  });
}

PyObject* set_pop(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* a[1];
  py_set* h = fast_call<py_set>(self, "pop", args, nargs, kwnames, {"index"}, 0, a);
  Py_ssize_t i;
  if (h == nullptr || !index_param(a[0], i)) return nullptr;
  return guarded<PyObject*>(nullptr, [&]() -> PyObject* {
    return h->visit([&](auto& t) -> PyObject* {
      if (t.size() == 0) {
        PyErr_SetString(PyExc_IndexError, "pop from an empty SortedSet");
        return nullptr;
      }
      i = position(i, t.size(), "pop");
      if (i < 0) return nullptr;
      auto k = t.nth(static_cast<std::size_t>(i)).key();
      PyObject* r = key_object(k);
      if (r == nullptr) return nullptr;
      ++h->version;
      t.erase(k);
      return r;
    });
  });
}

// bisect_left(value) / bisect_right(value) (Right true), of either container.
template <class H, bool Right>
PyObject* bisect_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs,
                        PyObject* kwnames) {
  PyObject* a[1];
  const char* fn = Right ? "bisect_right" : "bisect_left";
  H* h = fast_call<H>(self, fn, args, nargs, kwnames, {"value"}, 1, a);
  if (h == nullptr) return nullptr;
  return h->visit([&](auto& t) -> PyObject* {
    std::size_t r;
    if (!bisect(t, a[0], Right, r)) return nullptr;
    return PyLong_FromSize_t(r);
  });
}

// _find(value): the position of the key equal to value, or -1 (index() in Python).
template <class H>
PyObject* find_method(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyObject* a[1];
  H* h = fast_call<H>(self, "_find", args, nargs, kwnames, {"value"}, 1, a);
  if (h == nullptr) return nullptr;
  return h->visit([&](auto& t) -> PyObject* {
    typename std::decay_t<decltype(t)>::const_iterator it;
    int r = find_key(t, a[0], it);
    if (r < 0) return nullptr;
    return PyLong_FromSsize_t(r ? static_cast<Py_ssize_t>(t.rank(it.key())) : -1);
  });
}

using fast_fn = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);
// A method table entry; the docstring's first line is the signature help() and the stubs show.
PyMethodDef fast_def(const char* name, fast_fn f, const char* doc) {
  return {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f)),
          METH_FASTCALL | METH_KEYWORDS, doc};
}

// H's method table: its own fast-call methods, then those both containers have, then the end.
template <class H, std::size_t N>
std::array<PyMethodDef, N + 4> method_table(const PyMethodDef (&own)[N]) {
  std::array<PyMethodDef, N + 4> t{};  // the last entry stays zero: the end
  std::copy(own, own + N, t.begin());
  t[N] = fast_def("bisect_left", bisect_method<H, false>,
                  "bisect_left($self, value)\n--\n\n"
                  "Position where value would be inserted before equal keys: the number of keys "
                  "< value (any real number, placed by value).");
  t[N + 1] = fast_def("bisect_right", bisect_method<H, true>,
                      "bisect_right($self, value)\n--\n\nThe number of keys <= value.");
  t[N + 2] = fast_def("_find", find_method<H>,
                      "_find($self, value)\n--\n\nPosition of the key equal to value, or -1.");
  return t;
}

// Trivially destructible: nothing runs at exit while Python may still hold the methods.
auto map_methods = method_table<py_map>({
    fast_def("get", map_get,
             "get($self, key, default=None)\n--\n\n"
             "The value of key, or default when key is absent (or cannot be a key)."),
    fast_def("pop", map_pop,
             "pop($self, key, default=...)\n--\n\n"
             "Remove key and return its value; default (if given) when absent, else KeyError."),
    fast_def("setdefault", map_setdefault,
             "setdefault($self, key, default=None)\n--\n\n"
             "The value of key; if absent, insert key with default and return default."),
    fast_def("popitem", map_item_at<true>,
             "popitem($self, index=-1)\n--\n\n"
             "Remove and return the (key, value) pair at index (default: the largest key); "
             "KeyError when empty, IndexError when index is out of range."),
    fast_def("peekitem", map_item_at<false>,
             "peekitem($self, index=-1)\n--\n\n"
             "The (key, value) pair at index (default: the largest key); IndexError if out of "
             "range."),
});
auto set_methods = method_table<py_set>({
    fast_def("add", set_add,
             "add($self, value)\n--\n\n"
             "Add value. ValueError if it cannot be stored exactly in the dtype (out of range, "
             "NaN), TypeError if it is not a number of the dtype's kind."),
    fast_def("discard", set_erase<false>, "discard($self, value)\n--\n\nRemove value if present."),
    fast_def("remove", set_erase<true>,
             "remove($self, value)\n--\n\nRemove value; KeyError if absent."),
    fast_def("pop", set_pop,
             "pop($self, index=-1)\n--\n\n"
             "Remove and return the key at index (default: the largest); IndexError when the "
             "set is empty or index is out of range."),
});

// ---- methods -------------------------------------------------------------------------------

// Keys from any iterable of Python numbers, as stored keys (errors name the position).
template <class K>
std::vector<K> stored_keys(nb::handle iterable, const char* what) {
  std::vector<K> out;
  nb::object it = nb::steal(PyObject_GetIter(iterable.ptr()));
  if (!it.is_valid()) throw nb::python_error();
  long long pos = 0;
  while (PyObject* item = PyIter_Next(it.ptr())) {
    K k;
    bool ok = to_stored_key<K>(item, k, what, pos++);
    Py_DECREF(item);
    if (!ok) throw nb::python_error();
    out.push_back(k);
  }
  if (PyErr_Occurred()) throw nb::python_error();
  return out;
}

template <class K>
nb::object to_array(const std::vector<K>& v) {
  K* out;
  auto a = new_array<K>(v.size(), &out);
  std::copy(v.begin(), v.end(), out);
  return nb::cast(std::move(a));
}

// Float keys compare as Python floats: -0.0 is stored and looked up as 0.0. Returns keys, or
// a normalized copy in `copy` when it holds a -0.0.
template <class K>
std::span<const K> normalized(std::span<const K> keys, std::vector<K>& copy) {
  if constexpr (std::is_same_v<K, double>) {
    bool neg_zero = false;
    for (double k : keys) neg_zero |= (k == 0.0) & std::signbit(k);
    if (neg_zero) {
      copy.assign(keys.begin(), keys.end());
      for (double& k : copy) k = k == 0.0 ? 0.0 : k;
      return copy;
    }
  }
  return keys;
}

// Checks a float64 array for NaN before it reaches the tree (which would throw deep inside).
template <class K>
void check_no_nan(std::span<const K> keys) {
  if constexpr (std::is_same_v<K, double>) {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (std::isnan(keys[i]))
        throw nb::value_error(
            ("NaN cannot be a key (at position " + std::to_string(i) + ")").c_str());
  }
}

template <class H, class Cls>
void bind_common(Cls& cls, const char* kind) {
  cls.def(nb::init<const std::string&, const std::string&, bool>(), nb::arg("dtype") = "int64",
          nb::arg("pages") = "auto", nb::arg("batch_filter") = true)
      .def_prop_ro(
          "_dtype_name",
          [](H& h) { return h.visit([](auto& t) { return dtype_name<key_of<decltype(t)>>(); }); })
      // The key set's version: Python methods made of several native calls compare it around
      // them, so another thread's change between the calls is never mixed into one result.
      .def_prop_ro("_version", [](const H& h) { return h.version; })
      .def(
          "_rank_range",
          [](H& h, nb::handle lo, nb::handle hi, bool lo_in, bool hi_in) {
            return h.visit([&](auto& t) {
              std::size_t a = 0, b = t.size();
              if (!lo.is_none() && !bisect(t, lo.ptr(), !lo_in, a)) throw nb::python_error();
              if (!hi.is_none() && !bisect(t, hi.ptr(), hi_in, b)) throw nb::python_error();
              return nb::make_tuple(a, std::max(a, b));
            });
          },
          nb::arg("lo").none(), nb::arg("hi").none(), nb::arg("lo_in"), nb::arg("hi_in"),
          "Positions [a, b) of the keys between lo and hi (None: open), per the inclusive "
          "flags.")
      .def(
          "_iter",
          [](nb::handle self, std::size_t a, std::size_t b, bool reverse, int what) {
            return make_iter<H>(self, a, b, reverse, static_cast<yield_kind>(what));
          },
          "Iterator over positions [a, b): 0 keys, 1 values, 2 items.")
      .def("__reversed__",
           [](nb::handle self) {
             H* h = self_of<H>(self.ptr());
             if (h == nullptr) throw nb::python_error();
             std::size_t n = h->visit([](auto& t) { return t.size(); });
             return make_iter<H>(self, 0, n, true, yield_kind::keys);
           })
      .def(
          "_key_at",
          [kind](H& h, Py_ssize_t i) {
            return h.visit([&](auto& t) {
              if (position(i, t.size(), kind) < 0) throw nb::python_error();
              std::size_t n = static_cast<std::size_t>(i < 0 ? i + Py_ssize_t(t.size()) : i);
              return key_obj(t.nth(n).key());
            });
          },
          "Key at position i (negative counts from the end).")
      .def(
          "_contains_array",
          [](H& h, const any_array& a) {
            return h.visit([&](auto& t) {
              using K = key_of<decltype(t)>;
              std::vector<K> copy;
              std::span<const K> keys = normalized(keys_of<K>(a), copy);
              bool* out;
              auto r = new_array<bool>(keys.size(), &out);
              if constexpr (std::is_same_v<K, double>) {
                // NaN is never a key: look up 0.0 in its place, then answer False there.
                std::vector<std::size_t> nans;
                for (std::size_t i = 0; i < keys.size(); ++i)
                  if (std::isnan(keys[i])) nans.push_back(i);
                if (!nans.empty()) {
                  if (copy.empty()) copy.assign(keys.begin(), keys.end());
                  for (std::size_t i : nans) copy[i] = 0.0;
                  t.contains_batch(copy, out);
                  for (std::size_t i : nans) out[i] = false;
                  return r;
                }
              }
              t.contains_batch(keys, out);
              return r;
            });
          },
          "Membership of every key of an array of the container's dtype.")
      .def(
          "_bisect_array",
          [](H& h, const any_array& a, bool right) {
            return h.visit([&](auto& t) {
              using K = key_of<decltype(t)>;
              std::vector<K> copy;
              std::span<const K> keys = normalized(keys_of<K>(a), copy);
              check_no_nan(keys);
              std::int64_t* out;
              std::size_t n = keys.size();
              auto r = new_array<std::int64_t>(n, &out);
              t.rank_batch(keys, reinterpret_cast<std::uint64_t*>(out));
              if (right) {
                std::unique_ptr<bool[]> hit(new bool[n > 0 ? n : 1]);
                t.contains_batch(keys, hit.get());
                for (std::size_t i = 0; i < n; ++i) out[i] += hit[i];
              }
              return r;
            });
          },
          "bisect_left (right=False) or bisect_right of every key of an array of the "
          "container's dtype.")
      .def(
          "_keys_at",
          [](H& h, std::size_t a, std::size_t b) {
            return h.visit([&](auto& t) {
              using K = key_of<decltype(t)>;
              b = std::min(b, t.size());
              std::size_t n = b > a ? b - a : 0;
              K* out;
              auto r = new_array<K>(n, &out);
              auto it = t.nth(a);
              for (std::size_t i = 0; i < n; ++i, ++it) out[i] = it.key();
              return nb::cast(std::move(r));
            });
          },
          "Keys at positions [a, b) as an array.")
      .def(
          "_stored_keys",
          [kind](H& h, nb::handle iterable) {
            return h.visit([&](auto& t) {
              using K = key_of<decltype(t)>;
              return to_array(stored_keys<K>(iterable, kind));
            });
          },
          nb::arg("iterable").none(),  // None: "not iterable", not an overload listing
          "Keys to store from any iterable of numbers, as an array; ValueError or TypeError "
          "with the position of the first that cannot be stored.")
      .def(
          "_lookup_keys",
          [](H& h, nb::handle iterable) {
            return h.visit([&](auto& t) {
              using K = key_of<decltype(t)>;
              std::vector<K> keys;
              std::vector<std::int64_t> where;
              nb::object it = nb::steal(PyObject_GetIter(iterable.ptr()));
              if (!it.is_valid()) throw nb::python_error();
              std::int64_t pos = 0;
              while (PyObject* item = PyIter_Next(it.ptr())) {
                place<K> p = locate<K>(item);
                Py_DECREF(item);
                if (p.where == spot::error) throw nb::python_error();
                if (p.where == spot::exact) {
                  keys.push_back(p.at);
                  where.push_back(pos);
                }
                ++pos;
              }
              if (PyErr_Occurred()) throw nb::python_error();
              return nb::make_tuple(to_array(keys), to_array(where), pos);
            });
          },
          nb::arg("iterable").none(),
          "(keys, positions, count): the items of an iterable that can equal a key.")
      .def_prop_ro(
          "_page_mode",
          [](H& h) {
            return h.mode == page_mode::automatic ? "auto"
                   : h.mode == page_mode::huge    ? "2m"
                                                  : "4k";
          },
          "The page policy asked for at construction: 'auto', '2m' or '4k'.")
      .def_prop_ro(
          "batch_filter", [](H& h) { return h.filter; },
          "Whether large contains_many batches of absent keys may build a membership filter "
          "(constructor argument batch_filter; copies and pickles keep it).")
      .def(
          "filter_bytes", [](H& h) { return h.visit([](auto& t) { return t.filter_bytes(); }); },
          "Bytes of the membership filter now: 0 when there is none (never built, switched off "
          "with batch_filter=False, or dropped after many inserts or erases).")
      .def("_validate", [](H& h) { return h.visit([](auto& t) { return t.validate(); }); })
      .def(
          "memory_usage", [](H& h) { return h.visit([](auto& t) { return t.memory_usage(); }); },
          "Bytes in the tree's live nodes (leaf pages, inner nodes) plus the tree object and "
          "its membership filter, if large contains_many batches of absent keys built one "
          "(1.5 bytes a key); falls as keys are removed. Freed nodes kept for reuse are in "
          "reserved_bytes().")
      .def(
          "reserved_bytes",
          [](H& h) { return h.visit([](auto& t) { return t.reserved_bytes(); }); },
          "Bytes the tree's arena has mapped (whole 2 MiB regions, free-listed nodes included; "
          "a region on 4 KiB pages is resident only where touched). clear() gives them back.")
      .def(
          "huge_bytes", [](H& h) { return h.visit([](auto& t) { return t.huge_bytes(); }); },
          "Bytes of the arena backed by transparent huge pages now (reads smaps: slow).")
      .def_prop_ro(
          "isa", [](H& h) { return std::string(h.visit([](auto& t) { return t.isa(); })); },
          "The ISA level of the search code in use.")
      .def_prop_ro(
          "pages",
          [](H& h) {
            return std::string(page_size_name(h.visit([](auto& t) { return t.pages(); })));
          },
          "The arena's backing now: '2m' (transparent huge pages) or '4k'.");
}

// The type slots both containers share (len, in, [], [] =, iter), then `extra`, then the
// terminating zero entry.
template <class H, class Subscript, class AssSubscript>
std::array<PyType_Slot, 10> container_slots(Subscript subscript, AssSubscript ass_subscript,
                                            std::initializer_list<PyType_Slot> extra = {}) {
  std::array<PyType_Slot, 10> slots{{{Py_sq_length, reinterpret_cast<void*>(slot_len<H>)},
                                     {Py_mp_length, reinterpret_cast<void*>(slot_len<H>)},
                                     {Py_sq_contains, reinterpret_cast<void*>(slot_contains<H>)},
                                     {Py_mp_subscript, reinterpret_cast<void*>(subscript)},
                                     {Py_mp_ass_subscript, reinterpret_cast<void*>(ass_subscript)},
                                     {Py_tp_iter, reinterpret_cast<void*>(slot_iter<H>)}}};
  std::copy(extra.begin(), extra.end(), slots.begin() + 6);  // at most three: the last stays zero
  return slots;
}

void bind_set(nb::module_& m) {
  static auto slots = container_slots<py_set>(set_subscript, set_ass_subscript,
                                              {{Py_tp_methods, set_methods.data()}});
  bind_iter<py_set>(m, "_SetIterator");
  nb::class_<py_set> cls(m, "_Set", nb::type_slots(slots.data()),
                         "Native base of simdex.btree.SortedSet: one B+ tree of int64, uint64 "
                         "or float64 keys.");
  bind_common<py_set>(cls, "SortedSet");
  cls.def(
         "clear",
         [](py_set& h) {
           ++h.version;
           h.reset();
         },
         "Remove every key.")
      .def(
          "_add_array",
          [](py_set& h, const any_array& a) {
            return h.visit([&](auto& t) {
              using K = key_of<decltype(t)>;
              std::vector<K> copy;
              std::span<const K> keys = normalized(keys_of<K>(a), copy);
              check_no_nan(keys);
              bump_if_resized bump(h, t);
              std::size_t added;
              if (t.size() == 0 && keys.size() > 1) {
                if (h.pages_for(keys.size()) != t.pages())
                  t = std::decay_t<decltype(t)>(h.options(h.pages_for(keys.size())));
                t.build(keys);
                added = t.size();
              } else {
                added = t.insert_batch(keys);
              }
              maybe_grow_pages(h, t);
              return added;
            });
          },
          "Insert every key of an array of the container's dtype; returns how many were new.")
      .def(
          "_discard_array",
          [](py_set& h, const any_array& a) {
            return h.visit([&](auto& t) {
              using K = key_of<decltype(t)>;
              std::vector<K> copy;
              std::span<const K> keys = normalized(keys_of<K>(a), copy);
              bump_if_resized bump(h, t);
              if constexpr (std::is_same_v<K, double>) {
                std::vector<K> clean;
                for (K k : keys)
                  if (!std::isnan(k)) clean.push_back(k);
                return t.erase_batch(clean);
              } else {
                return t.erase_batch(keys);
              }
            });
          },
          "Remove every key of an array of the container's dtype; returns how many were "
          "present.");
}

void bind_map(nb::module_& m) {
  static auto slots =
      container_slots<py_map>(map_subscript, map_ass_subscript,
                              {{Py_tp_traverse, reinterpret_cast<void*>(map_traverse)},
                               {Py_tp_clear, reinterpret_cast<void*>(map_clear)},
                               {Py_tp_methods, map_methods.data()}});
  bind_iter<py_map>(m, "_MapIterator");
  nb::class_<py_map> cls(m, "_Map", nb::type_slots(slots.data()),
                         "Native base of simdex.btree.SortedDict: a B+ tree of int64, uint64 "
                         "or float64 keys to Python objects.");
  bind_common<py_map>(cls, "SortedDict");
  cls.def(
         "clear", [](py_map& h) { h.clear_all(); }, "Remove every item.")
      .def(
          "_value_at",
          [](py_map& h, Py_ssize_t i) {
            return h.visit([&](auto& t) {
              if (position(i, t.size(), "SortedDict") < 0) throw nb::python_error();
              auto it = t.nth(static_cast<std::size_t>(i < 0 ? i + Py_ssize_t(t.size()) : i));
              return nb::borrow(h.obj(it.value()));
            });
          },
          "Value at position i.")
      .def(
          "_set_many",
          [](py_map& h, const any_array& keys, nb::handle values) {
            h.visit([&](auto& t) {
              using K = key_of<decltype(t)>;
              std::vector<K> copy;
              std::span<const K> ks = normalized(keys_of<K>(keys), copy);
              check_no_nan(ks);
              nb::list vs = nb::list(values);
              if (vs.size() != ks.size()) throw nb::value_error("keys and values differ in length");
              bump_if_resized bump(h, t);  // values replaced in place leave iterators valid
              if (ks.size() < kBatchAssignMin) {
                for (std::size_t i = 0; i < ks.size(); ++i) map_assign(h, t, ks[i], vs[i]);
                return;
              }
              // Sort once, by key and then input position, so the last of repeated keys is
              // the one kept (pairs compare directly: an index sort compared through ks).
              std::vector<std::pair<K, std::uint32_t>> kp(ks.size());
              for (std::size_t i = 0; i < ks.size(); ++i)
                kp[i] = {ks[i], static_cast<std::uint32_t>(i)};
              std::sort(kp.begin(), kp.end());
              std::vector<K> sk;
              std::vector<std::uint32_t> from;  // input position of each sorted key's value
              for (std::size_t j = 0; j < kp.size(); ++j) {
                if (j + 1 < kp.size() && kp[j + 1].first == kp[j].first) continue;
                sk.push_back(kp[j].first);
                from.push_back(kp[j].second);
              }
              std::vector<std::uint64_t> sv;  // references taken: in the tree or dropped
              sv.reserve(sk.size());
              if (t.size() == 0) {  // into an empty dict: build it
                for (std::uint32_t i : from) sv.push_back(h.put(vs[i]));
                try {
                  std::decay_t<decltype(t)> fresh(h.options(h.pages_for(sk.size())));
                  fresh.build_sorted(sk, sv);
                  t = std::move(fresh);
                } catch (...) {
                  for (std::uint64_t v : sv) h.take(v);
                  throw;
                }
                maybe_grow_pages(h, t);
                return;
              }
              // Present keys get their new value in their slot; the others go in as one batch.
              // Replaced values die after the dict is consistent (their __del__ may look at it).
              std::vector<typename std::decay_t<decltype(t)>::iterator> at(sk.size());
              t.lower_bound_batch(sk, at.data());
              std::vector<nb::object> replaced;
              std::vector<K> nk;
              replaced.reserve(sk.size());  // no push_back below may throw with a reference taken
              nk.reserve(sk.size());
              for (std::size_t j = 0; j < sk.size(); ++j) {
                if (at[j] != t.end() && at[j].key() == sk[j]) {
                  replaced.push_back(h.take(at[j].value()));
                  at[j].value() = h.put(vs[from[j]]);
                } else {
                  nk.push_back(sk[j]);
                  sv.push_back(h.put(vs[from[j]]));
                }
              }
              if (nk.empty()) return;
              try {
                t.insert_batch(nk, sv);
              } catch (...) {
                // Out of memory partway: the keys placed before it keep their values (the
                // tree's now). Every key is checked before any reference drops, since a value's
                // __del__ may change the dict.
                for (std::size_t j = 0; j < nk.size(); ++j)
                  if (t.contains(nk[j])) sv[j] = 0;
                for (std::uint64_t s : sv)
                  if (s != 0) h.take(s);
                throw;
              }
              maybe_grow_pages(h, t);
            });
          },
          "Assign values[i] to keys[i] (an array of the dtype) for every i; the last of repeated "
          "keys wins.");
}

}  // namespace

void bind_btree(nb::module_& m) {
  auto b = m.def_submodule("btree", "SIMD B+ tree: ordered sets and maps of fixed-width keys");
  bind_set(b);
  bind_map(b);
}

}  // namespace simdex::py
