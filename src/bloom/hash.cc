// Parquet hashing: XXH64 seed 0 over each value's PLAIN bytes (little-endian fixed widths,
// BYTE_ARRAY without its length prefix).
#include <xxhash.h>

#include <bit>
#include <cstring>
#include <stdexcept>
#include <string>

#include "kernels.h"
#include "xxh64_fixed.h"

namespace simdex::bloom {

static_assert(std::endian::native == std::endian::little, "PLAIN encoding is little-endian");

std::uint64_t hash_int32(std::int32_t v) noexcept {
  return xxh64_u32(static_cast<std::uint32_t>(v));
}
std::uint64_t hash_int64(std::int64_t v) noexcept {
  return xxh64_u64(static_cast<std::uint64_t>(v));
}
std::uint64_t hash_float(float v) noexcept { return xxh64_u32(std::bit_cast<std::uint32_t>(v)); }
std::uint64_t hash_double(double v) noexcept { return xxh64_u64(std::bit_cast<std::uint64_t>(v)); }
std::uint64_t hash_int96(const std::uint8_t bytes[12]) noexcept { return XXH64(bytes, 12, 0); }
std::uint64_t hash_bytes(const void* data, std::size_t n) noexcept {
  return XXH64(n == 0 ? "" : data, n, 0);
}
std::uint64_t hash_bool(bool v) noexcept {
  const unsigned char b = v ? 1 : 0;
  return XXH64(&b, 1, 0);
}

void hash_int32s(const std::int32_t* v, std::size_t n, std::uint64_t* out) {
  active_kernels().hash_u32s(v, n, out);
}
void hash_int64s(const std::int64_t* v, std::size_t n, std::uint64_t* out) {
  active_kernels().hash_u64s(v, n, out);
}
void hash_floats(const float* v, std::size_t n, std::uint64_t* out) {
  active_kernels().hash_u32s(v, n, out);
}
void hash_doubles(const double* v, std::size_t n, std::uint64_t* out) {
  active_kernels().hash_u64s(v, n, out);
}
void hash_fixed(const void* data, std::size_t width, std::size_t n, std::uint64_t* out) {
  const auto* p = static_cast<const unsigned char*>(data);
  if (width == 4) return active_kernels().hash_u32s(p, n, out);
  if (width == 8) return active_kernels().hash_u64s(p, n, out);
  for (std::size_t i = 0; i < n; ++i) out[i] = hash_bytes(p + i * width, width);
}

}  // namespace simdex::bloom
