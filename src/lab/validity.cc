#include "simdex/lab/validity.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "enum_names.h"
#include "format.h"
#include "simdex/lab/streams.h"
#include "simdex/lab/threads.h"
#include "timed_chase.h"

namespace simdex::lab {
namespace {

check make(std::string name, check_status s, std::string detail) {
  return {std::move(name), s, std::move(detail)};
}

// The reference for bytes_read: a loop of its own, one word at a time. The kernels it checks
// stream with sum_words, and a check against that same loop could not fail.
std::uint64_t word_by_word_sum(const void* p, std::size_t bytes) {
  const auto* b = static_cast<const unsigned char*>(p);
  std::uint64_t s = 0;
  for (std::size_t i = 0; i + 8 <= bytes; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, b + i, 8);
    s += w;
  }
  return s;
}

}  // namespace

check holds(std::string name, bool ok, std::string if_ok, std::string if_not) {
  return make(std::move(name), ok ? check_status::pass : check_status::fail,
              ok ? std::move(if_ok) : std::move(if_not));
}

const char* status_name(check_status s) { return enum_name(s, {"pass", "warn", "fail"}); }

check bytes_read(const void* p, std::size_t credited, std::uint64_t kernel_sum) {
  std::uint64_t want = word_by_word_sum(p, credited);
  return holds("bytes_touched", want == kernel_sum,
               format("checksum of all %.0f credited bytes matches", double(credited)),
               format("checksum differs from the sum of the %.0f credited bytes: the kernel did "
                      "not read every byte it is credited with",
                      double(credited)));
}

check bytes_read_cyclic(const void* p, std::size_t region, std::size_t credited,
                        std::uint64_t kernel_sum) {
  if (region == 0) return holds("bytes_touched", false, "", "an empty region credited with bytes");
  std::uint64_t passes = credited / region;
  std::uint64_t want =
      passes * word_by_word_sum(p, region) + word_by_word_sum(p, credited % region);
  return holds("bytes_touched", want == kernel_sum,
               format("checksum of all %.0f credited bytes (%.2f passes over %.0f) matches",
                      double(credited), double(credited) / double(region), double(region)),
               format("checksum differs from the sum of the %.0f credited bytes (%.2f passes over "
                      "%.0f): the kernel did not read every byte it is credited with",
                      double(credited), double(credited) / double(region), double(region)));
}

check bytes_written(const void* p, std::size_t credited, std::uint64_t seed) {
  std::size_t bad = first_unfilled(p, credited, seed);
  return holds("bytes_touched", bad == credited,
               format("all %.0f credited bytes hold the written pattern", double(credited)),
               format("byte %.0f of %.0f credited does not hold the pattern: the kernel did not "
                      "write every byte it is credited with",
                      double(bad), double(credited)));
}

check below_memcpy(const std::string& what, double gib_s, double best_memcpy_gib_s) {
  const double memcpy_gib_s = best_memcpy_gib_s;
  if (memcpy_gib_s <= 0)
    return make("below_memcpy", check_status::warn,
                what + ": no memcpy figure in this run to compare with");
  double limit = kMemcpyTraffic * memcpy_gib_s * kLimitSlack;
  std::string d = what +
                  format(
                      ": %.3g GiB/s against a limit of %.3g (%.0f x the best memcpy "
                      "sample",
                      gib_s, limit, kMemcpyTraffic) +
                  format(", %.3g GiB/s, +25%%)", memcpy_gib_s);
  return make("below_memcpy", gib_s > limit ? check_status::fail : check_status::pass, d);
}

check on_chain(chain& c, const chase_kernel& kernel, std::uint64_t seed) {
  c.relink(seed);
  std::size_t steps = std::min<std::size_t>(c.nodes() * 2 + 3, 100000);
  const void* start = c.at_position(0);
  const void* want = c.walk(start, steps);
  const void* got = kernel(start, steps);
  return holds(
      "on_chain", got == want,
      format("after relinking, the kernel followed the new links for %.0f loads", double(steps)),
      "after relinking the nodes, the kernel ended elsewhere than the links lead: its next "
      "address does not come from the loaded line, so loads may overlap and the figure is not a "
      "latency");
}

