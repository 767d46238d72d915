#include "simdex/lab/stats.h"

#include <algorithm>

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

std::vector<summary> interleaved(int reps, const std::vector<std::function<double()>>& contenders) {
  std::vector<std::vector<double>> samples(contenders.size());
  for (int r = 0; r < reps; ++r)
    for (std::size_t c = 0; c < contenders.size(); ++c) samples[c].push_back(contenders[c]());
  std::vector<summary> out;
  for (auto& s : samples) out.push_back(summarize(std::move(s)));
  return out;
}

}  // namespace simdex::lab
