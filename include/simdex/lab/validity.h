// The checks that decide whether a figure may be published. Each is a plain function of what
// the experiment measured, so a test can feed it a deliberately broken kernel and watch it fail.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "simdex/lab/chase.h"
#include "simdex/lab/counters.h"
#include "simdex/lab/stats.h"
#include "simdex/lab/threads.h"

namespace simdex::lab {

enum class check_status { pass, warn, fail };
const char* status_name(check_status s);  // "pass", "warn", "fail"

struct check {
  std::string name;
  check_status status = check_status::pass;
  std::string detail;
};

// A check that holds or not, with the detail for each case.
check holds(std::string name, bool ok, std::string if_ok, std::string if_not);

// A streaming kernel read [p, p + credited) and returned `kernel_sum`: it must equal the sum of
// every word there (added up by a plain loop of this check's own, not by the kernel's
// sum_words), or the kernel skipped bytes it is credited with.
check bytes_read(const void* p, std::size_t credited, std::uint64_t kernel_sum);
// The same for a kernel that read [p, p + region) over and over, chunk after chunk from p, until
// it was stopped: `credited` bytes in all (any multiple of 8, more or less than `region`). Its sum
// must be the sum of the full passes and of the last pass's part.
check bytes_read_cyclic(const void* p, std::size_t region, std::size_t credited,
                        std::uint64_t kernel_sum);
// A writing kernel was credited with [p, p + credited): every word must hold the pattern.
check bytes_written(const void* p, std::size_t credited, std::uint64_t seed);

// Each byte memcpy copies is read, its destination line is read for ownership and written
// back: up to three transfers per byte copied (two with non-temporal stores). A streaming figure
// beyond kMemcpyTraffic x the best memcpy sample taken among the figure's own samples (plus
// kLimitSlack for noise) moved more than the memory system moves: it credits bytes it never
// touched. The best sample, not the median: on a shared machine a slow copy says nothing about
// the limit. Only for working sets beyond the last-level cache; in-cache figures may exceed it.
constexpr double kMemcpyTraffic = 3.0;
constexpr double kLimitSlack = 1.25;
check below_memcpy(const std::string& what, double gib_s, double best_memcpy_gib_s);

// Latency: rewrites `c` with a new random cycle, runs `kernel` from a node and compares where it
// ends with a plain walk of the new links. A kernel whose next address does not come from the
// loaded line (an index array beside the data, the study's TLB loop) still follows the old cycle.
using chase_kernel = std::function<const void*(const void* start, std::size_t steps)>;
check on_chain(chain& c, const chase_kernel& kernel, std::uint64_t seed = 7);

// A figure labelled "2 MiB pages" needs them: fail below half, warn below 90%.
check huge_pages(const std::string& what, double share);

// A branch exists when data it cannot predict costs more than sorted data, or the branch-miss
// counter sees about one miss per two random elements. Neither: the compiler removed it.
constexpr double kBranchRatio = 1.5;
check branch_present(const std::string& what, const summary& random, const summary& sorted,
                     const reading* branch_misses = nullptr, double elements = 0);

// Every thread was pinned and seen on its CPU from inside, and the bodies overlapped in time.
check placement(const std::string& what, const team_report& team);

// Every counter has a value or says why not.
check counters_reported(const std::vector<reading>& rs);

// `faults` software page faults for a first touch of `pages` pages: about one each.
check faults_per_page(const std::string& what, const reading* faults, double pages);

// Advisory: a figure outside the plausible range for this class of machine, a noisy figure.
check in_range(const std::string& what, double value, double lo, double hi,
               const std::string& unit);
// Advisory ("steady"): the repetitions of every recorded figure agree (max/min at most
// kNoisyRatio), and there were at least kSteadyMinReps of them to tell; warns naming the
// noisiest figures, or the repetition count.
constexpr std::size_t kSteadyMinReps = 3;
check steady(const std::vector<std::pair<std::string, summary>>& figures);
// Advisory: repetitions whose 10th-90th percentile range exceeds `max_relative` of their median
// are too scattered for one figure to stand for them ("spread", warn).
check spread(const std::string& what, const spread_info& s, double max_relative);

bool any_failed(const std::vector<check>& cs);

// Why a verdict is withheld: the first failed check, by name, and its detail ("not a valid
// measurement: run_queue failed: ..."); empty when none failed.
std::string invalid_reason(const std::vector<check>& cs);

}  // namespace simdex::lab
