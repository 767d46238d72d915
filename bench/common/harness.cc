#include "harness.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "json.h"
#include "machine.h"

namespace simdex::bench {

bool options::wants(const std::string& workload) const {
  if (only.empty()) return true;
  return std::any_of(only.begin(), only.end(),
                     [&](const std::string& f) { return workload.find(f) != std::string::npos; });
}

std::vector<std::string> split_list(const std::string& list) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i <= list.size()) {
    std::size_t j = std::min(list.find(',', i), list.size());
    if (j > i) out.push_back(list.substr(i, j - i));
    i = j + 1;
  }
  return out;
}

options parse_options(int argc, char** argv, const std::string& component) {
  options o;
  o.component = component;
  auto usage = [&](int code) {
    std::fprintf(code ? stderr : stdout,
                 "usage: %s [--quick|--full] [--out DIR] [--reps N] [--only WORKLOAD]... "
                 "[--no-probe]\n",
                 argv[0]);
    std::exit(code);
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", argv[0], a.c_str());
        usage(2);
      }
      return argv[++i];
    };
    if (a == "--quick")
      o.mode = "quick";
    else if (a == "--full")
      o.mode = "full";
    else if (a == "--out")
      o.out_dir = value();
    else if (a == "--only")
      o.only.push_back(value());
    else if (a == "--no-probe")
      o.probe = false;
    else if (a == "--reps") {
      std::string v = value();
      char* end = nullptr;
      long n = std::strtol(v.c_str(), &end, 10);
      if (*end || n < 1 || n > 1000) {
        std::fprintf(stderr, "%s: --reps wants 1..1000, got '%s'\n", argv[0], v.c_str());
        std::exit(2);
      }
      o.reps = static_cast<int>(n);
    } else if (a == "--help" || a == "-h")
      usage(0);
    else {
      std::fprintf(stderr, "%s: unknown argument '%s'\n", argv[0], a.c_str());
      usage(2);
    }
  }
  // An unknown SIMDEX_ISA is a usage error, reported before any work: it used to escape the
  // first kernel call, or the JSON's kernel report after the whole run, and abort the program.
  try {
    (void)active_isa();
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    std::exit(2);
  }
  return o;
}

void progress(int done, int total, const std::string& label) {
  std::fprintf(stderr, "PROGRESS %d %d %s\n", done, total, label.c_str());
  std::fflush(stderr);
}

namespace {
std::string utc_now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string param_json(const param_value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>)
          return json::str(x);
        else if constexpr (std::is_same_v<T, bool>)
          return x ? "true" : "false";
        else if constexpr (std::is_same_v<T, double>)
          return json::num(x);
        else
          return json::num(static_cast<long long>(x));
      },
      v);
}

// A parameter as a label shows it: sizes (keys ending in "bytes") in KiB/MiB/GiB where they
// divide exactly, as the report's tables show them beside the notes that quote these labels.
std::string param_text(const std::string& key, const param_value& v) {
  if (const auto* n = std::get_if<std::int64_t>(&v);
      n != nullptr && key.size() >= 5 && key.compare(key.size() - 5, 5, "bytes") == 0) {
    for (auto [unit, size] : {std::pair{"GiB", std::int64_t{1} << 30},
                              {"MiB", std::int64_t{1} << 20},
                              {"KiB", std::int64_t{1} << 10}})
      if (*n >= size && *n % size == 0) return std::to_string(*n / size) + " " + unit;
  }
  return std::visit(
      [](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>)
          return x;
        else
          return std::to_string(x);
      },
      v);
}

// Writes text to path beside it and renames it over: a run killed while writing (Ctrl-C twice, a
// timeout) must leave the last complete file or none, never a truncated one the report would trip
// over. 0, or the errno of the step that failed (the user is told why, not only that).
int write_replacing(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return errno;
  int err = 0;
  for (std::size_t done = 0; done < text.size();) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) ::unlink(tmp.c_str());
  return err;
}

std::string label_of(const std::string& workload, const params& p) {
  std::string s = workload;
  for (const auto& [k, v] : p) s += " " + k + "=" + param_text(k, v);
  return s;
}
}  // namespace

session::session(options opts)
    : opts_(std::move(opts)), started_(utc_now()), cycle_ns_(lab::cycle_ns()) {}

void session::group(const std::string& workload, const params& p, const std::string& unit, better b,
                    const std::vector<contender>& contenders, const std::string& reference) {
  std::string label = label_of(workload, p);
  progress(done_, planned_, label);
  if (!warmed_) {
    // A core that was idle runs the first few hundred milliseconds slowly here (a first 64-byte
    // group read every contender 25-30% low, and SIMD-to-scalar ratios 20% low): spin first.
    warmed_ = true;
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    volatile std::uint64_t spin = 0;
    while (std::chrono::steady_clock::now() < until) spin = spin + 1;
  }
  std::vector<std::vector<double>> samples;
  const int reps = opts_.repetitions();
  auto measure = [&] {
    samples.assign(contenders.size(), {});
    for (int r = 0; r < reps; ++r)
      for (std::size_t c = 0; c < contenders.size(); ++c)
        samples[c].push_back(contenders[c].sample());
  };
  measure();
  // A burst of load (this is a shared 2-vCPU guest) can land on one short group and spread its
  // samples: such a group is measured once more, whole, and the second pass replaces the first.
  const bool noisy = std::any_of(samples.begin(), samples.end(),
                                 [](const std::vector<double>& v) { return summarize(v).noisy; });
  if (noisy && reps >= 3) {
    measure();
    remeasured_.push_back(label);
  }
  double ref_median = 0;
  for (std::size_t c = 0; c < contenders.size(); ++c)
    if (contenders[c].name == reference) ref_median = summarize(samples[c]).median;
  for (std::size_t c = 0; c < contenders.size(); ++c)
    record(workload, p, contenders[c].name, contenders[c].version, unit, b, samples[c], reference,
           ref_median);
  ++done_;
  progress(done_, planned_, label);
}

