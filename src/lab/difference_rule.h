// difference_of's rule in numbers (simdex/lab/stats.h), for the experiments that explain a
// difference it did not call measured. Internal to the lab.
#pragma once

#include <cstddef>

namespace simdex::lab {

// With `na` samples of one measurement and `nb` of another and no real difference, every order
// of the na + nb samples is equally likely; one order in orderings(na, nb) = C(na + nb, na) puts
// every sample of the first above every sample of the second.
double orderings(std::size_t na, std::size_t nb);

// difference_of calls a difference measured only where noise alone would order the samples so
// at most 1 time in 252: 5 samples a side (quick mode). With fewer, separated samples are not
// evidence enough, and the difference is within the noise.
constexpr double kMinOrderings = 252;

}  // namespace simdex::lab
