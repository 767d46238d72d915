// simdex._simdex.base85: one-shot encode/decode into fresh bytes objects, and streaming
// Encoder/Decoder classes. Inputs are any C-contiguous buffer; the GIL is released while
// large inputs are converted (the buffer export keeps the memory alive and pinned).
#include "simdex/base85.h"

#include <Python.h>
#include <nanobind/stl/string.h>

#include <string>

#include "bind.h"

namespace simdex::py {
namespace {

namespace b85 = simdex::base85;

// A contiguous read-only view of any buffer-protocol object.
class buffer {
 public:
  explicit buffer(nb::handle obj) {
    if (PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS) != 0) throw nb::python_error();
  }
  ~buffer() { PyBuffer_Release(&view_); }
  buffer(const buffer&) = delete;
  buffer& operator=(const buffer&) = delete;
  const char* data() const { return static_cast<const char*>(view_.buf); }
  std::size_t size() const { return static_cast<std::size_t>(view_.len); }

 private:
  Py_buffer view_{};
};

// A bytes object written in place, then shrunk to what was written.
class out_bytes {
 public:
  explicit out_bytes(std::size_t cap) {
    obj_ = PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(cap));
    if (!obj_) throw nb::python_error();
  }
  ~out_bytes() { Py_XDECREF(obj_); }
#ifdef Py_LIMITED_API
  // The stable ABI (abi3 wheels) has neither the macro nor an in-place resize: a result shorter
  // than the capacity is copied into a bytes object of its own size.
  char* data() { return PyBytes_AsString(obj_); }
  nb::bytes finish(std::size_t n) {
    if (static_cast<Py_ssize_t>(n) != PyBytes_Size(obj_)) {
      PyObject* exact = PyBytes_FromStringAndSize(data(), static_cast<Py_ssize_t>(n));
      if (!exact) throw nb::python_error();
      Py_DECREF(obj_);
      obj_ = exact;
    }
    return nb::steal<nb::bytes>(std::exchange(obj_, nullptr));
  }
#else
  char* data() { return PyBytes_AS_STRING(obj_); }
  nb::bytes finish(std::size_t n) {
    if (_PyBytes_Resize(&obj_, static_cast<Py_ssize_t>(n)) != 0) throw nb::python_error();
    return nb::steal<nb::bytes>(std::exchange(obj_, nullptr));
  }
#endif

 private:
  PyObject* obj_ = nullptr;
};

b85::variant parse_variant(const std::string& name) {
  if (name == "b85") return b85::variant::b85;
  if (name == "z85") return b85::variant::z85;
  if (name == "a85") return b85::variant::a85;
  throw nb::value_error(("unknown base85 variant '" + name + "' (b85, z85, a85)").c_str());
}

[[noreturn]] void raise(const b85::decode_options& o, const b85::result& r, int bad_char) {
  const std::string pos = std::to_string(r.position);
  const char* name = o.var == b85::variant::a85 ? "Ascii85" : b85::variant_name(o.var);
  std::string msg;
  switch (r.error) {
    case b85::error_kind::invalid_char:
      if (o.var == b85::variant::a85 && (bad_char == 'z' || bad_char == 'y'))
        msg = std::string(1, static_cast<char>(bad_char)) + " inside Ascii85 5-tuple at position " +
              pos;
      else if (o.var == b85::variant::a85)
        msg = "Non-Ascii85 digit found: " + std::string(1, static_cast<char>(bad_char)) +
              " at position " + pos;
      else
        msg = std::string("bad ") + name + " character at position " + pos;
      break;
    case b85::error_kind::overflow:
      msg = std::string(name) + " overflow in hunk starting at byte " + pos;
      break;
    case b85::error_kind::bad_tail:
      msg = o.adobe && bad_char < 0
                ? std::string("Ascii85 encoded byte sequences must end with b'~>'")
                : std::string(name) + " data ends with a 1-character group at position " + pos;
      break;
    default:
      msg = std::string(name) + " decode failed: " + b85::error_name(r.error);
  }
  throw nb::value_error(msg.c_str());
}

b85::encode_options encode_opts(const std::string& v, bool pad, bool fold_spaces, bool adobe,
                                std::size_t wrap) {
  b85::encode_options o;
  o.var = parse_variant(v);
  o.pad = pad;
  o.fold_spaces = fold_spaces;
  o.adobe = adobe;
  o.wrap = wrap;
  return o;
}

b85::decode_options decode_opts(const std::string& v, bool fold_spaces, bool adobe,
                                nb::handle ignore) {
  b85::decode_options o;
  o.var = parse_variant(v);
  o.fold_spaces = fold_spaces;
  o.adobe = adobe;
  buffer ig(ignore);
  o.ignore = b85::char_set(std::string_view(ig.data(), ig.size()));
  return o;
}

