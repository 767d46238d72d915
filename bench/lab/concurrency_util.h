// What the concurrency and IPC experiments share: where a team's threads go, what each team run
// leaves behind for the checks (placement seen from inside each thread, whether the threads ran
// side by side, the wall-clock time the rate divides by), and the checks built from that.
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "lab/format.h"
#include "registry.h"
#include "simdex/lab/concurrency.h"

namespace simdex::lab_bench::conc {

using lab::format;

inline int cpu_count() { return static_cast<int>(lab::allowed_cpus().size()); }

// The CPUs a team of n threads is pinned to: round-robin over the allowed CPUs, so two threads
// get two different CPUs whenever there are two.
inline std::vector<int> team_cpus(int n) {
  auto all = lab::allowed_cpus();
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(all[static_cast<std::size_t>(i) % all.size()]);
  return out;
}
// Both threads on the first allowed CPU: they can only take turns.
inline std::vector<int> same_cpu(int n) {
  return std::vector<int>(static_cast<std::size_t>(n), lab::allowed_cpus().front());
}

// How a label names the CPUs of a two-thread team: what ran, not what was asked. With one CPU
// allowed (taskset -c 0) team_cpus(2) pins both threads to it.
inline std::string two_cpus_label(const std::vector<int>& cpus) {
  return cpus[0] != cpus[1] ? std::string("2 CPUs")
                            : format("2 CPUs asked, 1 allowed (both on CPU %d)", cpus[0]);
}

// The verdict of an experiment about threads on different CPUs when only one CPU is allowed:
// its teams took turns on that CPU, so what it asks about never happened.
inline verdict one_cpu_verdict(const std::string& what_ran) {
  return {verdict_kind::inconclusive, "one CPU allowed: " + what_ran};
}

inline std::string thread_label(int n) {
  int cpus = cpu_count();
  return std::to_string(n) + (n == 1 ? " thread" : " threads") +
         (n > cpus ? " (oversubscribed)" : "");
}

// How long one hand-off or transfer measurement runs: 30 ms quick, 200 ms full.
inline double budget_ns(const trial& t) { return t.quick() ? 30e6 : 200e6; }

// A time budget that starts when the first thread of a team starts working. Contention
// experiments run for a fixed time rather than a fixed count: on a loaded or oversubscribed
// machine a fixed count can take minutes (a FIFO lock whose next owner is switched out waits a
// time slice per hand-off), while the rate over a fixed time stays honest.
class budget {
 public:
  explicit budget(double ns) : ticks_(static_cast<std::uint64_t>(ns * lab::tsc_per_ns())) {}
  bool left() {
    std::uint64_t now = lab::tsc(), end = end_.load(std::memory_order_relaxed);
    if (end == 0) {
      std::uint64_t none = 0;
      end_.compare_exchange_strong(none, now + ticks_, std::memory_order_relaxed);
      end = end_.load(std::memory_order_relaxed);
    }
    return now < end;
  }

 private:
  std::uint64_t ticks_;
  std::atomic<std::uint64_t> end_{0};
};

// A pinned team's run and how long its threads waited for a CPU each time they became runnable.
struct team_run {
  lab::team_report team;
  double mean_wait_ns = -1;  // -1: the kernel does not report it
  double asleep_share = -1;  // of the bodies' time, blocked in the kernel; -1: not reported
  lab::reading switches;     // context switches of the bodies alone, all threads
};

// lab::run_team, with each thread's run-queue delay and context switches counted around its
// body only (not the team's start and join).
template <class Body>
team_run run_pinned(const std::vector<int>& cpus, Body&& body,
                    lab::pin_function pin = lab::pin_current_thread) {
  const std::size_t n = cpus.size();
  std::vector<lab::sched_sample> before(n), after(n);
  std::vector<lab::reading> cs(n);
  team_run r;
  r.team = lab::run_team(
      cpus,
      [&](int me) {
        auto i = static_cast<std::size_t>(me);
        lab::counters c(std::vector<lab::event>{lab::event::context_switches});
        before[i] = lab::sched_now();
        c.start();
        body(me);
        c.stop();
        after[i] = lab::sched_now();
        cs[i] = c.read().front();
      },
      pin);
  double delay = 0, slices = 0, asleep = 0;
  bool available = true;
  r.switches = cs.front();
  r.switches.value = 0;
  for (std::size_t i = 0; i < n; ++i) {
    available = available && before[i].available && after[i].available;
    delay += after[i].run_delay_ns - before[i].run_delay_ns;
    slices += after[i].slices - before[i].slices;
    asleep += lab::asleep_share(before[i], after[i]);
    if (!cs[i].available) r.switches = cs[i];
    if (r.switches.available) r.switches.value += cs[i].value;
  }
  if (available) {
    r.mean_wait_ns = slices > 0 ? delay / slices : 0;
    r.asleep_share = asleep / static_cast<double>(n);
  }
  return r;
}

// Everything the team runs of one contender left behind, across its samples.
struct team_tally {
  std::vector<double> co_running;  // per sample; absent when not measured
  std::vector<double> waits;       // mean run-queue wait per sample, ns
  std::vector<double> asleep;      // share of the threads' time blocked in the kernel, per sample
  std::uint64_t teams = 0;
  bool placed = true;
  lab::team_report bad;  // the first team with a thread off its CPU
  lab::team_report last;
  bool wall_ok = true;
  lab::check wall;  // the first failing wall_clock check, else the last

