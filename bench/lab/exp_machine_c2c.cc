// Machine group, core-to-core latency (Chips and Cheese's CoherencyLatency, the c2c matrices):
// one cache line bounced between each pair of allowed CPUs, every round trip timed with the TSC,
// as a matrix of medians.
#include "handoff.h"
#include "machine_util.h"

namespace simdex::lab_bench {
namespace {

using bench::better;
using namespace machine;

void core_to_core(trial& t) {
  const auto all = lab::allowed_cpus();
  std::vector<std::pair<int, int>> pairs;
  for (std::size_t a = 0; a < all.size(); ++a)
    for (std::size_t b = a + 1; b < all.size(); ++b) pairs.emplace_back(all[a], all[b]);
  if (pairs.empty()) throw std::runtime_error("one allowed CPU: no pair to bounce a line between");
  // 10 ms a sample quick, 50 ms full, less when there are many pairs (all pairs of 16 CPUs in
  // about 3 s quick), never under 1 ms.
  const double per_run = static_cast<double>(pairs.size()) * t.reps();
  const double ns =
      std::max(1e6, std::min(t.quick() ? 10e6 : 50e6, (t.quick() ? 3e9 : 20e9) / per_run));
  conc::team_book book;
  conc::handoff_book answers;
  std::vector<std::string> labels;
  std::vector<trial::contender> cs;
  for (auto [a, b] : pairs) {
    labels.push_back(format("cpu %d <-> cpu %d", a, b));
    cs.push_back({labels.back(), [&, a = a, b = b, l = labels.back()] {
                    lab::line_box box;
                    auto r = conc::ping_pong(box, {a, b}, ns, book[l]);
                    answers.add(r);
                    return r.rtt.median_ns;
                  }});
  }
  auto s = t.measure("round_trip", {{"ms_per_sample", ns * 1e-6}}, "ns", better::lower, cs);
  t.add(answers.check("every hand-off answered with its value + 1"));
  conc::ran_as_placed(t, book);
  t.add(book.run_queue(labels));
  t.add(book.overlap(labels, "from the round trips far above the median"));
  t.note(book.steal());
  // The matrix: a line per CPU, its round trip to each other CPU.
  curve c("core_to_core", "Core-to-core round trip of one cache line (median per pair)", "CPU",
          "round trip (ns)", false, false);
  for (int cpu : all) c.lines.push_back({format("from cpu %d", cpu), {}});
  std::vector<double> medians;
  std::size_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    auto [a, b] = pairs[i];
    auto row = [&](int cpu) {
      return static_cast<std::size_t>(std::find(all.begin(), all.end(), cpu) - all.begin());
    };
    c.lines[row(a)].points.push_back({double(b), s[i].median, s[i].min, s[i].max});
    c.lines[row(b)].points.push_back({double(a), s[i].median, s[i].min, s[i].max});
    medians.push_back(s[i].median);
    if (s[i].median < s[lo].median) lo = i;
    if (s[i].median > s[hi].median) hi = i;
  }
  for (auto& l : c.lines)
    std::sort(l.points.begin(), l.points.end(),
              [](const point& x, const point& y) { return x.x < y.x; });
  t.plot(c);
  lab::summary all_pairs = lab::summarize(medians);
  t.figure(all_pairs.median,
           format("median round trip over %zu pair%s", pairs.size(), pairs.size() == 1 ? "" : "s"));
  t.set({{"pairs", double(pairs.size())},
         {"median", all_pairs.median},
         {"min", s[lo].median},
         {"max", s[hi].median}});
  t.note(format("fastest pair %s (%.0f ns), slowest %s (%.0f ns)", labels[lo].c_str(), s[lo].median,
                labels[hi].c_str(), s[hi].median));
}

verdict core_to_core_verdict(const trial& t) {
  return measured(
      format("a cache line goes to another CPU and back in %.0f ns (median of %.0f "
             "pair%s; min %.0f, max %.0f ns), about %.0f ns each way",
             t.get("median"), t.get("pairs"), t.get("pairs") == 1 ? "" : "s", t.get("min"),
             t.get("max"), t.get("median") / 2));
}

const registration kCoreToCore("core_to_core", core_to_core, core_to_core_verdict);

}  // namespace
}  // namespace simdex::lab_bench
