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

#include <cerrno>
#include <cstring>
#include <deque>
#include <initializer_list>
#include <optional>
#include <unordered_map>

#include "bind.h"

namespace simdex::py {

namespace {

using namespace simdex::kv;

constexpr std::size_t kReleaseGilKeys = 256;  // below this the GIL round trip costs more

nb::bytes as_bytes(std::string_view s) { return nb::bytes(s.data(), s.size()); }
std::string_view sv(const nb::bytes& b) { return {b.c_str(), b.size()}; }

// ---- bytes-like arguments ---------------------------------------------------------------------
// Every key, value and bound is taken as a plain handle and read here, so a wrong type is a
// TypeError that names the argument (nanobind's own refusal lists every overload's signature).
// Accepted: bytes, and any object exporting a C-contiguous buffer (bytearray, memoryview, array,
// numpy arrays, mmap). A key's buffer must hold single bytes (format 'B', 'b' or 'c'): its bytes
// decide its order, and a buffer of wider items (memoryview.cast('I'), array('q'), an int64
// array) would sort by their native byte order, which for little-endian integers is not their
// numeric order. A value is opaque, so any buffer's raw bytes go (as file.write takes them).

enum class role { key, value };

// How an argument is named in messages: "key", "hi", "keys[3]", "pairs[5][0]" (a Python
// expression the caller can evaluate), built only when a message needs it.
struct arg_name {
  const char* base;
  long i = -1, j = -1;
  std::string str() const {
    std::string s = base;
    if (i >= 0) s += "[" + std::to_string(i) + "]";
    if (j >= 0) s += "[" + std::to_string(j) + "]";
    return s;
  }
};

std::string py_type_name(nb::handle o) {
  return nb::cast<std::string>(
      nb::handle(reinterpret_cast<PyObject*>(o.type().ptr())).attr("__name__"));
}

[[noreturn]] void bad_bytes(nb::handle o, const arg_name& name, role r, const char* why = nullptr) {
  const char* what = r == role::key ? "key" : "value";
  const std::string n = name.str();
  // "key", "value": the message is about them already; other names ("hi", "keys[3]") lead it.
  const std::string lead = n == what ? "" : n + ": ";
  std::string msg;
  if (PyUnicode_Check(o.ptr()))
    msg = lead + "kv " + what + "s are bytes, not str: encode it (" + n + ".encode())";
  else if (why)
    msg = lead + why;
  else
    msg = lead + "kv " + what + "s are bytes-like (bytes, bytearray, memoryview), not " +
          py_type_name(o);
  throw nb::type_error(msg.c_str());
}

bool byte_format(const char* f) {  // a buffer of single bytes: 'B', 'b', 'c', maybe '@=<>!' first
  if (!f) return true;             // no format: unsigned bytes
  if (*f && std::strchr("@=<>!", *f)) ++f;
  return (f[0] == 'B' || f[0] == 'b' || f[0] == 'c') && f[1] == '\0';
}

// A bytes-like argument, read in place for the call: bytes as they are (immutable, and alive
// while the call's arguments are), another object's buffer exported and held until the end of
// the call. For calls that keep the GIL (nothing else can change the buffer meanwhile).
class bytes_arg {
 public:
  bytes_arg(nb::handle o, const arg_name& name, role r = role::key) {
    if (PyBytes_Check(o.ptr())) {
      char* p = nullptr;
      Py_ssize_t n = 0;
      PyBytes_AsStringAndSize(o.ptr(), &p, &n);
      sv_ = {p, static_cast<std::size_t>(n)};
      return;
    }
    if (PyUnicode_Check(o.ptr()) || !PyObject_CheckBuffer(o.ptr())) bad_bytes(o, name, r);
    if (PyObject_GetBuffer(o.ptr(), &buf_, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
      // BufferError: not contiguous; another error is the object's own, and goes as it is.
      if (!PyErr_ExceptionMatches(PyExc_BufferError)) throw nb::python_error();
      PyErr_Clear();
      bad_bytes(o, name, r,
                ("a buffer that is not C-contiguous cannot be read as kv bytes: pass bytes(" +
                 name.str() + ")")
                    .c_str());
    }
    held_ = true;
    if (r == role::key && (buf_.itemsize != 1 || !byte_format(buf_.format))) {
      const std::string f = buf_.format ? buf_.format : "B";
      const auto size = buf_.itemsize;
      release();
      bad_bytes(o, name, r,
                ("a key is bytes, and this buffer holds items of format '" + f + "' (" +
                 std::to_string(size) +
                 " bytes each), whose bytes would sort in their machine order: pass the "
                 "bytes meant (int.to_bytes(n, 'big') sorts integers), or memoryview(" +
                 name.str() + ").cast('B') for these raw bytes")
                    .c_str());
    }
    sv_ = {static_cast<const char*>(buf_.buf), static_cast<std::size_t>(buf_.len)};
  }
  ~bytes_arg() { release(); }
  bytes_arg(const bytes_arg&) = delete;
  bytes_arg& operator=(const bytes_arg&) = delete;
  std::string_view sv() const { return sv_; }

 private:
  void release() {
    if (held_) PyBuffer_Release(&buf_);
    held_ = false;
  }
  std::string_view sv_;
  Py_buffer buf_{};
  bool held_ = false;
};

// An optional bound: None is no bound.
std::optional<std::string> opt_copy(nb::handle o, const char* name) {
  if (o.is_none()) return std::nullopt;
  return std::string(bytes_arg(o, {name}).sv());
}

// Many bytes-like arguments for a call that releases the GIL: bytes objects are kept alive by
// a reference here (another thread may drop the list's own meanwhile), anything else is copied
// (another thread could change a bytearray under the call: an unsorted bulk load after its
// check, say).
struct held_args {
  std::vector<nb::object> refs;
  std::deque<std::string> copies;  // stable addresses
  std::string_view add(nb::handle o, const arg_name& name, role r) {
    if (PyBytes_Check(o.ptr())) {
      refs.push_back(nb::borrow(o));
      return bytes_arg(o, name, r).sv();
    }
    copies.emplace_back(bytes_arg(o, name, r).sv());
    return copies.back();
  }
};

// A tree name: str (None: the default tree "").
std::string tree_arg(nb::handle o);

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
PyObject* g_lookup_error = nullptr;
// io errors of these errnos are also the builtin OSError subclass Python gives that errno, so
// `except FileNotFoundError` catches a missing file as it does for open().
struct errno_error {
  int err;
  PyObject* type;
};
std::vector<errno_error> g_errno_errors;

PyObject* error_type(error_kind k) {
  switch (k) {
    case error_kind::not_found:
      return g_lookup_error;
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
    if (type == g_os_error)
      for (const errno_error& x : g_errno_errors)
        if (x.err == e.sys_errno()) type = x.type;
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
  struct builtin {
    PyObject* base;
    const char* name;
    std::initializer_list<int> errs;
  };
  for (const builtin& b : {builtin{PyExc_FileNotFoundError, "FileNotFoundError", {ENOENT}},
                           builtin{PyExc_PermissionError, "PermissionError", {EACCES, EPERM}},
                           builtin{PyExc_FileExistsError, "FileExistsError", {EEXIST}},
                           builtin{PyExc_IsADirectoryError, "IsADirectoryError", {EISDIR}},
                           builtin{PyExc_NotADirectoryError, "NotADirectoryError", {ENOTDIR}}}) {
    nb::object bases = nb::make_tuple(nb::handle(g_os_error), nb::handle(b.base));
    const std::string name = std::string("simdex._simdex.kv.") + b.name;
    PyObject* type = PyErr_NewExceptionWithDoc(name.c_str(), "A kv OSError of this errno.",
                                               bases.ptr(), nullptr);
    m.attr(b.name) = nb::handle(type);
    for (int err : b.errs) g_errno_errors.push_back({err, type});
  }
  nb::object lookup_bases = nb::make_tuple(nb::handle(g_error), nb::handle(PyExc_LookupError));
  g_lookup_error = PyErr_NewExceptionWithDoc(
      "simdex._simdex.kv.LookupError",
      "A kv error about something that does not exist (kind not_found: a named tree).",
      lookup_bases.ptr(), nullptr);
  m.attr("Error") = nb::handle(g_error);
  m.attr("LookupError") = nb::handle(g_lookup_error);
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
// go back as they were, so every listed tree can be opened. None is the default tree "" (as
// py-lmdb's open_db(None) is its main database).
std::string tree_arg(nb::handle name) {
  if (name.is_none()) return {};
  if (!PyUnicode_Check(name.ptr()))
    throw nb::type_error(("kv tree names are str, not " + py_type_name(name) +
                          (PyBytes_Check(name.ptr()) ? ": decode it (name.decode())" : ""))
                             .c_str());
  Py_ssize_t n = 0;
  if (const char* utf8 = PyUnicode_AsUTF8AndSize(name.ptr(), &n))  // cached: no copy per read()
    return std::string(utf8, static_cast<std::size_t>(n));
  PyErr_Clear();  // escaped bytes (lone surrogates) have no UTF-8 of their own
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
bool idle(const void* o, bool ending = false) {
  if (g_calls.empty()) return true;  // the usual case: a get() pays no hash lookup
  auto it = g_calls.find(o);
  return it == g_calls.end() || !(ending || it->second < 0);
}
void check_idle(const void* o, bool ending = false) {
  if (!idle(o, ending)) refuse_busy();
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

// ---- snapshots and their database --------------------------------------------------------------
// Database.close() ends the snapshots the database made that are still open (as py-lmdb's and
// sqlite3's close do), so the file is really closed while they are still referenced. They are
// kept for it in an intrusive list that read() links into and a snapshot's end or destruction
// unlinks from: no Python object is made per read() (a weakref.WeakSet entry was a quarter of
// the cost of `with db.read() as s: s.get(k)`). The list is used only with the GIL held.
struct py_snapshot;
// simdex.kv's Snapshot and Cursor, the Python classes over the native ones that read() and
// cursors make (set_python_classes); null: the native ones.
nb::handle g_snapshot_class, g_cursor_class;
struct open_snapshots {
  py_snapshot* head = nullptr;
};

constexpr const char* kSnapshotClosed = "the snapshot was closed";
constexpr const char* kDatabaseClosed = "its database was closed";

// How the Python layer's iterations over a view stop when the view ends: the chunk each one
// yields from (a dict: iteration -> list) is emptied, so its list iterator stops and the
// iteration's next step finds out why. Kept here for snapshots, which the database's close()
// ends without the Python layer.
void end_iterations(nb::object& live) {
  if (!live.is_valid()) return;
  for (auto [k, chunk] : nb::borrow<nb::dict>(live))
    if (PyList_SetSlice(chunk.ptr(), 0, PY_SSIZE_T_MAX, nullptr) != 0) throw nb::python_error();
  PyDict_Clear(live.ptr());
}

struct py_snapshot : snapshot {
  // Made in place in its Python object (read()), where it is linked: never moved or copied.
  explicit py_snapshot(snapshot&& s) : snapshot(std::move(s)) {}
  py_snapshot(const py_snapshot&) = delete;
  py_snapshot& operator=(const py_snapshot&) = delete;
  ~py_snapshot() { unlink(); }

  void link(open_snapshots* l) {
    list_ = l;
    next_ = l->head;
    if (next_) next_->prev_ = this;
    l->head = this;
  }
  void unlink() noexcept {
    if (!list_) return;
    (prev_ ? prev_->next_ : list_->head) = next_;
    if (next_) next_->prev_ = prev_;
    prev_ = next_ = nullptr;
    list_ = nullptr;
  }
  // Releases it (`reason`: whose close it was); later ends do nothing.
  void end(const char* reason) {
    if (why) return;
    release();
    why = reason;
    unlink();
    end_iterations(live);
  }
  // Its reads, once its database closed it, raise saying so (the store's own error would only
  // say that the snapshot was released).
  void check_open() const {
    if (why == kDatabaseClosed)
      throw error(error_kind::invalid_argument, std::string("snapshot is closed: ") + why);
  }

  const char* why = nullptr;  // why it was closed (kSnapshotClosed, kDatabaseClosed); null: open
  nb::object live;            // the iterations' chunks (see end_iterations), made by the first

 private:
  open_snapshots* list_ = nullptr;  // null when not linked (the database's, or it was destroyed)
  py_snapshot* prev_ = nullptr;
  py_snapshot* next_ = nullptr;
  friend struct py_database;
};

struct py_database : database {
  explicit py_database(database&& d) : database(std::move(d)) {}
  py_database(py_database&&) noexcept = default;
  // Snapshots may outlive the database object: they are unlinked, and keep no pointer to the
  // list (a shared_ptr to it cost two atomic operations per read()).
  ~py_database() {
    if (!snaps) return;  // moved from
    while (snaps->head) snaps->head->unlink();
  }
  // Ends the open snapshots: each one a call of another thread is using is left (it ends by
  // itself, or by the next close()), and then busy is raised.
  void end_snapshots() {
    bool busy = false;
    for (py_snapshot *p = snaps->head, *next; p; p = next) {
      next = p->next_;
      if (idle(p, true))
        p->end(kDatabaseClosed);
      else
        busy = true;
    }
    if (busy) refuse_busy();
  }
  std::unique_ptr<open_snapshots> snaps = std::make_unique<open_snapshots>();
};

// Before a read of a view: refused when its database closed it, or while another thread's call
// runs on it alone.
void ready(const write_tx& t) { check_idle(&t); }
void ready(const py_snapshot& s) {
  s.check_open();
  check_idle(&s);
}
void check_open(const write_tx&) {}
void check_open(const py_snapshot& s) { s.check_open(); }

// A cursor and the snapshot or transaction it reads (kept alive by the binding), checked
// before every move: the owner's registered calls conflict with the cursor's reads.
//
// Off a key, next() and prev() move as py-lmdb's (LMDB's) do, where the C++ cursor answers
// false: a cursor that has not stood on a key (new, or after a failed seek or first/last)
// goes to the first key with next() and to the last with prev(); one that ran off an end stays
// past it in that direction and comes back with the other move (next() past the last key, or
// a lower_bound / upper_bound above it, then prev(): the last key). So a port of
// `cur.set_range(x); cur.prev()` ("the last key below x") finds the last key when x is above
// them all, and `while c.next():` on a new cursor walks every key.
struct py_cursor {
  enum class off : std::uint8_t { unplaced, past_last, before_first };
  cursor c;
  const void* owner;
  off side = off::unplaced;  // where it is while not on a key
  nb::object keep;           // the snapshot or transaction (Python object), alive while it is
  cursor& at() {
    check_idle(owner);
    return c;
  }
  const cursor& at() const {
    check_idle(owner);
    return c;
  }
  bool placed(bool ok, off miss) {  // the result of a move, noting where a miss left it
    if (!ok) side = miss;
    return ok;
  }
  bool step(bool fwd) {
    cursor& k = at();
    if (k.valid())
      return placed(fwd ? k.next() : k.prev(), fwd ? off::past_last : off::before_first);
    if (side == (fwd ? off::past_last : off::before_first)) return false;
    return placed(fwd ? k.first() : k.last(), off::unplaced);
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
nb::list get_many(const T& v, nb::handle keys) {
  if (!PyList_Check(keys.ptr())) throw nb::type_error("get_many: keys must be a list");
  const auto n = static_cast<std::size_t>(PyList_Size(keys.ptr()));
  held_args held;
  held.refs.reserve(n);
  std::vector<std::string_view> ks;
  ks.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    ks.push_back(held.add(PyList_GetItem(keys.ptr(), static_cast<Py_ssize_t>(i)),
                          {"keys", static_cast<long>(i)}, role::key));
  std::vector<std::optional<std::string_view>> out(ks.size());
  check_open(v);
  {
    released_call call(&v, kAlone<T>, ks.size() >= kReleaseGilKeys);
    v.get_many(ks, out);
  }
  nb::list r;
  for (const auto& o : out) r.append(opt_bytes(o));
  return r;
}

// The read methods shared by Snapshot and WriteTx, named with an underscore: the Python layer
// wraps them (simdex.kv._Reads), and Snapshot, a Python subclass of the native one, has its
// hot methods (get, [], in, len) native under their public names.
template <class C>
void bind_reads(C& cls) {
  using T = typename C::Type;
  cls.def(
         "_get",
         [](const T& v, nb::handle k) {
           const bytes_arg key(k, {"key"});
           ready(v);
           return opt_bytes(v.get(key.sv()));
         },
         nb::arg("key").none())
      .def(
          "_contains",
          [](const T& v, nb::handle k) {
            const bytes_arg key(k, {"key"});
            ready(v);
            return v.contains(key.sv());
          },
          nb::arg("key").none())
      .def(
          "_get_many", [](const T& v, nb::handle keys) { return get_many(v, keys); },
          nb::arg("keys").none())
      .def(
          "_count",
          [](const T& v, nb::handle lo, nb::handle hi) {
            const bytes_arg l(lo, {"lo"});
            std::optional<bytes_arg> h;
            if (!hi.is_none()) h.emplace(hi, arg_name{"hi"});
            ready(v);
            return v.count(l.sv(), h ? std::optional<std::string_view>(h->sv()) : std::nullopt);
          },
          nb::arg("lo").none(), nb::arg("hi").none() = nb::none())
      .def("_size",
           [](const T& v) {
             ready(v);
             return v.size();
           })
      .def("_stat",
           [](const T& v) {
             check_open(v);
             stats s;
             {
               released_call call(&v, kAlone<T>);  // walks the whole tree
               s = v.stat();
             }
             return stats_dict(s);
           })
      .def("_validate",
           [](const T& v) {
             check_open(v);
             released_call call(&v, kAlone<T>);
             v.validate();
           })
      .def("_cursor", [](nb::handle self) {
        const T& v = nb::cast<const T&>(self);
        ready(v);
        cursor c = v.make_cursor();
        // An instance of simdex.kv.Cursor, the Python class over the native one.
        nb::object o = nb::inst_alloc(g_cursor_class ? g_cursor_class : nb::type<py_cursor>());
        new (nb::inst_ptr<py_cursor>(o))
            py_cursor{std::move(c), &v, py_cursor::off::unplaced, nb::borrow(self)};
        nb::inst_mark_ready(o);
        return o;
      });
}

void bind_cursor(nb::module_& b) {
  // Each call first checks its owner: a commit or validate running without the GIL may be
  // changing or walking the nodes the cursor reads, and the cursor's own staleness test could
  // pass just before such a call began.
  nb::class_<py_cursor>(b, "Cursor")
      .def_prop_ro(
          "valid", [](const py_cursor& c) { return c.at().valid(); },
          "Whether the cursor stands on a key.")
      .def(
          "first",
          [](py_cursor& c, nb::handle p) {
            if (p.is_none()) return c.placed(c.at().first(), py_cursor::off::unplaced);
            const bytes_arg prefix(p, {"prefix"});
            return c.placed(c.at().first(prefix.sv()), py_cursor::off::unplaced);
          },
          nb::arg("prefix").none() = nb::none(),
          "Moves to the first key, or the first key with the prefix.")
      .def(
          "last",
          [](py_cursor& c, nb::handle p) {
            if (p.is_none()) return c.placed(c.at().last(), py_cursor::off::unplaced);
            const bytes_arg prefix(p, {"prefix"});
            return c.placed(c.at().last(prefix.sv()), py_cursor::off::unplaced);
          },
          nb::arg("prefix").none() = nb::none(),
          "Moves to the last key, or the last key with the prefix.")
      .def(
          "seek",
          [](py_cursor& c, nb::handle k) {
            const bytes_arg key(k, {"key"});
            return c.placed(c.at().seek(key.sv()), py_cursor::off::unplaced);
          },
          nb::arg("key").none(), "Moves to exactly this key.")
      .def(
          "lower_bound",
          [](py_cursor& c, nb::handle k) {
            const bytes_arg key(k, {"key"});
            return c.placed(c.at().lower_bound(key.sv()), py_cursor::off::past_last);
          },
          nb::arg("key").none(), "Moves to the first key >= key.")
      .def(
          "upper_bound",
          [](py_cursor& c, nb::handle k) {
            const bytes_arg key(k, {"key"});
            return c.placed(c.at().upper_bound(key.sv()), py_cursor::off::past_last);
          },
          nb::arg("key").none(), "Moves to the first key > key.")
      .def(
          "next", [](py_cursor& c) { return c.step(true); },
          "Moves to the next key (off a key: see the class; a new cursor goes to the first).")
      .def(
          "prev", [](py_cursor& c) { return c.step(false); },
          "Moves to the previous key (off a key: see the class; a new cursor goes to the last).")
      .def_prop_ro(
          "key", [](const py_cursor& c) { return as_bytes(c.at().key()); },
          "The current key (KvError invalid_argument when not valid).")
      .def_prop_ro(
          "value", [](const py_cursor& c) { return as_bytes(c.at().value()); },
          "The current value (KvError invalid_argument when not valid).")
      .def(
          "item",
          [](const py_cursor& c) {
            const cursor& k = c.at();
            return nb::make_tuple(as_bytes(k.key()), as_bytes(k.value()));
          },
          "The current (key, value).")
      .def(
          "_take",
          [](py_cursor& pc, std::size_t n, bool forward, std::optional<nb::bytes> stop) {
            // Up to n (key, value) pairs from here on, stopping at `stop` (exclusive bound in
            // the walking direction): one call per chunk instead of three per item.
            cursor& c = pc.at();
            nb::list out;
            for (std::size_t i = 0; i < n && c.valid(); ++i) {
              const std::string_view k = c.key();
              if (stop && (forward ? k >= sv(*stop) : k < sv(*stop))) break;
              out.append(nb::make_tuple(as_bytes(k), as_bytes(c.value())));
              pc.placed(forward ? c.next() : c.prev(),
                        forward ? py_cursor::off::past_last : py_cursor::off::before_first);
            }
            return out;
          },
          nb::arg("n"), nb::arg("forward") = true, nb::arg("stop") = nb::none());
}

void bind_write_tx(nb::module_& b) {
  auto tx = nb::class_<write_tx>(b, "WriteTx");
  bind_reads(tx);
  // A write of a key and a value: (transaction, key, value).
  using write_fn = bool (write_tx::*)(std::string_view, std::string_view);
  auto kv_write = [](write_fn f) {
    return [f](write_tx& t, nb::handle k, nb::handle v) {
      const bytes_arg key(k, {"key"});
      const bytes_arg value(v, {"value"}, role::value);
      check_idle(&t);
      return (t.*f)(key.sv(), value.sv());
    };
  };
  tx.def(
        "put",
        [](write_tx& t, nb::handle k, nb::handle v) {
          const bytes_arg key(k, {"key"});
          const bytes_arg value(v, {"value"}, role::value);
          check_idle(&t);
          t.put(key.sv(), value.sv());
        },
        nb::arg("key").none(), nb::arg("value").none())
      .def("upsert", kv_write(&write_tx::upsert), nb::arg("key").none(), nb::arg("value").none())
      .def("insert", kv_write(&write_tx::insert), nb::arg("key").none(), nb::arg("value").none())
      .def("update", kv_write(&write_tx::update), nb::arg("key").none(), nb::arg("value").none())
      .def(
          "remove",
          [](write_tx& t, nb::handle k) {
            const bytes_arg key(k, {"key"});
            check_idle(&t);
            return t.remove(key.sv());
          },
          nb::arg("key").none())
      .def(
          "remove_range",
          [](write_tx& t, nb::handle lo, nb::handle hi) {
            // Copies: the call runs without the GIL, when another thread could change a buffer.
            const std::string l(bytes_arg(lo, {"lo"}).sv());
            const std::optional<std::string> h = opt_copy(hi, "hi");
            released_call call(&t, true);
            return t.remove_range(l, h ? std::optional<std::string_view>(*h) : std::nullopt);
          },
          nb::arg("lo").none(), nb::arg("hi").none() = nb::none())
      .def(
          "bulk_load",
          [](write_tx& t, nb::handle pairs) {
            if (!PyList_Check(pairs.ptr())) throw nb::type_error("bulk_load: pairs must be a list");
            const auto n = static_cast<std::size_t>(PyList_Size(pairs.ptr()));
            held_args held;
            held.refs.reserve(2 * n);
            std::vector<std::pair<std::string_view, std::string_view>> in;
            in.reserve(n);
            for (std::size_t i = 0; i < n; ++i) {
              nb::handle p = PyList_GetItem(pairs.ptr(), static_cast<Py_ssize_t>(i));
              const long at = static_cast<long>(i);
              // A tuple or list of two; bytes or str would unpack into their characters.
              if (!(PyTuple_Check(p.ptr()) || PyList_Check(p.ptr())) ||
                  PySequence_Size(p.ptr()) != 2) {
                PyErr_Clear();
                throw nb::type_error(
                    ("bulk_load: pairs[" + std::to_string(i) + "] is not a (key, value) pair but " +
                     (PyTuple_Check(p.ptr()) || PyList_Check(p.ptr())
                          ? "a sequence of " + std::to_string(PySequence_Size(p.ptr()))
                          : "a " + py_type_name(p)))
                        .c_str());
              }
              // Borrowed from the pair, which the list holds while the GIL is held; held.add
              // takes its own reference before the GIL is released.
              const bool tuple = PyTuple_Check(p.ptr());
              nb::handle k = tuple ? PyTuple_GetItem(p.ptr(), 0) : PyList_GetItem(p.ptr(), 0);
              nb::handle v = tuple ? PyTuple_GetItem(p.ptr(), 1) : PyList_GetItem(p.ptr(), 1);
              if (!k.ptr() || !v.ptr()) throw nb::python_error();
              const std::string_view ks = held.add(k, {"pairs", at, 0}, role::key);
              in.emplace_back(ks, held.add(v, {"pairs", at, 1}, role::value));
            }
            released_call call(&t, true, in.size() >= kReleaseGilKeys);
            t.bulk_load(in);
          },
          nb::arg("pairs").none())
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

  // The base of simdex.kv.Snapshot (which read() makes): `with db.read() as s: s.get(k)`, the
  // py-lmdb idiom ported programs use per call, runs here without a Python frame but read()'s.
  auto snap = nb::class_<py_snapshot>(b, "Snapshot");
  bind_reads(snap);
  auto close = [](py_snapshot& s) {
    check_idle(&s, true);
    s.end(kSnapshotClosed);
  };
  auto get = [](const py_snapshot& s, nb::handle k) {
    const bytes_arg key(k, {"key"});
    ready(s);
    return s.get(key.sv());
  };
  snap.def_prop_ro(
          "seq",
          [](const py_snapshot& s) {
            s.check_open();
            return s.seq();
          },
          "The commit sequence number this snapshot sees.")
      .def(
          "get",
          [get](const py_snapshot& s, nb::handle k, nb::handle dflt) -> nb::object {
            const std::optional<std::string_view> v = get(s, k);
            return v ? as_bytes(*v) : nb::borrow(dflt);
          },
          nb::arg("key").none(), nb::arg("default").none() = nb::none(),
          "The value of key, or default when absent.")
      .def(
          "__getitem__",
          [get](const py_snapshot& s, nb::handle k) {
            const std::optional<std::string_view> v = get(s, k);
            if (!v) {
              PyErr_SetObject(PyExc_KeyError, nb::make_tuple(k).ptr());
              throw nb::python_error();
            }
            return as_bytes(*v);
          },
          nb::arg("key").none(), "view[key]: the value of key; KeyError when absent.")
      .def(
          "__contains__",
          [get](const py_snapshot& s, nb::handle k) { return get(s, k).has_value(); },
          nb::arg("key").none(), "key in view: whether the key is present.")
      .def(
          "__len__",
          [](const py_snapshot& s) {
            ready(s);
            return s.size();
          },
          "Number of keys (O(1)).")
      .def("close", close,
           "Ends the snapshot: what only it pinned can be reused. Reads after it, and the next "
           "step of an iteration over it, raise KvError invalid_argument. Closing again does "
           "nothing.")
      .def(
          "__enter__", [](nb::handle self) { return nb::borrow(self); },
          "``with db.read() as s:`` gives the snapshot itself.")
      .def(
          "__exit__",
          // The three arguments `with` passes, named: nanobind's positional dispatch, where
          // *args cost a tuple and its general path (7 % of the block's instructions).
          [close](py_snapshot& s, nb::handle, nb::handle, nb::handle) {
            close(s);
            return false;
          },
          nb::arg("exc_type").none(), nb::arg("exc").none(), nb::arg("tb").none(),
          "The end of the ``with`` block closes it (an error in the block propagates).")
      // Why it was closed (None: open), for the Python layer's messages.
      .def("_closed", [](const py_snapshot& s) { return s.why ? nb::str(s.why) : nb::object(); })
      // The dict of its iterations' chunks (see end_iterations), made on first use.
      .def("_iterations",
           [](py_snapshot& s) {
             if (!s.live.is_valid()) s.live = nb::dict();
             return s.live;
           })
      // The native view the Python layer's shared read methods call (_Reads): itself.
      .def_prop_ro("_v", [](nb::handle self) { return nb::borrow(self); });
  // simdex.kv's classes over the native Snapshot and Cursor, which read() and cursors make.
  b.def("set_python_classes", [](nb::handle snapshot_cls, nb::handle cursor_cls) {
    auto subclass = [](nb::handle cls, nb::handle base) {
      if (!PyType_Check(cls.ptr()) ||
          !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()),
                            reinterpret_cast<PyTypeObject*>(base.ptr())))
        throw nb::type_error("set_python_classes: not a subclass of the native class");
      return cls.inc_ref();  // for the module's life
    };
    g_snapshot_class = subclass(snapshot_cls, nb::type<py_snapshot>());
    g_cursor_class = subclass(cursor_cls, nb::type<py_cursor>());
  });

  bind_write_tx(b);

  nb::class_<py_database>(b, "Database")
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
            if (!path) return py_database(database::memory(o));
            nb::gil_scoped_release rel;
            return py_database(database::open(*path, o));
          },
          nb::arg("path") = nb::none(), nb::arg("sync") = "none", nb::arg("read_only") = false)
      .def(
          "read",
          [](const py_database& d, nb::handle tree) {
            const std::string name = tree_arg(tree);
            check_idle(&d);
            nb::object s =
                nb::inst_alloc(g_snapshot_class ? g_snapshot_class : nb::type<py_snapshot>());
            py_snapshot* p = nb::inst_ptr<py_snapshot>(s);
            new (p) py_snapshot(d.read(name));  // on an error the instance, not ready, is dropped
            nb::inst_mark_ready(s);
            p->link(d.snaps.get());
            return s;
          },
          nb::arg("tree").none() = "",
          // simdex.kv.Database's read() on its instances (see Database.__init__).
          "A snapshot of the tree's committed state (O(1)); see simdex.kv.Database.read.")
      .def(
          "write",
          [](py_database& d, nb::handle tree) {
            const std::string name = tree_arg(tree);
            released_call call(&d, false);  // may wait for another transaction to end
            return d.write(name);
          },
          nb::arg("tree").none() = "")
      .def(
          "drop",
          [](py_database& d, nb::handle tree) {
            const std::string name = tree_arg(tree);
            released_call call(&d, false);  // waits for the writer, commits
            d.drop(name);
          },
          nb::arg("tree").none())
      .def("trees",
           [](const py_database& d) {
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
           [](py_database& d) {
             released_call call(&d, true);
             d.compact();
           })
      .def(
          "stat",
          [](const py_database& d, nb::handle tree) {
            const std::string name = tree_arg(tree);
            stats s;
            {
              released_call call(&d, false);
              s = d.stat(name);
            }
            return stats_dict(s);
          },
          nb::arg("tree").none() = "")
      .def("validate",
           [](const py_database& d) {
             released_call call(&d, false);
             d.validate();
           })
      .def("recovery",
           [](const py_database& d) {
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
           [](const py_database& d) {
             check_idle(&d);
             // As os.fsdecode gives it: a name that is not UTF-8 comes back escaped, not as
             // a UnicodeDecodeError.
             const std::string& p = d.path();
             return nb::steal<nb::str>(
                 PyUnicode_DecodeFSDefaultAndSize(p.data(), static_cast<Py_ssize_t>(p.size())));
           })
      .def("is_open", [](const py_database& d) { return d.is_open(); })
      .def("close",
           [](py_database& d) {
             check_idle(&d, true);
             d.close();
           })
      // After close(): ends the snapshots it made that are still open (busy: one was in use).
      .def("end_snapshots", &py_database::end_snapshots);

  // The bytes of a key (value=True: a value) as the store takes them, or the TypeError the
  // store's methods raise: for the Python layer's own handling of bounds and defaults.
  b.def(
      "as_bytes",
      [](nb::handle o, const std::string& name, bool value) {
        const arg_name n{name.c_str()};
        if (PyBytes_Check(o.ptr())) return nb::borrow<nb::bytes>(o);
        return as_bytes(bytes_arg(o, n, value ? role::value : role::key).sv());
      },
      nb::arg("obj"), nb::arg("name") = "key", nb::arg("value") = false);
  b.attr("MAX_KEY") = kMaxKey;
  b.attr("MAX_VALUE") = kMaxValue;
  b.attr("MAX_TREE_NAME") = kMaxTreeName;
}

}  // namespace simdex::py
