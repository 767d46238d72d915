// Parquet I/O: the BloomFilterHeader + bitset, and the FileMetaData fields that locate each
// column chunk's filter (parquet.thrift field ids in the comments).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <system_error>

#include "thrift.h"

namespace simdex::bloom {

parse_error::parse_error(const std::string& what, std::uint64_t offset)
    : std::runtime_error(what + " (at byte " + std::to_string(offset) + ")"), offset_(offset) {}

const char* physical_type_name(physical_type t) noexcept {
  switch (t) {
    case physical_type::boolean:
      return "BOOLEAN";
    case physical_type::int32:
      return "INT32";
    case physical_type::int64:
      return "INT64";
    case physical_type::int96:
      return "INT96";
    case physical_type::float_:
      return "FLOAT";
    case physical_type::double_:
      return "DOUBLE";
    case physical_type::byte_array:
      return "BYTE_ARRAY";
    case physical_type::fixed_len_byte_array:
      return "FIXED_LEN_BYTE_ARRAY";
    default:
      return "UNKNOWN";
  }
}

std::vector<std::uint8_t> serialize(const filter& f) {
  if (f.empty() || f.size_bytes() > static_cast<std::size_t>(INT32_MAX))
    throw std::invalid_argument("cannot serialize an empty or > 2 GiB bloom filter");
  std::vector<std::uint8_t> out;
  out.reserve(f.size_bytes() + 20);
  thrift::write_i32_field(out, 1, static_cast<std::int32_t>(f.size_bytes()));  // 1: numBytes
  // 2: algorithm {1: BLOCK {}}, 3: hash {1: XXHASH {}}, 4: compression {1: UNCOMPRESSED {}}
  for (int i = 0; i < 3; ++i) {
    out.push_back(0x10 | thrift::kStruct);
    out.push_back(0x10 | thrift::kStruct);
    out.push_back(thrift::kStop);
    out.push_back(thrift::kStop);
  }
  out.push_back(thrift::kStop);
  const auto* bits = reinterpret_cast<const std::uint8_t*>(f.words());
  out.insert(out.end(), bits, bits + f.size_bytes());
  return out;
}

namespace {

// A union whose only accepted member is field 1, an empty struct (BLOCK, XXHASH, UNCOMPRESSED).
void expect_union_member1(thrift::reader& r, const char* what) {
  int last = 0, members = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id != 1 || f.type != thrift::kStruct)
      r.fail(std::string("unsupported bloom filter ") + what + " (union field " +
             std::to_string(f.id) + ")");
    r.skip(f.type);
    ++members;
  }
  if (members != 1) r.fail(std::string("bloom filter ") + what + " union has no member");
}

// Parses the header; returns numBytes and sets header_len.
std::uint64_t parse_header(const std::uint8_t* data, std::size_t size, std::uint64_t base,
                           std::size_t& header_len) {
  thrift::reader r(data, size, base);
  std::int64_t num_bytes = -1;
  bool alg = false, hash = false, comp = false;
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id == 1 && f.type == thrift::kI32) {
      std::size_t at = r.pos();
      num_bytes = r.i32();
      if (num_bytes <= 0 || num_bytes % static_cast<std::int64_t>(kBlockBytes) != 0)
        throw parse_error("bloom filter numBytes " + std::to_string(num_bytes) +
                              " is not a positive multiple of 32",
                          base + at);
    } else if (f.id >= 2 && f.id <= 4 && f.type == thrift::kStruct) {
      const char* names[] = {"algorithm", "hash", "compression"};
      expect_union_member1(r, names[f.id - 2]);
      (f.id == 2 ? alg : f.id == 3 ? hash : comp) = true;
    } else if (f.id >= 1 && f.id <= 4) {
      r.fail("bloom filter header field " + std::to_string(f.id) + " has the wrong type");
    } else {
      r.skip(f.type);
    }
  }
  if (num_bytes < 0) r.fail("bloom filter header lacks numBytes");
  if (!alg || !hash || !comp) r.fail("bloom filter header lacks algorithm, hash or compression");
  header_len = r.pos();
  return static_cast<std::uint64_t>(num_bytes);
}

}  // namespace

filter parse(const void* data, std::size_t size, std::size_t* consumed) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  std::size_t header_len = 0;
  std::uint64_t num_bytes = parse_header(p, size, 0, header_len);
  if (num_bytes > size - header_len)
    throw parse_error("bloom filter bitset of " + std::to_string(num_bytes) +
                          " bytes truncated to " + std::to_string(size - header_len),
                      size);
  filter f = filter::from_bitset(p + header_len, static_cast<std::size_t>(num_bytes));
  if (consumed) *consumed = header_len + static_cast<std::size_t>(num_bytes);
  return f;
}

