// AVX-512 VBMI kernels: 16 groups (64 bytes <-> 80 chars) per step. vpermi2b does the whole
// 128-entry alphabet lookup in one instruction and also gathers digits across the 80 chars;
// the arithmetic is in avx512_common.h.
#include "avx512_common.h"

namespace simdex::base85 {
namespace {

struct index_tables {
  alignas(64) std::uint8_t enc_lo[64];  // output chars 0..63 from (X, D0) digit vectors
  alignas(64) std::uint8_t enc_hi[64];  // output chars 64..79
  // Decode, block b of 4 (chars 80b..80b+79, at offset 16b of digit vector b): lane g of
  // prefix gets digits 5g..5g+3, byte 0 of lane g of last gets digit 5g+4.
  alignas(64) std::uint8_t dec_prefix[4][64];
  alignas(64) std::uint8_t dec_last[4][64];
};

// Encode layout: X lane g holds digits [d3, d4, d1, d2], D0 lane g holds d0 (index 64 + 4g).
constexpr std::uint8_t enc_source(int j) {
  int g = j / 5, k = j % 5;
  constexpr int kPick[5] = {-1, 2, 3, 0, 1};
  return static_cast<std::uint8_t>(k == 0 ? 64 + 4 * g : 4 * g + kPick[k]);
}

constexpr index_tables make_index_tables() {
  index_tables t{};
  for (int j = 0; j < 64; ++j) {
    t.enc_lo[j] = enc_source(j);
    t.enc_hi[j] = j < 16 ? enc_source(64 + j) : 0;
    for (int b = 0; b < 4; ++b) {
      t.dec_prefix[b][j] = static_cast<std::uint8_t>(16 * b + 5 * (j / 4) + j % 4);
      t.dec_last[b][j] = static_cast<std::uint8_t>(16 * b + 5 * (j / 4) + 4);
    }
  }
  return t;
}
constexpr index_tables kIdx = make_index_tables();

inline __m512i load(const void* p) { return load512(p); }

std::size_t encode_vbmi(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                        bool stop_zero, bool stop_spaces) {
  // Ascii85's chars are one add from the digits, which AVX2's lanes do for less than the
  // permutes here (0.93-0.97x AVX2 at every size, docs/base85.md).
  if (a.contiguous) return encode_avx2(in, groups, out, a, stop_zero, stop_spaces);
  const __m512i lut_lo = load(a.enc), lut_hi = load(a.enc + 64);
  const __m512i idx_lo = load(kIdx.enc_lo), idx_hi = load(kIdx.enc_hi);
  std::size_t i = 0;
  for (; i + 16 <= groups; i += 16) {
    const std::uint8_t* p = in + 4 * i;
    __m512i raw = load(p), x, d0;
    if (stop_words(raw, stop_zero, stop_spaces))
      return i + encode_groups_scalar(p, 16, out + 5 * i, a, stop_zero, stop_spaces);
    digits16(raw, x, d0);
    __m512i c0 = _mm512_permutex2var_epi8(x, idx_lo, d0);
    __m512i c1 = _mm512_permutex2var_epi8(x, idx_hi, d0);
    c0 = _mm512_permutex2var_epi8(lut_lo, c0, lut_hi);
    c1 = _mm512_permutex2var_epi8(lut_lo, c1, lut_hi);
    char* o = out + 5 * i;
    _mm512_storeu_si512(o, c0);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 64), _mm512_castsi512_si128(c1));
  }
  return i == groups
             ? i
             : i + encode_avx2(in + 4 * i, groups - i, out + 5 * i, a, stop_zero, stop_spaces);
}

// Steps of 16 groups from group i on, then AVX2's for the rest. Out of line with its own
// constants: inlined, they were spilled for the 64-group loop, and reloading them right after
// the spill stalled a 64-byte decode (21 ns against AVX2's 13).
[[gnu::noinline]] std::size_t decode16_vbmi(const char* in, std::size_t i, std::size_t groups,
                                            std::uint8_t* out, const alphabet& a) {
  const __m512i lut_lo = load(a.dec), lut_hi = load(a.dec + 64);
  constexpr __mmask64 kByte0 = 0x1111111111111111ull;
  for (; i + 16 <= groups; i += 16) {
    const char* p = in + 5 * i;
    __m512i c0 = load(p);
    __m512i c1 = _mm512_zextsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 64)));
    __m512i d0 = _mm512_permutex2var_epi8(lut_lo, c0, lut_hi);
    __m512i d1 = _mm512_permutex2var_epi8(lut_lo, c1, lut_hi);
    __mmask64 bad = _mm512_movepi8_mask(_mm512_or_si512(d0, c0)) |
                    (_mm512_movepi8_mask(_mm512_or_si512(d1, c1)) & 0xffff);
    __m512i prefix = _mm512_permutex2var_epi8(d0, load(kIdx.dec_prefix[0]), d1);
    __m512i last = _mm512_maskz_permutex2var_epi8(kByte0, d0, load(kIdx.dec_last[0]), d1);
    __mmask16 over;
    __m512i words = combine16(prefix, last, over);
    if (bad || over) {
      std::size_t k = decode_avx2(p, 16, out + 4 * i, a);
      if (k < 16) return i + k;
      continue;
    }
    _mm512_storeu_si512(out + 4 * i, words);
  }
  return i == groups ? i : i + decode_avx2(in + 5 * i, groups - i, out + 4 * i, a);
}

