// Matching a column's values against a few keys: the last step of a dataset lookup, after the
// filters have chosen the row groups. The keys go into a tag_set keyed by the value's bits
// (fixed-width types) or a fast tag of its bytes (byte arrays).
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "simdex/bloom.h"
#include "tag_set.h"

namespace simdex::bloom {

namespace {

using detail::same_tag;
using detail::tag_set;

constexpr std::size_t kSlotsPerKey = 4;  // a quarter full: a miss mostly ends at its first slot

// out[i] = whether value i's tag is held by a key equal to it; returns how many are.
template <class TagOf, class Equal>
std::size_t match_each(const tag_set& set, std::size_t n, TagOf tag_of, Equal equal,
                       std::uint8_t* out) {
  std::size_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool hit = set.find(tag_of(i), [&](std::uint32_t j) { return equal(i, j); });
    out[i] = hit;
    hits += hit;
  }
  return hits;
}

template <class T>
std::size_t match_width(const void* values, std::size_t n, const void* keys, std::size_t k,
                        std::uint8_t* out) {
  auto load = [](const void* base, std::size_t i) {
    T v;
    std::memcpy(&v, static_cast<const std::uint8_t*>(base) + i * sizeof(T), sizeof(T));
    return static_cast<std::uint64_t>(v);
  };
  tag_set set(k, kSlotsPerKey);
  for (std::size_t i = 0; i < k; ++i)
    set.add(load(keys, i), static_cast<std::uint32_t>(i), same_tag);
  return match_each(
      set, n, [&](std::size_t i) { return load(values, i); },
      [](std::size_t, std::uint32_t) { return true; }, out);
}

template <class Offset>
std::size_t match_bytes(const std::uint8_t* data, const Offset* offsets, std::size_t n,
                        const std::uint8_t* key_data, const std::int64_t* key_offsets,
                        std::size_t k, std::uint8_t* out) {
  const detail::byte_key_set keys(key_data, key_offsets, k);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool hit =
        keys.find(data + offsets[i], static_cast<std::size_t>(offsets[i + 1] - offsets[i])) >= 0;
    out[i] = hit;
    hits += hit;
  }
  return hits;
}

template <class Offset>
void check_offsets(const Offset* o, std::size_t n, std::size_t data_bytes, const char* what) {
  for (std::size_t i = 0; i < n; ++i)
    if (o[i] < 0 || o[i] > o[i + 1] || static_cast<std::uint64_t>(o[i + 1]) > data_bytes)
      throw std::invalid_argument(std::string(what) +
                                  ": offsets out of order or past the data at value " +
                                  std::to_string(i));
}

}  // namespace

std::size_t match_fixed(const void* values, std::size_t width, std::size_t n, const void* keys,
                        std::size_t k, std::uint8_t* out) {
  if (k >= (std::size_t{1} << 31)) throw std::invalid_argument("match_fixed: too many keys");
  switch (width) {
    case 1:
      return match_width<std::uint8_t>(values, n, keys, k, out);
    case 2:
      return match_width<std::uint16_t>(values, n, keys, k, out);
    case 4:
      return match_width<std::uint32_t>(values, n, keys, k, out);
    case 8:
      return match_width<std::uint64_t>(values, n, keys, k, out);
    default:
      throw std::invalid_argument("match_fixed: width must be 1, 2, 4 or 8 bytes");
  }
}

std::size_t match_binary(const std::uint8_t* data, std::size_t data_bytes, const void* offsets,
                         std::size_t offset_width, std::size_t n, const std::uint8_t* key_data,
                         std::size_t key_bytes, const std::int64_t* key_offsets, std::size_t k,
                         std::uint8_t* out) {
  if (k >= (std::size_t{1} << 31)) throw std::invalid_argument("match_binary: too many keys");
  check_offsets(key_offsets, k, key_bytes, "match_binary keys");
  auto run = [&](const auto* o) {
    check_offsets(o, n, data_bytes, "match_binary values");
    return match_bytes(data, o, n, key_data, key_offsets, k, out);
  };
  if (offset_width == 8) return run(static_cast<const std::int64_t*>(offsets));
  if (offset_width == 4) return run(static_cast<const std::int32_t*>(offsets));
  throw std::invalid_argument("match_binary: offsets are 4 or 8 bytes");
}

}  // namespace simdex::bloom
