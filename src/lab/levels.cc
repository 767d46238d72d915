#include "levels.h"

#include <algorithm>
#include <iterator>

#include "format.h"

namespace simdex::lab {

check levels_plausible(const std::vector<plateau>& ps, double cycle_ns) {
  if (ps.size() < 2 || cycle_ns <= 0)
    return {"levels", check_status::warn,
            "no cache level reported (or no cycle time): the plateaus cannot be judged"};
  std::string bad, ranges;
  for (std::size_t i = 0; i + 1 < ps.size(); ++i) {
    const plateau& p = ps[i];
    const level_cycles* r = &kLevelCycles[std::size(kLevelCycles) - 1];
    for (const auto& x : kLevelCycles)
      if (x.level == p.level) r = &x;
    double cyc = p.ns / cycle_ns;
    ranges += format("%s%s %.0f-%.0f", ranges.empty() ? "" : ", ", p.name.c_str(), r->lo, r->hi);
    std::string why;
    if (cyc < r->lo || cyc > r->hi)
      why = format("outside %.0f-%.0f cycles", r->lo, r->hi);
    else if (i > 0 && p.ns <= ps[i - 1].ns)
      why = "not above " + ps[i - 1].name + format(" (%.1f ns)", ps[i - 1].ns);
    else if (p.ns >= ps[i + 1].ns)
      why = "not below " + ps[i + 1].name + format(" (%.1f ns)", ps[i + 1].ns);
    if (!why.empty())
      bad += (bad.empty() ? "" : "; ") + p.name + format(" %.1f ns (%.0f cycles) is ", p.ns, cyc) +
             why;
  }
  if (!bad.empty())
    return {"levels", check_status::fail,
            bad +
                ": not that cache level's latency (the caches are not what the machine "
                "reports, or the run was disturbed)"};
  return {"levels", check_status::pass,
          "each cache plateau lies between its neighbours' and in its level's plausible range (" +
              ranges + " cycles)"};
}

namespace {

std::string size_text(std::size_t b) {
  if (b >= (std::size_t{1} << 20) && b % (std::size_t{1} << 20) == 0)
    return format("%zu MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return format("%zu KiB", b >> 10);
  return format("%zu B", b);
}

}  // namespace

check cache_sizes_agree(const std::vector<cache_level>& caches,
                        const std::vector<sweep_latency>& curve) {
  if (caches.empty() || curve.empty())
    return {"cache_sizes", check_status::warn,
            "no cache size reported (or no curve): the curve cannot be held against them"};
  std::string shown, missing, unjudged;
  for (const auto& c : caches) {
    const std::string name = format("L%d", c.level);
    const sweep_latency* within = nullptr;  // the largest point at most half the size
    const sweep_latency* beyond = nullptr;  // the smallest point at least 4x the size
    for (const auto& p : curve) {
      if (p.bytes <= c.bytes / 2 && (!within || p.bytes > within->bytes)) within = &p;
      if (p.bytes >= 4 * c.bytes && (!beyond || p.bytes < beyond->bytes)) beyond = &p;
    }
    if (!within || !beyond || within->ns <= 0) {
      unjudged += (unjudged.empty() ? "" : ", ") + name + " (" + size_text(c.bytes) + ")";
      continue;
    }
    double step = beyond->ns / within->ns;
    std::string text =
        format("%s %s: %.1f ns at %s, %.1f ns at %s (%.2fx", name.c_str(),
               size_text(c.bytes).c_str(), within->ns, size_text(within->bytes).c_str(), beyond->ns,
               size_text(beyond->bytes).c_str(), step);
    if (within->ns_2m > 0 && beyond->ns_2m > 0) {  // the smaller step decides
      text += format("; %.2fx with 2 MiB pages", beyond->ns_2m / within->ns_2m);
      step = std::min(step, beyond->ns_2m / within->ns_2m);
    }
    text += ")";
    if (step < kStepPastSize)
      missing += (missing.empty() ? "" : "; ") + text;
    else
      shown += (shown.empty() ? "" : "; ") + text;
  }
  if (!missing.empty())
    return {"cache_sizes", check_status::fail,
            "the latency curve does not step where the machine reports a cache ending (less than " +
                format("%.1fx", kStepPastSize) + " from half the size to 4x it): " + missing +
                "; the reported sizes (sysfs, from CPUID; a VM may pass on the host's) are not the "
                "caches this run met, so the plateaus read at half of them may be other levels"};
  if (!unjudged.empty())
    return {"cache_sizes", check_status::warn,
            "the sweep does not reach 4x the reported size of " + unjudged +
                ": whether the curve steps there is not known" +
                (shown.empty() ? "" : "; it steps at the others: " + shown)};
  return {"cache_sizes", check_status::pass,
          "the latency curve steps at each reported cache size: " + shown};
}

}  // namespace simdex::lab
