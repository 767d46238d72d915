// Rewrites a FileMetaData so that chosen column chunks point at new bloom filters, copying every
// other byte through untouched: fields this code does not know (newer format versions, writer
// extensions) survive exactly, and offsets of pages and indexes stay valid because the data
// before the footer is not moved.
#include <algorithm>
#include <map>
#include <set>

#include "thrift.h"

namespace simdex::bloom {

namespace {

using thrift::reader;
using bytes = std::vector<std::uint8_t>;

struct field_span {
  int id, type;
  std::size_t header, value, end;  // [header, value): field header; [value, end): its value
};

class editor {
 public:
  editor(const std::uint8_t* p, std::size_t n,
         const std::map<std::pair<int, int>, bloom_location>& l)
      : p_(p), n_(n), r_(p, n), locs_(l) {}

  bytes run() {
    int last = 0;
    bool row_groups = false;
    for (auto f = next(last); f.type != thrift::kStop; f = next(last)) {
      if (f.id == 8) r_.fail("the file's metadata is encrypted (encryption_algorithm is set)");
      if (f.id == 4 && f.type == thrift::kList && !row_groups) {
        row_groups = true;
        copy_to(r_.pos());
        auto h = r_.list();
        if (h.elem_type != thrift::kStruct) r_.fail("row_groups is not a list of structs");
        copy_to(r_.pos());
        for (std::uint64_t i = 0; i < h.size; ++i) row_group(static_cast<int>(i));
      } else {
        r_.skip(f.type);
      }
    }
    copy_to(n_);  // bytes after the struct (none from real writers) are kept too
    if (!row_groups) r_.fail("file metadata lacks row_groups");
    for (const auto& [key, loc] : locs_)
      if (!done_.count(key))
        r_.fail("no column chunk " + std::to_string(loc.column) + " in row group " +
                std::to_string(loc.row_group));
    return std::move(out_);
  }

 private:
  reader::field next(int& last) { return r_.next_field(last); }
  void copy_to(std::size_t end) {
    out_.insert(out_.end(), p_ + copied_, p_ + end);
    copied_ = end;
  }

  void row_group(int rg) {
    int last = 0;
    for (auto f = next(last); f.type != thrift::kStop; f = next(last)) {
      if (f.id != 1 || f.type != thrift::kList) {
        r_.skip(f.type);
        continue;
      }
      auto h = r_.list();
      if (h.elem_type != thrift::kStruct) r_.fail("row group columns is not a list of structs");
      for (std::uint64_t i = 0; i < h.size; ++i) column_chunk(rg, static_cast<int>(i));
    }
  }

  void column_chunk(int rg, int col) {
    auto it = locs_.find({rg, col});
    int last = 0;
    bool has_meta = false;
    for (auto f = next(last); f.type != thrift::kStop; f = next(last)) {
      if (it != locs_.end() && (f.id == 8 || f.id == 9))
        r_.fail("column chunk " + std::to_string(col) + " of row group " + std::to_string(rg) +
                " is encrypted");
      if (it != locs_.end() && f.id == 3 && f.type == thrift::kStruct) {
        copy_to(r_.pos());
        column_meta(it->second);
        has_meta = true;
      } else {
        r_.skip(f.type);
      }
    }
    if (it != locs_.end()) {
      if (!has_meta)
        r_.fail("column chunk " + std::to_string(col) + " of row group " + std::to_string(rg) +
                " has no meta_data");
      done_.insert({rg, col});
    }
  }

  // ColumnMetaData: every field copied, 14 and 15 replaced or inserted in id order.
  void column_meta(const bloom_location& loc) {
    std::vector<field_span> fields;
    int last = 0;
    for (;;) {
      const std::size_t header = r_.pos();
      auto f = next(last);
      if (f.type == thrift::kStop) break;
      const std::size_t value = r_.pos();
      r_.skip(f.type);
      fields.push_back({f.id, f.type, header, value, r_.pos()});
    }
    copied_ = r_.pos();  // everything up to the stop byte is re-emitted below
    bytes v14, v15;
    write_zigzag(v14, loc.offset);
    write_zigzag(v15, loc.length);
    int prev_in = 0, prev_out = 0;
    bool placed = false;
    auto emit_new = [&] {
      emit_header(14, thrift::kI64, prev_out);
      out_.insert(out_.end(), v14.begin(), v14.end());
      emit_header(15, thrift::kI32, prev_out);
      out_.insert(out_.end(), v15.begin(), v15.end());
      placed = true;
    };
    for (const auto& f : fields) {
      if (f.id == 14 || f.id == 15) {
        prev_in = f.id;
        continue;
      }
      if (!placed && f.id > 15) emit_new();
      if (prev_in == prev_out) {  // same delta base: the original header bytes still hold
        out_.insert(out_.end(), p_ + f.header, p_ + f.value);
        prev_out = f.id;
      } else {
        emit_header(f.id, f.type, prev_out);
      }
      out_.insert(out_.end(), p_ + f.value, p_ + f.end);
      prev_in = f.id;
    }
    if (!placed) emit_new();
    out_.push_back(thrift::kStop);
  }

  // Ids are i16 here: the reader refuses any other, so the long form writes back what it read.
  void emit_header(int id, int type, int& prev) {
    const int delta = id - prev;
    if (delta > 0 && delta <= 15) {
      out_.push_back(static_cast<std::uint8_t>(delta << 4 | type));
    } else {
      out_.push_back(static_cast<std::uint8_t>(type));
      write_zigzag(out_, static_cast<std::int16_t>(id));
    }
    prev = id;
  }
  static void write_zigzag(bytes& out, std::int64_t v) {
    thrift::write_varint(
        out, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }

  const std::uint8_t* p_;
  std::size_t n_;
  reader r_;
  const std::map<std::pair<int, int>, bloom_location>& locs_;
  std::set<std::pair<int, int>> done_;
  bytes out_;
  std::size_t copied_ = 0;
};

}  // namespace

std::vector<std::uint8_t> set_bloom_locations(const void* footer, std::size_t size,
                                              std::span<const bloom_location> locs) {
  std::map<std::pair<int, int>, bloom_location> by_chunk;
  for (const auto& l : locs) {
    if (l.offset < 0 || l.length <= 0)
      throw std::invalid_argument("bloom filter location with a negative offset or no length");
    if (!by_chunk.emplace(std::pair{l.row_group, l.column}, l).second)
      throw std::invalid_argument("two bloom filter locations for row group " +
                                  std::to_string(l.row_group) + ", column " +
                                  std::to_string(l.column));
  }
  editor e(static_cast<const std::uint8_t*>(footer), size, by_chunk);
  return e.run();
}

}  // namespace simdex::bloom