check on_chain_timed(chain& c, std::initializer_list<int> chains, const chase_loop_fn& loop,
                     std::uint64_t seed) {
  c.relink(seed);
  std::size_t steps = std::min<std::size_t>(c.nodes() * 2 + 3, 100000);
  std::string counts;
  for (int n : chains) {
    counts += (counts.empty() ? "" : " and ") + std::to_string(n);
    std::vector<const void*> ends;
    for (int k = 0; k < n; ++k)
      ends.push_back(c.at_position(static_cast<std::size_t>(k) * c.nodes() / n));
    const std::vector<const void*> starts = ends;
    loop(ends.data(), n, steps);
    for (int k = 0; k < n; ++k)
      if (ends[k] != c.walk(starts[k], steps))
        return holds("on_chain", false, "",
                     format("after relinking the nodes, the timed loop with %d chain%s ended "
                            "elsewhere than the links lead (chain %d): its next address does not "
                            "come from the loaded line, so loads may overlap and the figure is "
                            "not a latency",
                            n, n == 1 ? "" : "s", k + 1));
  }
  bool one = counts == "1";
  return holds("on_chain", true,
               "after relinking, the timed loop with " + counts + (one ? " chain" : " chains") +
                   format(" followed the new links for %.0f loads%s", double(steps),
                          one ? "" : " per chain"),
               "");
}

check huge_pages(const std::string& what, double share) {
  check_status s = share < 0.5   ? check_status::fail
                   : share < 0.9 ? check_status::warn
                                 : check_status::pass;
  return make(
      "huge_pages", s,
      what + format(": %.0f%% of the buffer on 2 MiB pages (from /proc/self/smaps)", 100 * share));
}

check branch_present(const std::string& what, const summary& random, const summary& sorted,
                     const reading* branch_misses, double elements) {
  if (branch_misses && branch_misses->available && elements > 0) {
    double per = branch_misses->value / elements;
    bool ok = per > 0.2;
    return make("branch_present", ok ? check_status::pass : check_status::fail,
                what +
                    format(": %.2f branch misses per random element (a real, unpredictable "
                           "branch misses about 0.5)",
                           per) +
                    (ok ? "" : ": the compiler removed the branch"));
  }
  double ratio = sorted.median > 0 ? random.median / sorted.median : 0;
  bool ok = ratio >= kBranchRatio;
  return make("branch_present", ok ? check_status::pass : check_status::fail,
              what + format(": random data %.2fx the time of sorted data", ratio) +
                  (ok ? " (mispredictions visible)"
                      : " (below 1.5x, and no branch-miss counter: no branch was taken on "
                        "data; the compiler removed it)"));
}

check placement(const std::string& what, const team_report& team) {
  if (!team.placement_verified)
    return make("placement", check_status::fail,
                what + ": a thread was not where it was pinned (requested -> seen before/after: " +
                    team.detail() + ")");
  if (!team.overlapped)
    return make("placement", check_status::warn,
                what + ": pinned and verified (" + team.detail() +
                    "), but the threads never all ran at once");
  return make("placement", check_status::pass, what + ": verified " + team.detail());
}

check counters_reported(const std::vector<reading>& rs) {
  std::string missing, bad;
  for (const auto& r : rs) {
    if (r.status.empty()) bad += (bad.empty() ? "" : ", ") + r.name;
    if (!r.available) missing += (missing.empty() ? "" : ", ") + r.name;
  }
  if (!bad.empty())
    return make("counters", check_status::fail, "counters without value or reason: " + bad);
  return make("counters", check_status::pass,
              missing.empty() ? "all counters read" : "unavailable, with reasons: " + missing);
}

check faults_per_page(const std::string& what, const reading* faults, double pages) {
  if (!faults || !faults->available)
    return make("faults_per_page", check_status::warn,
                what + ": page-fault counter " + (faults ? faults->status : "not opened"));
  double per = faults->value / pages;
  bool ok = per > 0.9 && per < 1.2;
  return make("faults_per_page", ok ? check_status::pass : check_status::fail,
              what + format(": %.3f page faults per page touched (first touch wants 1)", per));
}

