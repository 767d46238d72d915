// bench_lab: the hardware lab. Runs the registered experiments (all, or those named with --only
// by id, study number or group), each with its validity checks and verdict, and writes lab.json
// in the benchmark schema plus a "lab" block (docs/bench-json.md, docs/lab.md).
//   bench_lab [--quick|--full] [--out DIR] [--reps N] [--only ID|NUMBER|GROUP]... [--no-probe]
//   bench_lab --list [--json]
// Options go in any order; an unknown or misplaced one is an error (exit 2).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/json.h"
#include "registry.h"

using namespace simdex;
using namespace simdex::lab_bench;
namespace json = simdex::bench::json;

namespace {

bool matches(const experiment& e, const std::string& name) {
  return name == e.id || name == std::to_string(e.study) || name == e.group;
}

bool selected(const experiment& e, const bench::options& o) {
  if (o.only.empty()) return true;
  for (const auto& f : o.only)
    if (matches(e, f)) return true;
  return false;
}

void list(bool as_json) {
  if (as_json) {
    std::printf("%s\n", registry_json().c_str());
    return;
  }
  for (const auto& e : experiments())
    std::printf("%2d  %-22s %-12s %s\n", e.study, e.id.c_str(), e.group.c_str(), e.title.c_str());
}

std::string clock_json(const lab::clock_info& c) {
  return json::object({{"clocksource", json::str(c.clocksource)},
                       {"invariant_tsc", c.invariant_tsc ? "true" : "false"},
                       {"tsc_ghz", json::num(c.tsc_ghz)},
                       {"now_ns_cost", json::num(c.now_ns_cost)},
                       {"cycle_ns", json::num(c.cycle_ns)},
                       {"core_ghz", json::num(c.core_ghz)}});
}

// What the options ask for, in any order, before bench::parse_options sees them: --list and
// --json are this program's own, --list takes nothing but --json, and --quick with --full is a
// contradiction (the harness would let the last one win). Exits 2 with a message on misuse.
bool wants_list(int argc, char** argv, bool& as_json) {
  bool listing = false, quick = false, full = false;
  std::vector<std::string> others;
  as_json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--list")
      listing = true;
    else if (a == "--json")
      as_json = true;
    else {
      quick |= a == "--quick";
      full |= a == "--full";
      others.push_back(a);
      // An option's value is not an option ("--out --list" writes into a folder of that name).
      if ((a == "--out" || a == "--reps" || a == "--only") && i + 1 < argc)
        others.push_back(argv[++i]);
    }
  }
  auto usage_error = [&](const std::string& why) {
    std::fprintf(stderr, "%s: %s\n", argv[0], why.c_str());
    std::exit(2);
  };
  if (quick && full) usage_error("--quick and --full exclude each other");
  if (listing && !others.empty())
    usage_error("--list takes only --json, got '" + others.front() + "'");
  if (as_json && !listing) usage_error("--json goes with --list (bench_lab --list --json)");
  return listing;
}

}  // namespace

int main(int argc, char** argv) {
  bool as_json = false;
  if (wants_list(argc, argv, as_json)) {
    list(as_json);
    return 0;
  }
  bench::options opts = bench::parse_options(argc, argv, "lab");
  std::vector<const experiment*> chosen;
  for (const auto& e : experiments())
    if (selected(e, opts)) chosen.push_back(&e);
  // A name no experiment answers to selects nothing (simdex bench passes its --only filters to
  // every program); `simdex lab` rejects unknown names before it gets here.
  for (const auto& f : opts.only) {
    bool known = false;
    for (const auto& e : experiments()) known |= matches(e, f);
    if (!known)
      std::fprintf(stderr, "bench_lab: no experiment '%s' (bench_lab --list)\n", f.c_str());
  }

  bench::session s(opts);
  int total = static_cast<int>(chosen.size()) + 1;
  s.plan(total);
  // The limits first: bandwidth checks compare against this run's memcpy.
  const lab::memory_limits* limits = s.machine();
  lab::clock_info clock = lab::calibrate_clock();
  std::vector<std::string> results;
  int done = 1;
  for (const experiment* e : chosen) {
    bench::progress(done, total, e->id);
    results.push_back(run_experiment(s, *e, limits));
    bench::progress(++done, total, e->id);
  }
  s.attach("lab", json::object({{"clock", clock_json(clock)},
                                {"counters", json::str(lab::counter_environment())},
                                {"study", study_json()},
                                {"experiments", json::array(results)}}));
  s.write();
  return 0;
}
