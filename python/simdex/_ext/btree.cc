// Python binding of simdex::btree_set / btree_map: thin native classes (one per key dtype)
// that python/simdex/btree.py subclasses into SortedSet / SortedDict. Scalar calls do no
// allocation; batch calls take and return numpy arrays. Iterators check a modification
// counter, so changing a container while iterating raises instead of reading freed pages.
#include "simdex/btree.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "bind.h"

namespace simdex::py {
namespace {

// What an iterator yields; maps offer all three.
enum class yield_kind { keys, values, items };

btree_options options(const std::string& pages) {
  if (pages == "2m" || pages == "huge") return {.pages = page_size::huge};
  if (pages == "4k" || pages == "small") return {.pages = page_size::small};
  throw nb::value_error("pages must be '2m' or '4k'");
}

// The common part of sets and maps: Tree is btree_set<K> or btree_map<K, uint64_t>.
template <class K, class Tree>
struct container {
  using iterator = typename Tree::iterator;
  explicit container(const std::string& pages) : t(options(pages)) {}
  Tree t;
  std::uint64_t version = 0;  // bumped by every modification; iterators compare it
  // The tree, for a modification: live iterators will see the new version and stop.
  Tree& edit() {
    ++version;
    return t;
  }
};

// Iteration over [cur, stop) forwards, or backwards from stop down to cur.
template <class C>
struct py_iter {
  nb::object owner_ref;
  C* owner;
  typename C::iterator cur, stop;
  std::uint64_t version;
  bool reverse;
  yield_kind what;
};

template <class C>
py_iter<C> make_iter(nb::handle self, typename C::iterator a, typename C::iterator b, bool reverse,
                     yield_kind what) {
  C* c = nb::inst_ptr<C>(self);
  return py_iter<C>{nb::borrow(self), c, a, b, c->version, reverse, what};
}

template <class K>
struct py_set : container<K, btree_set<K>> {
  using container<K, btree_set<K>>::container;
};

// Values are Python objects kept in a slot table; the tree maps key -> slot index.
template <class K>
struct py_map : container<K, btree_map<K, std::uint64_t>> {
  using container<K, btree_map<K, std::uint64_t>>::container;
  std::vector<nb::object> slots;
  std::vector<std::uint64_t> free_slots;
  std::uint64_t put(nb::object v) {
    if (!free_slots.empty()) {
      std::uint64_t s = free_slots.back();
      free_slots.pop_back();
      slots[s] = std::move(v);
      return s;
    }
    slots.push_back(std::move(v));
    return slots.size() - 1;
  }
  void drop(std::uint64_t s) {
    slots[s] = nb::object();
    free_slots.push_back(s);
  }
};

template <class C>
nb::object iter_value(C& c, const typename C::iterator& it, yield_kind what) {
  if constexpr (requires { c.slots; }) {
    if (what == yield_kind::values) return c.slots[it.value()];
    if (what == yield_kind::items) return nb::make_tuple(it.key(), c.slots[it.value()]);
  }
  (void)what;
  return nb::cast(it.key());
}

template <class C>
void bind_iter(nb::module_& m, const char* name) {
  using I = py_iter<C>;
  nb::class_<I>(m, name)
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", [](I& s) -> nb::object {
        if (s.owner->version != s.version)
          throw std::runtime_error("container changed during iteration");
        if (s.cur == s.stop) throw nb::stop_iteration();
        if (s.reverse) {
          --s.stop;
          return iter_value(*s.owner, s.stop, s.what);
        }
        nb::object r = iter_value(*s.owner, s.cur, s.what);
        ++s.cur;
        return r;
      });
}

