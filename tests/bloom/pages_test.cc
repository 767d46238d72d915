// A flat BYTE_ARRAY chunk matched in its pages: chunks this test encodes itself (dictionary,
// PLAIN and delta-encoded pages, V1 and V2, RLE runs and bit-packed groups, nulls) against the
// rows they encode;
// headers parsed back; every truncation and corrupt byte refused with parse_error or read within
// bounds.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bloom/strings.h"
#include "bloom/thrift.h"
#include "simdex/bloom.h"

using namespace simdex::bloom;
using bytes = std::vector<std::uint8_t>;
using row = std::optional<std::string>;

namespace {

void put32(bytes& b, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void append(bytes& b, const bytes& more) { b.insert(b.end(), more.begin(), more.end()); }

bytes plain(const std::vector<std::string>& vs) {
  bytes b;
  for (const auto& v : vs) {
    put32(b, static_cast<std::uint32_t>(v.size()));
    b.insert(b.end(), v.begin(), v.end());
  }
  return b;
}

// The RLE / bit-packed hybrid of vs at `width` bits, runs and groups chosen at random.
bytes hybrid(const std::vector<std::uint32_t>& vs, unsigned width, std::mt19937_64& r) {
  bytes b;
  std::size_t i = 0;
  while (i < vs.size()) {
    std::size_t same = 1;
    while (i + same < vs.size() && vs[i + same] == vs[i]) ++same;
    if (same >= 2 && r() % 3) {
      thrift::write_varint(b, same << 1);
      for (unsigned k = 0; k < (width + 7) / 8; ++k)
        b.push_back(static_cast<std::uint8_t>(vs[i] >> (8 * k)));
      i += same;
      continue;
    }
    const std::size_t groups = 1 + r() % 3;
    thrift::write_varint(b, groups << 1 | 1);
    std::vector<std::uint8_t> packed(groups * width, 0);
    for (std::size_t j = 0; j < groups * 8; ++j) {
      const std::uint64_t v = i + j < vs.size() ? vs[i + j] : 0;
      for (unsigned bit = 0; bit < width; ++bit)
        if (v >> bit & 1)
          packed[(j * width + bit) / 8] |= static_cast<std::uint8_t>(1u << ((j * width + bit) % 8));
    }
    append(b, packed);
    i += groups * 8;
  }
  return b;
}

void put_zigzag(bytes& b, std::int64_t v) {
  thrift::write_varint(b,
                       (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}

// DELTA_BINARY_PACKED: blocks of 128 deltas in 4 miniblocks of 32; the last block's unused
// miniblocks have a width byte and no body.
bytes delta_packed(const std::vector<std::int64_t>& v) {
  bytes b;
  thrift::write_varint(b, 128);
  thrift::write_varint(b, 4);
  thrift::write_varint(b, v.size());
  put_zigzag(b, v.empty() ? 0 : v[0]);
  for (std::size_t at = 1; at < v.size(); at += 128) {
    const std::size_t n = std::min<std::size_t>(128, v.size() - at);
    std::int64_t lo = INT64_MAX;
    for (std::size_t i = 0; i < n; ++i) lo = std::min(lo, v[at + i] - v[at + i - 1]);
    put_zigzag(b, lo);
    std::uint8_t widths[4] = {};
    for (std::size_t i = 0; i < n; ++i) {
      const auto d = static_cast<std::uint64_t>(v[at + i] - v[at + i - 1] - lo);
      std::uint8_t& w = widths[i / 32];
      while (w < 64 && (d >> w) != 0) ++w;
    }
    b.insert(b.end(), widths, widths + 4);
    for (std::size_t m = 0; m * 32 < n; ++m) {
      bytes packed(4 * widths[m], 0);
      for (std::size_t j = 0; j < 32 && m * 32 + j < n; ++j) {
        const std::size_t i = m * 32 + j;
        const auto d = static_cast<std::uint64_t>(v[at + i] - v[at + i - 1] - lo);
        for (unsigned bit = 0; bit < widths[m]; ++bit)
          if (d >> bit & 1)
            packed[(j * widths[m] + bit) / 8] |=
                static_cast<std::uint8_t>(1u << ((j * widths[m] + bit) % 8));
      }
      append(b, packed);
    }
  }
  return b;
}

bytes delta_lengths(const std::vector<std::string>& vs) {
  std::vector<std::int64_t> lens;
  for (const auto& v : vs) lens.push_back(static_cast<std::int64_t>(v.size()));
  bytes b = delta_packed(lens);
  for (const auto& v : vs) b.insert(b.end(), v.begin(), v.end());
  return b;
}

bytes delta_strings(const std::vector<std::string>& vs) {
  std::vector<std::int64_t> prefix;
  std::vector<std::string> suffix;
  std::string prev;
  for (const auto& v : vs) {
    std::size_t k = 0;
    while (k < prev.size() && k < v.size() && prev[k] == v[k]) ++k;
    prefix.push_back(static_cast<std::int64_t>(k));
    suffix.push_back(v.substr(k));
    prev = v;
  }
  bytes b = delta_packed(prefix);
  append(b, delta_lengths(suffix));
  return b;
}

void field_i32(bytes& b, int& last, int id, std::int32_t v) {
  thrift::write_i32_field(b, id - last, v);
  last = id;
}
void field_struct(bytes& b, int& last, int id) {
  b.push_back(static_cast<std::uint8_t>((id - last) << 4 | thrift::kStruct));
  last = id;
}

bytes header(int kind, std::size_t size, const std::vector<std::pair<int, std::int32_t>>& sub) {
  bytes b;
  int last = 0;
  field_i32(b, last, 1, kind);
  field_i32(b, last, 2, static_cast<std::int32_t>(size));
  field_i32(b, last, 3, static_cast<std::int32_t>(size));
  field_struct(b, last, kind == kPageData ? 5 : kind == kPageDictionary ? 7 : 8);
  int inner = 0;
  for (auto [id, v] : sub) field_i32(b, inner, id, v);
  b.push_back(thrift::kStop);
  b.push_back(thrift::kStop);
  return b;
}

unsigned width_of(std::size_t n) {
  unsigned w = 0;
  while ((std::size_t{1} << w) < n) ++w;
  return w;
}

// An uncompressed chunk holding rows: a dictionary page when asked, then pages of random
// length, each V1 or V2, dictionary-encoded (while the dictionary lasts) or PLAIN.
struct chunk {
  bytes data;
  std::vector<row> rows;
};

chunk encode(const std::vector<row>& rows, bool with_dict, bool nullable, std::mt19937_64& r) {
  chunk c{{}, rows};
  std::vector<std::string> dict;
  std::map<std::string, std::uint32_t> index;
  if (with_dict) {
    for (const auto& v : rows)
      if (v && !index.count(*v) && r() % 4) {
        index[*v] = static_cast<std::uint32_t>(dict.size());
        dict.push_back(*v);
      }
    bytes body = plain(dict);
    append(c.data, header(kPageDictionary, body.size(),
                          {{1, static_cast<std::int32_t>(dict.size())}, {2, kEncodingPlain}}));
    append(c.data, body);
  }
  std::size_t at = 0;
  while (at < rows.size()) {
    const std::size_t n = std::min<std::size_t>(rows.size() - at, 1 + r() % 40);
    std::vector<std::uint32_t> defs;
    std::vector<std::string> present;
    for (std::size_t i = at; i < at + n; ++i) {
      defs.push_back(rows[i] ? 1 : 0);
      if (rows[i]) present.push_back(*rows[i]);
    }
    bool use_dict = with_dict;
    for (const auto& v : present) use_dict = use_dict && index.count(v);
    bytes values;
    int enc = use_dict ? kEncodingRleDictionary : kEncodingPlain;
    if (!use_dict && r() % 3 == 1) {
      enc = kEncodingDeltaLengthByteArray;
      values = delta_lengths(present);
    } else if (!use_dict && r() % 2) {
      enc = kEncodingDeltaByteArray;
      values = delta_strings(present);
    } else if (use_dict) {
      std::vector<std::uint32_t> ids;
      for (const auto& v : present) ids.push_back(index[v]);
      const unsigned w = width_of(dict.size());
      values.push_back(static_cast<std::uint8_t>(w));
      if (!ids.empty()) append(values, hybrid(ids, w, r));
    } else {
      values = plain(present);
    }
    const bytes levels = nullable ? hybrid(defs, 1, r) : bytes{};
    const auto nulls = static_cast<std::int32_t>(n - present.size());
    if (r() % 2) {
      bytes body;
      if (nullable) {
        put32(body, static_cast<std::uint32_t>(levels.size()));
        append(body, levels);
      }
      append(body, values);
      append(
          c.data,
          header(
              kPageData, body.size(),
              {{1, static_cast<std::int32_t>(n)}, {2, enc}, {3, kEncodingRle}, {4, kEncodingRle}}));
      append(c.data, body);
    } else {
      bytes body = levels;
      append(body, values);
      append(c.data, header(kPageDataV2, body.size(),
                            {{1, static_cast<std::int32_t>(n)},
                             {2, nulls},
                             {3, static_cast<std::int32_t>(n)},
                             {4, enc},
                             {5, static_cast<std::int32_t>(levels.size())},
                             {6, 0}}));
      append(c.data, body);
    }
    at += n;
  }
  return c;
}

// The matcher's rows for a chunk, fed page by page (dictionary-encoded pages skipped when the
// dictionary holds no key, as the lookup does).
std::vector<std::int32_t> match(const bytes& data, std::size_t n, const strings& k, int max_def) {
  page_matcher m(k.data.data(), k.data.size(), k.offsets.data(), k.offsets.size() - 1, max_def);
  for (const page_header& h : parse_page_headers(data.data(), data.size(), n)) {
    const std::uint8_t* body = data.data() + h.body;
    if (h.kind == kPageDictionary) {
      m.dictionary(h, body, h.compressed);
    } else if (h.encoding == kEncodingRleDictionary && !m.dictionary_holds_key()) {
      m.skip(h.values);
    } else if (h.kind == kPageData) {
      m.data_page_v1(h, body, h.compressed);
    } else {
      m.data_page_v2(h, body, h.def_bytes, body + h.level_bytes, h.compressed - h.level_bytes);
    }
  }
  return m.rows();
}

TEST(Pages, MatchesWhatTheChunkEncodes) {
  std::mt19937_64 r(11);
  for (int round = 0; round < 300; ++round) {
    const bool nullable = round % 3 != 0, with_dict = round % 4 != 0;
    const std::size_t n = 1 + r() % 300, alphabet = 1 + r() % 60;
    std::vector<row> rows(n);
    for (auto& v : rows)
      if (!nullable || r() % 5) v = std::string(r() % 4, 'x') + std::to_string(r() % alphabet);
    chunk c = encode(rows, with_dict, nullable, r);
    strings k;
    std::map<std::string, std::int32_t> first;
    for (int j = 0; j < 4; ++j) {
      std::string s = r() % 5 ? std::string(r() % 4, 'x') + std::to_string(r() % alphabet) : "none";
      first.emplace(s, static_cast<std::int32_t>(j));
      k.add(s);
    }
    const auto got = match(c.data, n, k, nullable ? 1 : 0);
    ASSERT_EQ(got.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int32_t want = rows[i] && first.count(*rows[i]) ? first[*rows[i]] : -1;
      ASSERT_EQ(got[i], want) << "round " << round << " row " << i;
    }
  }
}

TEST(Pages, HashesEveryEncodingsValues) {
  std::mt19937_64 r(9);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> vs(r() % 700);
    for (auto& v : vs)
      v = std::string(r() % 3, 'p') + std::to_string(r() % 1000) + std::string(r() % 40, 'q');
    for (auto [enc, page] : {std::pair{kEncodingPlain, plain(vs)},
                             std::pair{kEncodingDeltaLengthByteArray, delta_lengths(vs)},
                             std::pair{kEncodingDeltaByteArray, delta_strings(vs)}}) {
      std::vector<std::uint64_t> got(vs.size());
      hash_byte_array_values(enc, page.data(), page.size(), vs.size(), got.data());
      for (std::size_t i = 0; i < vs.size(); ++i)
        ASSERT_EQ(got[i], hash_bytes(vs[i].data(), vs[i].size()))
            << "encoding " << enc << " value " << i;
      if (!page.empty()) {
        EXPECT_THROW(
            hash_byte_array_values(enc, page.data(), page.size() - 1, vs.size(), got.data()),
            parse_error);
      }
      EXPECT_THROW(hash_byte_array_values(enc, page.data(), page.size(), vs.size() + 1, got.data()),
                   parse_error);
    }
  }
}

// Values that share long prefixes with the one before (the hash resumes inside the prefix):
// lengths on both sides of every checkpoint, prefixes cut anywhere, repeats, empty values.
TEST(Pages, HashesDeltaByteArraysSharingLongPrefixes) {
  std::mt19937_64 r(11);
  for (int round = 0; round < 20; ++round) {
    std::vector<std::string> vs(1 + r() % 400);
    std::string prev;
    for (auto& v : vs) {
      const std::size_t keep = r() % 4 == 0 ? r() % (prev.size() + 1) : prev.size();
      v = r() % 5 == 0
              ? prev
              : prev.substr(0, keep) + std::string(r() % 3 ? r() % 9 : r() % 700, 'a' + r() % 3);
      if (r() % 50 == 0) v.clear();
      prev = v;
    }
    const bytes page = delta_strings(vs);
    std::vector<std::uint64_t> got(vs.size());
    hash_byte_array_values(kEncodingDeltaByteArray, page.data(), page.size(), vs.size(),
                           got.data());
    for (std::size_t i = 0; i < vs.size(); ++i)
      ASSERT_EQ(got[i], hash_bytes(vs[i].data(), vs[i].size()))
          << "round " << round << " value " << i;
  }
}

// A hostile page: one 1 MiB value, then 200,000 values each sharing all of it but its last byte
// (zero-width prefix lengths) plus a byte of their own: 1.2 MB that decode to 2 * 10^11 bytes.
// Hashing or matching each value whole took minutes; both now cost the page, not the values.
TEST(Pages, DeltaByteArrayValuesFarLongerThanThePage) {
  constexpr std::size_t kLong = std::size_t{1} << 20, kCount = 200'000;
  std::vector<std::int64_t> prefix(kCount, static_cast<std::int64_t>(kLong)), lens(kCount, 1);
  prefix[0] = 0;
  lens[0] = static_cast<std::int64_t>(kLong);
  bytes page = delta_packed(prefix);
  append(page, delta_packed(lens));
  page.insert(page.end(), kLong, 'x');
  for (std::size_t i = 1; i < kCount; ++i) page.push_back(static_cast<std::uint8_t>(i * 7));
  ASSERT_LT(page.size(), kLong + kCount + 32768);
  std::vector<std::uint64_t> got(kCount), want(256);
  hash_byte_array_values(kEncodingDeltaByteArray, page.data(), page.size(), kCount, got.data());
  std::string v(kLong + 1, 'x');
  for (int b = 0; b < 256; ++b) {
    v.back() = static_cast<char>(b);
    want[b] = hash_bytes(v.data(), v.size());
  }
  EXPECT_EQ(got[0], hash_bytes(v.data(), kLong));
  for (std::size_t i = 1; i < kCount; ++i)
    ASSERT_EQ(got[i], want[static_cast<std::uint8_t>(i * 7)]) << "value " << i;
  // Matching: no key is that long, so no value is read past its length.
  strings k;
  k.add("x");
  k.add(std::string(300, 'x'));
  page_matcher m(k.data.data(), k.data.size(), k.offsets.data(), 2, 0);
  page_header h;
  h.values = kCount;
  h.encoding = kEncodingDeltaByteArray;
  m.data_page_v1(h, page.data(), page.size());
  EXPECT_EQ(m.rows().size(), kCount);
  EXPECT_EQ(m.hits(), 0u);
}

TEST(Pages, HeadersReadBack) {
  std::mt19937_64 r(3);
  std::vector<row> rows = {std::string("a"), std::nullopt, std::string("bb"), std::string("a")};
  chunk c = encode(rows, true, true, r);
  auto hs = parse_page_headers(c.data.data(), c.data.size(), rows.size());
  ASSERT_GE(hs.size(), 2u);
  EXPECT_EQ(hs[0].kind, kPageDictionary);
  std::uint64_t values = 0;
  for (std::size_t i = 1; i < hs.size(); ++i) values += hs[i].values;
  EXPECT_EQ(values, rows.size());
  EXPECT_EQ(hs.back().body + hs.back().compressed, c.data.size());
  // Values that do not add up, either way.
  EXPECT_THROW(parse_page_headers(c.data.data(), c.data.size(), rows.size() + 1), parse_error);
  EXPECT_THROW(parse_page_headers(c.data.data(), c.data.size(), rows.size() - 1), parse_error);
}

// Every prefix and many single-byte corruptions: parse_error or a well-formed answer, never a
// read out of bounds (ASan) or an answer of the wrong length.
TEST(Pages, DamagedChunksAreRefusedOrReadWithinBounds) {
  std::mt19937_64 r(5);
  std::vector<row> rows;
  for (int i = 0; i < 200; ++i)
    rows.push_back(i % 7 ? std::optional<std::string>(std::to_string(i % 23)) : std::nullopt);
  chunk c = encode(rows, true, true, r);
  strings k;
  k.add("5");
  k.add("17");
  auto attempt = [&](const bytes& data) {
    try {
      const auto got = match(data, rows.size(), k, 1);
      ASSERT_EQ(got.size(), rows.size());
    } catch (const parse_error&) {
    }
  };
  for (std::size_t cut = 0; cut < c.data.size(); ++cut) {
    bytes prefix(c.data.begin(), c.data.begin() + static_cast<std::ptrdiff_t>(cut));
    attempt(prefix);
  }
  for (int i = 0; i < 3000; ++i) {
    bytes bad = c.data;
    bad[r() % bad.size()] ^= static_cast<std::uint8_t>(1 + r() % 255);
    attempt(bad);
  }
}

TEST(Pages, RefusesWhatItDoesNotRead) {
  strings k;
  k.add("a");
  EXPECT_THROW(page_matcher(k.data.data(), k.data.size(), k.offsets.data(), 1, 2),
               std::invalid_argument);
  page_matcher m(k.data.data(), k.data.size(), k.offsets.data(), 1, 0);
  page_header h;
  h.values = 1;
  h.encoding = 9;  // BYTE_STREAM_SPLIT
  const std::uint8_t page[8] = {};
  EXPECT_THROW(m.data_page_v1(h, page, sizeof(page)), parse_error);
  h.encoding = kEncodingRleDictionary;  // with no dictionary page
  EXPECT_THROW(m.data_page_v1(h, page, sizeof(page)), parse_error);
}

}  // namespace
