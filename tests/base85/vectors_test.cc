// Spec and CPython vectors (cases where every Python version agrees), and the error model.
#include <gtest/gtest.h>

#include "helpers.h"

using namespace simdex::base85;
using namespace simdex::base85::testing;

namespace {

struct vec {
  std::string in, b85, b85pad, a85, z85;
};

const std::vector<vec>& vectors() {
  static const std::vector<vec> v = {
      {"", "", "", "", ""},
      {std::string(1, '\0'), "00", "00000", "!!", "00"},
      {std::string(4, '\0'), "00000", "00000", "z", "00000"},
      {std::string(5, '\0'), "0000000", "0000000000", "z!!", "0000000"},
      {"hello", "Xk~0{Zv", "Xk~0{ZvX%Q", "BOu!rDZ", "xK#0@zV"},
      {"hello, world!", "Xk~0{Z!92pZ*pv8Ap", "Xk~0{Z!92pZ*pv8ApigX", "BOu!rD_*#TDfTZ)+T",
       "xK#0@z.92Pz/PV8aP"},
      {"\xff\xff\xff\xff", "|NsC0", "|NsC0", "s8W-!", "%nSc0"},
      {"    ", "ARr(h", "ARr(h", "+<VdL", "arR^H"},
      {"\x86\x4f\xd2\x6f\xb5\x59\xf7\x5b", "hELLOwORLD", "hELLOwORLD", "L/669[9<6.", "HelloWorld"},
  };
  return v;
}

TEST(Base85Vectors, Encode) {
  for (const vec& v : vectors()) {
    EXPECT_EQ(enc(v.in, eo(variant::b85)), v.b85);
    EXPECT_EQ(enc(v.in, eo(variant::b85, true)), v.b85pad);
    EXPECT_EQ(enc(v.in, eo(variant::a85)), v.a85);
    EXPECT_EQ(enc(v.in, eo(variant::z85)), v.z85);
  }
}

TEST(Base85Vectors, Decode) {
  for (const vec& v : vectors()) {
    EXPECT_EQ(dec(v.b85, doo(variant::b85)), v.in);
    EXPECT_EQ(dec(v.a85, doo(variant::a85)), v.in);
    EXPECT_EQ(dec(v.z85, doo(variant::z85)), v.in);
  }
}

TEST(Base85Vectors, Ascii85Options) {
  encode_options o = eo(variant::a85);
  o.adobe = true;
  EXPECT_EQ(enc("hello", o), "<~BOu!rDZ~>");
  EXPECT_EQ(enc("", o), "<~~>");
  o.fold_spaces = true;
  EXPECT_EQ(enc("    ", o), "<~y~>");
  encode_options w = eo(variant::a85);
  w.wrap = 4;
  EXPECT_EQ(enc("hello, world!", w), "BOu!\nrD_*\n#TDf\nTZ)+\nT");
  w.adobe = true;  // CPython: a85encode(b'hello', adobe=True, wrapcol=4)
  EXPECT_EQ(enc("hello", w), "<~BO\nu!rD\nZ~>");
  w.wrap = 3;
  EXPECT_EQ(enc("hello", w), "<~B\nOu!\nrDZ\n~>");
  encode_options p = eo(variant::a85, true);
  EXPECT_EQ(enc(std::string(5, '\0'), p), "zz");

  decode_options d = doo(variant::a85);
  EXPECT_EQ(dec("BOu!rDZ", d), "hello");
  EXPECT_EQ(dec(" B O\tu!\nrD\r\vZ ", d), "hello");
  EXPECT_EQ(dec("zz", d), std::string(8, '\0'));
  EXPECT_EQ(dec("y", d), "ERR:invalid character@0");
  EXPECT_EQ(dec("!z", d), "ERR:invalid character@1");
  d.fold_spaces = true;
  EXPECT_EQ(dec("yz", d), std::string(4, ' ') + std::string(4, '\0'));
  d.adobe = true;  // CPython's rule: ends with "~>", a leading "<~" is dropped
  EXPECT_EQ(dec("<~BOu!rDZ~>", d), "hello");
  EXPECT_EQ(dec("BOu!rDZ~>", d), "hello");
  EXPECT_EQ(dec("<~BOu!rDZ~>\n", d), "ERR:no closing ~>@12");
  EXPECT_EQ(dec("<~BOu!rDZ", d), "ERR:no closing ~>@9");
  EXPECT_EQ(dec("<~BOu!rDZ~", d), "ERR:no closing ~>@10");
  EXPECT_EQ(dec("<~BOu!rDZ~x", d), "ERR:no closing ~>@11");
  EXPECT_EQ(dec("<~BO~>u", d), "ERR:no closing ~>@7");
  EXPECT_EQ(dec("<~BO~>u~>", d), "ERR:invalid character@4");  // '~' inside is no frame
  EXPECT_EQ(dec("<BOu!rD~>", d), dec("<BOu!rD", doo(variant::a85)));
  EXPECT_EQ(dec("~>", d), "");
  EXPECT_EQ(dec("<~>", d), "");  // the opening and closing share the '~'
  EXPECT_EQ(dec("<~~>", d), "");
  EXPECT_EQ(dec("<~9jqo^B~>", d), "ERR:1-char final group@7");
  d.ignore = char_set("~");
  EXPECT_EQ(dec("<~'f,~~~>", d),
            "\x15"
            "3");
  EXPECT_EQ(dec("<~BO~u!rDZ~>", d), "hello");
}

// Folds keep their meaning when listed as ignored; other ignored chars vanish (CPython).
TEST(Base85Vectors, IgnoreSetNeverHidesFolds) {
  decode_options d = doo(variant::a85);
  d.ignore = char_set("zy");
  EXPECT_EQ(dec("z9jqo^", d), std::string(4, '\0') + "Man ");
  EXPECT_EQ(dec("z", d), std::string(4, '\0'));
  EXPECT_EQ(dec("9jqo^y", d), "Man ");  // 'y' without fold_spaces: ignored
  d.fold_spaces = true;
  EXPECT_EQ(dec("y9jqo^", d), "    Man ");
  // Long enough for the bulk and compaction paths, a fold in every place.
  std::string text, want;
  for (int i = 0; i < 200; ++i) {
    text += i % 7 == 3 ? "z" : i % 11 == 5 ? "y" : "9jqo^";
    want += i % 7 == 3 ? std::string(4, '\0') : i % 11 == 5 ? "    " : "Man ";
  }
  EXPECT_EQ(dec(text, d), want);
}

TEST(Base85Errors, KindsAndPositions) {
  decode_options b = doo(variant::b85);
  EXPECT_EQ(dec("0", b), "ERR:1-char final group@0");
  EXPECT_EQ(dec("000000", b), "ERR:1-char final group@5");
  EXPECT_EQ(dec("|NsC1", b), "ERR:overflow@0");
  EXPECT_EQ(dec("00000~~~~~", b), "ERR:overflow@5");
  EXPECT_EQ(dec("00000|Ns", b), "ERR:overflow@5");  // tail padded with '~' overflows
  EXPECT_EQ(dec("00\"00", b), "ERR:invalid character@2");
  EXPECT_EQ(dec("00000 0000", b), "ERR:invalid character@5");
  EXPECT_EQ(dec("0000\xff", b), "ERR:invalid character@4");
  EXPECT_EQ(dec("VF", b), "a");  // non-canonical tails are accepted, as in CPython
  decode_options z = doo(variant::z85);
  EXPECT_EQ(dec("%nSc1", z), "ERR:overflow@0");
  EXPECT_EQ(dec("0000~", z), "ERR:invalid character@4");
  decode_options a = doo(variant::a85);
  EXPECT_EQ(dec("s8W-\"", a), "ERR:overflow@0");
  EXPECT_EQ(dec("!!!!! s 8W-\"", a), "ERR:overflow@6");
  EXPECT_EQ(dec("!!!!!v", a), "ERR:invalid character@5");

  // Every position of a long input: the error lands exactly there, whatever level runs.
  std::mt19937_64 g(7);
  std::string text = enc(random_bytes(400, g), eo(variant::b85));
  for (std::size_t i = 0; i < text.size(); ++i) {
    std::string bad = text;
    bad[i] = '"';
    EXPECT_EQ(dec(bad, b), "ERR:invalid character@" + std::to_string(i));
  }
  std::vector<std::uint8_t> small(4);
  EXPECT_EQ(decode("0000000000", small, b).error, error_kind::short_output);
}

// The streaming decoder reports the offending byte with its position, wherever the chunks
// split (the Python messages print it), and tells a missing "~>" from a 1-char group.
TEST(Base85Errors, StreamingReportsTheByte) {
  decode_options d = doo(variant::a85);
  d.adobe = true;
  auto stream = [&](std::initializer_list<std::string_view> chunks) {
    decoder dd(d);
    std::vector<std::uint8_t> out(64);
    for (std::string_view c : chunks)
      if (result r = dd.update(c.data(), c.size(), out.data()); !r.ok()) return r;
    return dd.finish(out.data());
  };
  result r = stream({"<~9jqo~", "x~>"});
  EXPECT_EQ(r.error, error_kind::invalid_char);
  EXPECT_EQ(r.position, 6u);
  EXPECT_EQ(r.byte, '~');
  r = stream({"<~9jqo", "\x80", "~>"});
  EXPECT_EQ(r.error, error_kind::invalid_char);
  EXPECT_EQ(r.position, 6u);
  EXPECT_EQ(r.byte, 0x80);
  r = stream({"<~9jqo^B~>"});
  EXPECT_EQ(r.error, error_kind::bad_tail);
  EXPECT_EQ(r.position, 7u);
  r = stream({"<~9jqo^", "B~"});
  EXPECT_EQ(r.error, error_kind::unterminated);
  EXPECT_EQ(r.position, 9u);
  for (std::size_t split = 0; split <= 11; ++split) {
    std::string_view t = "<~BOu!rDZ~>";
    r = stream({t.substr(0, split), t.substr(split)});
    EXPECT_TRUE(r.ok()) << split;
  }
}

// consumed() counts every input byte taken, the adobe "<~" and "~>" included: the closing
// pair is held back until finish(), and used to be left out of the count (9 of 11 here).
TEST(Base85Streaming, ConsumedCountsEveryInputByte) {
  decode_options d = doo(variant::a85);
  d.adobe = true;
  std::vector<std::uint8_t> out(64);
  const std::string_view t = "<~BOu!rDZ~>";
  for (std::size_t split = 0; split <= t.size(); ++split) {
    decoder dd(d);
    EXPECT_TRUE(dd.update(t.data(), split, out.data()).ok());
    EXPECT_EQ(dd.consumed(), split);
    EXPECT_TRUE(dd.update(t.data() + split, t.size() - split, out.data()).ok());
    EXPECT_EQ(dd.consumed(), t.size()) << split;
    EXPECT_TRUE(dd.finish(out.data()).ok());
    EXPECT_EQ(dd.consumed(), t.size()) << split;
  }
  // Bytes after "~>": the pair is body then, and decoding stops at its '~' (as CPython's).
  for (std::string_view more : {"xy", "\n", "  "}) {
    decoder dd(d);
    EXPECT_TRUE(dd.update(t.data(), t.size(), out.data()).ok());
    result r = dd.update(more.data(), more.size(), out.data());
    EXPECT_EQ(r.error, error_kind::invalid_char);
    EXPECT_EQ(r.position, 9u);
    EXPECT_EQ(dd.consumed(), 9u);  // the bytes before the one where decoding stopped
    EXPECT_FALSE(dd.finish(out.data()).ok());
    EXPECT_EQ(dd.consumed(), 9u);
  }
  // An error inside the held chars, and a stream that never closes.
  decoder bad(d);
  EXPECT_TRUE(bad.update("<~9jqo~", 7, out.data()).ok());
  EXPECT_EQ(bad.consumed(), 7u);
  EXPECT_EQ(bad.update("x~>", 3, out.data()).position, 6u);
  EXPECT_EQ(bad.consumed(), 6u);
  decoder open(d);
  EXPECT_TRUE(open.update("<~BOu!rDZ", 9, out.data()).ok());
  EXPECT_EQ(open.finish(out.data()).error, error_kind::unterminated);
  EXPECT_EQ(open.consumed(), 9u);
  // Without adobe nothing is held back.
  decoder plain(doo(variant::a85));
  EXPECT_TRUE(plain.update("BOu!rDZ", 7, out.data()).ok());
  EXPECT_EQ(plain.consumed(), 7u);
}

TEST(Base85Sizes, Bounds) {
  for (variant v : {variant::b85, variant::z85, variant::a85})
    for (std::size_t n = 0; n < 64; ++n) {
      std::vector<std::uint8_t> ones(n, 1);
      for (bool pad : {false, true}) {
        std::string s = enc(ones, eo(v, pad));
        EXPECT_EQ(s.size(), encoded_size(n, eo(v, pad)));
        EXPECT_EQ(dec(s, doo(v)).size(), pad ? (n + 3) / 4 * 4 : n);
        if (v != variant::a85) {
          EXPECT_EQ(max_decoded_size(s.size(), doo(v)), pad ? (n + 3) / 4 * 4 : n);
        }
      }
    }
}

}  // namespace
