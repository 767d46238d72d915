// Thrift-compact header round trip and validation; FileMetaData parsing of hand-built footers;
// malformed input gives parse_error, never a crash.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "bloom/thrift.h"
#include "footer_builder.h"
#include "simdex/bloom.h"

using namespace simdex::bloom;
using namespace simdex::bloom::test;

namespace {

filter sample_filter(std::size_t bytes, int n) {
  filter f(bytes);
  for (int i = 0; i < n; ++i) f.insert(hash_int64(i));
  return f;
}

// A Parquet file's head ("PAR1", `blob` at offset 4) and a footer whose one INT64 column "x"
// has its filter there (its length written too when `with_length`); append_footer joins them.
struct filter_file {
  std::vector<std::uint8_t> head, footer;
};
// One column `x` of physical `type` (Thrift enum: 0 BOOLEAN, 2 INT64) whose filter is `blob`.
filter_file file_with_filter(const std::vector<std::uint8_t>& blob, bool with_length,
                             int type = 2) {
  filter_file f{std::vector<std::uint8_t>(4 + blob.size()), {}};
  std::memcpy(f.head.data(), "PAR1", 4);
  std::copy(blob.begin(), blob.end(), f.head.begin() + 4);
  writer w;
  one_column_schema(w, type, "x");
  open_single_chunk(w, "x");
  w.i32(1, type);  // ColumnMetaData.type, after path_in_schema (field 3): out of order is valid
  w.i64(14, 4);
  if (with_length) w.i32(15, static_cast<std::int32_t>(blob.size()));
  close_single_chunk(w);
  w.out.push_back(0);
  f.footer = std::move(w.out);
  return f;
}

void write_file(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

TEST(BloomParquet, HeaderRoundTrip) {
  filter f = sample_filter(32768, 1000);
  auto bytes = serialize(f);
  // numBytes 32768 -> zigzag 65536 -> a 3-byte varint: 17-byte header, as pyarrow writes.
  EXPECT_EQ(bytes.size(), 32768u + 17);
  std::size_t used = 0;
  filter g = parse(bytes.data(), bytes.size(), &used);
  EXPECT_EQ(used, bytes.size());
  EXPECT_EQ(f, g);
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(g.check(hash_int64(i)));
}

TEST(BloomParquet, HeaderErrors) {
  auto good = serialize(sample_filter(64, 3));
  // Every truncation is an error.
  for (std::size_t n = 0; n < good.size(); ++n)
    EXPECT_THROW(parse(good.data(), n), parse_error) << n;
  auto with = [&](std::size_t at, std::uint8_t v) {
    auto b = good;
    b[at] = v;
    return b;
  };
  // numBytes 48 (not a multiple of 32) -> zigzag 96 = 0x60.
  auto b = with(1, 0x60);
  try {
    parse(b.data(), b.size());
    FAIL();
  } catch (const parse_error& e) {
    EXPECT_EQ(e.offset(), 1u);
    EXPECT_NE(std::string(e.what()).find("multiple of 32"), std::string::npos);
  }
  b = with(1, 0x01);  // zigzag -1
  EXPECT_THROW(parse(b.data(), b.size()), parse_error);
  // algorithm union member 2 instead of BLOCK: header is 0x15 0x80 0x01, then 0x1c 0x1c ...
  b = with(4, 0x2c);
  try {
    parse(b.data(), b.size());
    FAIL();
  } catch (const parse_error& e) {
    EXPECT_NE(std::string(e.what()).find("algorithm"), std::string::npos) << e.what();
  }
  b = with(8, 0x2c);  // hash
  EXPECT_THROW(parse(b.data(), b.size()), parse_error);
  b = with(12, 0x2c);  // compression
  EXPECT_THROW(parse(b.data(), b.size()), parse_error);
  b = with(0, 0x16);  // numBytes as i64: wrong type
  EXPECT_THROW(parse(b.data(), b.size()), parse_error);
}

TEST(BloomParquet, HeaderFuzzNoCrash) {
  auto good = serialize(sample_filter(64, 3));
  std::mt19937_64 g(9);
  for (int t = 0; t < 20000; ++t) {
    auto b = good;
    for (int k = 0; k < 3; ++k) b[g() % 20] = static_cast<std::uint8_t>(g());
    try {
      parse(b.data(), b.size());
    } catch (const parse_error&) {
    } catch (const std::invalid_argument&) {
    }
  }
}

TEST(BloomParquet, FileMetadata) {
  auto meta = sample_footer();
  footer_info info = parse_file_metadata(meta.data(), meta.size());
  EXPECT_EQ(info.num_rows, 100);
  EXPECT_EQ(info.num_row_groups, 2);
  ASSERT_EQ(info.chunks.size(), 4u);
  EXPECT_EQ(info.chunks[0].path, "a");
  EXPECT_EQ(info.chunks[0].type, physical_type::int64);
  EXPECT_EQ(info.chunks[0].bloom_offset, 1000);
  EXPECT_EQ(info.chunks[0].bloom_length, 49);
  EXPECT_EQ(info.chunks[1].path, "g.b");
  EXPECT_EQ(info.chunks[1].type, physical_type::fixed_len_byte_array);
  EXPECT_EQ(info.chunks[1].type_length, 16);
  EXPECT_EQ(info.chunks[1].bloom_offset, -1);
  EXPECT_EQ(info.chunks[2].row_group, 1);
  EXPECT_EQ(info.chunks[2].bloom_offset, 1001);
  for (std::size_t n = 0; n < meta.size(); ++n)
    EXPECT_THROW(parse_file_metadata(meta.data(), n), parse_error) << n;
}

TEST(BloomParquet, FileMetadataFuzzNoCrash) {
  auto meta = sample_footer();
  std::mt19937_64 g(10);
  for (int t = 0; t < 20000; ++t) {
    auto b = meta;
    for (int k = 0; k < 4; ++k) b[g() % b.size()] = static_cast<std::uint8_t>(g());
    try {
      parse_file_metadata(b.data(), b.size());
    } catch (const parse_error&) {
    }
  }
  // Deep nesting and huge list counts are refused without recursion blow-up or allocation.
  std::vector<std::uint8_t> deep(10000, 0x1c);
  EXPECT_THROW(parse_file_metadata(deep.data(), deep.size()), parse_error);
  std::vector<std::uint8_t> huge = {0x29, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x0f};
  EXPECT_THROW(parse_file_metadata(huge.data(), huge.size()), parse_error);
}

// parquet-java writes a filter on a BOOLEAN column with no value in it: asked, it would answer
// "absent" for values the chunk holds. Such a chunk reads as one without a filter.
TEST(BloomParquet, BooleanFiltersAreNeverAsked) {
  filter empty(32);
  auto [file, footer] = file_with_filter(serialize(empty), true, /*BOOLEAN*/ 0);
  append_footer(file, footer);
  const std::string path = ::testing::TempDir() + "/simdex_bloom_boolean.parquet";
  write_file(path, file);
  EXPECT_TRUE(read_filters(path).empty());
  parquet_file pf(path);
  ASSERT_EQ(pf.footer().chunks.size(), 1u);
  const column_chunk_info* chunks[] = {&pf.footer().chunks[0]};
  const std::uint64_t hashes[] = {hash_int32(0), hash_int32(1)};
  std::uint8_t out[2] = {0, 0};
  std::vector<std::string> errors;
  pf.probe(chunks, hashes, out, errors);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 1);
  EXPECT_EQ(errors[0], "");
  std::remove(path.c_str());
}

TEST(BloomParquet, ReadFiltersFromFile) {
  // A synthetic file: magic, a filter at offset 4, the footer pointing at it.
  filter f = sample_filter(32, 2);
  auto [file, footer] = file_with_filter(serialize(f), true);
  append_footer(file, footer);
  std::string path = ::testing::TempDir() + "/simdex_bloom_test.parquet";
  write_file(path, file);
  auto filters = read_filters(path);
  ASSERT_EQ(filters.size(), 1u);
  EXPECT_EQ(filters[0].chunk.path, "x");
  EXPECT_EQ(filters[0].bloom, f);
  // Corrupt the magic and the footer length.
  auto bad = file;
  bad.back() = 'X';
  write_file(path, bad);
  EXPECT_THROW(read_filters(path), parse_error);
  bad = file;
  bad[bad.size() - 5] = 0x7f;
  write_file(path, bad);
  EXPECT_THROW(read_filters(path), parse_error);
  std::remove(path.c_str());
  EXPECT_THROW(read_filters(path), std::system_error);
}

namespace {

// root{x: INT32 (LogicalType INTEGER(32, unsigned)), y: FLBA(4) (ConvertedType DECIMAL(9,2))}
// with `root_children` claimed by the root, `name` for x, and one row group of `chunks` chunks.
std::vector<std::uint8_t> typed_footer(int root_children, const std::string& name,
                                       std::size_t chunks) {
  writer w;
  w.list(2, thrift::kStruct, 3);
  w.group("schema", root_children);
  w.begin_elem();
  w.i32(1, 1);
  w.str(4, name);
  w.begin_struct(10);  // LogicalType
  w.begin_struct(10);  // INTEGER
  w.field(1, thrift::kByte);
  w.out.push_back(32);
  w.field(2, thrift::kFalse);  // isSigned = false
  w.end_struct();
  w.end_struct();
  w.end_struct();
  w.begin_elem();
  w.i32(1, 7);
  w.i32(2, 4);
  w.str(4, "y");
  w.i32(6, 5);  // DECIMAL
  w.i32(7, 2);
  w.i32(8, 9);
  w.end_struct();
  w.list(4, thrift::kStruct, 1);
  w.begin_elem();
  w.list(1, thrift::kStruct, chunks);
  for (std::size_t i = 0; i < chunks; ++i) {
    w.begin_elem();
    if (i < 2) {
      w.begin_struct(3);
      w.list(3, thrift::kBinary, 1);
      w.raw_str(i == 0 ? name : "y");
      w.end_struct();
    }
    w.end_struct();
  }
  w.end_struct();
  w.out.push_back(0);
  return w.out;
}

std::string message_of(const std::vector<std::uint8_t>& meta) {
  try {
    parse_file_metadata(meta.data(), meta.size());
  } catch (const parse_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(BloomParquet, LogicalTypes) {
  auto meta = typed_footer(2, "x", 2);
  footer_info info = parse_file_metadata(meta.data(), meta.size());
  ASSERT_EQ(info.columns.size(), 2u);
  EXPECT_EQ(info.columns[0].path, "x");
  EXPECT_EQ(info.columns[0].logical, "INT(32,UNSIGNED)");
  EXPECT_EQ(info.columns[1].logical, "DECIMAL(9,2)");
  EXPECT_EQ(info.columns[1].type_length, 4);
  EXPECT_EQ(info.chunks[1].type_length, 4);
}

TEST(BloomParquet, SchemaRootClaimingMissingChildrenIsRefused) {
  EXPECT_NE(message_of(typed_footer(3, "x", 2)).find("root claims 3 children"), std::string::npos);
}

TEST(BloomParquet, NonUtf8PathsAreRefusedWithOffset) {
  for (std::string bad : {std::string("\xff"), std::string("a\xc3"), std::string("\xed\xa0\x80"),
                          std::string("\xc0\x80")}) {
    std::string m = message_of(typed_footer(2, bad, 2));
    EXPECT_NE(m.find("not valid UTF-8 (at byte"), std::string::npos) << m;
  }
  EXPECT_EQ(message_of(typed_footer(2, "h\xc3\xa9llo \xf0\x9f\x98\x80", 2)), "");
}

TEST(BloomParquet, ChunkTableIsBoundedByFooterSize) {
  // 3M empty column chunks in a ~3 MB footer would take ~200 MB as a chunk table.
  auto meta = typed_footer(2, "x", 3'000'000);
  EXPECT_NE(message_of(meta).find("more column chunks than its size allows"), std::string::npos);
  // Chunks a selector leaves out cost nothing.
  footer_info info =
      parse_file_metadata(meta.data(), meta.size(),
                          [](const column_chunk_info& c, const void*) { return c.column < 2; });
  EXPECT_EQ(info.chunks.size(), 2u);
}

TEST(BloomParquet, FileErrorsNameFileAndColumnOnce) {
  filter f = sample_filter(64, 2);
  auto blob = serialize(f);
  blob[4] = 0x2c;  // algorithm union member 2
  const filter_file ff = file_with_filter(blob, false);
  auto write = [&](const std::vector<std::uint8_t>& meta) {
    auto bytes = ff.head;
    append_footer(bytes, meta);
    std::string path = ::testing::TempDir() + "/simdex_bloom_errors.parquet";
    write_file(path, bytes);
    return path;
  };
  std::string path = write(ff.footer);
  try {
    read_filters(path);
    FAIL();
  } catch (const parse_error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("row group 0, column 'x'"), std::string::npos) << m;
    EXPECT_NE(m.find("algorithm"), std::string::npos) << m;
  }
  auto truncated = ff.footer;
  truncated.resize(truncated.size() / 2);
  path = write(truncated);
  try {
    read_footer(path);
    FAIL();
  } catch (const parse_error& e) {
    std::string m = e.what();
    EXPECT_EQ(m.find("(at byte"), m.rfind("(at byte")) << m;
  }
  std::remove(path.c_str());
}

TEST(BloomParquet, NonRegularFilesAreRefusedWithoutBlocking) {
  std::string fifo = ::testing::TempDir() + "/simdex_bloom_fifo.parquet";
  std::remove(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(read_footer(fifo), std::system_error);  // would block in open() without O_NONBLOCK
  std::remove(fifo.c_str());
  EXPECT_THROW(read_footer(::testing::TempDir()), std::system_error);
}
