// The benchmark harness every component's program uses: options, interleaved repetitions,
// median/min/max, ratios against a named reference, environment and machine limits, JSON.
// Schema: docs/bench-json.md.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace simdex::bench {

// --- keeping the compiler honest -----------------------------------------------------------

template <class T>
inline void do_not_optimize(const T& value) {
  asm volatile("" : : "r,m"(value) : "memory");
}
template <class T>
inline void do_not_optimize(T& value) {
  asm volatile("" : "+r,m"(value) : : "memory");
}
inline void clobber_memory() { asm volatile("" : : : "memory"); }

inline std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now().time_since_epoch())
                                        .count());
}

// Fast deterministic generator for inputs (splitmix64).
struct rng {
  std::uint64_t state;
  explicit rng(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
};

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

// --- results -------------------------------------------------------------------------------

using param_value = std::variant<std::int64_t, double, std::string, bool>;
using params = std::vector<std::pair<std::string, param_value>>;

enum class better { lower, higher };

struct contender {
  std::string name;                // "simdex", "absl::btree_set", "scalar", "avx2", ...
  std::string version;             // library version or ISA level; may be empty
  std::function<double()> sample;  // one measurement in the group's unit
};

struct stats {
  std::vector<double> samples;
  double median = 0, min = 0, max = 0;
  bool noisy = false;  // max / min > 1.5
};
stats summarize(std::vector<double> samples);

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
  int planned_ = 0, done_ = 0;
  std::string started_;
  double cycle_ns_ = 0;  // to flag per-operation times under one cycle: a broken benchmark
  friend struct session_writer;
};

// Prints "PROGRESS done total label" on stderr; `simdex bench` turns it into a progress bar.
void progress(int done, int total, const std::string& label);

}  // namespace simdex::bench
