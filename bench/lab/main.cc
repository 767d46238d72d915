// bench_lab: the hardware lab. Runs the registered experiments (all, or those named with --only
// by id, study number or group), each with its validity checks and verdict, and writes lab.json
// in the benchmark schema plus a "lab" block (docs/bench-json.md, docs/lab.md).
//   bench_lab [--quick|--full] [--out DIR] [--reps N] [--only ID|NUMBER|GROUP]... [--no-probe]
//   bench_lab --list [--json]
// Options go in any order; an unknown or misplaced one is an error (exit 2).
// Ctrl-C (SIGINT) stops after the experiment under way and writes the experiments done, marked
// interrupted (exit 130); a second Ctrl-C stops at once.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
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
  return name == e.id || (e.study > 0 && name == std::to_string(e.study)) || name == e.group;
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
  for (const auto& e : experiments()) {
    std::string n = e.study > 0 ? std::to_string(e.study) : "-";
    std::printf("%2s  %-22s %-12s %s\n", n.c_str(), e.id.c_str(), e.group.c_str(), e.title.c_str());
  }
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

volatile std::sig_atomic_t g_interrupted = 0;

// The first Ctrl-C: stop after the experiment under way, so the ones done are written; a
// second one kills (the default action). Only async-signal-safe calls here.
extern "C" void on_interrupt(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);
  // simdex, interrupted by the same Ctrl-C, ends its child with SIGTERM: already stopping.
  std::signal(SIGTERM, SIG_IGN);
  // simdex stops reading our stderr once interrupted; a full pipe must not block the rest.
  struct stat st;
  if (fstat(2, &st) == 0 && S_ISFIFO(st.st_mode)) fcntl(2, F_SETFL, fcntl(2, F_GETFL) | O_NONBLOCK);
  const char msg[] =
      "bench_lab: interrupted: finishing the experiment under way, then writing the ones done "
      "(Ctrl-C again to stop at once)\n";
  ssize_t ignored = write(2, msg, sizeof msg - 1);
  (void)ignored;
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
  struct sigaction sa = {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  // simdex's SIGTERM follows the Ctrl-C at once: held back until the handler has set it ignored
  // (unblocked, its default action would end the program before the handler's first line).
  sigaddset(&sa.sa_mask, SIGTERM);
  // SIGINT ignored (a background job of a non-interactive shell) stays ignored.
  struct sigaction before = {};
  if (sigaction(SIGINT, nullptr, &before) == 0 && before.sa_handler != SIG_IGN)
    sigaction(SIGINT, &sa, nullptr);
  int total = static_cast<int>(chosen.size()) + 1;
  s.plan(total);
  // The limits first: bandwidth checks compare against this run's memcpy.
  const lab::memory_limits* limits = s.machine();
  lab::clock_info clock = lab::calibrate_clock();
  std::vector<std::string> results;
  int done = 1;
  std::vector<std::string> not_run;
  for (const experiment* e : chosen) {
    if (g_interrupted) {
      not_run.push_back(json::object({{"id", json::str(e->id)}, {"study", study_number_json(*e)}}));
      continue;
    }
    bench::progress(done, total, e->id);
    results.push_back(run_experiment(s, *e, limits));
    bench::progress(++done, total, e->id);
  }
  // Interrupted before any experiment finished: nothing to keep, and an earlier run's lab.json
  // in the folder stays as it was.
  if (g_interrupted && results.empty()) return 130;
  std::vector<std::pair<std::string, std::string>> block = {
      {"clock", clock_json(clock)},
      {"counters", json::str(lab::counter_environment())},
      {"study", study_json()},
      {"experiments", json::array(results)}};
  if (g_interrupted)
    block.insert(block.end(), {{"interrupted", "true"}, {"not_run", json::array(not_run)}});
  s.attach("lab", json::object(block));
  s.write();
  return g_interrupted ? 130 : 0;
}
