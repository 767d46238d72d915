// Bindings for simdex::kv: Database, Snapshot, WriteTx and Cursor of the native store, and its
// errors as Python exceptions that carry their kind. Values come back as bytes copies (the
// zero-copy views are C++'s). The Pythonic layer (context managers, iteration, docstrings)
// lives in simdex/kv.py.
#include "simdex/kv.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <optional>
#include <unordered_map>

#include "bind.h"

namespace simdex::py {

namespace {

using namespace simdex::kv;

constexpr std::size_t kReleaseGilKeys = 256;  // below this the GIL round trip costs more

nb::bytes as_bytes(std::string_view s) { return nb::bytes(s.data(), s.size()); }
std::string_view sv(const nb::bytes& b) { return {b.c_str(), b.size()}; }
std::optional<std::string_view> opt_sv(const std::optional<nb::bytes>& b) {
  if (!b) return std::nullopt;
  return sv(*b);
}

nb::object opt_bytes(const std::optional<std::string_view>& v) {
  if (!v) return nb::none();
  return as_bytes(*v);
}

// Exception types: Error (every kv error), and subclasses that are also ValueError (bad
// arguments) or OSError (a failed system call), so callers can catch either family. Each raised
// error has .kind (error_kind's name) and .detail. Created once; the module keeps them.
PyObject* g_error = nullptr;
PyObject* g_value_error = nullptr;
PyObject* g_os_error = nullptr;

PyObject* error_type(error_kind k) {
  switch (k) {
    case error_kind::key_too_long:
    case error_kind::value_too_long:
    case error_kind::invalid_argument:
      return g_value_error;
    case error_kind::io:
      return g_os_error;
    default:
      return g_error;
  }
}

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const error& e) {
    PyObject* type = error_type(e.kind());
    // A message may hold a path that is not UTF-8: its bytes are shown escaped (\xff).
    auto text = [](const std::string& s) {
      return nb::steal(
          PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "backslashreplace"));
    };
    nb::object exc = nb::steal(PyObject_CallFunctionObjArgs(type, text(e.what()).ptr(), nullptr));
    if (!exc.is_valid()) return;  // the call set its own error
    exc.attr("kind") = error_kind_name(e.kind());
    exc.attr("detail") = text(e.detail());
    if (e.sys_errno() != 0) {  // as OSError's own: .errno, .strerror, .filename
      exc.attr("errno") = e.sys_errno();
      exc.attr("strerror") = std::strerror(e.sys_errno());
      if (!e.path().empty())
        exc.attr("filename") = nb::steal(PyUnicode_DecodeFSDefault(e.path().c_str()));
    }
    PyErr_SetObject(type, exc.ptr());
  }
}

void make_error_types(nb::module_& m) {
  g_error = PyErr_NewExceptionWithDoc("simdex._simdex.kv.Error",
                                      "A kv error; .kind names it (see ERROR_KINDS), .detail says "
                                      "what and where.",
                                      PyExc_Exception, nullptr);
  nb::object value_bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_ValueError));
  g_value_error =
      PyErr_NewExceptionWithDoc("simdex._simdex.kv.ValueError",
                                "A kv error about an argument: key or value too long, or a "
                                "call that does not fit.",
                                value_bases.ptr(), nullptr);
  nb::object os_bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_OSError));
  // OSError's own str() would print "[Errno n] ..." once .errno is set; keep the kv message.
  nb::dict os_dict;
  os_dict["__str__"] = nb::module_::import_("builtins").attr("BaseException").attr("__str__");
  g_os_error = PyErr_NewExceptionWithDoc(
      "simdex._simdex.kv.OSError",
      "A kv error from a failed system call; .errno, .strerror and .filename as OSError's.",
      os_bases.ptr(), os_dict.ptr());
  m.attr("Error") = nb::handle(g_error);
  m.attr("ValueError") = nb::handle(g_value_error);
  m.attr("OSError") = nb::handle(g_os_error);
  nb::dict kinds;
#define SIMDEX_KV_ERROR_DOC(name, what) kinds[#name] = what;
  SIMDEX_KV_ERRORS(SIMDEX_KV_ERROR_DOC)
#undef SIMDEX_KV_ERROR_DOC
  m.attr("ERROR_KINDS") = kinds;
  nb::register_exception_translator(translate);
}