// Four blocks (64 groups, 320 chars = 5 vectors) per step, so every alphabet lookup is full.
std::size_t decode_vbmi(const char* in, std::size_t groups, std::uint8_t* out, const alphabet& a) {
  if (groups < 64) return decode16_vbmi(in, 0, groups, out, a);  // before the loop's setup
  const __m512i lut_lo = load(a.dec), lut_hi = load(a.dec + 64);
  constexpr __mmask64 kByte0 = 0x1111111111111111ull;
  std::size_t i = 0;
  for (; i + 64 <= groups; i += 64) {
    const char* p = in + 5 * i;
    __m512i d[5];
    __mmask64 bad = 0;
    for (int j = 0; j < 5; ++j) {
      __m512i c = load(p + 64 * j);
      // dec[] has bit 7 set for invalid chars; OR with the char catches bytes >= 128.
      d[j] = _mm512_permutex2var_epi8(lut_lo, c, lut_hi);
      bad |= _mm512_movepi8_mask(_mm512_or_si512(d[j], c));
    }
    __m512i words[4];
    __mmask16 over = 0;
    for (int b = 0; b < 4; ++b) {
      __m512i prefix = _mm512_permutex2var_epi8(d[b], load(kIdx.dec_prefix[b]), d[b + 1]);
      __m512i last = _mm512_maskz_permutex2var_epi8(kByte0, d[b], load(kIdx.dec_last[b]), d[b + 1]);
      __mmask16 o;
      words[b] = combine16(prefix, last, o);
      over |= o;
    }
    if (bad || over) {  // AVX2 steps find the first bad group
      std::size_t k = decode_avx2(p, 64, out + 4 * i, a);
      if (k < 64) return i + k;
      continue;
    }
    for (int b = 0; b < 4; ++b) _mm512_storeu_si512(out + 4 * i + 64 * b, words[b]);
  }
  return decode16_vbmi(in, i, groups, out, a);
}

// 64 chars per step: classes by vpermi2b, kept chars packed by vpcompressb (VBMI2). Whole
// blocks without a stop advance by a constant, so loads do not wait on the previous block.
std::size_t compact_vbmi(const char* in, std::size_t n, char* out, std::size_t cap,
                         const std::uint8_t* cls, std::size_t& consumed) {
  const __m512i t_lo = load(cls), t_hi = load(cls + 64), two = _mm512_set1_epi8(2);
  std::size_t m = 0, i = 0;
  while (i < n && m < cap) {
    const std::size_t rem = n - i;
    const __mmask64 live =
        rem >= 64 ? ~__mmask64{0} : _bzhi_u64(~std::uint64_t{0}, static_cast<unsigned>(rem));
    __m512i c = _mm512_maskz_loadu_epi8(live, in + i);
    __m512i k = _mm512_permutex2var_epi8(t_lo, c, t_hi);
    __mmask64 high = _mm512_movepi8_mask(c);  // bytes >= 128 are class 2 by contract
    __mmask64 stop = (_mm512_cmpeq_epi8_mask(k, two) | high) & live;
    __mmask64 keep = _mm512_testn_epi8_mask(k, k) & ~high & live;
    std::size_t cnt = static_cast<std::size_t>(_mm_popcnt_u64(keep));
    if (stop == 0 && m + cnt < cap && rem >= 64) {  // the common case
      _mm512_storeu_si512(out + m, _mm512_maskz_compress_epi8(keep, c));
      m += cnt;
      i += 64;
      continue;
    }
    std::size_t span = stop ? _tzcnt_u64(stop) : (rem < 64 ? rem : 64);
    keep = _bzhi_u64(keep, static_cast<unsigned>(span));
    cnt = static_cast<std::size_t>(_mm_popcnt_u64(keep));
    if (m + cnt >= cap) {  // end right after the (cap - m)-th kept char
      std::uint64_t bit = _pdep_u64(std::uint64_t{1} << (cap - m - 1), keep);
      span = _tzcnt_u64(bit) + 1;
      keep = _bzhi_u64(keep, static_cast<unsigned>(span));
      cnt = cap - m;
      stop = 0;
    }
    _mm512_storeu_si512(out + m, _mm512_maskz_compress_epi8(keep, c));
    m += cnt;
    i += span;
    if (stop) break;
  }
  consumed = i;
  return m;
}

}  // namespace

const kernels kAvx512VbmiKernels = {.encode = encode_vbmi,
                                    .decode = decode_vbmi,
                                    .compact = compact_vbmi,
                                    .copy_lines = copy_lines_avx2};

}  // namespace simdex::base85