// ---- FileMetaData ---------------------------------------------------------------------------

namespace {

struct schema_element {
  int type = -1, type_length = 0, num_children = 0;
  std::string name;
};

schema_element read_schema_element(thrift::reader& r) {
  schema_element e;
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id == 1 && f.type == thrift::kI32)
      e.type = r.i32();
    else if (f.id == 2 && f.type == thrift::kI32)
      e.type_length = r.i32();
    else if (f.id == 4 && f.type == thrift::kBinary)
      e.name = std::string(r.binary());
    else if (f.id == 5 && f.type == thrift::kI32)
      e.num_children = r.i32();
    else
      r.skip(f.type);
  }
  return e;
}

// The leaves of the schema tree in column order (depth-first), with their FLBA widths.
std::vector<int> leaf_type_lengths(thrift::reader& r, const std::vector<schema_element>& schema) {
  std::vector<int> leaves;
  if (schema.empty()) return leaves;
  std::vector<std::int64_t> remaining{schema[0].num_children};
  for (std::size_t i = 1; i < schema.size(); ++i) {
    if (remaining.empty() || remaining.back() <= 0)
      r.fail("schema has elements past its root's children");
    --remaining.back();
    const auto& e = schema[i];
    if (e.num_children < 0) r.fail("schema element with negative num_children");
    if (e.num_children > 0)
      remaining.push_back(e.num_children);
    else
      leaves.push_back(e.type_length);
    while (!remaining.empty() && remaining.back() == 0) remaining.pop_back();
  }
  return leaves;
}

physical_type to_physical(int t) {
  return t >= 0 && t <= 7 ? static_cast<physical_type>(t) : physical_type::unknown;
}

void read_column_meta(thrift::reader& r, column_chunk_info& c) {
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id == 1 && f.type == thrift::kI32) {
      c.type = to_physical(r.i32());
    } else if (f.id == 3 && f.type == thrift::kList) {
      auto h = r.list();
      if (h.elem_type != thrift::kBinary) r.fail("path_in_schema is not a list of strings");
      c.path.clear();
      for (std::uint64_t i = 0; i < h.size; ++i) {
        if (i) c.path += '.';
        c.path += r.binary();
      }
    } else if (f.id == 5 && f.type == thrift::kI64) {
      c.num_values = r.i64();
    } else if (f.id == 14 && f.type == thrift::kI64) {
      c.bloom_offset = r.i64();
    } else if (f.id == 15 && f.type == thrift::kI32) {
      c.bloom_length = r.i32();
    } else {
      r.skip(f.type);
    }
  }
}

void read_row_group(thrift::reader& r, int rg, std::vector<column_chunk_info>& out) {
  int last = 0;
  bool seen_columns = false;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id != 1 || f.type != thrift::kList) {
      r.skip(f.type);
      continue;
    }
    if (seen_columns) r.fail("row group has two columns fields");
    seen_columns = true;
    auto h = r.list();
    if (h.elem_type != thrift::kStruct) r.fail("row group columns is not a list of structs");
    if (h.size > INT32_MAX) r.fail("too many columns");
    for (std::uint64_t i = 0; i < h.size; ++i) {
      column_chunk_info c;
      c.row_group = rg;
      c.column = static_cast<int>(i);
      int clast = 0;
      for (auto cf = r.next_field(clast); cf.type != thrift::kStop; cf = r.next_field(clast)) {
        if (cf.id == 3 && cf.type == thrift::kStruct)
          read_column_meta(r, c);  // meta_data
        else
          r.skip(cf.type);
      }
      out.push_back(std::move(c));
    }
  }
}

}  // namespace

