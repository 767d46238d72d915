// Filter sizing: Arrow's closed form (what every writer uses) and the exact SBBF model.
#include <cmath>

#include "simdex/bloom.h"
#include "tag_set.h"

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
  return clamp_pow2_bytes(m);
}

// Putze et al. eq. 3 for 256-bit blocks and k = 8 (one bit per 32-bit word): the load of a
// block is Poisson(lambda = 256 ndv / bits); with i values in the block a word's bit is set
// with probability 1 - (31/32)^i, and all eight must be.
double model_fpp(std::uint64_t ndv, double num_bytes) {
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
  // Only the hash counts: values whose hashes collide set the same bits.
  detail::tag_set seen(n, 2);
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i)
    count += seen.add(hashes[i], 0, detail::same_tag);  // no index needed: tags only
  return count;
}

}  // namespace simdex::bloom
