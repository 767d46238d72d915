// Parquet I/O: the BloomFilterHeader + bitset, and the FileMetaData fields that locate each
// column chunk's filter (parquet.thrift field ids in the comments).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <memory>
#include <system_error>
#include <unordered_map>

#include "thrift.h"

namespace simdex::bloom {

parse_error::parse_error(const std::string& what, std::uint64_t offset)
    : std::runtime_error(what + " (at byte " + std::to_string(offset) + ")"),
      offset_(offset),
      message_(what) {}

const char* physical_type_name(physical_type t) noexcept {
  // Indexed by the Thrift enum value of Parquet's Type, which physical_type mirrors.
  static constexpr const char* kNames[] = {
      "BOOLEAN", "INT32",  "INT64",      "INT96",
      "FLOAT",   "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  const auto i = static_cast<std::size_t>(t);  // unknown (-1) wraps past the end
  return i < std::size(kNames) ? kNames[i] : "UNKNOWN";
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

// Charges what the parsed footer makes us hold against a limit proportional to its size.
class budget {
 public:
  explicit budget(std::size_t footer_bytes)
      : limit_(footer_bytes * kChunkBytesPerFooterByte + (std::size_t{1} << 20)) {}
  void charge(thrift::reader& r, std::size_t bytes, const char* what) {
    used_ += bytes;
    if (used_ > limit_)
      r.fail(std::string("footer describes more ") + what + " than its size allows (over " +
             std::to_string(limit_) + " bytes of memory for a " +
             std::to_string((limit_ - (std::size_t{1} << 20)) / kChunkBytesPerFooterByte) +
             "-byte footer)");
  }
  // push_back that charges the vector's growth before it happens.
  template <class T>
  void push(thrift::reader& r, std::vector<T>& v, T&& x, const char* what) {
    if (v.size() == v.capacity()) {
      std::size_t cap = v.capacity() ? v.capacity() * 2 : 16;
      charge(r, (cap - v.capacity()) * sizeof(T), what);
      v.reserve(cap);
    }
    v.push_back(std::move(x));
  }

 private:
  std::size_t limit_, used_ = 0;
};

bool valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? c : c & (0x7f >> n);
    for (std::size_t k = 1; k < n; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = cp << 6 | (d & 0x3f);
    }
    // Overlong forms, surrogates and code points past U+10FFFF are not UTF-8.
    static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

std::string_view utf8_string(thrift::reader& r, const char* what) {
  std::string_view s = r.binary();
  if (!valid_utf8(s)) r.fail(std::string(what) + " is not valid UTF-8");
  return s;
}

struct schema_element {
  int type = -1, type_length = 0, num_children = 0;
  int converted = -1, scale = 0, precision = 0;
  std::string name, logical;
};

const char* time_unit(thrift::reader& r) {
  int last = 0;
  const char* unit = "OTHER";
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.type == thrift::kStruct && f.id >= 1 && f.id <= 3)
      unit = f.id == 1 ? "MILLIS" : f.id == 2 ? "MICROS" : "NANOS";
    r.skip(f.type);
  }
  return unit;
}

// LogicalType union (parquet.thrift): the member's field id names the type.
std::string read_logical_type(thrift::reader& r) {
  std::string out;
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.type != thrift::kStruct) {
      r.skip(f.type);
      continue;
    }
    static const char* kPlain[] = {nullptr, "STRING", "OTHER", "OTHER",  "ENUM",  nullptr,
                                   "DATE",  nullptr,  nullptr, "OTHER",  nullptr, "OTHER",
                                   "JSON",  "BSON",   "UUID",  "FLOAT16"};
    if (f.id == 5) {  // DECIMAL {1: scale, 2: precision}
      int scale = 0, precision = 0, l = 0;
      for (auto g = r.next_field(l); g.type != thrift::kStop; g = r.next_field(l)) {
        if (g.id == 1 && g.type == thrift::kI32)
          scale = r.i32();
        else if (g.id == 2 && g.type == thrift::kI32)
          precision = r.i32();
        else
          r.skip(g.type);
      }
      out = "DECIMAL(" + std::to_string(precision) + "," + std::to_string(scale) + ")";
    } else if (f.id == 7 || f.id == 8) {  // TIME / TIMESTAMP {1: isAdjustedToUTC, 2: unit}
      bool utc = false;
      const char* unit = "OTHER";
      int l = 0;
      for (auto g = r.next_field(l); g.type != thrift::kStop; g = r.next_field(l)) {
        if (g.id == 1 && (g.type == thrift::kTrue || g.type == thrift::kFalse))
          utc = g.type == thrift::kTrue;
        else if (g.id == 2 && g.type == thrift::kStruct)
          unit = time_unit(r);
        else
          r.skip(g.type);
      }
      out = std::string(f.id == 7 ? "TIME(" : "TIMESTAMP(") + unit + (utc ? ",UTC)" : ",LOCAL)");
    } else if (f.id == 10) {  // INTEGER {1: bitWidth (i8), 2: isSigned}
      int bits = 0, l = 0;
      bool is_signed = true;
      for (auto g = r.next_field(l); g.type != thrift::kStop; g = r.next_field(l)) {
        if (g.id == 1 && g.type == thrift::kByte)
          bits = static_cast<std::int8_t>(r.byte());
        else if (g.id == 2 && (g.type == thrift::kTrue || g.type == thrift::kFalse))
          is_signed = g.type == thrift::kTrue;
        else
          r.skip(g.type);
      }
      out = "INT(" + std::to_string(bits) + (is_signed ? ",SIGNED)" : ",UNSIGNED)");
    } else {
      r.skip(f.type);
      out = f.id >= 1 && f.id <= 15 && kPlain[f.id] ? kPlain[f.id] : "OTHER";
    }
  }
  return out;
}