// A tree name from Python: its UTF-8 bytes, where the bytes trees() escaped (surrogateescape)
// go back as they were, so every listed tree can be opened.
std::string tree_name(nb::str name) {
  nb::object b = nb::steal(PyUnicode_AsEncodedString(name.ptr(), "utf-8", "surrogateescape"));
  if (!b.is_valid()) throw nb::python_error();
  return std::string(PyBytes_AsString(b.ptr()), static_cast<std::size_t>(PyBytes_Size(b.ptr())));
}

// One object used from several threads. A call that releases the GIL (a long read, stat,
// validate, commit, compact, write()'s wait) leaves the object to other threads, and a call that
// ends or changes it meanwhile (close, release, abort, a write) crashed or tore the result. Such
// calls are registered here: on a database or snapshot any number of them side by side (they
// only read it), on a transaction or during compact() one alone. A call that conflicts with a
// registered one is refused with KvError busy instead of racing it. The table is read and
// written only with the GIL held, which orders it.
std::unordered_map<const void*, int> g_calls;  // object -> calls in flight (-1: one alone)

[[noreturn]] void refuse_busy() {
  throw error(error_kind::busy,
              "another thread is in a call on this object (a commit, compact, validate, stat, "
              "a long read, or write() waiting its turn); calls on one object from several "
              "threads must not overlap that one");
}

// Before a call that keeps the GIL: refused while a call runs on the object alone (`ending`,
// a call that ends the object: while any call runs on it).
void check_idle(const void* o, bool ending = false) {
  if (g_calls.empty()) return;  // the usual case: a get() pays no hash lookup
  auto it = g_calls.find(o);
  if (it != g_calls.end() && (ending || it->second < 0)) refuse_busy();
}

// Registers a call on `o`, then releases the GIL; at the end takes the GIL back and unregisters.
// `on` false: the call is short and keeps the GIL (only checked).
class released_call {
 public:
  released_call(const void* o, bool alone, bool on = true) : o_(on ? o : nullptr) {
    if (!on) {
      check_idle(o);
      return;
    }
    auto [it, fresh] = g_calls.try_emplace(o, 0);
    if (!fresh && (alone || it->second < 0)) refuse_busy();
    it->second = alone ? -1 : it->second + 1;
    rel_.emplace();
  }
  ~released_call() {
    if (!o_) return;
    rel_.reset();
    auto it = g_calls.find(o_);
    if (it->second <= 1)
      g_calls.erase(it);
    else
      --it->second;
  }
  released_call(const released_call&) = delete;
  released_call& operator=(const released_call&) = delete;

 private:
  const void* o_;
  std::optional<nb::gil_scoped_release> rel_;
};

// A cursor and the snapshot or transaction it reads (kept alive by the binding), checked
// before every move: the owner's registered calls conflict with the cursor's reads.
struct py_cursor {
  cursor c;
  const void* owner;
  cursor& at() {
    check_idle(owner);
    return c;
  }
  const cursor& at() const {
    check_idle(owner);
    return c;
  }
};

// Snapshots are read side by side; a transaction's calls may change it, so each runs alone.
template <class T>
constexpr bool kAlone = std::is_same_v<T, write_tx>;

nb::dict stats_dict(const stats& s) {
  nb::dict d;
  d["keys"] = s.keys;
  d["depth"] = s.depth;
  d["inner_nodes"] = s.inner_nodes;
  d["leaf_nodes"] = s.leaf_nodes;
  d["value_nodes"] = s.value_nodes;
  d["node_bytes"] = s.node_bytes;
  d["file_bytes"] = s.file_bytes;
  d["free_bytes"] = s.free_bytes;
  d["seq"] = s.seq;
  return d;
}

template <class T>
nb::list get_many(const T& v, const std::vector<nb::bytes>& keys) {
  std::vector<std::string_view> ks;
  ks.reserve(keys.size());
  for (const auto& k : keys) ks.push_back(sv(k));
  std::vector<std::optional<std::string_view>> out(ks.size());
  {
    released_call call(&v, kAlone<T>, ks.size() >= kReleaseGilKeys);
    v.get_many(ks, out);
  }
  nb::list r;
  for (const auto& o : out) r.append(opt_bytes(o));
  return r;
}

