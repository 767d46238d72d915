// The AVX2 block policy (one 256-bit block = one ymm), shared by the AVX2 and AVX-512 files.
// Internal linkage: each level's file compiles its own copy.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "simdex/bloom.h"

namespace simdex::bloom {
namespace {

inline __m256i salt256() { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kSalt)); }

struct avx2_policy {
  using mask_t = __m256i;
  // Word i gets bit (key * SALT[i]) >> 27: one vpmulld, one shift, one variable shift.
  static mask_t mask(std::uint32_t key) {
    __m256i p = _mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(key)), salt256());
    return _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32(p, 27));
  }
  // vptest's carry flag: (~block & mask) == 0.
  static bool test(const std::uint32_t* block, mask_t m) {
    return _mm256_testc_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block)), m) != 0;
  }
  static void set(std::uint32_t* block, mask_t m) {
    auto* p = reinterpret_cast<__m256i*>(block);
    _mm256_storeu_si256(p, _mm256_or_si256(_mm256_loadu_si256(p), m));
  }
};

}  // namespace
}  // namespace simdex::bloom