  void add(const team_run& run, double timed_ns) {
    if (run.mean_wait_ns >= 0) waits.push_back(run.mean_wait_ns);
    if (run.asleep_share >= 0) asleep.push_back(run.asleep_share);
    add(run.team, timed_ns);
  }
  void add(const lab::team_report& team, double timed_ns) {
    ++teams;
    last = team;
    if (placed && !team.placement_verified) {
      placed = false;
      bad = team;
    }
    lab::check w = lab::wall_clock("", team, timed_ns);
    if (wall_ok) wall = w;
    wall_ok = wall_ok && w.status != lab::check_status::fail;
  }
  static double median(std::vector<double> v) {
    if (v.empty()) return -1;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
  double co_median() const { return median(co_running); }
  double wait_median() const { return median(waits); }
  double asleep_median() const { return median(asleep); }
};

// The tallies of one experiment, by contender label.
class team_book {
 public:
  team_book() : steal_at_start_(lab::steal_ns(lab::allowed_cpus())), start_ns_(lab::now_ns()) {}

  // The hypervisor's steal time on this process's CPUs since the book was opened, as a share
  // of their time; -1 when the kernel does not report it.
  double steal_share() const {
    double now = lab::steal_ns(lab::allowed_cpus());
    double wall = static_cast<double>(lab::now_ns() - start_ns_) * cpu_count();
    if (now < 0 || steal_at_start_ < 0 || wall <= 0) return -1;
    return (now - steal_at_start_) / wall;
  }

  // The hypervisor's steal time on this process's CPUs since the book was opened.
  std::string steal() const {
    double now = lab::steal_ns(lab::allowed_cpus());
    if (now < 0 || steal_at_start_ < 0) return "steal time: not reported by this kernel";
    double wall = static_cast<double>(lab::now_ns() - start_ns_);
    return format(
        "steal time (the hypervisor running something else on these vCPUs): %.0f ms over "
        "%.0f ms of wall time on %d CPUs",
        (now - steal_at_start_) * 1e-6, wall * 1e-6, cpu_count());
  }

  team_tally& operator[](const std::string& label) { return tallies_[label]; }

  // "placement": every thread of every team was on its CPU before and after its work.
  lab::check placement() const {
    std::uint64_t teams = 0;
    for (const auto& [label, t] : tallies_) {
      teams += t.teams;
      if (!t.placed) return lab::placement(label, t.bad);
    }
    if (teams == 0) return {"placement", lab::check_status::fail, "no pinned team was run"};
    const auto& any = tallies_.begin()->second.last;
    return {
        "placement", lab::check_status::pass,
        format("%llu pinned teams, every thread seen on its CPU from inside before and after its "
               "work (e.g. %s)",
               static_cast<unsigned long long>(teams), any.detail().c_str())};
  }

  // "wall_clock": every rate divided by its team's wall-clock span.
  lab::check wall_clock() const {
    for (const auto& [label, t] : tallies_)
      if (!t.wall_ok) {
        lab::check c = t.wall;
        c.detail = label + c.detail;
        return c;
      }
    std::uint64_t teams = 0;
    for (const auto& [label, t] : tallies_) teams += t.teams;
    return {
        "wall_clock", lab::check_status::pass,
        format("all %llu multi-threaded rates are over the wall-clock span from the common start "
               "to the last thread's end",
               static_cast<unsigned long long>(teams))};
  }