// The read methods shared by Snapshot and WriteTx.
template <class C>
void bind_reads(C& cls) {
  using T = typename C::Type;
  cls.def(
         "get",
         [](const T& v, nb::bytes k) {
           check_idle(&v);
           return opt_bytes(v.get(sv(k)));
         },
         nb::arg("key"))
      .def(
          "contains",
          [](const T& v, nb::bytes k) {
            check_idle(&v);
            return v.contains(sv(k));
          },
          nb::arg("key"))
      .def(
          "get_many",
          [](const T& v, const std::vector<nb::bytes>& keys) { return get_many(v, keys); },
          nb::arg("keys"))
      .def(
          "count",
          [](const T& v, nb::bytes lo, std::optional<nb::bytes> hi) {
            check_idle(&v);
            return v.count(sv(lo), opt_sv(hi));
          },
          nb::arg("lo") = nb::bytes("", 0), nb::arg("hi") = nb::none())
      .def("size",
           [](const T& v) {
             check_idle(&v);
             return v.size();
           })
      .def("stat",
           [](const T& v) {
             stats s;
             {
               released_call call(&v, kAlone<T>);  // walks the whole tree
               s = v.stat();
             }
             return stats_dict(s);
           })
      .def("validate",
           [](const T& v) {
             released_call call(&v, kAlone<T>);
             v.validate();
           })
      .def(
          "cursor",
          [](const T& v) {
            check_idle(&v);
            return py_cursor{v.make_cursor(), &v};
          },
          nb::keep_alive<0, 1>());
}

void bind_cursor(nb::module_& b) {
  // Each call first checks its owner: a commit or validate running without the GIL may be
  // changing or walking the nodes the cursor reads, and the cursor's own staleness test could
  // pass just before such a call began.
  nb::class_<py_cursor>(b, "Cursor")
      .def("valid", [](const py_cursor& c) { return c.at().valid(); })
      .def(
          "first",
          [](py_cursor& c, std::optional<nb::bytes> p) {
            return p ? c.at().first(sv(*p)) : c.at().first();
          },
          nb::arg("prefix") = nb::none())
      .def(
          "last",
          [](py_cursor& c, std::optional<nb::bytes> p) {
            return p ? c.at().last(sv(*p)) : c.at().last();
          },
          nb::arg("prefix") = nb::none())
      .def(
          "seek", [](py_cursor& c, nb::bytes k) { return c.at().seek(sv(k)); }, nb::arg("key"))
      .def(
          "lower_bound", [](py_cursor& c, nb::bytes k) { return c.at().lower_bound(sv(k)); },
          nb::arg("key"))
      .def(
          "upper_bound", [](py_cursor& c, nb::bytes k) { return c.at().upper_bound(sv(k)); },
          nb::arg("key"))
      .def("next", [](py_cursor& c) { return c.at().next(); })
      .def("prev", [](py_cursor& c) { return c.at().prev(); })
      .def("key", [](const py_cursor& c) { return as_bytes(c.at().key()); })
      .def("value", [](const py_cursor& c) { return as_bytes(c.at().value()); })
      .def(
          "take",
          [](py_cursor& pc, std::size_t n, bool forward, std::optional<nb::bytes> stop) {
            // Up to n (key, value) pairs from here on, stopping at `stop` (exclusive bound in
            // the walking direction): one call per chunk instead of three per item.
            cursor& c = pc.at();
            nb::list out;
            for (std::size_t i = 0; i < n && c.valid(); ++i) {
              const std::string_view k = c.key();
              if (stop && (forward ? k >= sv(*stop) : k < sv(*stop))) break;
              out.append(nb::make_tuple(as_bytes(k), as_bytes(c.value())));
              forward ? c.next() : c.prev();
            }
            return out;
          },
          nb::arg("n"), nb::arg("forward") = true, nb::arg("stop") = nb::none());
}

void bind_write_tx(nb::module_& b) {
  auto tx = nb::class_<write_tx>(b, "WriteTx");
  bind_reads(tx);
  tx.def(
        "put",
        [](write_tx& t, nb::bytes k, nb::bytes v) {
          check_idle(&t);
          t.put(sv(k), sv(v));
        },
        nb::arg("key"), nb::arg("value"))
      .def("upsert",
           [](write_tx& t, nb::bytes k, nb::bytes v) {
             check_idle(&t);
             return t.upsert(sv(k), sv(v));
           })
      .def("insert",
           [](write_tx& t, nb::bytes k, nb::bytes v) {
             check_idle(&t);
             return t.insert(sv(k), sv(v));
           })
      .def("update",
           [](write_tx& t, nb::bytes k, nb::bytes v) {
             check_idle(&t);
             return t.update(sv(k), sv(v));
           })
      .def("remove",
           [](write_tx& t, nb::bytes k) {
             check_idle(&t);
             return t.remove(sv(k));
           })
      .def(
          "remove_range",
          [](write_tx& t, nb::bytes lo, std::optional<nb::bytes> hi) {
            const std::optional<std::string_view> h = opt_sv(hi);
            released_call call(&t, true);
            return t.remove_range(sv(lo), h);
          },
          nb::arg("lo"), nb::arg("hi") = nb::none())
      .def(
          "bulk_load",
          [](write_tx& t, const std::vector<std::pair<nb::bytes, nb::bytes>>& pairs) {
            std::vector<std::pair<std::string_view, std::string_view>> in;
            in.reserve(pairs.size());
            for (const auto& [k, v] : pairs) in.emplace_back(sv(k), sv(v));
            released_call call(&t, true, in.size() >= kReleaseGilKeys);
            t.bulk_load(in);
          },
          nb::arg("pairs"))
      .def(
          "sub",
          [](write_tx& t) {
            check_idle(&t);
            return t.sub();
          },
          nb::keep_alive<0, 1>())
      .def("commit",
           [](write_tx& t) {
             released_call call(&t, true);
             t.commit();
           })
      .def("abort",
           [](write_tx& t) {
             check_idle(&t);
             t.abort();
           })
      .def("active", &write_tx::active);
}

}  // namespace