footer_info parse_file_metadata(const void* data, std::size_t size) {
  thrift::reader r(static_cast<const std::uint8_t*>(data), size);
  footer_info info;
  std::vector<schema_element> schema;
  bool have_schema = false, have_row_groups = false;
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id == 2 && f.type == thrift::kList) {  // schema
      if (have_schema) r.fail("file metadata has two schema fields");
      auto h = r.list();
      if (h.elem_type != thrift::kStruct) r.fail("schema is not a list of structs");
      for (std::uint64_t i = 0; i < h.size; ++i) schema.push_back(read_schema_element(r));
      have_schema = true;
    } else if (f.id == 3 && f.type == thrift::kI64) {  // num_rows
      info.num_rows = r.i64();
    } else if (f.id == 4 && f.type == thrift::kList) {  // row_groups
      if (have_row_groups) r.fail("file metadata has two row_groups fields");
      auto h = r.list();
      if (h.elem_type != thrift::kStruct) r.fail("row_groups is not a list of structs");
      if (h.size > INT32_MAX) r.fail("too many row groups");
      for (std::uint64_t i = 0; i < h.size; ++i)
        read_row_group(r, static_cast<int>(i), info.chunks);
      info.num_row_groups = static_cast<int>(h.size);
      have_row_groups = true;
    } else {
      r.skip(f.type);
    }
  }
  if (!have_schema || !have_row_groups) r.fail("file metadata lacks schema or row_groups");
  std::vector<int> widths = leaf_type_lengths(r, schema);
  for (auto& c : info.chunks)
    if (static_cast<std::size_t>(c.column) < widths.size())
      c.type_length = widths[static_cast<std::size_t>(c.column)];
  return info;
}

namespace {

struct file_closer {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

class file_reader {
 public:
  explicit file_reader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb")) {
    if (!f_) throw std::system_error(errno, std::generic_category(), path);
    if (std::fseek(f_.get(), 0, SEEK_END) != 0) fail_io();
    long end = std::ftell(f_.get());
    if (end < 0) fail_io();
    size_ = static_cast<std::uint64_t>(end);
  }
  std::uint64_t size() const { return size_; }
  std::vector<std::uint8_t> read(std::uint64_t offset, std::uint64_t n) {
    if (offset > size_ || n > size_ - offset)
      throw parse_error(path_ + ": range of " + std::to_string(n) +
                            " bytes runs past the end of the file (" + std::to_string(size_) +
                            " bytes)",
                        offset);
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(n));
    if (std::fseek(f_.get(), static_cast<long>(offset), SEEK_SET) != 0) fail_io();
    if (n && std::fread(buf.data(), 1, buf.size(), f_.get()) != buf.size()) fail_io();
    return buf;
  }

 private:
  [[noreturn]] void fail_io() {
    throw std::system_error(errno ? errno : EIO, std::generic_category(), path_);
  }
  std::string path_;
  std::unique_ptr<std::FILE, file_closer> f_;
  std::uint64_t size_ = 0;
};

footer_info read_footer(file_reader& in, const std::string& path) {
  if (in.size() < 12) throw parse_error(path + ": too small to be a Parquet file", 0);
  auto tail = in.read(in.size() - 8, 8);
  if (std::memcmp(tail.data() + 4, "PARE", 4) == 0)
    throw parse_error(path + ": encrypted footers are not supported", in.size() - 4);
  if (std::memcmp(tail.data() + 4, "PAR1", 4) != 0)
    throw parse_error(path + ": no PAR1 magic at the end", in.size() - 4);
  std::uint32_t len;
  std::memcpy(&len, tail.data(), 4);
  if (len > in.size() - 12)
    throw parse_error(path + ": footer length " + std::to_string(len) + " exceeds the file",
                      in.size() - 8);
  const std::uint64_t start = in.size() - 8 - len;
  auto meta = in.read(start, len);
  try {
    return parse_file_metadata(meta.data(), meta.size());
  } catch (const parse_error& e) {
    throw parse_error(path + ": footer: " + e.what(), start + e.offset());
  }
}

}  // namespace

footer_info read_footer(const std::string& path) {
  file_reader in(path);
  return read_footer(in, path);
}

std::vector<column_filter> read_filters(const std::string& path) {
  file_reader in(path);
  footer_info info = read_footer(in, path);
  std::vector<column_filter> out;
  for (const auto& c : info.chunks) {
    if (c.bloom_offset < 0) continue;
    const auto off = static_cast<std::uint64_t>(c.bloom_offset);
    if (off >= in.size())
      throw parse_error(path + ": bloom filter offset past the end of the file", off);
    // The header is ~17 bytes; 256 leaves room for unknown fields a future writer may add.
    auto head = in.read(off, std::min<std::uint64_t>(256, in.size() - off));
    std::size_t header_len = 0;
    std::uint64_t num_bytes = parse_header(head.data(), head.size(), off, header_len);
    if (c.bloom_length > 0 && static_cast<std::uint64_t>(c.bloom_length) < header_len + num_bytes)
      throw parse_error(path + ": bloom_filter_length " + std::to_string(c.bloom_length) +
                            " is shorter than its header + bitset",
                        off);
    auto bits = in.read(off + header_len, num_bytes);
    out.push_back({c, filter::from_bitset(bits.data(), bits.size())});
  }
  return out;
}

}  // namespace simdex::bloom
