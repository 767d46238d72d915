// simdex._simdex.base85: one-shot encode/decode into fresh bytes objects, and streaming
// Encoder/Decoder classes. Inputs are any C-contiguous buffer; the GIL is released while
// large inputs are converted (the buffer export keeps the memory alive and pinned).
#include "simdex/base85.h"

#include <Python.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <stdexcept>
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

// A byte as it may appear in a message: printable ASCII as itself, anything else as \xNN,
// so that no control char or invalid UTF-8 from the input reaches a message or a terminal.
std::string shown(std::uint8_t c) {
  if (c > 0x20 && c < 0x7f) return std::string(1, static_cast<char>(c));
  const char* hex = "0123456789abcdef";
  return std::string{'\\', 'x', hex[c >> 4], hex[c & 15]};
}

[[noreturn]] void raise(const b85::decode_options& o, const b85::result& r) {
  const std::string pos = std::to_string(r.position);
  const bool a85 = o.var == b85::variant::a85;
  const char* name = a85 ? "Ascii85" : b85::variant_name(o.var);
  std::string msg;
  switch (r.error) {
    case b85::error_kind::invalid_char:
      if (a85 && (r.byte == 'z' || (r.byte == 'y' && o.fold_spaces)))
        msg = shown(r.byte) + " inside Ascii85 5-tuple at position " + pos;
      else if (a85)
        msg = "Non-Ascii85 digit found: " + shown(r.byte) + " at position " + pos;
      else
        msg = std::string("bad ") + name + " character at position " + pos;
      break;
    case b85::error_kind::overflow:
      msg = std::string(name) + " overflow in hunk starting at byte " + pos;
      break;
    case b85::error_kind::bad_tail:
      msg = std::string(name) + " data ends with a 1-character group at position " + pos;
      break;
    case b85::error_kind::unterminated:
      msg = "Ascii85 encoded byte sequences must end with b'~>' (input ends at byte " + pos + ")";
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
  // The buffer is sized by encoded_size(), so this cannot fail; if it ever did, an empty result
  // would pass for the encoding of empty input.
  if (!r.ok())
    throw std::runtime_error(std::string("base85 encode failed: ") + b85::error_name(r.error));
  return out.finish(r.written);
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
  if (!r.ok()) raise(o, r);
  return out.finish(r.written);
}

// A stream's update() releases the GIL on large chunks; another thread's call on the same
// stream meanwhile would change the state the output was sized from (an overrun). Refused:
// `busy` is read and written only with the GIL held.
struct one_call {
  bool& busy;
  explicit one_call(bool& b) : busy(b) {
    if (busy)
      throw std::runtime_error(
          "this stream is in a call from another thread; a stream is used by one thread at a time");
    busy = true;
  }
  ~one_call() { busy = false; }
  one_call(const one_call&) = delete;
  one_call& operator=(const one_call&) = delete;
};

struct py_encoder {
  b85::encoder e;
  bool busy = false;
  nb::bytes update(nb::handle data) {
    one_call c(busy);
    buffer in(data);
    out_bytes out(e.max_output(in.size()));
    std::size_t n = maybe_without_gil(in.size(), [&] {
      return e.update(reinterpret_cast<const std::uint8_t*>(in.data()), in.size(), out.data());
    });
    return out.finish(n);
  }
  nb::bytes finish() {
    one_call c(busy);
    char tail[b85::encoder::kMaxFinish];
    std::size_t n = e.finish(tail);
    return nb::bytes(tail, n);
  }
};

struct py_decoder {
  b85::decode_options o;
  b85::decoder d;
  bool busy = false;
  // The output bound of one update(). For a85, max_output() is 4 bytes a char (any char may be
  // a 'z'): a 100 MB chunk took a 400 MB buffer. Counting the chunk's folds as the one-shot
  // decode does bounds it near 4/5 of the chunk; the margin covers what the stream holds
  // between calls (4 digits of a partial group, 2 adobe chars that may be folds): at most 12.
  std::size_t capacity(const buffer& in) const {
    const std::size_t any = d.max_output(in.size());
    if (o.var != b85::variant::a85 || in.size() < 4096) return any;  // a short chunk: no scan
    return std::min(any, b85::max_decoded_size(std::string_view(in.data(), in.size()), o) + 16);
  }
  nb::bytes update(nb::handle data) {
    one_call c(busy);
    buffer in(data);
    out_bytes out(capacity(in));
    auto* dst = reinterpret_cast<std::uint8_t*>(out.data());
    b85::result r =
        maybe_without_gil(in.size(), [&] { return d.update(in.data(), in.size(), dst); });
    if (!r.ok()) raise(o, r);
    return out.finish(r.written);
  }
  nb::bytes finish() {
    one_call c(busy);
    std::uint8_t tail[b85::decoder::kMaxFinish];
    b85::result r = d.finish(tail);
    if (!r.ok()) raise(o, r);
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
