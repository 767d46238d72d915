// Repetitions and their summary: every figure is a median of interleaved samples with its
// spread, never a single run.
#pragma once

#include <functional>
#include <vector>

namespace simdex::lab {

constexpr double kNoisyRatio = 1.5;  // max / min above this marks a figure noisy

struct summary {
  std::vector<double> samples;  // in the order they were taken
  double median = 0, min = 0, max = 0;
  bool noisy = false;  // max / min > kNoisyRatio
};
summary summarize(std::vector<double> samples);

// How far a figure's repetitions scatter: the 10th and 90th percentiles (nearest rank) around
// the median, and their distance as a share of it. Unlike max / min, one outlier in many does
// not move it.
struct spread_info {
  std::size_t n = 0;
  double median = 0, p10 = 0, p90 = 0;
  double relative = 0;  // (p90 - p10) / median
};
spread_info spread_of(std::vector<double> xs);

// Takes `reps` samples of each contender, interleaved (A B C A B C ...), so slow drift in the
// machine (another tenant, frequency) spreads over all of them instead of biasing one.
std::vector<summary> interleaved(int reps, const std::vector<std::function<double()>>& contenders);

}  // namespace simdex::lab
