// Node primitives of the psitri radix trie: small, branch-free kernels over
// byte, u16 and u32 arrays, each with a scalar reference and SIMD variants chosen at run time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simdex/cpu.h"

namespace simdex::primitives {

// Number of bytes in data[0, n) that are less than `key` (unsigned). On a sorted array this
// is std::lower_bound's index. Every variant counts the whole array, so all levels agree on
// any input, sorted or not. Made for node-sized arrays (up to a few hundred bytes).
std::size_t lower_bound(const std::uint8_t* data, std::size_t n, std::uint8_t key);

// Same result; may read (never write) up to 63 bytes past data + n, which the caller keeps
// readable (psitri pads its divider arrays for this).
inline constexpr std::size_t kLowerBoundPadding = 63;
std::size_t lower_bound_padded(const std::uint8_t* data, std::size_t n, std::uint8_t key);

// out[i] = lut[in[i] >> 4] << 4 | (in[i] & 15): rewrites the cline index (high nibble) of
// 1-byte branch codes and keeps the slot (low nibble). Only lut[k] & 15 is used. `in` and
// `out` may be the same array; any length.
void remap_branches(const std::uint8_t* in, std::uint8_t* out, std::size_t n,
                    const std::uint8_t lut[16]);

// ranks[i] = number of j < i with counts[j] != 0: maps an old cline index to its index after
// empty clines are dropped (psitri's create_nth_set_bit_table).
void rank_table(const std::uint8_t counts[16], std::uint8_t ranks[16]);

// Index of the first slots[i] == needle with i < size, or size if there is none. All 16
// slots are read (the array is padded); size <= 16, else std::invalid_argument.
std::size_t find_u32x16(const std::uint32_t slots[16], std::size_t size, std::uint32_t needle);

// Index of the minimum; the lowest index among equal minima.
std::size_t find_min_index_32(const std::uint16_t values[32]);
std::size_t find_min_index_64(const std::uint16_t values[64]);

}  // namespace simdex::primitives
