// Hardware and software counters through perf_event_open, with an explicit status for each:
// a counter the machine cannot provide (no PMU in a VM, perf_event_paranoid, seccomp) reads
// "unavailable: <errno> (<reason>)" instead of a zero or a failure.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace simdex::lab {

enum class event {
  cycles,
  instructions,
  branch_misses,
  l1d_read_misses,
  llc_read_misses,
  dtlb_read_misses,
  task_clock,  // ns of CPU time (software)
  page_faults,
  context_switches,
  cpu_migrations,
};

// A perf_event_attr type/config pair with a name; the enum above maps onto these, tests add
// deliberately bad ones.
struct event_spec {
  std::string name;
  std::uint32_t type = 0;
  std::uint64_t config = 0;
  bool hardware = true;  // software events go in their own group: they work without a PMU
};
event_spec spec(event e);
std::vector<event> all_events();
std::vector<event> software_events();

struct reading {
  std::string name;
  bool available = false;
  double value = 0;             // scaled by enabled/running time when the PMU multiplexed
  double running_fraction = 0;  // time counted / time enabled (1 = never multiplexed)
  std::string status;           // "ok", "ok, user only", "scaled: counted 40% of the time",
                                // "unavailable: ENOENT (...)", "untrusted: ..."
};

// Opens the events at construction (hardware ones in one group led by the first that opens,
// software ones in another), counting this thread, and its children when `with_threads`.
class counters {
 public:
  explicit counters(const std::vector<event>& events = all_events(), bool with_threads = false);
  explicit counters(const std::vector<event_spec>& specs, bool with_threads = false);
  ~counters();
  counters(const counters&) = delete;
  counters& operator=(const counters&) = delete;

  void start();  // reset and enable
  void stop();   // disable
  std::vector<reading> read() const;

 private:
  struct slot {
    explicit slot(event_spec s) : spec(std::move(s)) {}
    event_spec spec;
    int fd = -1;
    std::string error;  // why it did not open
    bool user_only = false;
  };
  void open_all(bool with_threads);
  std::vector<slot> slots_;
  int hw_leader_ = -1, sw_leader_ = -1;
};

// The reading named `name`, or nullptr.
const reading* find(const std::vector<reading>& rs, const std::string& name);

// Why hardware counters might be missing here: PMU in sysfs, perf_event_paranoid.
std::string counter_environment();

}  // namespace simdex::lab