// Methods shared by sets and maps: lookups, order queries, batches, introspection.
template <class K, class C, class Cls>
void bind_common(Cls& cls) {
  using It = typename C::iterator;
  cls.def("__len__", [](const C& c) { return c.t.size(); })
      .def("__contains__", [](const C& c, K k) { return c.t.contains(k); })
      .def(
          "bisect_left", [](const C& c, K k) { return c.t.rank(k); }, nb::arg("value"))
      .def(
          "bisect_right", [](const C& c, K k) { return c.t.rank(k) + (c.t.contains(k) ? 1 : 0); },
          nb::arg("value"))
      .def("_key_at",
           [](const C& c, std::int64_t i) {
             std::int64_t n = static_cast<std::int64_t>(c.t.size());
             if (i < 0) i += n;
             if (i < 0 || i >= n) throw nb::index_error("index out of range");
             return c.t.nth(static_cast<std::size_t>(i)).key();
           })
      .def("__iter__",
           [](nb::handle self) {
             C& c = *nb::inst_ptr<C>(self);
             return make_iter<C>(self, c.t.begin(), c.t.end(), false, yield_kind::keys);
           })
      .def("__reversed__",
           [](nb::handle self) {
             C& c = *nb::inst_ptr<C>(self);
             return make_iter<C>(self, c.t.begin(), c.t.end(), true, yield_kind::keys);
           })
      // Keys in [lo, hi] with inclusive flags; None bounds are open.
      .def("_irange",
           [](nb::handle self, std::optional<K> lo, std::optional<K> hi, bool lo_in, bool hi_in,
              bool reverse, yield_kind what) {
             C& c = *nb::inst_ptr<C>(self);
             It a = !lo ? c.t.begin() : lo_in ? c.t.lower_bound(*lo) : c.t.upper_bound(*lo);
             It b = !hi ? c.t.end() : hi_in ? c.t.upper_bound(*hi) : c.t.lower_bound(*hi);
             // An empty or inverted range: compare the two ends by rank.
             std::size_t ra = !lo ? 0 : c.t.rank(*lo) + (!lo_in && c.t.contains(*lo) ? 1 : 0);
             std::size_t rb =
                 !hi ? c.t.size() : c.t.rank(*hi) + (hi_in && c.t.contains(*hi) ? 1 : 0);
             if (rb <= ra) b = a;
             return make_iter<C>(self, a, b, reverse, what);
           })
      .def(
          "contains_many",
          [](const C& c, array_in<K> keys) {
            bool* out;
            auto r = new_array<bool>(keys.shape(0), &out);
            c.t.contains_batch({keys.data(), keys.shape(0)}, out);
            return r;
          },
          nb::arg("keys"))
      .def("_bisect_many",
           [](const C& c, array_in<K> keys, bool right) {
             std::int64_t* out;
             std::size_t n = keys.shape(0);
             auto r = new_array<std::int64_t>(n, &out);
             static_assert(sizeof(std::int64_t) == sizeof(std::uint64_t));
             c.t.rank_batch({keys.data(), n}, reinterpret_cast<std::uint64_t*>(out));
             if (right) {
               std::unique_ptr<bool[]> hit(new bool[n]);
               c.t.contains_batch({keys.data(), n}, hit.get());
               for (std::size_t i = 0; i < n; ++i) out[i] += hit[i];
             }
             return r;
           })
      // Keys k with lo <= k < hi (None: unbounded) as an array.
      .def("_range",
           [](const C& c, std::optional<K> lo, std::optional<K> hi) {
             It a = lo ? c.t.lower_bound(*lo) : c.t.begin();
             std::size_t ra = lo ? c.t.rank(*lo) : 0;
             std::size_t rb = hi ? c.t.rank(*hi) : c.t.size();
             std::size_t n = rb > ra ? rb - ra : 0;
             K* out;
             auto r = new_array<K>(n, &out);
             for (std::size_t i = 0; i < n; ++i, ++a) out[i] = a.key();
             return r;
           })
      .def("memory_usage", [](const C& c) { return c.t.memory_usage(); })
      .def("huge_bytes", [](const C& c) { return c.t.huge_bytes(); })
      .def_prop_ro("isa", [](const C& c) { return std::string(c.t.isa()); })
      .def_prop_ro("pages", [](const C& c) { return std::string(page_size_name(c.t.pages())); })
      .def("_validate", [](const C& c) { return c.t.validate(); });
}

