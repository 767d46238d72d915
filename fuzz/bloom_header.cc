// Fuzzes the BloomFilterHeader + bitset parser: any input parses or throws parse_error /
// invalid_argument; a parsed filter re-serializes to the bytes it was read from (when the
// header had no extra fields) and answers checks without faulting.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "simdex/bloom.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simdex::bloom;
  try {
    std::size_t used = 0;
    filter f = parse(data, size, &used);
    if (used > size || used < f.size_bytes()) __builtin_trap();
    auto again = serialize(f);
    filter g = parse(again.data(), again.size());
    if (!(f == g)) __builtin_trap();
    volatile bool sink = f.check(size);
    (void)sink;
  } catch (const parse_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
