// set_bloom_locations: fields it does not know survive byte for byte, 14/15 land in id order,
// malformed or encrypted footers are refused; statistics parsing; parquet_file::probe against
// whole-filter checks on a file whose footer the writer produced.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "footer_builder.h"
#include "simdex/bloom.h"

using namespace simdex::bloom;
using namespace simdex::bloom::test;

namespace {

using bytes = std::vector<std::uint8_t>;

// One row group, one INT64 column whose ColumnMetaData holds fields 1, 5, `extra` (an unknown
// id, binary), optionally 14/15, then 16 (i64); FileMetaData has an unknown struct field 50.
bytes footer_with_unknowns(int extra, bool with_bloom, std::int64_t off = 0, std::int32_t len = 0) {
  writer w;
  w.i32(1, 2);
  one_column_schema(w, 2, "k");
  w.i64(3, 10);
  open_single_chunk(w, "k");
  w.i64(5, 10);
  if (extra < 14) w.str(extra, "future field");
  if (with_bloom) {
    w.i64(14, off);
    w.i32(15, len);
  }
  w.i64(16, 77);
  if (extra > 16) w.str(extra, "future field");
  close_single_chunk(w);
  w.begin_struct(50);
  w.str(1, "unknown to us");
  w.end_struct();
  w.out.push_back(0);
  return w.out;
}

bytes edit(const bytes& f, std::vector<bloom_location> locs) {
  return set_bloom_locations(f.data(), f.size(), locs);
}

}  // namespace

TEST(BloomFooterWriter, NoLocationsIsTheIdentity) {
  for (const bytes& f : {sample_footer(), footer_with_unknowns(90, false),
                         footer_with_unknowns(13, true), footer_with_unknowns(-32768, true)})
    EXPECT_EQ(edit(f, {}), f);
}

TEST(BloomFooterWriter, InsertsInIdOrderAndCopiesUnknownFields) {
  // Negative and the largest ids too: every i16 id is written back as it was read.
  for (int extra : {13, 90, -5, -32768, 32767}) {
    // The writer's canonical encoding of the expected result: equal bytes prove that the
    // unknown fields came through as they were and 14/15 sit between 5..13 and 16.
    EXPECT_EQ(edit(footer_with_unknowns(extra, false), {{0, 0, 1234, 56}}),
              footer_with_unknowns(extra, true, 1234, 56))
        << extra;
    EXPECT_EQ(edit(footer_with_unknowns(extra, true, 1, 2), {{0, 0, 99999999999, 300}}),
              footer_with_unknowns(extra, true, 99999999999, 300))
        << extra;
  }
}

TEST(BloomFooterWriter, SetsOnlyTheNamedChunks) {
  bytes f = sample_footer();
  bytes g = edit(f, {{0, 1, 5000, 60}, {1, 0, 6000, 70}});
  footer_info a = parse_file_metadata(f.data(), f.size());
  footer_info b = parse_file_metadata(g.data(), g.size());
  ASSERT_EQ(a.chunks.size(), b.chunks.size());
  for (std::size_t i = 0; i < a.chunks.size(); ++i) {
    const auto &x = a.chunks[i], &y = b.chunks[i];
    EXPECT_EQ(x.path, y.path);
    EXPECT_EQ(x.num_values, y.num_values);
    EXPECT_EQ(x.type, y.type);
    if (x.row_group == 0 && x.column == 1) {
      EXPECT_EQ(y.bloom_offset, 5000);
      EXPECT_EQ(y.bloom_length, 60);
    } else if (x.row_group == 1 && x.column == 0) {
      EXPECT_EQ(y.bloom_offset, 6000);
      EXPECT_EQ(y.bloom_length, 70);
    } else {
      EXPECT_EQ(x.bloom_offset, y.bloom_offset);
      EXPECT_EQ(x.bloom_length, y.bloom_length);
    }
  }
}

