// XXH64 (seed 0) of one 4- or 8-byte little-endian value, unrolled from the xxHash spec so batch
// loops inline it (libxxhash's XXH64 is an out-of-line call per value). Tests compare it with
// libxxhash. Internal linkage: every level's file gets its own copy with its own flags.
#pragma once

#include <cstdint>

namespace simdex::bloom {
namespace {

constexpr std::uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr std::uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr std::uint64_t kP5 = 0x27D4EB2F165667C5ull;

inline std::uint64_t rotl64(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

inline std::uint64_t xxh64_avalanche(std::uint64_t h) {
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

inline std::uint64_t xxh64_u64(std::uint64_t v) {
  std::uint64_t h = kP5 + 8;
  h ^= rotl64(v * kP2, 31) * kP1;
  return xxh64_avalanche(rotl64(h, 27) * kP1 + kP4);
}

inline std::uint64_t xxh64_u32(std::uint32_t v) {
  std::uint64_t h = (kP5 + 4) ^ (static_cast<std::uint64_t>(v) * kP1);
  return xxh64_avalanche(rotl64(h, 23) * kP2 + kP3);
}

}  // namespace
}  // namespace simdex::bloom
