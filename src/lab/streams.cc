#include "simdex/lab/streams.h"

#include <cstring>

#include "simdex/lab/timing.h"

namespace simdex::lab {

std::uint64_t sum_words(const void* p, std::size_t bytes) {
  const auto* w = static_cast<const std::uint64_t*>(p);
  std::size_t n = bytes / 8, i = 0;
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  for (; i + 4 <= n; i += 4) {
    a += w[i];
    b += w[i + 1];
    c += w[i + 2];
    d += w[i + 3];
  }
  for (; i < n; ++i) a += w[i];
  return a + b + c + d;
}

void fill_words(void* p, std::size_t bytes, std::uint64_t seed) {
  auto* w = static_cast<std::uint64_t*>(p);
  std::size_t n = bytes / 8;
  for (std::size_t i = 0; i < n; ++i) w[i] = pattern_word(seed, i);
}

std::size_t first_unfilled(const void* p, std::size_t bytes, std::uint64_t seed) {
  const auto* w = static_cast<const std::uint64_t*>(p);
  std::size_t n = bytes / 8;
  for (std::size_t i = 0; i < n; ++i)
    if (w[i] != pattern_word(seed, i)) return i * 8;
  return bytes;
}

double memcpy_gib_s(page_buffer& buf, int round) {
  std::byte* d = buf.data();
  std::size_t half = buf.size() / 2;
  std::uint64_t t0 = now_ns();
  std::memcpy(d + (round % 2 ? 0 : half), d + (round % 2 ? half : 0), half);
  clobber_memory();
  std::uint64_t t1 = now_ns();
  return static_cast<double>(half) / (1 << 30) / (static_cast<double>(t1 - t0) * 1e-9);
}

}  // namespace simdex::lab