nb::bytes encode_py(nb::handle data, const std::string& v, bool pad, bool fold_spaces, bool adobe,
                    std::size_t wrap) {
  b85::encode_options o = encode_opts(v, pad, fold_spaces, adobe, wrap);
  buffer in(data);
  out_bytes out(b85::encoded_size(in.size(), o));
  b85::result r;
  {
    auto span_in = std::span(reinterpret_cast<const std::uint8_t*>(in.data()), in.size());
    auto span_out = std::span(out.data(), b85::encoded_size(in.size(), o));
    r = maybe_without_gil(in.size(), [&] { return b85::encode(span_in, span_out, o); });
  }
  return out.finish(r.written);
}

int char_at(const char* p, std::size_t n, std::uint64_t pos) {
  return pos < n ? static_cast<unsigned char>(p[pos]) : -1;
}

nb::bytes decode_py(nb::handle data, const std::string& v, bool fold_spaces, bool adobe,
                    nb::handle ignore) {
  b85::decode_options o = decode_opts(v, fold_spaces, adobe, ignore);
  buffer in(data);
  std::size_t cap = b85::max_decoded_size(std::string_view(in.data(), in.size()), o);
  out_bytes out(cap);
  b85::result r;
  {
    std::string_view text(in.data(), in.size());
    auto span_out = std::span(reinterpret_cast<std::uint8_t*>(out.data()), cap);
    r = maybe_without_gil(in.size(), [&] { return b85::decode(text, span_out, o); });
  }
  if (!r.ok()) raise(o, r, char_at(in.data(), in.size(), r.position));
  return out.finish(r.written);
}

struct py_encoder {
  b85::encoder e;
  nb::bytes update(nb::handle data) {
    buffer in(data);
    out_bytes out(e.max_output(in.size()));
    std::size_t n = maybe_without_gil(in.size(), [&] {
      return e.update(reinterpret_cast<const std::uint8_t*>(in.data()), in.size(), out.data());
    });
    return out.finish(n);
  }
  nb::bytes finish() {
    char tail[b85::encoder::kMaxFinish];
    std::size_t n = e.finish(tail);
    return nb::bytes(tail, n);
  }
};

struct py_decoder {
  b85::decode_options o;
  b85::decoder d;
  nb::bytes update(nb::handle data) {
    buffer in(data);
    out_bytes out(d.max_output(in.size()));
    std::uint64_t base = d.consumed();
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data());
    b85::result r =
        maybe_without_gil(in.size(), [&] { return d.update(in.data(), in.size(), dst); });
    if (!r.ok())
      raise(o, r, r.position >= base ? char_at(in.data(), in.size(), r.position - base) : -1);
    return out.finish(r.written);
  }
  nb::bytes finish() {
    std::uint8_t tail[b85::decoder::kMaxFinish];
    b85::result r = d.finish(tail);
    if (!r.ok()) raise(o, r, -1);
    return nb::bytes(reinterpret_cast<const char*>(tail), r.written);
  }
};

}  // namespace

void bind_base85(nb::module_& m) {
  auto b = m.def_submodule("base85", "Base85 codecs (b85, z85, a85)");
  b.def("encode", &encode_py, nb::arg("data"), nb::arg("variant") = "b85", nb::arg("pad") = false,
        nb::arg("fold_spaces") = false, nb::arg("adobe") = false, nb::arg("wrap") = 0,
        "Encode a bytes-like object; returns bytes.");
  b.def("decode", &decode_py, nb::arg("data"), nb::arg("variant") = "b85",
        nb::arg("fold_spaces") = false, nb::arg("adobe") = false, nb::arg("ignore") = nb::bytes(""),
        "Decode a bytes-like object; raises ValueError with the position on bad input.");
  nb::class_<py_encoder>(b, "Encoder",
                         "Streaming encoder: update(chunk) -> bytes, finish() -> bytes")
      .def(
          "__init__",
          [](py_encoder* self, const std::string& v, bool pad, bool fold_spaces, bool adobe,
             std::size_t wrap) {
            new (self) py_encoder{b85::encoder(encode_opts(v, pad, fold_spaces, adobe, wrap))};
          },
          nb::arg("variant") = "b85", nb::arg("pad") = false, nb::arg("fold_spaces") = false,
          nb::arg("adobe") = false, nb::arg("wrap") = 0)
      .def("update", &py_encoder::update, nb::arg("data"))
      .def("finish", &py_encoder::finish);
  nb::class_<py_decoder>(b, "Decoder",
                         "Streaming decoder: update(chunk) -> bytes, finish() -> bytes")
      .def(
          "__init__",
          [](py_decoder* self, const std::string& v, bool fold_spaces, bool adobe,
             nb::handle ignore) {
            b85::decode_options o = decode_opts(v, fold_spaces, adobe, ignore);
            new (self) py_decoder{o, b85::decoder(o)};
          },
          nb::arg("variant") = "b85", nb::arg("fold_spaces") = false, nb::arg("adobe") = false,
          nb::arg("ignore") = nb::bytes(""))
      .def("update", &py_decoder::update, nb::arg("data"))
      .def("finish", &py_decoder::finish)
      .def_prop_ro("consumed", [](const py_decoder& d) { return d.d.consumed(); });
}

}  // namespace simdex::py