TEST(BloomFooterWriter, RefusesWhatItCannotWrite) {
  bytes f = sample_footer();
  EXPECT_THROW(edit(f, {{2, 0, 1, 1}}), parse_error);  // no such row group
  EXPECT_THROW(edit(f, {{0, 5, 1, 1}}), parse_error);  // no such column
  EXPECT_THROW(edit(f, {{0, 0, 1, 1}, {0, 0, 2, 2}}), std::invalid_argument);
  EXPECT_THROW(edit(f, {{0, 0, -1, 1}}), std::invalid_argument);
  // A plaintext footer of an encrypted file (FileMetaData field 8, encryption_algorithm).
  bytes enc = f;
  enc.pop_back();
  writer w;
  w.last.back() = 6;
  w.begin_struct(8);
  w.end_struct();
  enc.insert(enc.end(), w.out.begin(), w.out.end());
  enc.push_back(0);
  try {
    edit(enc, {{0, 0, 1, 1}});
    FAIL() << "encrypted metadata accepted";
  } catch (const parse_error& e) {
    EXPECT_NE(std::string(e.what()).find("encrypted"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(parse_file_metadata(enc.data(), enc.size()).encrypted);
  // Every truncation is an error, never a crash.
  for (std::size_t n = 0; n < f.size(); ++n)
    EXPECT_THROW(edit(bytes(f.begin(), f.begin() + n), {{0, 0, 1, 1}}), parse_error);
}

// Field ids are i16. A delta that carries an id past 32767 is wrapped by Thrift's own readers
// (Arrow, DuckDB: 32767 + 2185 deltas of 15 + 8 reads as 14, bloom_filter_offset, to them), and
// a long-form id outside the i16 range is truncated: the same bytes named another field to us,
// and a footer we wrote with our own filter location had theirs too. Both are refused.
TEST(BloomFooterWriter, FieldIdsOutsideI16AreRefused) {
  auto footer = [](auto tail) {
    writer w;
    w.i32(1, 2);
    one_column_schema(w, 2, "k");
    w.i64(3, 10);
    open_single_chunk(w, "k");
    w.i64(5, 10);
    tail(w);
    close_single_chunk(w);
    w.out.push_back(0);
    return w.out;
  };
  const bytes wrapped = footer([](writer& w) {
    w.field(32767, thrift::kTrue);
    w.out.insert(w.out.end(), 2185, 15 << 4 | thrift::kTrue);
    w.out.push_back(8 << 4 | thrift::kI64);
    w.zz(4096);  // what Thrift's readers take for bloom_filter_offset
  });
  const bytes truncated = footer([](writer& w) {
    w.out.push_back(thrift::kI64);
    w.zz(65536 + 14);
    w.zz(4096);
  });
  const bytes below = footer([](writer& w) {
    w.out.push_back(thrift::kTrue);
    w.zz(-32769);
  });
  for (const bytes& f : {wrapped, truncated, below}) {
    for (std::size_t n : {std::size_t{0}, std::size_t{1}}) {
      try {
        edit(f, std::vector<bloom_location>(n, {0, 0, 1234, 56}));
        FAIL() << "an id outside the i16 range was accepted";
      } catch (const parse_error& e) {
        EXPECT_NE(std::string(e.what()).find("i16"), std::string::npos) << e.what();
      }
    }
    EXPECT_THROW(parse_file_metadata(f.data(), f.size()), parse_error);
  }
}

TEST(BloomFooterWriter, StatisticsAreRead) {
  writer w;
  one_column_schema(w, 6, "s");
  open_single_chunk(w, "s");
  w.begin_struct(12);
  w.str(1, "legacy max");  // ignored: its order is not defined
  w.i64(3, 7);
  w.str(5, "zz");
  w.str(6, "aa");
  w.end_struct();
  close_single_chunk(w);
  w.out.push_back(0);
  footer_info info = parse_file_metadata(w.out.data(), w.out.size());
  ASSERT_EQ(info.chunks.size(), 1u);
  const auto& c = info.chunks[0];
  EXPECT_EQ(c.null_count, 7);
  EXPECT_TRUE(c.has_min && c.has_max);
  EXPECT_EQ(c.min_value, "aa");
  EXPECT_EQ(c.max_value, "zz");
}

TEST(BloomFooterWriter, ProbeReadsBlocksAndAgreesWithWholeFilters) {
  // A file of filters only: "PAR1", three filter blobs, the footer the writer made.
  std::mt19937_64 rng(7);
  filter small(1024), large(1 << 16);
  std::vector<std::uint64_t> present;
  for (int i = 0; i < 300; ++i) {
    present.push_back(rng());
    small.insert(present.back());
    large.insert(present.back());
  }
  bytes file = {'P', 'A', 'R', '1'};
  std::vector<bloom_location> locs;
  for (const filter* f : {&small, &large}) {
    bytes blob = serialize(*f);
    locs.push_back({static_cast<int>(locs.size()), 0, static_cast<std::int64_t>(file.size()),
                    static_cast<std::int32_t>(blob.size())});
    file.insert(file.end(), blob.begin(), blob.end());
  }
  bytes bad = serialize(small);
  bad[1] ^= 0x7f;  // numBytes no longer a multiple of 32
  locs.push_back(
      {0, 1, static_cast<std::int64_t>(file.size()), static_cast<std::int32_t>(bad.size())});
  file.insert(file.end(), bad.begin(), bad.end());
  bytes meta = sample_footer();
  meta = set_bloom_locations(meta.data(), meta.size(), locs);
  append_footer(file, meta);
  char path[] = "/tmp/simdex_probe_XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, file.data(), file.size()), static_cast<ssize_t>(file.size()));
  close(fd);

  parquet_file pf(path);
  std::vector<const column_chunk_info*> chunks;
  for (const auto& c : pf.footer().chunks) chunks.push_back(&c);
  ASSERT_EQ(chunks.size(), 4u);  // (0,0) small, (0,1) corrupt, (1,0) large, (1,1) none
  // Both sides of the read plan's cut (an eighth of the blocks: 4 for small, 256 for large).
  for (std::size_t nh : {1u, 3u, 4u, 5u, 100u, 255u, 256u, 2000u, 70000u}) {
    std::vector<std::uint64_t> hs;
    for (std::size_t j = 0; j < nh; ++j) hs.push_back(j % 2 ? present[j % present.size()] : rng());
    std::vector<std::uint8_t> out(chunks.size() * nh, 9);
    std::vector<std::string> errors;
    auto st = pf.probe(chunks, hs, out.data(), errors);
    for (std::size_t j = 0; j < nh; ++j) {
      EXPECT_EQ(out[0 * nh + j], small.check(hs[j]) ? 1 : 0);
      EXPECT_EQ(out[1 * nh + j], 1) << "a corrupt filter must answer maybe";
      EXPECT_EQ(out[2 * nh + j], large.check(hs[j]) ? 1 : 0);
      EXPECT_EQ(out[3 * nh + j], 1) << "no filter must answer maybe";
    }
    EXPECT_TRUE(errors[0].empty() && errors[2].empty());
    EXPECT_NE(errors[1].find("numBytes"), std::string::npos) << errors[1];
    EXPECT_FALSE(errors[3].empty());
    if (nh == 1) {
      EXPECT_LT(st.bytes, 1024u) << "one key reads one block per filter";
    }
    if (nh >= 256) {  // both filters whole: their headers, the small bitset, the large one
      EXPECT_GE(st.bytes, (1u << 16) + 1024u);
    }
  }
  std::remove(path);
}
