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

// A cost found as the difference of two interleaved measurements, a - b of their medians (a
// load to a 4 KiB page minus one to a 2 MiB page). It is measured only where the samples show
// it: every sample of a above every sample of b, which noise alone does 1 time in 252 with 5
// repetitions each, and with enough samples that it could not happen more often (fewer than 5
// a side: within the noise, whatever the order). Otherwise there is no figure: a negative
// difference is not a cost, and one whose samples overlap is within the noise.
enum class difference_kind { measured, within_noise, negative };
struct difference {
  double value = 0;  // a.median - b.median, whatever the kind
  difference_kind kind = difference_kind::within_noise;
  bool measured() const { return kind == difference_kind::measured; }
};
difference difference_of(const summary& a, const summary& b);

// Takes `reps` samples of each contender, interleaved (A B C A B C ...), so slow drift in the
// machine (another tenant, frequency) spreads over all of them instead of biasing one.
std::vector<summary> interleaved(int reps, const std::vector<std::function<double()>>& contenders);

}  // namespace simdex::lab
