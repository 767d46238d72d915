// Filter sizing: Arrow's closed form (what every writer uses) and the exact SBBF model.
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "simdex/bloom.h"

namespace simdex::bloom {

namespace {
std::size_t clamp_pow2_bytes(double bits) {
  double bytes = std::ceil(bits / 8.0);
  if (!(bytes <= static_cast<double>(kMaxBytes))) return kMaxBytes;  // also NaN / inf
  std::size_t b = kMinBytes;
  while (static_cast<double>(b) < bytes) b <<= 1;
  return b;
}
}  // namespace

std::size_t arrow_num_bytes(std::uint64_t ndv, double fpp) {
  if (!(fpp > 0.0 && fpp < 1.0)) throw std::invalid_argument("fpp must be in (0, 1)");
  // Arrow truncates m to whole bits before rounding up to a power of two.
  const double m =
      std::floor(-8.0 * static_cast<double>(ndv) / std::log(1.0 - std::pow(fpp, 1.0 / 8)));
  // Below about 1e-130, 1 - fpp^(1/8) rounds to 1 and m to -inf: the largest filter, as Arrow
  // gives (it was the smallest, 32 bytes, saturated at once).
  if (m < 0) return kMaxBytes;
  return clamp_pow2_bytes(m);
}

// Putze et al. eq. 3 for 256-bit blocks and k = 8 (one bit per 32-bit word): the load of a
// block is Poisson(lambda = 256 ndv / bits); with i values in the block a word's bit is set
// with probability 1 - (31/32)^i, and all eight must be.
double model_fpp(std::uint64_t ndv, double num_bytes) {
  // A negative size would make the series below empty and claim a perfect filter.
  if (!(num_bytes >= 0.0)) throw std::invalid_argument("num_bytes must be >= 0");
  if (ndv == 0) return 0.0;
  const double lambda = static_cast<double>(ndv) * 32.0 / num_bytes;  // values per block
  if (!(lambda < 5000.0)) return 1.0;  // every word saturated: (31/32)^5000 ~ 1e-69
  // Sum the Poisson terms around the mean until they vanish (log space avoids underflow).
  const double spread = 10.0 * std::sqrt(lambda) + 20.0;
  const double lo = std::max(0.0, std::floor(lambda - spread)), hi = lambda + spread;
  double sum = 0;
  for (double i = lo; i <= hi; i += 1.0) {
    const double log_p = i * std::log(lambda) - lambda - std::lgamma(i + 1.0);
    sum += std::exp(log_p) * std::pow(1.0 - std::pow(31.0 / 32.0, i), 8.0);
  }
  return std::min(sum, 1.0);
}

double model_bits_per_value(double fpp) {
  if (!(fpp > 0.0 && fpp < 1.0)) throw std::invalid_argument("fpp must be in (0, 1)");
  // FPP falls monotonically with bits per value; bisect with a fixed large ndv.
  constexpr std::uint64_t n = 1'000'000;
  double lo = 0.5, hi = 512.0;
  for (int it = 0; it < 100; ++it) {
    const double mid = 0.5 * (lo + hi);
    (model_fpp(n, mid * n / 8.0) > fpp ? lo : hi) = mid;
  }
  return hi;
}

std::size_t model_num_bytes(std::uint64_t ndv, double fpp) {
  if (!(fpp > 0.0 && fpp < 1.0)) throw std::invalid_argument("fpp must be in (0, 1)");
  for (std::size_t b = kMinBytes; b < kMaxBytes; b <<= 1)
    if (model_fpp(ndv, static_cast<double>(b)) <= fpp) return b;
  return kMaxBytes;
}

std::size_t count_distinct_hashes(const std::uint64_t* hashes, std::size_t n) {
  // Only the hash counts: values whose hashes collide set the same bits. An open-addressing
  // table of the hashes themselves (0 marks an empty slot; a hash of 0 is counted aside), at
  // most half full, probed linearly from a mix of the hash, with the slot of the hash 16
  // ahead prefetched. The table is kept per thread up to 32 MiB: a fresh 1 MiB table per row
  // group cost its page faults and zero fill on every call (9 against 2.5 ns a hash, 64K).
  if (n == 0) return 0;
  std::size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  constexpr std::size_t kKeep = std::size_t{1} << 22;  // slots kept between calls
  thread_local std::vector<std::uint64_t> kept;
  std::vector<std::uint64_t> own;
  std::vector<std::uint64_t>& table = cap <= kKeep ? kept : own;
  if (table.size() < cap) table.resize(cap);
  std::uint64_t* t = table.data();
  std::memset(t, 0, cap * sizeof(std::uint64_t));
  const std::size_t mask = cap - 1;
  const int shift = 64 - std::countr_zero(cap);
  auto slot = [&](std::uint64_t x) {
    return static_cast<std::size_t>((x * 0x9E3779B97F4A7C15ull) >> shift);
  };
  constexpr std::size_t kAhead = 16;
  bool zero = false;
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(t + slot(hashes[i + kAhead]), 1);
    const std::uint64_t x = hashes[i];
    if (x == 0) {
      zero = true;
      continue;
    }
    for (std::size_t s = slot(x);; s = (s + 1) & mask) {
      if (t[s] == x) break;
      if (t[s] == 0) {
        t[s] = x;
        ++count;
        break;
      }
    }
  }
  return count + (zero ? 1 : 0);
}

}  // namespace simdex::bloom