// The legacy ConvertedType, for writers that set no LogicalType (its TIME/TIMESTAMP are UTC).
std::string from_converted(const schema_element& e) {
  switch (e.converted) {
    case 0:
      return "STRING";
    case 4:
      return "ENUM";
    case 5:
      return "DECIMAL(" + std::to_string(e.precision) + "," + std::to_string(e.scale) + ")";
    case 6:
      return "DATE";
    case 7:
      return "TIME(MILLIS,UTC)";
    case 8:
      return "TIME(MICROS,UTC)";
    case 9:
      return "TIMESTAMP(MILLIS,UTC)";
    case 10:
      return "TIMESTAMP(MICROS,UTC)";
    case 11:
    case 12:
    case 13:
    case 14:
      return "INT(" + std::to_string(8 << (e.converted - 11)) + ",UNSIGNED)";
    case 15:
    case 16:
    case 17:
    case 18:
      return "INT(" + std::to_string(8 << (e.converted - 15)) + ",SIGNED)";
    case 19:
      return "JSON";
    case 20:
      return "BSON";
    case 21:
      return "INTERVAL";
    case -1:
      return "";
    default:
      return "OTHER";
  }
}

schema_element read_schema_element(thrift::reader& r) {
  schema_element e;
  bool have_logical = false;
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id == 1 && f.type == thrift::kI32)
      e.type = r.i32();
    else if (f.id == 2 && f.type == thrift::kI32)
      e.type_length = r.i32();
    else if (f.id == 4 && f.type == thrift::kBinary)
      e.name = std::string(utf8_string(r, "schema element name"));
    else if (f.id == 5 && f.type == thrift::kI32)
      e.num_children = r.i32();
    else if (f.id == 6 && f.type == thrift::kI32)
      e.converted = r.i32();
    else if (f.id == 7 && f.type == thrift::kI32)
      e.scale = r.i32();
    else if (f.id == 8 && f.type == thrift::kI32)
      e.precision = r.i32();
    else if (f.id == 10 && f.type == thrift::kStruct) {
      e.logical = read_logical_type(r);
      have_logical = true;
    } else
      r.skip(f.type);
  }
  if (!have_logical) e.logical = from_converted(e);
  return e;
}

physical_type to_physical(int t) {
  return t >= 0 && t <= 7 ? static_cast<physical_type>(t) : physical_type::unknown;
}

// The leaves of the schema tree in column order (depth-first), with their dotted paths.
std::vector<column_schema> schema_leaves(thrift::reader& r,
                                         const std::vector<schema_element>& schema, budget& b) {
  std::vector<column_schema> leaves;
  if (schema.empty()) return leaves;
  if (schema[0].num_children < 0) r.fail("schema root with negative num_children");
  std::vector<std::int64_t> remaining{schema[0].num_children};
  std::vector<std::string> names;  // the path of groups open above the current element
  for (std::size_t i = 1; i < schema.size(); ++i) {
    if (remaining.empty() || remaining.back() <= 0)
      r.fail("schema has elements past its root's children");
    --remaining.back();
    const auto& e = schema[i];
    if (e.num_children < 0) r.fail("schema element with negative num_children");
    if (e.num_children > 0) {
      remaining.push_back(e.num_children);
      names.push_back(e.name);
    } else {
      column_schema c;
      for (const auto& n : names) c.path += n + ".";
      c.path += e.name;
      c.type = to_physical(e.type);
      c.type_length = e.type_length;
      c.logical = e.logical;
      b.charge(r, c.path.size() + c.logical.size(), "schema columns");
      b.push(r, leaves, std::move(c), "schema columns");
    }
    while (!remaining.empty() && remaining.back() == 0) {
      remaining.pop_back();
      if (!names.empty() && remaining.size() <= names.size()) names.pop_back();
    }
  }
  if (!remaining.empty())
    r.fail("schema root claims " + std::to_string(schema[0].num_children) +
           " children but the schema has fewer elements");
  return leaves;
}

