// Threads for multi-threaded experiments: pinned to named CPUs, placement verified from inside
// each thread with sched_getcpu(), and timed on the wall clock from a common start.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace simdex::lab {

// CPUs this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cpus();

// Where a CPU sits, from sysfs; -1 where unknown.
struct cpu_place {
  int cpu = -1, core = -1, package = -1, l3 = -1;  // l3: lowest CPU sharing its L3
  std::vector<int> smt_siblings;                   // other CPUs of the same core
};
std::vector<cpu_place> topology();

// Pins the calling thread to `cpu`; false when the kernel refused.
bool pin_current_thread(int cpu);
using pin_function = bool (*)(int cpu);

struct thread_report {
  int requested = -1;
  bool pin_ok = false;
  int cpu_before = -1, cpu_after = -1;  // sched_getcpu() before and after the body
  double cpu_ns = 0;                    // CLOCK_THREAD_CPUTIME_ID spent in the body
  std::uint64_t start_ns = 0, end_ns = 0;
};

struct team_report {
  std::vector<thread_report> threads;
  double wall_ns = 0;               // from the common start to the last thread's end
  bool placement_verified = false;  // every thread pinned and seen on its CPU before and after
  bool overlapped = false;          // every body was running at one common instant
  std::string detail() const;       // "cpu 0->0/0, cpu 1->1/1" style, for reports
};

// Runs body(i) on one thread per entry of `cpus`, pinned to it (via `pin`, replaceable so a
// test can break it). Threads pin, report in, and start together; wall time covers all bodies.
team_report run_team(const std::vector<int>& cpus, const std::function<void(int)>& body,
                     pin_function pin = pin_current_thread);

}  // namespace simdex::lab
