// A small Thrift compact-protocol reader (bounds-checked, skips unknown fields, depth-limited)
// and the few writer calls the bloom filter header needs. Every malformed input throws
// parse_error with the absolute offset of the byte at fault.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simdex/bloom.h"

namespace simdex::bloom::thrift {

enum type : int {
  kStop = 0,
  kTrue = 1,
  kFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12
};

// An unsigned LEB128 varint at p[at], within p[0, n): Thrift compact's integers, and in
// Parquet pages the RLE run headers and DELTA_BINARY_PACKED fields. Errors name `what` and the
// absolute offset base + at of the byte at fault.
inline std::uint64_t read_varint(const std::uint8_t* p, std::size_t n, std::size_t& at,
                                 std::uint64_t base, const char* what) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (at >= n) throw parse_error(std::string("truncated ") + what, base + at);
    const std::uint8_t b = p[at++];
    if (shift == 63 && b > 1) throw parse_error("varint overflows 64 bits", base + at);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  throw parse_error("varint longer than 10 bytes", base + at);
}

class reader {
 public:
  reader(const std::uint8_t* data, std::size_t size, std::uint64_t base = 0)
      : p_(data), n_(size), base_(base) {}

  std::size_t pos() const { return pos_; }
  [[noreturn]] void fail(const std::string& what) const { throw parse_error(what, base_ + pos_); }

  std::uint8_t byte() {
    if (pos_ >= n_) fail("truncated thrift data");
    return p_[pos_++];
  }
  std::uint64_t varint() { return read_varint(p_, n_, pos_, base_, "thrift data"); }
  std::int64_t i64() {
    std::uint64_t z = varint();
    return static_cast<std::int64_t>(z >> 1) ^ -static_cast<std::int64_t>(z & 1);
  }
  std::int32_t i32() {
    std::size_t at = pos_;
    std::int64_t v = i64();
    if (v < INT32_MIN || v > INT32_MAX) {
      pos_ = at;
      fail("i32 value out of range");
    }
    return static_cast<std::int32_t>(v);
  }
  std::string_view binary() {
    std::uint64_t len = varint();
    if (len > n_ - pos_) fail("binary length " + std::to_string(len) + " runs past the end");
    std::string_view s(reinterpret_cast<const char*>(p_ + pos_), static_cast<std::size_t>(len));
    pos_ += static_cast<std::size_t>(len);
    return s;
  }

  struct field {
    int type;
    int id;
  };
  // Next field header of a struct; type kStop ends it. `last` carries the delta base. Ids are
  // i16: one that a delta carries past 32767, or a long-form one outside the i16 range, is
  // refused. Thrift's own readers wrap or truncate such ids, so the same bytes would name one
  // field to them and another to us (a hidden bloom_filter_offset, say), and the footer writer
  // could not write the id back as we read it.
  field next_field(int& last) {
    const std::size_t at = pos_;
    std::uint8_t b = byte();
    int t = b & 0x0f;
    if (t == kStop) return {kStop, 0};
    if (t > kStruct) fail("unknown thrift field type " + std::to_string(t));
    int delta = b >> 4;
    const std::int64_t id = delta != 0 ? std::int64_t{last} + delta : i64();
    if (id < INT16_MIN || id > INT16_MAX) {
      pos_ = at;
      fail("thrift field id " + std::to_string(id) + " outside the i16 range");
    }
    last = static_cast<int>(id);
    return {t, last};
  }

  struct list_header {
    int elem_type;
    std::uint64_t size;
  };
  list_header list() {
    std::uint8_t b = byte();
    int t = b & 0x0f;
    std::uint64_t size = b >> 4;
    if (size == 15) size = varint();
    if (t == kStop || t > kStruct) fail("unknown thrift list element type " + std::to_string(t));
    // Every element takes at least one byte: a larger count is a lie, refused before any
    // allocation sized by it.
    if (size > n_ - pos_) fail("list of " + std::to_string(size) + " elements runs past the end");
    return {t, size};
  }

  void skip(int t, int depth = 0) {
    if (depth > kMaxDepth) fail("thrift nesting deeper than " + std::to_string(kMaxDepth));
    switch (t) {
      case kTrue:
      case kFalse:
        return;  // the value lives in the field header
      case kByte:
        byte();
        return;
      case kI16:
      case kI32:
      case kI64:
        varint();
        return;
      case kDouble:
        for (int i = 0; i < 8; ++i) byte();
        return;
      case kBinary:
        binary();
        return;
      case kList:
      case kSet: {
        list_header h = list();
        for (std::uint64_t i = 0; i < h.size; ++i) skip_element(h.elem_type, depth + 1);
        return;
      }
      case kMap: {
        std::uint64_t size = varint();
        if (size == 0) return;
        if (size > n_ - pos_) fail("map of " + std::to_string(size) + " entries runs past the end");
        std::uint8_t kv = byte();
        for (std::uint64_t i = 0; i < size; ++i) {
          skip_element(kv >> 4, depth + 1);
          skip_element(kv & 0x0f, depth + 1);
        }
        return;
      }
      case kStruct: {
        int last = 0;
        for (field f = next_field(last); f.type != kStop; f = next_field(last))
          skip(f.type, depth + 1);
        return;
      }
      default:
        fail("unknown thrift type " + std::to_string(t));
    }
  }
  // Inside lists, sets and maps a bool is a whole byte.
  void skip_element(int t, int depth) {
    if (t == kTrue || t == kFalse) {
      byte();
      return;
    }
    if (t == kStop || t > kStruct) fail("unknown thrift element type " + std::to_string(t));
    skip(t, depth);
  }

  static constexpr int kMaxDepth = 64;

 private:
  const std::uint8_t* p_;
  std::size_t n_;
  std::size_t pos_ = 0;
  std::uint64_t base_;
};

inline void write_varint(std::vector<std::uint8_t>& out, std::uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<std::uint8_t>(v | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<std::uint8_t>(v));
}
inline void write_i32_field(std::vector<std::uint8_t>& out, int delta, std::int32_t v) {
  out.push_back(static_cast<std::uint8_t>(delta << 4 | kI32));
  write_varint(out, (static_cast<std::uint32_t>(v) << 1) ^ static_cast<std::uint32_t>(v >> 31));
}

}  // namespace simdex::bloom::thrift
