// AVX-512 level: XXH64 of 8 fixed-width values per zmm (vpmullq, vprolq), several times the scalar
// hash loop. Probes and inserts use the AVX2 policy: one block is exactly one ymm, and a variant
// testing two keys per zmm (two blocks side by side, one vptestmd) measured no better than
// AVX2 on Zen 5, where bulk probes are bound by memory, not by instructions. So did, on an Intel
// Xeon (KVM guest), a many-filter probe taking eight filters per step (addresses from one
// vpmuludq, two blocks per vptestnmd, eight answers per store) and a bulk probe with vector
// block addresses: the generic unrolled loops match them.
#include "avx2_policy.h"
#include "generic.h"
#include "kernels.h"

namespace simdex::bloom {
namespace {

inline __m512i mul64(__m512i a, std::uint64_t b) {
  return _mm512_mullo_epi64(a, _mm512_set1_epi64(static_cast<long long>(b)));
}

inline __m512i avalanche8(__m512i h) {
  h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 33));
  h = mul64(h, kP2);
  h = _mm512_xor_si512(h, _mm512_srli_epi64(h, 29));
  h = mul64(h, kP3);
  return _mm512_xor_si512(h, _mm512_srli_epi64(h, 32));
}

// Lane-wise xxh64_u64 / xxh64_u32 (xxh64_fixed.h).
inline __m512i xxh64_u64x8(__m512i v) {
  __m512i k = mul64(_mm512_rol_epi64(mul64(v, kP2), 31), kP1);
  __m512i h = _mm512_xor_si512(_mm512_set1_epi64(static_cast<long long>(kP5 + 8)), k);
  h = _mm512_add_epi64(mul64(_mm512_rol_epi64(h, 27), kP1),
                       _mm512_set1_epi64(static_cast<long long>(kP4)));
  return avalanche8(h);
}

inline __m512i xxh64_u32x8(__m256i v32) {
  __m512i h = _mm512_xor_si512(_mm512_set1_epi64(static_cast<long long>(kP5 + 4)),
                               mul64(_mm512_cvtepu32_epi64(v32), kP1));
  h = _mm512_add_epi64(mul64(_mm512_rol_epi64(h, 23), kP2),
                       _mm512_set1_epi64(static_cast<long long>(kP3)));
  return avalanche8(h);
}

void hash_u64s(const void* v, std::size_t n, std::uint64_t* out) {
  const auto* p = static_cast<const unsigned char*>(v);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm512_storeu_si512(out + i, xxh64_u64x8(_mm512_loadu_si512(p + 8 * i)));
  hash_u64s_scalar(p + 8 * i, n - i, out + i);
}

void hash_u32s(const void* v, std::size_t n, std::uint64_t* out) {
  const auto* p = static_cast<const unsigned char*>(v);
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm512_storeu_si512(
        out + i, xxh64_u32x8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 4 * i))));
  hash_u32s_scalar(p + 4 * i, n - i, out + i);
}

constexpr kernels make_avx512() {
  kernels k = make_kernels<avx2_policy>();
  k.hash_u32s = hash_u32s;
  k.hash_u64s = hash_u64s;
  return k;
}

}  // namespace

const kernels kAvx512Kernels = make_avx512();

}  // namespace simdex::bloom
