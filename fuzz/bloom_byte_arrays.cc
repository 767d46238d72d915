// Fuzzes the BYTE_ARRAY value readers: the first two bytes pick the encoding (PLAIN,
// DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY) and the value count (up to 22,015, so that delta
// encodings span several blocks), the rest is a page's value bytes. Any input is hashed or rejected
// with parse_error, never read past; PLAIN hashes match a plain re-walk of the bytes. Also feeds
// the input, as 64-bit words, to the distinct-hash counter and checks it against a sort. And
// reads the input as DELTA_BYTE_ARRAY values each sharing a prefix of the one before (its
// length from two bytes, then a suffix of up to 255 bytes), encodes them and checks each hash,
// which resumes inside the shared prefix, against the value hashed whole.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bloom/thrift.h"
#include "simdex/bloom.h"

namespace {

using bytes = std::vector<std::uint8_t>;

void put_zigzag(bytes& b, std::int64_t v) {
  simdex::bloom::thrift::write_varint(
      b, (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
}

// DELTA_BINARY_PACKED at its simplest: blocks of one 128-value miniblock, every delta 64 bits
// wide (sums wrap, so a min delta of 0 covers negative deltas).
void delta_packed(bytes& b, const std::vector<std::int64_t>& v) {
  for (std::uint64_t x : {std::uint64_t{128}, std::uint64_t{1}, std::uint64_t{v.size()}})
    simdex::bloom::thrift::write_varint(b, x);
  put_zigzag(b, v.empty() ? 0 : v[0]);
  for (std::size_t at = 1; at < v.size(); at += 128) {
    put_zigzag(b, 0);
    b.push_back(64);
    for (std::size_t i = at; i < at + 128; ++i) {
      const std::uint64_t d =
          i < v.size() ? static_cast<std::uint64_t>(v[i]) - static_cast<std::uint64_t>(v[i - 1])
                       : 0;
      for (int k = 0; k < 8; ++k) b.push_back(static_cast<std::uint8_t>(d >> (8 * k)));
    }
  }
}

void check_prefix_hashes(const std::uint8_t* data, std::size_t size) {
  using namespace simdex::bloom;
  std::vector<std::string> values;
  std::vector<std::int64_t> prefix, lens;
  std::string suffixes, prev;
  for (std::size_t at = 0; size - at >= 3;) {
    const std::size_t shared = (data[at] | std::size_t{data[at + 1]} << 8) % (prev.size() + 1);
    const std::size_t len = std::min<std::size_t>(data[at + 2], size - at - 3);
    const char* suffix = reinterpret_cast<const char*>(data + at + 3);
    prev = prev.substr(0, shared) + std::string(suffix, len);
    values.push_back(prev);
    prefix.push_back(static_cast<std::int64_t>(shared));
    lens.push_back(static_cast<std::int64_t>(len));
    suffixes.append(suffix, len);
    at += 3 + len;
  }
  bytes page;
  delta_packed(page, prefix);
  delta_packed(page, lens);
  page.insert(page.end(), suffixes.begin(), suffixes.end());
  std::vector<std::uint64_t> out(values.size());
  hash_byte_array_values(kEncodingDeltaByteArray, page.data(), page.size(), values.size(),
                         out.data());
  for (std::size_t i = 0; i < values.size(); ++i)
    if (out[i] != hash_bytes(values[i].data(), values[i].size())) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simdex::bloom;
  if (size < 2) return 0;
  static constexpr std::int32_t kEncodings[3] = {kEncodingPlain, kEncodingDeltaLengthByteArray,
                                                 kEncodingDeltaByteArray};
  const std::int32_t encoding = kEncodings[data[0] % 3];
  const std::size_t count = data[0] / 3 + std::size_t{86} * data[1];
  const std::uint8_t* page = data + 2;
  const std::size_t n = size - 2;
  std::vector<std::uint64_t> out(count);
  try {
    hash_byte_array_values(encoding, page, n, count, out.data());
    if (encoding == kEncodingPlain) {
      std::size_t at = 0;
      for (std::size_t i = 0; i < count; ++i) {
        std::uint32_t len;
        std::memcpy(&len, page + at, 4);
        if (out[i] != hash_bytes(page + at + 4, len)) __builtin_trap();
        at += 4 + std::size_t{len};
      }
      if (at > n) __builtin_trap();
    }
  } catch (const parse_error&) {
  }
  std::vector<std::uint64_t> words(size / 8);
  if (!words.empty()) std::memcpy(words.data(), data, words.size() * 8);
  std::vector<std::uint64_t> sorted = words;
  std::sort(sorted.begin(), sorted.end());
  const auto want =
      static_cast<std::size_t>(std::unique(sorted.begin(), sorted.end()) - sorted.begin());
  if (count_distinct_hashes(words.data(), words.size()) != want) __builtin_trap();
  check_prefix_hashes(data, size);
  return 0;
}
