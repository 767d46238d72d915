// Fuzzes the BYTE_ARRAY value readers: the first byte picks the encoding (PLAIN,
// DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY) and the value count, the rest is a page's value
// bytes. Any input is hashed or rejected with parse_error, never read past; PLAIN hashes match a
// plain re-walk of the bytes. Also feeds the input, as 64-bit words, to the distinct-hash counter
// and checks it against a sort.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "simdex/bloom.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simdex::bloom;
  if (size == 0) return 0;
  static constexpr std::int32_t kEncodings[3] = {kEncodingPlain, kEncodingDeltaLengthByteArray,
                                                 kEncodingDeltaByteArray};
  const std::int32_t encoding = kEncodings[data[0] % 3];
  const std::size_t count = data[0] / 3;
  const std::uint8_t* page = data + 1;
  const std::size_t n = size - 1;
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
  return 0;
}
