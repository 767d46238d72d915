// The lab's experiments: what each declares, the trial it runs in, and the registry that
// collects them. An experiment is one record of bench/lab/experiments.txt and one
// `registration` of its code in a bench/lab/exp_<group>.cc file. docs/lab.md ("Adding an
// experiment").
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "common/harness.h"
#include "simdex/lab.h"

namespace simdex::lab_bench {

// confirmed, contradicted: the study's claim held or not. measured: an experiment that answers no
// study claim (its `study` is 0) stands as a figure with nothing to confirm. inconclusive: no
// valid figure, or none that decides.
enum class verdict_kind { confirmed, contradicted, inconclusive, measured };
const char* verdict_name(verdict_kind k);

struct verdict {
  verdict_kind kind = verdict_kind::inconclusive;
  std::string reason;
};

// The verdict on one figure: confirmed from `confirm_at` up, contradicted below
// `contradict_below`, else inconclusive with `between` as the reason (`why` when empty).
verdict by_threshold(double value, double confirm_at, double contradict_below, std::string why,
                     std::string between = "");

// Where the headline figure should land on this class of machine, and why.
struct plausible_range {
  plausible_range() = default;
  plausible_range(double l, double h, std::string u, std::string b)
      : lo(l), hi(h), unit(std::move(u)), basis(std::move(b)) {}
  double lo = 0, hi = 0;
  std::string unit;
  std::string basis;  // "reference §4: DRAM 80-120 ns bare metal, 150-260 in this VM", ...
};

// A picture for the report: lines of (x, y) with optional min/max, cache sizes as markers.
struct point {
  double x = 0, y = 0, lo = 0, hi = 0;
};
struct series {
  std::string label;
  std::vector<point> points;
};
struct marker {
  double x = 0;
  std::string label;
};
struct curve {
  curve(std::string sec, std::string t, std::string xl, std::string yl, bool xlog, bool ylog)
      : section(std::move(sec)),
        title(std::move(t)),
        x_label(std::move(xl)),
        y_label(std::move(yl)),
        x_log(xlog),
        y_log(ylog) {}
  std::string section;  // where the report puts it: latency, bandwidth, stride, threads, queues
  std::string title, x_label, y_label;
  bool x_log = true, y_log = false;
  std::vector<series> lines;
  std::vector<marker> markers;
};

class trial;

struct experiment {
  std::string id;                             // what `simdex lab ID` selects
  int study = 0;                              // the study's experiment number, 1..37; 0: none
  std::string group;                          // memory, concurrency, language, machine
  std::string title;                          // short name
  std::string question;                       // what it answers, one sentence
  std::string study_figure;                   // what the study published, verbatim; "" for none
  plausible_range range;                      // for the headline figure (trial::figure)
  std::vector<std::string> checks;            // validity checks run() must report, by name
  std::function<void(trial&)> run = nullptr;  // measures; quick or full from the trial
  std::function<verdict(const trial&)> judge = nullptr;  // called only when every check passed
};

// The lab's experiments, declared without their code (bench/lab/experiments.txt): the study's
// 37 and the lab's own (study 0).
const std::vector<experiment>& declared();

// Adds the declared experiment `id` with its code to the registry during static initialization.
struct registration {
  registration(const std::string& id, std::function<void(trial&)> run,
               std::function<verdict(const trial&)> judge);
};

// Registered experiments, by study number then id; those of no study last.
const std::vector<experiment>& experiments();

class trial {
 public:
  trial(bench::session& s, const experiment& e, const lab::memory_limits* limits);

  const experiment& exp() const { return e_; }
  bool quick() const { return s_.opts().quick(); }
  int reps() const { return s_.opts().repetitions(); }
  // This run's machine limits (nullptr when probing was switched off).
  const lab::memory_limits* limits() const { return limits_; }
  // The machine probe's best memcpy sample (4 KiB pages), the limit below_memcpy wants.
  double memcpy_gib_s() const { return limits_ ? limits_->memcpy_4k.max : 0; }

  // Samples each contender reps() times interleaved, records one result each under the
  // workload "<id>.<part>" (one unit per part), and returns the summaries in order.
  using contender = std::pair<std::string, std::function<double()>>;
  std::vector<lab::summary> measure(const std::string& part, const bench::params& p,
                                    const std::string& unit, bench::better b,
                                    const std::vector<contender>& cs,
                                    const std::string& reference = "");
  void record(const std::string& part, const bench::params& p, const std::string& name,
              const std::string& unit, bench::better b, const lab::summary& s);
  // Interleaved samples without recording, for contenders in different units (a figure and
  // the memcpy it must stay under); record() each afterwards.
  std::vector<lab::summary> sample(const std::vector<contender>& cs);

  void figure(double value, const std::string& label);  // the headline, in range.unit
  // The headline could not be measured (a difference within the noise, or negative): no value
  // is printed or judged; `why` and the measurements it would have come from (in range.unit)
  // go to the JSON and the report instead.
  void no_figure(const std::string& label, const std::string& why,
                 std::vector<std::pair<std::string, lab::summary>> from);
  void add(lab::check c);
  // Runs fn once under the counters; keeps the readings under `label` and returns them.
  std::vector<lab::reading> count(const std::string& label, const std::function<void()>& fn,
                                  bool with_threads = false);
  void plot(curve c);
  void note(const std::string& text);
  // Named values the verdict reads.
  void set(const std::string& key, double v);
  // Several at once, as run() ends.
  void set(std::initializer_list<std::pair<std::string, double>> values);
  // Each summary's median in cycles (cycle_ns: ns per cycle), under its name.
  struct named_summary {
    std::string name;
    const lab::summary& s;
  };
  void set_cycles(double cycle_ns, std::initializer_list<named_summary> medians);
  double get(const std::string& key) const;  // throws std::out_of_range when never set

  // What the run left, for the verdict and the JSON.
  bool has_figure = false;
  double figure_value = 0;
  std::string figure_label;
  bool figure_unmeasured = false;  // no_figure(): figure_label, figure_why and figure_from
  std::string figure_why;
  std::vector<std::pair<std::string, lab::summary>> figure_from;
  std::vector<lab::check> checks;
  std::vector<std::pair<std::string, std::vector<lab::reading>>> readings;
  std::vector<curve> curves;
  std::vector<std::string> notes;
  // Every summary measure() and record() recorded, by "<part>: <contender>" (the steady check).
  std::vector<std::pair<std::string, lab::summary>> recorded;

 private:
  bench::session& s_;
  const experiment& e_;
  const lab::memory_limits* limits_;
  std::vector<std::pair<std::string, double>> values_;
};

// Runs one experiment: run(), the declared checks, then judge() when all passed. Returns the
// experiment's JSON object for the "lab" block.
std::string run_experiment(bench::session& s, const experiment& e,
                           const lab::memory_limits* limits);

// An experiment's study number as JSON: null for one that answers no study experiment.
std::string study_number_json(const experiment& e);

// The study's entries (number, name, group) as a JSON array, and the registry (those plus every
// registered experiment's declaration) as a JSON object for `simdex lab list`.
std::string study_json();
std::string registry_json();

}  // namespace simdex::lab_bench
