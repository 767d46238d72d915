// Fuzzes the PLAIN BYTE_ARRAY page hasher: any input is hashed or rejected with
// invalid_argument, never read past; what it hashes matches a plain re-walk of the bytes. Also
// feeds the input, as 64-bit words, to the distinct-hash counter and checks it against a sort.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "simdex/bloom.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simdex::bloom;
  const std::size_t room = size % 64;  // sometimes too little room, sometimes plenty
  std::vector<std::uint64_t> out(room);
  try {
    const std::size_t n = hash_plain_byte_arrays(data, size, out.data(), room);
    std::size_t at = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t len;
      std::memcpy(&len, data + at, 4);
      if (out[i] != hash_bytes(data + at + 4, len)) __builtin_trap();
      at += 4 + std::size_t{len};
    }
    if (at != size) __builtin_trap();
  } catch (const std::invalid_argument&) {
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
