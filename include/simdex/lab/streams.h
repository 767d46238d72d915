// Bandwidth: kernels that touch every byte they are credited with, and say so. A read returns
// a checksum of every 8-byte word; a write leaves a pattern a check can verify word by word.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simdex/memory.h"

namespace simdex::lab {

// Sum of every 8-byte word in [p, p + bytes) (bytes a multiple of 8). Four accumulators so the
// adds do not serialize the loads.
std::uint64_t sum_words(const void* p, std::size_t bytes);

// Writes word i of [p, p + bytes) as pattern_word(seed, i); bytes a multiple of 8. The pattern
// is an add per word (vectorized), so the loop measures stores, not the pattern, and a word left
// from an earlier fill (another seed) or never written is told apart from this one.
void fill_words(void* p, std::size_t bytes, std::uint64_t seed);
inline std::uint64_t pattern_word(std::uint64_t seed, std::size_t i) {
  return seed + static_cast<std::uint64_t>(i);
}
// The (wrapping) sum of words 0 .. words-1 of the pattern: what sum_words returns over memory
// that fill_words wrote with `seed`.
inline std::uint64_t pattern_sum(std::uint64_t seed, std::size_t words) {
  std::uint64_t n = words;  // n (n - 1) / 2 without losing the halving to the wrap
  std::uint64_t tri = n % 2 == 0 ? n / 2 * (n - 1) : (n - 1) / 2 * n;
  return n * seed + tri;
}
// Offset of the first word that is not the pattern, or `bytes` when all are.
std::size_t first_unfilled(const void* p, std::size_t bytes, std::uint64_t seed);

// One memcpy of half of `buf` onto the other half (direction alternates with `round`), in GiB/s
// of bytes copied. Each copied byte is read once and written once.
double memcpy_gib_s(page_buffer& buf, int round);

}  // namespace simdex::lab