// The class `name` (and its iterator class) with the constructor and the shared methods.
template <class K, class C>
nb::class_<C> bind_container(nb::module_& m, const char* name) {
  bind_iter<C>(m, (std::string(name) + "Iterator").c_str());
  nb::class_<C> cls(m, name);
  cls.def(nb::init<const std::string&>(), nb::arg("pages") = "2m");
  bind_common<K, C>(cls);
  return cls;
}

template <class K>
void bind_set(nb::module_& m, const char* name) {
  using C = py_set<K>;
  bind_container<K, C>(m, name)
      .def(
          "add", [](C& c, K k) { c.edit().insert(k); }, nb::arg("value"))
      .def(
          "discard", [](C& c, K k) { c.edit().erase(k); }, nb::arg("value"))
      .def("_remove", [](C& c, K k) { return c.edit().erase(k); })
      .def("clear", [](C& c) { c.edit().clear(); })
      .def(
          "add_many",
          [](C& c, array_in<K> keys) {
            return c.edit().insert_batch({keys.data(), keys.shape(0)});
          },
          nb::arg("keys"))
      .def(
          "discard_many",
          [](C& c, array_in<K> keys) {
            return c.edit().erase_batch({keys.data(), keys.shape(0)});
          },
          nb::arg("keys"))
      .def("_build", [](C& c, array_in<K> keys, bool sorted) {
        ++c.version;
        if (sorted)
          c.t.build_sorted({keys.data(), keys.shape(0)});
        else
          c.t.build({keys.data(), keys.shape(0)});
      });
}

template <class K>
void bind_map(nb::module_& m, const char* name) {
  using C = py_map<K>;
  bind_container<K, C>(m, name)
      .def("__setitem__",
           [](C& c, K k, nb::object v) {
             auto it = c.t.find(k);
             if (it != c.t.end()) {
               c.slots[it.value()] = std::move(v);  // same keys: iterators stay valid
               return;
             }
             c.edit().insert(k, c.put(std::move(v)));
           })
      .def("__getitem__",
           [](C& c, K k) -> nb::object {
             auto it = c.t.find(k);
             if (it == c.t.end()) throw nb::key_error(nb::str(nb::cast(k)).c_str());
             return c.slots[it.value()];
           })
      .def(
          "get",
          [](C& c, K k, nb::object dflt) -> nb::object {
            auto it = c.t.find(k);
            return it == c.t.end() ? dflt : c.slots[it.value()];
          },
          nb::arg("key"), nb::arg("default") = nb::none())
      .def("_pop",
           [](C& c, K k) -> nb::object {
             auto it = c.t.find(k);
             if (it == c.t.end()) throw nb::key_error(nb::str(nb::cast(k)).c_str());
             std::uint64_t s = it.value();
             nb::object v = c.slots[s];
             c.edit().erase(k);
             c.drop(s);
             return v;
           })
      .def("clear",
           [](C& c) {
             c.edit().clear();
             c.slots.clear();
             c.free_slots.clear();
           })
      .def("_value_at", [](C& c, std::int64_t i) -> nb::object {
        std::int64_t n = static_cast<std::int64_t>(c.t.size());
        if (i < 0) i += n;
        if (i < 0 || i >= n) throw nb::index_error("index out of range");
        return c.slots[c.t.nth(static_cast<std::size_t>(i)).value()];
      });
}

}  // namespace

void bind_btree(nb::module_& m) {
  auto b = m.def_submodule("btree", "SIMD B+ tree: ordered sets and maps of fixed-width keys");
  nb::enum_<yield_kind>(b, "Yield")
      .value("keys", yield_kind::keys)
      .value("values", yield_kind::values)
      .value("items", yield_kind::items);
  bind_set<std::int64_t>(b, "SetInt64");
  bind_set<std::uint64_t>(b, "SetUInt64");
  bind_set<double>(b, "SetFloat64");
  bind_map<std::int64_t>(b, "MapInt64");
  bind_map<std::uint64_t>(b, "MapUInt64");
  bind_map<double>(b, "MapFloat64");
}

}  // namespace simdex::py
