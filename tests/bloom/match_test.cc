// Matching values against a few keys (the dataset lookup's last step): every width and both
// offset widths against a std::set, duplicate and colliding keys, empty strings, bad offsets.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "bloom/strings.h"
#include "simdex/bloom.h"

using namespace simdex::bloom;

namespace {

template <class T>
void check_width(std::size_t n_keys, std::uint64_t seed) {
  std::mt19937_64 r(seed);
  // Values from a small range so keys hit often; keys drawn from it, with duplicates.
  const std::uint64_t range = 4 * n_keys + 3;
  std::vector<T> values(5000), keys(n_keys);
  for (auto& v : values) v = static_cast<T>(r() % range * 0x1000000001ull);
  for (auto& k : keys) k = static_cast<T>(r() % range * 0x1000000001ull);
  std::set<T> want(keys.begin(), keys.end());
  std::vector<std::uint8_t> out(values.size(), 7);
  const std::size_t hits =
      match_fixed(values.data(), sizeof(T), values.size(), keys.data(), keys.size(), out.data());
  std::size_t expect_hits = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const bool in = want.count(values[i]);
    expect_hits += in;
    ASSERT_EQ(out[i], in ? 1 : 0) << "width " << sizeof(T) << " value " << i;
  }
  EXPECT_EQ(hits, expect_hits);
}

}  // namespace

TEST(BloomMatch, FixedWidthsAgreeWithASet) {
  for (std::size_t k : {0, 1, 2, 7, 100, 3000}) {
    check_width<std::uint8_t>(k, k + 1);
    check_width<std::uint16_t>(k, k + 2);
    check_width<std::uint32_t>(k, k + 3);
    check_width<std::uint64_t>(k, k + 4);
  }
  std::uint64_t v = 1, key = 1;
  std::uint8_t out = 0;
  EXPECT_THROW(match_fixed(&v, 3, 1, &key, 1, &out), std::invalid_argument);
}

TEST(BloomMatch, ByteStringsAgreeWithASet) {
  std::mt19937_64 r(9);
  for (std::size_t k : {0, 1, 5, 100, 2000}) {
    strings keys, values;
    std::set<std::string> want;
    auto random_string = [&] {
      std::string s(r() % 4, '\0');  // short, so values repeat keys; empty included
      for (auto& c : s) c = static_cast<char>("ab\0\xff"[r() % 4]);
      return s;
    };
    for (std::size_t i = 0; i < k; ++i) {
      keys.add(random_string());
      want.insert(keys.at(i));
    }
    for (int i = 0; i < 3000; ++i) values.add(random_string());
    std::vector<std::int32_t> offsets32(values.offsets.begin(), values.offsets.end());
    for (int ow : {4, 8}) {
      const void* o = ow == 4 ? static_cast<const void*>(offsets32.data())
                              : static_cast<const void*>(values.offsets.data());
      std::vector<std::uint8_t> out(3000, 7);
      const std::size_t hits =
          match_binary(values.data.data(), values.data.size(), o, ow, 3000, keys.data.data(),
                       keys.data.size(), keys.offsets.data(), k, out.data());
      std::size_t expect_hits = 0;
      for (std::size_t i = 0; i < 3000; ++i) {
        const bool in = want.count(values.at(i));
        expect_hits += in;
        ASSERT_EQ(out[i], in ? 1 : 0) << "keys " << k << " offsets " << ow << " value " << i;
      }
      EXPECT_EQ(hits, expect_hits);
    }
  }
}

TEST(BloomMatch, BadOffsetsAreErrors) {
  strings keys, values;
  keys.add("a");
  values.add("a");
  values.add("bb");
  std::uint8_t out[2];
  std::vector<std::int64_t> past = {0, 1, 9};  // past the data
  EXPECT_THROW(match_binary(values.data.data(), values.data.size(), past.data(), 8, 2,
                            keys.data.data(), keys.data.size(), keys.offsets.data(), 1, out),
               std::invalid_argument);
  std::vector<std::int32_t> backwards = {0, 2, 1};
  EXPECT_THROW(match_binary(values.data.data(), values.data.size(), backwards.data(), 4, 2,
                            keys.data.data(), keys.data.size(), keys.offsets.data(), 1, out),
               std::invalid_argument);
  std::vector<std::int64_t> bad_keys = {0, 5};
  EXPECT_THROW(match_binary(values.data.data(), values.data.size(), values.offsets.data(), 8, 2,
                            keys.data.data(), keys.data.size(), bad_keys.data(), 1, out),
               std::invalid_argument);
  EXPECT_THROW(match_binary(values.data.data(), values.data.size(), values.offsets.data(), 2, 2,
                            keys.data.data(), keys.data.size(), keys.offsets.data(), 1, out),
               std::invalid_argument);
}
