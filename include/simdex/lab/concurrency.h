// What a multi-threaded figure needs before anyone may believe it: the threads that were meant
// to contend really ran at the same time (a 2-vCPU guest does not promise that), the rate is
// over wall-clock time, a spinning or blocking hand-off really spun or blocked, and every message
// credited arrived. Each check is a plain function of what was measured, so a test can feed it a
// deliberately broken kernel.
#pragma once

#include <x86intrin.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "simdex/lab/counters.h"
#include "simdex/lab/threads.h"
#include "simdex/lab/validity.h"

namespace simdex::lab {

// The time-stamp counter: cheap enough to read inside a hand-off loop (CLOCK_MONOTONIC is not).
inline std::uint64_t tsc() { return __rdtsc(); }
// TSC ticks per nanosecond of CLOCK_MONOTONIC, measured once per process.
double tsc_per_ns();

// Liveness of a team: each thread beats between chunks of its work (the TSC into its own cache
// line) and looks at the others' last beats. A peer silent for longer than the window was not
// running: the kernel switched it out, or the hypervisor took its vCPU. co_running() is, for the
// thread that saw it least, the share of its looks that found every unfinished peer alive: about
// 1 when the threads truly ran side by side, about 0 when they took turns.
class heartbeat {
 public:
  static constexpr double kWindowNs = 200e3;  // far above a chunk, far below a time slice
  explicit heartbeat(int threads, double window_ns = kWindowNs);

  void beat(int me);    // between chunks; the first call marks the thread started
  void finish(int me);  // peers stop waiting for a thread that is done

  double co_running() const;  // -1 when no thread ever looked
  std::uint64_t looks() const;

 private:
  struct alignas(64) slot {
    std::atomic<std::uint64_t> last{0};  // 0: not started
    std::atomic<bool> done{false};
    std::uint64_t looks = 0, alive = 0;  // the owner's tally
  };
  std::unique_ptr<slot[]> slots_;
  int n_;
  std::uint64_t window_;
  std::atomic<std::uint64_t> first_start_{0};
};

// Round trips of a ping-pong in TSC ticks. One far above the median means a thread was off its
// CPU meanwhile; slow_share is the part of the total time spent in such round trips.
class rtt_log {
 public:
  static constexpr double kSlowFloorNs = 100e3;  // a time slice is milliseconds
  static constexpr double kSlowFactor = 20;
  void reserve(std::size_t n) { ticks_.reserve(n); }
  void add(std::uint64_t ticks) { ticks_.push_back(ticks); }
  void clear() { ticks_.clear(); }
  std::size_t size() const { return ticks_.size(); }

  struct report {
    std::size_t n = 0, slow = 0;
    double median_ns = 0, p99_ns = 0, total_ns = 0;
    double slow_share = 0;  // of total_ns, in round trips above max(floor, factor x median),
                            // the latter capped at factor x floor
  };
  report summarize() const;

 private:
  std::vector<std::uint64_t> ticks_;
};

// What the scheduler did to the calling thread so far (/proc/thread-self/schedstat): time spent
// runnable on a run queue but not running, and how many times it got a CPU. available is false
// when the kernel does not report it.
struct sched_sample {
  bool available = false;
  double on_cpu_ns = 0;
  double run_delay_ns = 0;
  double slices = 0;
  double at_ns = 0;           // now_ns() when read
  long voluntary_blocks = 0;  // getrusage(RUSAGE_THREAD).ru_nvcsw: times it blocked
};
sched_sample sched_now();

// The share of the time between two samples of one thread that it spent asleep: neither on a
// CPU nor waiting on a run queue (blocked in the kernel on a lock, a condition variable, a
// read). 0 when the thread never blocked in between: a running thread's CPU time is brought up
// to date only at scheduler ticks, so a spinning or streaming thread read over tens of
// milliseconds can look a fifth "asleep". -1 when either sample is unavailable.
double asleep_share(const sched_sample& before, const sched_sample& after);

// Steal time of these CPUs so far (/proc/stat, the hypervisor's count of time it ran something
// else while the vCPU wanted to run), in ns; -1 when the kernel does not report it.
double steal_ns(const std::vector<int>& cpus);

// --- checks ----------------------------------------------------------------------------------

// Threads meant to contend ran side by side for at least this share of the run.
constexpr double kMinCoRunning = 0.9;
// "overlap": co_running from a heartbeat or 1 - rtt_log::report::slow_share.
check overlap(const std::string& what, double co_running, const std::string& how = "");

// A contender whose threads sleep at least this share of their time blocks by design (a mutex
// queue, a lock that parks its waiters): its silent heartbeats are waits, not turns.
constexpr double kMinAsleep = 0.05;
// For such a contender, the hypervisor may have taken at most this share of the CPUs' time.
constexpr double kMaxSteal = 0.02;
// "overlap" for a contender whose threads slept `asleep` of their time (median over samples):
// at kMinAsleep or more, heartbeats cannot tell a thread parked on a lock from one switched
// out, so the check rests on steal time instead (`steal_share`: of the CPUs' time while the
// experiment ran; -1 when the kernel does not report it), the run_queue check covering the
// guest's own scheduler. Below kMinAsleep it is overlap(what, co_running, how).
check overlap(const std::string& what, double co_running, double asleep, double steal_share,
              const std::string& how = "");

// "run_queue": each time a thread became runnable it got a CPU within kBusyWaitNs on average (a
// wake-up on an idle CPU takes microseconds). Longer means other tasks held the CPUs, or, with
// one CPU allowed (taskset -c N), the team's threads waited there for one another: either way
// the figure includes those time slices, and the detail says which. mean_wait_ns < 0: not
// reported by this kernel.
constexpr double kBusyWaitNs = 50e3;
check run_queue(const std::string& what, double mean_wait_ns);

// "wall_clock": a multi-threaded rate must divide by the team's wall-clock span (common start
// to the last thread's end). Per-thread CPU time leaves out every moment a thread waited, so a
// rate over it is too high exactly when threads contend.
check wall_clock(const std::string& what, const team_report& team, double timed_ns);
// What a CPU-time harness divides by: the mean of the threads' CPU time (ns).
double mean_cpu_ns(const team_report& team);

// "context_switches": a spinning hand-off keeps both threads on their CPUs (about 0 switches per
// hand-off); a blocking one puts the waiter to sleep (about 1).
enum class waiting { spin, block };
constexpr double kSpinSwitchesMax = 0.05;
constexpr double kBlockSwitchesMin = 0.5;
check switches_per_handoff(const std::string& what, const reading* switches, double handoffs,
                           waiting w);

// "delivered": every message sent arrived, once and intact (count and checksum of the payload
// as sent against what the receiver read).
check delivered(const std::string& what, std::uint64_t sent, std::uint64_t received,
                std::uint64_t sent_sum, std::uint64_t received_sum);

// "exclusive": a plain counter incremented inside a lock by every thread ended at the number of
// increments; fewer means two threads were inside at once.
check exclusive(const std::string& what, std::uint64_t expected, std::uint64_t counted);

}  // namespace simdex::lab
