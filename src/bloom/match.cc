// Matching a column's values against a few keys: the last step of a dataset lookup, after the
// filters have chosen the row groups. A small open-addressing set over 64-bit tags (the value's
// bits for fixed-width types, its XXH64 for byte arrays), kept at most a quarter full so that a
// miss, the common case, usually ends at the first slot.
#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "simdex/bloom.h"

namespace simdex::bloom {

namespace {

class tag_set {
 public:
  explicit tag_set(std::size_t keys) {
    std::size_t cap = 16;
    while (cap < 4 * keys) cap <<= 1;
    mask_ = cap - 1;
    shift_ = 64 - std::countr_zero(cap);
    tags_.resize(cap);
    index_.assign(cap, 0);
  }
  // Adds key i with its tag; `same(j)` says whether key i equals key j already held with the
  // same tag (then i is not added twice).
  template <class Same>
  void add(std::uint64_t tag, std::uint32_t i, Same same) {
    std::size_t s = slot(tag);
    for (; index_[s]; s = (s + 1) & mask_)
      if (tags_[s] == tag && same(index_[s] - 1)) return;
    tags_[s] = tag;
    index_[s] = i + 1;
  }
  // Whether a held key with this tag satisfies `equal(key index)`.
  template <class Equal>
  bool find(std::uint64_t tag, Equal equal) const {
    for (std::size_t s = slot(tag); index_[s]; s = (s + 1) & mask_)
      if (tags_[s] == tag && equal(index_[s] - 1)) return true;
    return false;
  }

 private:
  std::size_t slot(std::uint64_t tag) const {
    return static_cast<std::size_t>((tag * 0x9E3779B97F4A7C15ull) >> shift_);
  }
  std::vector<std::uint64_t> tags_;
  std::vector<std::uint32_t> index_;  // key index + 1; 0: empty slot
  std::size_t mask_ = 0;
  int shift_ = 0;
};

template <class T>
std::size_t match_width(const void* values, std::size_t n, const void* keys, std::size_t k,
                        std::uint8_t* out) {
  auto load = [](const void* base, std::size_t i) {
    T v;
    std::memcpy(&v, static_cast<const std::uint8_t*>(base) + i * sizeof(T), sizeof(T));
    return static_cast<std::uint64_t>(v);
  };
  tag_set set(k);
  auto any = [](std::uint32_t) { return true; };  // equal tags are equal values here
  for (std::size_t i = 0; i < k; ++i) set.add(load(keys, i), static_cast<std::uint32_t>(i), any);
  std::size_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool hit = set.find(load(values, i), any);
    out[i] = hit;
    hits += hit;
  }
  return hits;
}

template <class Offset>
std::size_t match_bytes(const std::uint8_t* data, const Offset* offsets, std::size_t n,
                        const std::uint8_t* key_data, const std::int64_t* key_offsets,
                        std::size_t k, std::uint8_t* out) {
  auto key_len = [&](std::size_t j) {
    return static_cast<std::size_t>(key_offsets[j + 1] - key_offsets[j]);
  };
  auto key_ptr = [&](std::size_t j) { return key_data + key_offsets[j]; };
  tag_set set(k);
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t len = key_len(i);
    set.add(hash_bytes(key_ptr(i), len), static_cast<std::uint32_t>(i), [&](std::uint32_t j) {
      return key_len(j) == len && std::memcmp(key_ptr(j), key_ptr(i), len) == 0;
    });
  }
  std::size_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint8_t* p = data + offsets[i];
    const auto len = static_cast<std::size_t>(offsets[i + 1] - offsets[i]);
    const bool hit = set.find(hash_bytes(p, len), [&](std::uint32_t j) {
      return key_len(j) == len && std::memcmp(key_ptr(j), p, len) == 0;
    });
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
