// What the operation-sequence fuzz targets share: the input read as a stream of bytes (zeros
// once it runs out), and a finding reported as an abort.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace fuzz {

inline void check(bool ok) {
  if (!ok) std::abort();
}

struct input {
  const std::uint8_t* p;
  std::size_t n;
  bool more() const { return n > 0; }
  std::uint32_t u8() {
    if (n == 0) return 0;
    --n;
    return *p++;
  }
  std::uint32_t u16() { return u8() | u8() << 8; }
};

}  // namespace fuzz