void bind_kv(nb::module_& m) {
  auto b = m.def_submodule("kv", "Copy-on-write radix-trie key-value store (native core)");
  make_error_types(b);
  bind_cursor(b);

  auto snap = nb::class_<snapshot>(b, "Snapshot");
  bind_reads(snap);
  snap.def("seq", &snapshot::seq).def("release", [](snapshot& s) {
    check_idle(&s, true);
    s.release();
  });

  bind_write_tx(b);

  nb::class_<database>(b, "Database")
      .def_static(
          "open",
          [](nb::handle path_arg, const std::string& sync, bool read_only) {
            const std::optional<std::string> path =
                path_arg.is_none() ? std::nullopt : std::optional<std::string>(fs_path(path_arg));
            options o;
            if (sync == "none")
              o.sync = sync_mode::none;
            else if (sync == "fsync")
              o.sync = sync_mode::fsync;
            else
              throw error(error_kind::invalid_argument,
                          "sync must be 'none' or 'fsync', got '" + sync + "'");
            o.read_only = read_only;
            if (!path) return database::memory(o);
            nb::gil_scoped_release rel;
            return database::open(*path, o);
          },
          nb::arg("path") = nb::none(), nb::arg("sync") = "none", nb::arg("read_only") = false)
      .def(
          "read",
          [](const database& d, nb::str tree) {
            check_idle(&d);
            return d.read(tree_name(tree));
          },
          nb::arg("tree") = "")
      .def(
          "write",
          [](database& d, nb::str tree) {
            const std::string name = tree_name(tree);
            released_call call(&d, false);  // may wait for another transaction to end
            return d.write(name);
          },
          nb::arg("tree") = "")
      .def("trees",
           [](const database& d) {
             check_idle(&d);
             // Names are bytes to the store (a C++ program may write any); ones that are not
             // UTF-8 come back with their bytes escaped (surrogateescape), never an exception.
             nb::list out;
             for (const std::string& n : d.trees())
               out.append(nb::steal(PyUnicode_DecodeUTF8(
                   n.data(), static_cast<Py_ssize_t>(n.size()), "surrogateescape")));
             return out;
           })
      .def("compact",
           [](database& d) {
             released_call call(&d, true);
             d.compact();
           })
      .def(
          "stat",
          [](const database& d, nb::str tree) {
            const std::string name = tree_name(tree);
            stats s;
            {
              released_call call(&d, false);
              s = d.stat(name);
            }
            return stats_dict(s);
          },
          nb::arg("tree") = "")
      .def("validate",
           [](const database& d) {
             released_call call(&d, false);
             d.validate();
           })
      .def("recovery",
           [](const database& d) {
             check_idle(&d);
             const recovery_info& r = d.recovery();
             nb::dict out;
             out["meta_fallback"] = r.meta_fallback;
             out["seq"] = r.seq;
             out["damaged_page"] = r.damaged_page < 0 ? nb::none() : nb::cast(r.damaged_page);
             out["lost_seq"] = r.lost_seq ? nb::cast(r.lost_seq) : nb::none();
             out["detail"] = r.detail;
             return out;
           })
      .def("path",
           [](const database& d) {
             check_idle(&d);
             return d.path();
           })
      .def("is_open", &database::is_open)
      .def("close", [](database& d) {
        check_idle(&d, true);
        d.close();
      });

  b.attr("MAX_KEY") = kMaxKey;
  b.attr("MAX_VALUE") = kMaxValue;
}

}  // namespace simdex::py
