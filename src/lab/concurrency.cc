#include "simdex/lab/concurrency.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "format.h"
#include "simdex/lab/timing.h"

namespace simdex::lab {
namespace {

check make(std::string name, check_status s, std::string detail) {
  return {std::move(name), s, std::move(detail)};
}

}  // namespace

double tsc_per_ns() {
  static const double rate = [] {
    std::uint64_t n0 = now_ns(), t0 = tsc();
    while (now_ns() - n0 < 10'000'000) {
    }
    std::uint64_t n1 = now_ns(), t1 = tsc();
    return static_cast<double>(t1 - t0) / static_cast<double>(n1 - n0);
  }();
  return rate;
}

heartbeat::heartbeat(int threads, double window_ns)
    : slots_(new slot[static_cast<std::size_t>(threads)]),
      n_(threads),
      window_(static_cast<std::uint64_t>(window_ns * tsc_per_ns())) {}

void heartbeat::beat(int me) {
  std::uint64_t now = tsc();
  slot& s = slots_[static_cast<std::size_t>(me)];
  if (s.last.load(std::memory_order_relaxed) == 0) {
    std::uint64_t zero = 0;
    first_start_.compare_exchange_strong(zero, now, std::memory_order_relaxed);
  }
  s.last.store(now, std::memory_order_relaxed);
  bool any = false, all_alive = true;
  for (int p = 0; p < n_; ++p) {
    if (p == me) continue;
    const slot& q = slots_[static_cast<std::size_t>(p)];
    if (q.done.load(std::memory_order_relaxed)) continue;
    std::uint64_t last = q.last.load(std::memory_order_relaxed);
    // A peer that has not started counts from the team's first start: not yet running is not
    // running.
    if (last == 0) last = first_start_.load(std::memory_order_relaxed);
    any = true;
    if (last < now && now - last > window_) all_alive = false;
  }
  if (any) {
    ++s.looks;
    s.alive += all_alive;
  }
}

void heartbeat::finish(int me) {
  slots_[static_cast<std::size_t>(me)].done.store(true, std::memory_order_relaxed);
}

double heartbeat::co_running() const {
  // Per thread, the share of its looks that found the others alive; the least of these is the
  // share of the busiest thread's running time that its peers shared.
  double least = -1;
  for (int p = 0; p < n_; ++p) {
    const slot& s = slots_[static_cast<std::size_t>(p)];
    if (s.looks == 0) continue;
    double share = static_cast<double>(s.alive) / static_cast<double>(s.looks);
    least = least < 0 ? share : std::min(least, share);
  }
  return least;
}

std::uint64_t heartbeat::looks() const {
  std::uint64_t looks = 0;
  for (int p = 0; p < n_; ++p) looks += slots_[static_cast<std::size_t>(p)].looks;
  return looks;
}

rtt_log::report rtt_log::summarize() const {
  report r;
  r.n = ticks_.size();
  if (ticks_.empty()) return r;
  std::vector<std::uint64_t> sorted(ticks_);
  std::sort(sorted.begin(), sorted.end());
  const double per_ns = tsc_per_ns();
  r.median_ns = static_cast<double>(sorted[sorted.size() / 2]) / per_ns;
  r.p99_ns = static_cast<double>(sorted[sorted.size() * 99 / 100]) / per_ns;
  // Far above a normal round trip, and never above factor x floor: when the median itself is
  // a time slice, the threads took turns for nearly every round trip.
  const double slow_ns = std::max(kSlowFloorNs, kSlowFactor * std::min(r.median_ns, kSlowFloorNs));
  double slow_total = 0;
  for (std::uint64_t t : ticks_) {
    double ns = static_cast<double>(t) / per_ns;
    r.total_ns += ns;
    if (ns > slow_ns) {
      ++r.slow;
      slow_total += ns;
    }
  }
  r.slow_share = r.total_ns > 0 ? slow_total / r.total_ns : 0;
  return r;
}

sched_sample sched_now() {
  sched_sample s;
  std::ifstream in("/proc/thread-self/schedstat");
  if (in >> s.on_cpu_ns >> s.run_delay_ns >> s.slices) s.available = true;
  s.at_ns = static_cast<double>(now_ns());
  rusage ru;
  if (getrusage(RUSAGE_THREAD, &ru) == 0) s.voluntary_blocks = ru.ru_nvcsw;
  return s;
}

double asleep_share(const sched_sample& before, const sched_sample& after) {
  if (!before.available || !after.available) return -1;
  if (after.voluntary_blocks == before.voluntary_blocks) return 0;  // it never blocked
  double span = after.at_ns - before.at_ns;
  if (span <= 0) return 0;
  double awake = (after.on_cpu_ns - before.on_cpu_ns) + (after.run_delay_ns - before.run_delay_ns);
  return std::clamp(1 - awake / span, 0.0, 1.0);
}

double steal_ns(const std::vector<int>& cpus) {
  std::ifstream in("/proc/stat");
  std::string line;
  double ticks = 0;
  bool seen = false;
  while (std::getline(in, line)) {
    int cpu = -1;
    if (std::sscanf(line.c_str(), "cpu%d ", &cpu) != 1) continue;
    if (std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    // cpuN user nice system idle iowait irq softirq steal ...
    std::istringstream fields(line.substr(line.find(' ')));
    double v[8] = {};
    int n = 0;
    while (n < 8 && fields >> v[n]) ++n;
    if (n < 8) return -1;
    ticks += v[7];
    seen = true;
  }
  if (!seen) return -1;
  return ticks * 1e9 / static_cast<double>(sysconf(_SC_CLK_TCK));
}

check overlap(const std::string& what, double co_running, const std::string& how) {
  std::string basis = how.empty() ? "" : " (" + how + ")";
  if (co_running < 0)
    return make("overlap", check_status::fail,
                what + ": no measurement of whether the threads ran at the same time" + basis);
  std::string d =
      what + format(": the threads ran side by side %.0f%% of the time", 100 * co_running) + basis;
  if (co_running >= kMinCoRunning) return make("overlap", check_status::pass, d);
  return make("overlap", check_status::fail,
              d + format(" (below %.0f%%): they took turns on the CPUs, so the figure measures the "
                         "scheduler or the hypervisor, not contention between cores",
                         100 * kMinCoRunning));
}

check overlap(const std::string& what, double co_running, double asleep, double steal_share,
              const std::string& how) {
  if (asleep < kMinAsleep) return overlap(what, co_running, how);
  std::string d =
      what + format(
                 ": its threads slept in the kernel %.0f%% of the time (the lock or queue parks "
                 "them), so heartbeats cannot tell a parked thread from one switched out",
                 100 * asleep);
  if (steal_share < 0)
    return make("overlap", check_status::fail,
                d + "; this kernel reports no steal time to tell whether the hypervisor took the "
                    "CPUs");
  d += format("; the hypervisor took %.1f%% of the CPUs' time (steal)", 100 * steal_share);
  if (steal_share <= kMaxSteal) return make("overlap", check_status::pass, d);
  return make("overlap", check_status::fail,
              d + format(" (above %.0f%%): the figure includes the hypervisor's time slices",
                         100 * kMaxSteal));
}

check run_queue(const std::string& what, double mean_wait_ns) {
  if (mean_wait_ns < 0)
    return make("run_queue", check_status::warn,
                what + ": this kernel does not report run-queue delays (schedstat)");
  std::string d =
      what + format(": %.3g us on a run queue per time a thread got a CPU", mean_wait_ns * 1e-3);
  if (mean_wait_ns <= kBusyWaitNs) return make("run_queue", check_status::pass, d);
  d += format(" (above %.0f us): ", kBusyWaitNs * 1e-3);
  // Under taskset -c N a team's threads are all pinned to that CPU: they wait for each other
  // there, whatever else runs on the machine.
  const std::vector<int> cpus = allowed_cpus();
  if (cpus.size() == 1)
    return make("run_queue", check_status::fail,
                d + format("CPU %d is the only one allowed, so a team's threads waited there "
                           "for one another (a lone thread for the other tasks there), and the "
                           "figure includes those time slices",
                           cpus[0]));
  return make("run_queue", check_status::fail,
              d + "other tasks held the CPUs, so the figure includes their time slices");
}

double mean_cpu_ns(const team_report& team) {
  if (team.threads.empty()) return 0;
  double sum = 0;
  for (const auto& t : team.threads) sum += t.cpu_ns;
  return sum / static_cast<double>(team.threads.size());
}

// From the first body's start to the last one's end, by the threads' own clocks (0 without
// them). team.wall_ns is what the harness divides by, so it cannot be its own witness: a span
// stopped early (at the first thread's end, say) passed as long as the rate used it.
double threads_span_ns(const team_report& team) {
  std::uint64_t first = UINT64_MAX, last = 0;
  for (const auto& t : team.threads) {
    if (t.start_ns == 0 || t.end_ns < t.start_ns) continue;  // not timed
    first = std::min(first, t.start_ns);
    last = std::max(last, t.end_ns);
  }
  return last > first ? static_cast<double>(last - first) : 0;
}

check wall_clock(const std::string& what, const team_report& team, double timed_ns) {
  const double threads_ns = threads_span_ns(team);
  const double span = std::max(team.wall_ns, threads_ns);
  std::string d =
      what + format(
                 ": rate over %.4g ms; the team's wall-clock span was %.4g ms (its "
                 "threads ran from the first start to the last end in %.4g ms), "
                 "their mean CPU time %.4g ms",
                 timed_ns * 1e-6, team.wall_ns * 1e-6, threads_ns * 1e-6, mean_cpu_ns(team) * 1e-6);
  if (team.threads.empty() || span <= 0)
    return make("wall_clock", check_status::fail, what + ": no team was timed");
  // The span is measured from the common start; a time more than 2% short of it left out a
  // moment some thread was still working (or waiting).
  if (timed_ns < 0.98 * span)
    return make("wall_clock", check_status::fail,
                d + ": shorter than the wall-clock span, so the rate credits time no thread "
                    "was measured for (CPU time leaves out waiting)");
  return make("wall_clock", check_status::pass, d);
}

check switches_per_handoff(const std::string& what, const reading* switches, double handoffs,
                           waiting w) {
  if (!switches || !switches->available)
    return make("context_switches", check_status::warn,
                what + ": context-switch counter " + (switches ? switches->status : "not opened"));
  if (handoffs <= 0)
    return make("context_switches", check_status::fail, what + ": no hand-offs were counted");
  double per = switches->value / handoffs;
  std::string d = what + format(": %.3g context switches per hand-off", per);
  if (w == waiting::spin) {
    if (per <= kSpinSwitchesMax)
      return make("context_switches", check_status::pass, d + " (spinning: about 0 expected)");
    return make("context_switches", check_status::fail,
                d + format(" (above %.2g): the spinning threads were switched out, so the figure "
                           "includes the scheduler",
                           kSpinSwitchesMax));
  }
  if (per >= kBlockSwitchesMin)
    return make("context_switches", check_status::pass, d + " (blocking: about 1 expected)");
  return make("context_switches", check_status::fail,
              d + format(" (below %.2g): the waiter did not sleep, so this is not a blocking "
                         "hand-off",
                         kBlockSwitchesMin));
}

check delivered(const std::string& what, std::uint64_t sent, std::uint64_t received,
                std::uint64_t sent_sum, std::uint64_t received_sum) {
  if (sent == received && sent_sum == received_sum)
    return make("delivered", check_status::pass,
                what + format(": all %.0f messages arrived and their checksum matches",
                              static_cast<double>(sent)));
  if (sent != received)
    return make("delivered", check_status::fail,
                what + format(": %.0f messages sent, %.0f received", static_cast<double>(sent),
                              static_cast<double>(received)));
  return make("delivered", check_status::fail,
              what +
                  ": as many messages arrived as were sent, but the checksum of what was read "
                  "differs from what was written: payload bytes were lost, duplicated or "
                  "never read");
}

check exclusive(const std::string& what, std::uint64_t expected, std::uint64_t counted) {
  if (expected == counted)
    return make("exclusive", check_status::pass,
                what + format(": the counter guarded by the lock reached all %.0f increments",
                              static_cast<double>(expected)));
  return make("exclusive", check_status::fail,
              what + format(": the counter guarded by the lock reached %.0f of %.0f increments: "
                            "two threads were inside the lock at once",
                            static_cast<double>(counted), static_cast<double>(expected)));
}

}  // namespace simdex::lab
