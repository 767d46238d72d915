// AVX-512 level: XXH64 of 8 fixed-width values per zmm (vpmullq, vprolq), several times the scalar
// hash loop. Probes and inserts use the AVX2 policy: one block is exactly one ymm, and a variant
// testing two keys per zmm (two blocks side by side, one vptestmd) measured no better than
// AVX2 on Zen 5, where bulk probes are bound by memory, not by instructions.
#include <algorithm>

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

// One hash against many filters, eight filters per step. The block addresses of eight filters
// come from two zmm loads of their views (vpmuludq does hash_hi * blocks for all eight; blocks
// < 2^31 fits the 32-bit operand), and two blocks side by side in a zmm take one vptestnmd
// against the mask: every mask word has exactly one bit, so a lane whose AND is zero is a
// missing bit, and a filter may hold the key when its 8-bit lane mask is zero. The eight masks
// become eight output bytes at once (no per-filter flag-to-byte step, which bounds AVX2 here).
inline __mmask64 missing_lanes8(const std::uint32_t* const* a, __m256i m) {
  const __m512i m2 = _mm512_broadcast_i64x4(m);
  auto t = [&](int j) {
    const __m512i two = _mm512_inserti64x4(
        _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[j]))),
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[j + 1])), 1);
    return _mm512_testn_epi32_mask(two, m2);
  };
  return _mm512_kunpackd(_mm512_kunpackw(t(6), t(4)), _mm512_kunpackw(t(2), t(0)));
}

void check_filters(const filter_view* f, std::size_t n, std::uint64_t hash, std::uint8_t* out) {
  static_assert(sizeof(filter_view) == 16, "two views per 256 bits");
  if (n == 0) return;
  const __m256i m = avx2_policy::mask(static_cast<std::uint32_t>(hash));
  const __m512i hi = _mm512_set1_epi64(static_cast<long long>(hash >> 32));
  const __m512i even = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
  const __m512i odd = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
  // Addresses are computed a chunk ahead of their tests and, when the filters look larger
  // than L2 together (judged from the first one: a guess that only decides prefetching),
  // prefetched into L2.
  const bool far = f[0].blocks > kInCacheBlocks / n;
  // 32 ahead: one hash lands at the same offset in equal power-of-two filters, so their lines
  // share a few L2 sets (4 sets x 16 ways for 32 KiB filters); 64 in flight would evict each other.
  constexpr std::size_t kChunk = 32;
  alignas(64) const std::uint32_t* addr[2][kChunk];
  auto addresses = [&](std::size_t start, const std::uint32_t** dst) {
    const std::size_t cnt = std::min(kChunk, n - start);
    std::size_t j = 0;
    for (; j + 8 <= cnt; j += 8) {
      const __m512i v0 = _mm512_loadu_si512(f + start + j),
                    v1 = _mm512_loadu_si512(f + start + j + 4);
      const __m512i words = _mm512_permutex2var_epi64(v0, even, v1);
      const __m512i blocks = _mm512_permutex2var_epi64(v0, odd, v1);
      const __m512i index = _mm512_srli_epi64(_mm512_mul_epu32(blocks, hi), 32);
      _mm512_store_si512(dst + j, _mm512_add_epi64(words, _mm512_slli_epi64(index, 5)));
    }
    for (; j < cnt; ++j) dst[j] = block_ptr(f[start + j].words, f[start + j].blocks, hash);
    if (far)
      for (j = 0; j < cnt; ++j) _mm_prefetch(reinterpret_cast<const char*>(dst[j]), _MM_HINT_T1);
  };
  addresses(0, addr[0]);
  for (std::size_t start = 0, c = 0; start < n; start += kChunk, c ^= 1) {
    if (start + kChunk < n) addresses(start + kChunk, addr[c ^ 1]);
    const std::size_t cnt = std::min(kChunk, n - start);
    std::size_t j = 0;
    for (; j + 8 <= cnt; j += 8) {
      const __m128i lanes =
          _mm_cvtsi64_si128(static_cast<long long>(_cvtmask64_u64(missing_lanes8(addr[c] + j, m))));
      const __m128i hit =
          _mm_and_si128(_mm_cmpeq_epi8(lanes, _mm_setzero_si128()), _mm_set1_epi8(1));
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + start + j), hit);
    }
    for (; j < cnt; ++j) out[start + j] = avx2_policy::test(addr[c][j], m);
  }
}

constexpr kernels make_avx512() {
  kernels k = make_kernels<avx2_policy>();
  k.check_filters = check_filters;
  k.hash_u32s = hash_u32s;
  k.hash_u64s = hash_u64s;
  return k;
}

}  // namespace

const kernels kAvx512Kernels = make_avx512();

}  // namespace simdex::bloom
