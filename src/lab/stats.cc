#include "simdex/lab/stats.h"

#include <algorithm>

#include "difference_rule.h"

namespace simdex::lab {

summary summarize(std::vector<double> samples) {
  summary s;
  s.samples = samples;
  if (samples.empty()) return s;
  std::sort(samples.begin(), samples.end());
  std::size_t n = samples.size();
  s.median = n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
  s.min = samples.front();
  s.max = samples.back();
  s.noisy = s.min > 0 && s.max / s.min > kNoisyRatio;
  return s;
}

spread_info spread_of(std::vector<double> xs) {
  spread_info s;
  s.n = xs.size();
  if (xs.empty()) return s;
  std::sort(xs.begin(), xs.end());
  auto rank = [&](double q) {
    return xs[static_cast<std::size_t>(q * static_cast<double>(s.n - 1) + 0.5)];
  };
  s.median = summarize(xs).median;
  s.p10 = rank(0.1);
  s.p90 = rank(0.9);
  s.relative = s.median > 0 ? (s.p90 - s.p10) / s.median : 0;
  return s;
}

double orderings(std::size_t na, std::size_t nb) {
  double ways = 1;  // C(na + nb, na), built up as C(nb + i, i) for i = 1 .. na
  for (std::size_t i = 1; i <= na; ++i)
    ways = ways * static_cast<double>(nb + i) / static_cast<double>(i);
  return ways;
}

difference difference_of(const summary& a, const summary& b) {
  difference d;
  d.value = a.median - b.median;
  if (a.samples.empty() || b.samples.empty()) return d;  // nothing measured: within noise
  if (d.value < 0)
    d.kind = difference_kind::negative;
  else if (a.min > b.max && orderings(a.samples.size(), b.samples.size()) >= kMinOrderings)
    d.kind = difference_kind::measured;
  return d;
}

std::vector<summary> interleaved(int reps, const std::vector<std::function<double()>>& contenders) {
  std::vector<std::vector<double>> samples(contenders.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t c = 0; c < contenders.size(); ++c) samples[c].push_back(contenders[c]());
  std::vector<summary> out;
  for (auto& s : samples) out.push_back(summarize(std::move(s)));
  return out;
}

}  // namespace simdex::lab
