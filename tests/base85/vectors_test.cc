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
  d.adobe = true;
  EXPECT_EQ(dec("<~BOu!rDZ~>", d), "hello");
  EXPECT_EQ(dec("BOu!rDZ~>", d), "hello");
  EXPECT_EQ(dec("<~BOu!rDZ~>\n", d), "hello");
  EXPECT_EQ(dec("<~BOu!rDZ", d), "ERR:bad length or tail@9");
  EXPECT_EQ(dec("<~BOu!rDZ~", d), "ERR:bad length or tail@9");
  EXPECT_EQ(dec("<~BOu!rDZ~x", d), "ERR:invalid character@9");
  EXPECT_EQ(dec("<~BO~>u", d), "ERR:invalid character@6");
  EXPECT_EQ(dec("<BOu!rD~>", d), dec("<BOu!rD", doo(variant::a85)));
  EXPECT_EQ(dec("~>", d), "");
}

TEST(Base85Errors, KindsAndPositions) {
  decode_options b = doo(variant::b85);
  EXPECT_EQ(dec("0", b), "ERR:bad length or tail@0");
  EXPECT_EQ(dec("000000", b), "ERR:bad length or tail@5");
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