check in_range(const std::string& what, double value, double lo, double hi,
               const std::string& unit) {
  bool ok = value >= lo && value <= hi;
  return make(
      "plausible_range", ok ? check_status::pass : check_status::warn,
      what + format(": %.3g", value) + " " + unit + format(" (plausible %.3g - %.3g)", lo, hi));
}

check steady(const std::vector<std::pair<std::string, summary>>& figures) {
  if (figures.empty()) return make("steady", check_status::pass, "no repeated figure");
  std::size_t reps = figures.front().second.samples.size(), count = 0;
  double worst = 0;
  std::vector<std::pair<double, std::string>> noisy;
  std::vector<std::pair<double, std::string>> seen;  // (max/min, contender)
  for (const auto& [name, s] : figures) {
    reps = std::min(reps, s.samples.size());
    double ratio = s.min > 0 ? s.max / s.min : 1;
    // The same samples recorded again in another unit (messages/s and GiB/s) count once.
    std::string contender =
        name.substr(name.rfind(": ") == std::string::npos ? 0 : name.rfind(": ") + 2);
    bool again = std::any_of(seen.begin(), seen.end(), [&](const auto& x) {
      return x.second == contender && std::abs(x.first - ratio) <= 1e-9 * ratio;
    });
    if (again) continue;
    seen.emplace_back(ratio, contender);
    ++count;
    worst = std::max(worst, ratio);
    if (s.noisy) noisy.emplace_back(ratio, name);
  }
  // One or two samples agree with themselves: no evidence either way.
  if (reps < kSteadyMinReps)
    return make("steady", check_status::warn,
                format("%zu repetition%s per figure: too few to tell whether repetitions agree "
                       "(%zu or more)",
                       reps, reps == 1 ? "" : "s", kSteadyMinReps));
  if (noisy.empty())
    return make("steady", check_status::pass,
                format("%zu figures: max/min at most %.2f over %zu or more repetitions", count,
                       worst, reps));
  std::sort(noisy.rbegin(), noisy.rend());
  std::string named;
  for (std::size_t i = 0; i < noisy.size() && i < 3; ++i)
    named += (i ? ", " : "") + noisy[i].second + format(" %.2f", noisy[i].first);
  if (noisy.size() > 3) named += format(" and %zu more", noisy.size() - 3);
  return make("steady", check_status::warn,
              format("%zu of %zu figures vary more than %.1fx (max/min) over their repetitions: ",
                     noisy.size(), count, kNoisyRatio) +
                  named);
}

check spread(const std::string& what, const spread_info& s, double max_relative) {
  return make("spread", s.relative > max_relative ? check_status::warn : check_status::pass,
              what +
                  format(": median %.1f, 10th-90th percentile %.1f-%.1f", s.median, s.p10, s.p90) +
                  format(" over %zu repetitions (%.0f%% of the median; noisy above %.0f%%)", s.n,
                         100 * s.relative, 100 * max_relative));
}

bool any_failed(const std::vector<check>& cs) {
  for (const auto& c : cs)
    if (c.status == check_status::fail) return true;
  return false;
}

namespace {

// The checks that fail whenever a team's threads share one CPU: they take turns (overlap), wait
// for one another (run_queue), and a spinning side is switched out for its partner
// (context_switches).
bool one_cpu_fails(const check& c) {
  return c.name == "overlap" || c.name == "run_queue" || c.name == "context_switches";
}

}  // namespace

std::string invalid_reason(const std::vector<check>& cs) {
  auto failed = [](const check& c) { return c.status == check_status::fail; };
  auto first = std::find_if(cs.begin(), cs.end(), failed);
  if (first == cs.end()) return "";
  // Under taskset -c N the CPU count explains those failures, and the experiments that need
  // threads on several CPUs say "one CPU allowed" when their checks pass: so does the reason
  // here, unless a check failed that one CPU does not explain (a lock that did not exclude).
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() == 1 && std::all_of(cs.begin(), cs.end(), [&](const check& c) {
        return !failed(c) || one_cpu_fails(c);
      }))
    return format("one CPU allowed (CPU %d), so %s failed: %s", cpus[0], first->name.c_str(),
                  first->detail.c_str());
  return "not a valid measurement: " + first->name + " failed: " + first->detail;
}

}  // namespace simdex::lab