// Statistics {3: null_count, 5: max_value, 6: min_value}; the rest is skipped.
void read_statistics(thrift::reader& r, column_chunk_info& c) {
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id == 3 && f.type == thrift::kI64) {
      c.null_count = r.i64();
    } else if ((f.id == 5 || f.id == 6) && f.type == thrift::kBinary) {
      std::string_view v = r.binary();
      (f.id == 5 ? c.max_value : c.min_value).assign(v.data(), v.size());
      (f.id == 5 ? c.has_max : c.has_min) = true;
    } else {
      r.skip(f.type);
    }
  }
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
        c.path += utf8_string(r, "column path (path_in_schema)");
      }
    } else if (f.id == 5 && f.type == thrift::kI64) {
      c.num_values = r.i64();
    } else if (f.id == 14 && f.type == thrift::kI64) {
      c.bloom_offset = r.i64();
    } else if (f.id == 15 && f.type == thrift::kI32) {
      c.bloom_length = r.i32();
    } else if (f.id == 12 && f.type == thrift::kStruct) {
      read_statistics(r, c);
    } else {
      r.skip(f.type);
    }
  }
}

struct chunk_sink {
  chunk_selector keep;
  const void* ctx;
  budget& b;
  std::vector<column_chunk_info>& out;
};

void read_row_group(thrift::reader& r, int rg, chunk_sink& sink) {
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
        if (cf.id == 3 && cf.type == thrift::kStruct) {
          read_column_meta(r, c);  // meta_data
        } else {
          if (cf.id == 8 || cf.id == 9) c.encrypted = true;  // crypto / encrypted metadata
          r.skip(cf.type);
        }
      }
      if (sink.keep && !sink.keep(c, sink.ctx)) continue;
      for (const std::string* s : {&c.path, &c.min_value, &c.max_value})
        if (s->capacity() > 15) sink.b.charge(r, s->capacity(), "column chunks");
      sink.b.push(r, sink.out, std::move(c), "column chunks");
    }
  }
}

}  // namespace

footer_info parse_file_metadata(const void* data, std::size_t size, chunk_selector keep,
                                const void* ctx) {
  thrift::reader r(static_cast<const std::uint8_t*>(data), size);
  budget b(size);
  footer_info info;
  chunk_sink sink{keep, ctx, b, info.chunks};
  std::vector<schema_element> schema;
  bool have_schema = false, have_row_groups = false;
  int last = 0;
  for (auto f = r.next_field(last); f.type != thrift::kStop; f = r.next_field(last)) {
    if (f.id == 2 && f.type == thrift::kList) {  // schema
      if (have_schema) r.fail("file metadata has two schema fields");
      auto h = r.list();
      if (h.elem_type != thrift::kStruct) r.fail("schema is not a list of structs");
      for (std::uint64_t i = 0; i < h.size; ++i) {
        schema_element e = read_schema_element(r);
        b.charge(r, e.name.capacity() > 15 ? e.name.capacity() : 0, "schema elements");
        b.push(r, schema, std::move(e), "schema elements");
      }
      have_schema = true;
    } else if (f.id == 3 && f.type == thrift::kI64) {  // num_rows
      info.num_rows = r.i64();
    } else if (f.id == 8) {  // encryption_algorithm
      info.encrypted = true;
      r.skip(f.type);
    } else if (f.id == 4 && f.type == thrift::kList) {  // row_groups
      if (have_row_groups) r.fail("file metadata has two row_groups fields");
      auto h = r.list();
      if (h.elem_type != thrift::kStruct) r.fail("row_groups is not a list of structs");
      if (h.size > INT32_MAX) r.fail("too many row groups");
      for (std::uint64_t i = 0; i < h.size; ++i) read_row_group(r, static_cast<int>(i), sink);
      info.num_row_groups = static_cast<int>(h.size);
      have_row_groups = true;
    } else {
      r.skip(f.type);
    }
  }
  if (!have_schema || !have_row_groups) r.fail("file metadata lacks schema or row_groups");
  info.columns = schema_leaves(r, schema, b);
  for (auto& c : info.chunks)
    if (static_cast<std::size_t>(c.column) < info.columns.size())
      c.type_length = info.columns[static_cast<std::size_t>(c.column)].type_length;
  return info;
}

// ---- files ----------------------------------------------------------------------------------

namespace {

[[noreturn]] void fail_io(const std::string& path, int err) {
  throw std::system_error(err ? err : EIO, std::generic_category(), path);
}

}  // namespace