void session::record(const std::string& workload, const params& p, const std::string& name,
                     const std::string& version, const std::string& unit, better b,
                     std::vector<double> samples, const std::string& reference,
                     double reference_median) {
  result r{workload, name, version, unit, p, b, summarize(std::move(samples)), reference, 0, false};
  // A per-operation time below one core cycle means the work was hoisted or elided.
  if (unit.rfind("ns/", 0) == 0 && r.s.median > 0 && r.s.median < cycle_ns_) {
    r.below_one_cycle = true;
    std::fprintf(stderr,
                 "WARNING: %s %s: %.3g %s is below one cycle (%.3g ns): broken benchmark?\n",
                 label_of(workload, p).c_str(), name.c_str(), r.s.median, unit.c_str(), cycle_ns_);
  }
  if (!reference.empty() && reference_median > 0 && r.s.median > 0) {
    r.ratio = b == better::lower ? reference_median / r.s.median : r.s.median / reference_median;
    r.has_ratio = true;
  }
  std::fprintf(stderr, "  %-50s %-24s %12.4g %s%s\n", label_of(workload, p).c_str(), name.c_str(),
               r.s.median, unit.c_str(), r.s.noisy ? " (noisy)" : "");
  results_.push_back(std::move(r));
}

void session::note(const std::string& text) {
  std::fprintf(stderr, "note: %s\n", text.c_str());
  notes_.push_back(text);
}

const machine_limits* session::machine() {
  if (!opts_.probe) return nullptr;
  if (!machine_) {
    progress(done_, planned_, "machine probe");
    machine_ = std::make_shared<machine_limits>(probe_machine(opts_));
  }
  return machine_.get();
}

void session::attach(const std::string& key, std::string json) {
  attached_.emplace_back(key, std::move(json));
}

std::string session::write() {
  const machine_limits* m = machine();
  std::string machine = m ? machine_json(*m) : "null";
  std::vector<std::string> rows;
  for (const auto& r : results_) {
    std::vector<std::pair<std::string, std::string>> ps;
    for (const auto& [k, v] : r.p) ps.emplace_back(k, param_json(v));
    std::vector<std::string> samples;
    for (double x : r.s.samples) samples.push_back(json::num(x));
    std::vector<std::pair<std::string, std::string>> f = {
        {"workload", json::str(r.workload)},
        {"params", json::object(ps)},
        {"contender", json::str(r.contender)},
        {"version", json::str(r.version)},
        {"unit", json::str(r.unit)},
        {"better", json::str(r.dir == better::lower ? "lower" : "higher")},
        {"samples", json::array(samples)},
        {"median", json::num(r.s.median)},
        {"min", json::num(r.s.min)},
        {"max", json::num(r.s.max)},
        {"noisy", r.s.noisy ? "true" : "false"},
    };
    if (r.below_one_cycle) f.emplace_back("below_one_cycle", "true");
    if (r.has_ratio)
      f.emplace_back("ratio", json::object({{"reference", json::str(r.reference)},
                                            {"value", json::num(r.ratio)}}));
    rows.push_back(json::object(f));
  }
  std::vector<std::string> notes;
  for (const auto& n : notes_) notes.push_back(json::str(n));
  if (!remeasured_.empty()) {
    std::string n =
        "measured a second time after a first pass with noisy samples (max/min > 1.5; "
        "the second pass is the one reported): ";
    for (std::size_t i = 0; i < remeasured_.size(); ++i) n += (i ? "; " : "") + remeasured_[i];
    notes.push_back(json::str(n));
  }
  std::vector<std::pair<std::string, std::string>> doc = {
      {"schema", json::str("simdex-bench/1")},
      {"component", json::str(opts_.component)},
      {"mode", json::str(opts_.mode)},
      {"repetitions", json::num(static_cast<long long>(opts_.repetitions()))},
      {"started", json::str(started_)},
      {"finished", json::str(utc_now())},
      {"environment", environment_json()},
      {"machine", machine},
      {"notes", json::array(notes)},
      {"results", json::array(rows)},
  };
  doc.insert(doc.end(), attached_.begin(), attached_.end());
  std::string text = json::object(doc) + "\n";
  std::error_code made;
  std::filesystem::create_directories(opts_.out_dir, made);
  if (made) {
    std::fprintf(stderr, "cannot create %s: %s\n", opts_.out_dir.c_str(), made.message().c_str());
    std::exit(1);
  }
  std::string path = (std::filesystem::path(opts_.out_dir) / (opts_.component + ".json")).string();
  if (int err = write_replacing(path, text); err != 0) {
    std::fprintf(stderr, "cannot write %s: %s\n", path.c_str(), std::strerror(err));
    std::exit(1);
  }
  std::fprintf(stderr, "wrote %s\n", path.c_str());
  return path;
}

}  // namespace simdex::bench
