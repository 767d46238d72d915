// The benchmark harness every component's program uses: options, interleaved repetitions,
// median/min/max, ratios against a named reference, environment and machine limits, JSON.
// Schema: docs/bench-json.md.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "simdex/cpu.h"
#include "simdex/lab/limits.h"
#include "simdex/lab/stats.h"
#include "simdex/lab/timing.h"

namespace simdex::bench {

// --- keeping the compiler honest, clocks, inputs: the lab's (simdex/lab/timing.h) --------

using lab::clobber_memory;
using lab::do_not_optimize;
using lab::now_ns;
using lab::rng;

// --- options -------------------------------------------------------------------------------

struct options {
  std::string component;
  std::string mode = "quick";  // "quick" or "full"
  std::string out_dir = ".";
  std::vector<std::string> only;  // workload name filters (substring match); empty = all
  int reps = 0;                   // 0: 5 in quick mode, 10 in full mode
  bool probe = true;              // measure the machine's limits (memcpy, DRAM latency)
  bool quick() const { return mode == "quick"; }
  bool full() const { return mode == "full"; }
  int repetitions() const { return reps > 0 ? reps : (quick() ? 5 : 10); }
  bool wants(const std::string& workload) const;
};

// Parses --quick | --full | --out DIR | --reps N | --only NAME (repeatable) | --no-probe |
// --help. Exits with a message on a bad argument.
options parse_options(int argc, char** argv, const std::string& component);

// The items of a comma-separated option value ("a,b,c"); empty items are dropped.
std::vector<std::string> split_list(const std::string& list);

// Each item of a comma-separated option value mapped through `names` (pairs of a name and a
// value); an unknown item calls `fail` with its text (a program's usage error, which exits).
template <class Names, class Fail>
auto pick_each(const std::string& list, const Names& names, Fail fail) {
  std::vector<std::decay_t<decltype(std::begin(names)->second)>> out;
  for (const std::string& item : split_list(list)) {
    auto hit = std::find_if(std::begin(names), std::end(names),
                            [&](const auto& n) { return item == n.first; });
    if (hit == std::end(names)) fail(item);
    out.push_back(hit->second);
  }
  return out;
}

// --- results -------------------------------------------------------------------------------

using param_value = std::variant<std::int64_t, double, std::string, bool>;
using params = std::vector<std::pair<std::string, param_value>>;

enum class better { lower, higher };

struct contender {
  std::string name;                // "simdex", "absl::btree_set", "scalar", "avx2", ...
  std::string version;             // library version or ISA level; may be empty
  std::function<double()> sample;  // one measurement in the group's unit
};

// Appends one contender per level from `from` up that has a table of its own and runs here:
// named `prefix` + the level's name, with the level as its version and make(table) as its sample.
template <class Table, class Make>
void add_levels(std::vector<contender>& cs, const dispatch::by_level<Table>& tables,
                const std::string& prefix, Make&& make, isa from = isa::scalar) {
  for (int l = static_cast<int>(from); l < kIsaCount; ++l)
    if (const Table* t = dispatch::exact(tables, static_cast<isa>(l)))
      cs.push_back(
          {prefix + isa_name(static_cast<isa>(l)), isa_name(static_cast<isa>(l)), make(t)});
}

// Median, min, max, noisy (max / min > 1.5): the lab's summary (simdex/lab/stats.h).
using stats = lab::summary;
using lab::summarize;

using machine_limits = lab::memory_limits;

class session {
 public:
  explicit session(options opts);
  const options& opts() const { return opts_; }

  // Total number of groups this run will measure, for progress lines.
  void plan(int groups) { planned_ = groups; }

  // Measures every contender opts().repetitions() times, interleaved (A B C A B C ...), and
  // records one result each. Ratios are reference.median / x.median for `better::lower`
  // units (a speedup) and x.median / reference.median for `better::higher` ones.
  void group(const std::string& workload, const params& p, const std::string& unit, better b,
             const std::vector<contender>& contenders, const std::string& reference);

  // Records a figure measured elsewhere in this run (e.g. bytes per key); no ratio.
  void record(const std::string& workload, const params& p, const std::string& contender,
              const std::string& version, const std::string& unit, better b,
              std::vector<double> samples, const std::string& reference = "",
              double reference_median = 0);

  // A note that lands in the JSON (a skipped peer and why, a setting in force).
  void note(const std::string& text);

  // The machine's limits, probed once on first use (nullptr with --no-probe); write() reuses
  // them, so a program that needs them early (the lab) measures them once.
  const machine_limits* machine();

  // An extra top-level JSON member (already-encoded value), e.g. the lab's verdicts.
  void attach(const std::string& key, std::string json);

  // Writes <out_dir>/<component>.json; returns its path.
  std::string write();

 private:
  struct result {
    std::string workload, contender, version, unit;
    params p;
    better dir;
    stats s;
    std::string reference;
    double ratio = 0;
    bool has_ratio = false;
    bool below_one_cycle = false;
  };
  options opts_;
  std::vector<result> results_;
  std::vector<std::string> notes_;
  std::vector<std::pair<std::string, std::string>> attached_;
  std::shared_ptr<machine_limits> machine_;
  int planned_ = 0, done_ = 0;
  bool warmed_ = false;                  // the first group runs after a short spin (see group())
  std::vector<std::string> remeasured_;  // groups measured twice (see group())
  std::string started_;
  double cycle_ns_ = 0;  // to flag per-operation times under one cycle: a broken benchmark
  friend struct session_writer;
};

// Prints "PROGRESS done total label" on stderr; `simdex bench` turns it into a progress bar.
void progress(int done, int total, const std::string& label);

}  // namespace simdex::bench
