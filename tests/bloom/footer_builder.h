// Building Thrift-compact footers by hand in tests: a minimal writer and a sample footer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bloom/thrift.h"

namespace simdex::bloom::test {

// Minimal compact-protocol writer for building footers in tests.
struct writer {
  std::vector<std::uint8_t> out;
  std::vector<int> last{0};
  void field(int id, int type) {
    int d = id - last.back();
    if (d > 0 && d <= 15) {
      out.push_back(static_cast<std::uint8_t>(d << 4 | type));
    } else {
      out.push_back(static_cast<std::uint8_t>(type));
      zz(id);
    }
    last.back() = id;
  }
  void zz(std::int64_t v) {
    thrift::write_varint(
        out, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  void i32(int id, std::int32_t v) {
    field(id, thrift::kI32);
    zz(v);
  }
  void i64(int id, std::int64_t v) {
    field(id, thrift::kI64);
    zz(v);
  }
  void str(int id, const std::string& s) {
    field(id, thrift::kBinary);
    raw_str(s);
  }
  void raw_str(const std::string& s) {
    thrift::write_varint(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  void begin_struct(int id) {
    field(id, thrift::kStruct);
    last.push_back(0);
  }
  void begin_elem() { last.push_back(0); }
  void end_struct() {
    out.push_back(0);
    last.pop_back();
  }
  // SchemaElements, as elements of the schema list: a group (4: name, 5: num_children) and a
  // leaf (1: type, 2: type_length when not 0, 4: name).
  void group(const std::string& name, int children) {
    begin_elem();
    str(4, name);
    i32(5, children);
    end_struct();
  }
  void leaf(const std::string& name, int type, int type_length = 0) {
    begin_elem();
    i32(1, type);
    if (type_length != 0) i32(2, type_length);
    str(4, name);
    end_struct();
  }
  void list(int id, int elem_type, std::size_t n) {
    field(id, thrift::kList);
    if (n < 15)
      out.push_back(static_cast<std::uint8_t>(n << 4 | elem_type));
    else {
      out.push_back(static_cast<std::uint8_t>(0xf0 | elem_type));
      thrift::write_varint(out, n);
    }
  }
};

// schema: root{a: INT64, g{b: FLBA(16)}}; two row groups, column a with a filter.
inline std::vector<std::uint8_t> sample_footer() {
  writer w;
  w.i32(1, 2);
  w.list(2, thrift::kStruct, 4);
  w.group("schema", 2);
  w.leaf("a", 2);
  w.group("g", 1);
  w.leaf("b", 7, 16);
  w.i64(3, 100);
  w.list(4, thrift::kStruct, 2);
  for (int rg = 0; rg < 2; ++rg) {
    w.begin_elem();
    w.list(1, thrift::kStruct, 2);
    for (int c = 0; c < 2; ++c) {
      w.begin_elem();
      w.i64(2, 4);
      w.begin_struct(3);
      w.i32(1, c == 0 ? 2 : 7);
      w.list(2, thrift::kI32, 1);
      w.zz(0);
      w.list(3, thrift::kBinary, c == 0 ? 1 : 2);
      if (c == 0)
        w.raw_str("a");
      else {
        w.raw_str("g");
        w.raw_str("b");
      }
      w.i32(4, 0);
      w.i64(5, 50);
      w.field(12, thrift::kStruct);
      w.last.push_back(0);
      w.str(1, "max");
      w.end_struct();  // skipped
      if (c == 0) {
        w.i64(14, 1000 + rg);
        w.i32(15, 49);
      }
      w.end_struct();
      w.end_struct();
    }
    w.i64(2, 10);
    w.i64(3, 50);
    w.end_struct();
  }
  w.str(6, "simdex test");
  w.out.push_back(0);
  return w.out;
}

// FileMetaData field 2: a root with one leaf column of physical `type`.
inline void one_column_schema(writer& w, int type, const std::string& name) {
  w.list(2, thrift::kStruct, 2);
  w.group("schema", 1);
  w.leaf(name, type);
}

// FileMetaData field 4 with one row group of one column chunk, left open inside its
// ColumnMetaData (path_in_schema written) for the caller's fields; close_single_chunk ends it.
inline void open_single_chunk(writer& w, const std::string& name) {
  w.list(4, thrift::kStruct, 1);
  w.begin_elem();
  w.list(1, thrift::kStruct, 1);
  w.begin_elem();
  w.begin_struct(3);
  w.list(3, thrift::kBinary, 1);
  w.raw_str(name);
}
inline void close_single_chunk(writer& w) {
  w.end_struct();  // ColumnMetaData
  w.end_struct();  // ColumnChunk
  w.end_struct();  // RowGroup
}

// Ends a synthetic Parquet file: the footer, its length (u32 LE) and "PAR1".
inline void append_footer(std::vector<std::uint8_t>& file, const std::vector<std::uint8_t>& meta) {
  file.insert(file.end(), meta.begin(), meta.end());
  const auto len = static_cast<std::uint32_t>(meta.size());
  for (int i = 0; i < 4; ++i) file.push_back(static_cast<std::uint8_t>(len >> (8 * i)));
  for (char c : std::string("PAR1")) file.push_back(static_cast<std::uint8_t>(c));
}

}  // namespace simdex::bloom::test
