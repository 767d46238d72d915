// Key sets and probe streams. Every contender sees the same keys, the same probes and the same
// operation streams; generation happens outside the timed regions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "common/harness.h"

namespace simdex::bench::btree {

// sparse: distinct uniform random keys over the whole K range.
// dense: a random permutation of 0..N+M-1, split into N present keys and M absent ones, so
//        misses and inserts fall between present keys (density N/(N+M)).
enum class distribution { sparse, dense };
inline const char* distribution_name(distribution d) {
  return d == distribution::sparse ? "sparse" : "dense";
}

template <class K>
struct keyset {
  std::vector<K> keys;    // N present keys, in random (insertion) order
  std::vector<K> sorted;  // the same, ascending
  std::vector<K> absent;  // M keys not present, random order
  K domain_hi = 0;        // lower_bound probes are uniform over [0, domain_hi]
};

template <class T>
void shuffle(std::vector<T>& v, rng& r) {
  for (std::size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[r.below(i)]);
}

template <class K>
keyset<K> make_keyset(std::size_t n, std::size_t m, distribution d, std::uint64_t seed) {
  rng r(seed);
  keyset<K> ks;
  std::vector<K> all;
  if (d == distribution::dense) {
    all.resize(n + m);
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<K>(i);
    ks.domain_hi = static_cast<K>(n + m - 1);
  } else {
    // Draw, drop duplicates, top up; then shuffle so the split is random.
    while (all.size() < n + m) {
      std::size_t want = n + m - all.size();
      for (std::size_t i = 0; i < want + want / 16 + 16; ++i)
        all.push_back(static_cast<K>(r.next()));
      std::sort(all.begin(), all.end());
      all.erase(std::unique(all.begin(), all.end()), all.end());
    }
    ks.domain_hi = static_cast<K>(~K{0});
  }
  shuffle(all, r);
  all.resize(n + m);
  ks.keys.assign(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n));
  ks.absent.assign(all.begin() + static_cast<std::ptrdiff_t>(n), all.end());
  ks.sorted = ks.keys;
  std::sort(ks.sorted.begin(), ks.sorted.end());
  return ks;
}

// YCSB's Zipfian generator (Gray et al.), theta 0.99: ranks 0..n-1, rank 0 hottest.
class zipf {
 public:
  zipf(std::uint64_t n, double theta) : n_(n) {
    zetan_ = zeta(n, theta);
    double zeta2 = zeta(2, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1 - std::pow(2.0 / static_cast<double>(n), 1 - theta)) / (1 - zeta2 / zetan_);
    half_pow_ = 1 + std::pow(0.5, theta);
  }
  std::uint64_t next(rng& r) const {
    double u = static_cast<double>(r.next() >> 11) * 0x1.0p-53;
    double uz = u * zetan_;
    if (uz < 1) return 0;
    if (uz < half_pow_) return 1;
    auto x =
        static_cast<std::uint64_t>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1, alpha_));
    return std::min(x, n_ - 1);
  }

 private:
  static double zeta(std::uint64_t n, double theta) {
    double s = 0;
    for (std::uint64_t i = 1; i <= n; ++i) s += std::pow(static_cast<double>(i), -theta);
    return s;
  }
  std::uint64_t n_;
  double zetan_, alpha_, eta_, half_pow_;
};

}  // namespace simdex::bench::btree