  // "overlap": the contenders whose figure needs simultaneous threads did run side by side
  // (median over their samples); a contender whose threads park in the kernel is judged by the
  // steal time instead (lab::overlap). Reports the first failure, else the worst heartbeat.
  lab::check overlap(const std::vector<std::string>& labels,
                     const std::string& how =
                         "heartbeats every few microseconds, median of the "
                         "samples") const {
    if (labels.empty()) return {"overlap", lab::check_status::fail, "no contender to judge"};
    const double steal = steal_share();
    lab::check worst{"overlap", lab::check_status::fail, ""};
    double least = 2;
    for (const auto& l : labels) {
      auto it = tallies_.find(l);
      double c = it == tallies_.end() ? -1 : it->second.co_median();
      double a = it == tallies_.end() ? -1 : it->second.asleep_median();
      lab::check one = lab::overlap(l, c, a, steal, how);
      if (one.status == lab::check_status::fail) return one;
      double rank = a >= lab::kMinAsleep ? 1.5 : c;  // heartbeat readings first
      if (rank < least) {
        least = rank;
        worst = one;
      }
    }
    return worst;
  }
  // "run_queue": the contenders' threads got a CPU promptly whenever they became runnable
  // (median over samples); reports the worst.
  lab::check run_queue(const std::vector<std::string>& labels) const {
    std::string worst;
    double most = -2;
    for (const auto& l : labels) {
      auto it = tallies_.find(l);
      double w = it == tallies_.end() ? -1 : it->second.wait_median();
      if (w > most) {
        most = w;
        worst = l;
      }
    }
    if (labels.empty()) return {"run_queue", lab::check_status::fail, "no contender to judge"};
    return lab::run_queue(worst, most);
  }
  double co_running(const std::string& label) const {
    auto it = tallies_.find(label);
    return it == tallies_.end() ? -1 : it->second.co_median();
  }

 private:
  std::map<std::string, team_tally> tallies_;
  double steal_at_start_;
  std::uint64_t start_ns_;
};

// Where and when a team ran: every thread on its CPU, every rate over its team's wall clock.
inline void ran_as_placed(trial& t, const team_book& book) {
  t.add(book.placement());
  t.add(book.wall_clock());
}

// ran_as_placed, and the checks for contenders whose figure needs their threads side by side:
// each got a CPU promptly when runnable (the guest's scheduler), and they ran at the same time
// (the guest's scheduler and the hypervisor).
// `alone` are contenders of a single thread whose wall-clock figure also needs a CPU whenever
// runnable.
inline void team_checks(trial& t, const team_book& book, const std::vector<std::string>& labels,
                        std::vector<std::string> alone = {}) {
  ran_as_placed(t, book);
  alone.insert(alone.end(), labels.begin(), labels.end());
  t.add(book.run_queue(alone));
  t.add(book.overlap(labels));
  t.note(book.steal());
}

// Runs body(me, heartbeat) on a team pinned to `cpus`; each body returns the operations it
// completed. Returns million operations per second over the team's wall-clock span, and tallies
// the run under `tally`.
template <class Body>
double team_mops(const std::vector<int>& cpus, team_tally& tally, Body&& body) {
  lab::heartbeat hb(static_cast<int>(cpus.size()));
  std::vector<std::uint64_t> ops(cpus.size());
  auto run = run_pinned(cpus, [&](int me) {
    ops[static_cast<std::size_t>(me)] = body(me, hb);
    hb.finish(me);
  });
  const double timed_ns = run.team.wall_ns;  // what the rate divides by, and what is checked
  tally.add(run, timed_ns);
  if (cpus.size() > 1) tally.co_running.push_back(hb.co_running());
  double total = 0;
  for (auto n : ops) total += static_cast<double>(n);
  return total / timed_ns * 1e3;
}

// A curve of `section` with one line per series, x = thread count, the CPU count marked.
inline curve thread_curve(const std::string& section, const std::string& title,
                          const std::string& y_label) {
  curve c(section, title, "threads", y_label, true, true);
  c.markers.push_back({static_cast<double>(cpu_count()), format("%d CPUs", cpu_count())});
  return c;
}

}  // namespace simdex::lab_bench::conc