parquet_file::parquet_file(const std::string& path, chunk_selector keep, const void* ctx)
    : path_(path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer; fstat then
  // refuses anything that is not a regular file before a single read.
  fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd_ < 0) fail_io(path, errno);
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    int err = errno;
    ::close(fd_);
    fail_io(path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    throw std::system_error(std::make_error_code(std::errc::invalid_argument),
                            path +
                                ": not a regular file (FIFOs, devices and directories are "
                                "refused)");
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  try {
    if (size_ < 12) throw parse_error(path + ": too small to be a Parquet file", 0);
    std::uint8_t tail[8];
    read_at(size_ - 8, tail, 8);
    if (std::memcmp(tail + 4, "PARE", 4) == 0)
      throw parse_error(path + ": encrypted footers are not supported", size_ - 4);
    if (std::memcmp(tail + 4, "PAR1", 4) != 0)
      throw parse_error(path + ": no PAR1 magic at the end", size_ - 4);
    std::uint32_t len;
    std::memcpy(&len, tail, 4);
    if (len > size_ - 12)
      throw parse_error(path + ": footer length " + std::to_string(len) + " exceeds the file",
                        size_ - 8);
    const std::uint64_t start = size_ - 8 - len;
    footer_offset_ = start;
    footer_length_ = len;
    std::vector<std::uint8_t> meta(len);
    read_at(start, meta.data(), len);
    try {
      footer_ = parse_file_metadata(meta.data(), meta.size(), keep, ctx);
    } catch (const parse_error& e) {
      throw parse_error(path + ": footer: " + e.message(), start + e.offset());
    }
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

parquet_file::~parquet_file() { ::close(fd_); }

void parquet_file::read_at(std::uint64_t offset, void* out, std::size_t n) const {
  if (offset > size_ || n > size_ - offset)
    throw parse_error(path_ + ": range of " + std::to_string(n) +
                          " bytes runs past the end of the file (" + std::to_string(size_) +
                          " bytes)",
                      offset);
  auto* p = static_cast<std::uint8_t*>(out);
  while (n > 0) {
    ssize_t got = ::pread(fd_, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail_io(path_, errno);
    if (got == 0) throw parse_error(path_ + ": file shrank while being read", offset);
    p += got;
    n -= static_cast<std::size_t>(got);
    offset += static_cast<std::uint64_t>(got);
  }
}

parquet_file::bitset_range parquet_file::locate_filter(const column_chunk_info& c) const {
  const std::string where =
      path_ + ": row group " + std::to_string(c.row_group) + ", column '" + c.path + "': ";
  if (c.bloom_offset < 0) throw std::invalid_argument(where + "no bloom filter");
  const auto off = static_cast<std::uint64_t>(c.bloom_offset);
  if (off >= size_) throw parse_error(where + "bloom filter offset past the end of the file", off);
  // The header is ~17 bytes; 256 leaves room for unknown fields a future writer may add.
  std::uint8_t head[256];
  const std::size_t head_n = static_cast<std::size_t>(std::min<std::uint64_t>(256, size_ - off));
  read_at(off, head, head_n);
  std::size_t header_len = 0;
  std::uint64_t num_bytes;
  try {
    num_bytes = parse_header(head, head_n, off, header_len);
  } catch (const parse_error& e) {
    throw parse_error(where + e.message(), e.offset());
  }
  if (c.bloom_length > 0 && static_cast<std::uint64_t>(c.bloom_length) < header_len + num_bytes)
    throw parse_error(where + "bloom_filter_length " + std::to_string(c.bloom_length) +
                          " is shorter than its header + bitset",
                      off);
  if (num_bytes > size_ - off - header_len)
    throw parse_error(where + "bloom filter bitset of " + std::to_string(num_bytes) +
                          " bytes runs past the end of the file",
                      off + header_len);
  return {off + header_len, num_bytes};
}

filter parquet_file::read_filter(const column_chunk_info& c) const {
  const bitset_range r = locate_filter(c);
  // Read straight into the filter's storage: no second copy of a large bitset.
  filter f = filter::with_blocks(r.size / kBlockBytes);
  read_at(r.offset, f.words(), static_cast<std::size_t>(r.size));
  return f;
}

footer_info read_footer(const std::string& path) {
  parquet_file f(path);
  return f.footer();
}

std::vector<column_filter> read_filters(const std::string& path) {
  parquet_file file(path, [](const column_chunk_info& c, const void*) {
    return c.bloom_offset >= 0 && usable_filter(c);
  });
  std::vector<column_filter> out;
  std::unordered_map<std::int64_t, std::size_t> seen;  // offset -> index in out
  for (const auto& c : file.footer().chunks) {
    auto [it, fresh] = seen.emplace(c.bloom_offset, out.size());
    out.push_back({c, fresh ? file.read_filter(c) : out[it->second].bloom});
  }
  return out;
}

}  // namespace simdex::bloom
