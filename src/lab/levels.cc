#include "levels.h"

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

}  // namespace simdex::lab
