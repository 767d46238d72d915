#include "simdex/lab/counters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>

#include "simdex/lab/system.h"

namespace simdex::lab {
namespace {

constexpr std::uint64_t cache_event(std::uint64_t cache) {
  return cache | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16);
}

bool cpu_pmu_present() {
  return std::filesystem::exists("/sys/bus/event_source/devices/cpu") ||
         std::filesystem::exists("/sys/bus/event_source/devices/cpu_core");
}

// "ENOENT (why that usually happens)".
std::string explain(int err) {
  constexpr const char* kNoCounter =
      "no free hardware counter (NMI watchdog or another user holds them)";
  constexpr struct {
    int err;
    const char* name;
    const char* why;
  } kKnown[] = {
      {EOPNOTSUPP, "EOPNOTSUPP", "the PMU or hypervisor does not support this event"},
      {ENOSYS, "ENOSYS", "perf_event_open is not available in this kernel or sandbox"},
      {EINVAL, "EINVAL", "the kernel rejected this event configuration"},
      {EMFILE, "EMFILE", "too many open files"},
      {ENOSPC, "ENOSPC", kNoCounter},
      {EBUSY, "EBUSY", kNoCounter},
      {ENODEV, "ENODEV", "no such PMU"},
  };
  for (const auto& k : kKnown)
    if (k.err == err) return std::string(k.name) + " (" + k.why + ")";
  // These two depend on this system: what the kernel exposes and how it is configured.
  if (err == ENOENT)
    return std::string("ENOENT (") +
           (cpu_pmu_present() ? "this PMU has no such event"
                              : "no CPU PMU exposed to this system (a VM without a virtual PMU?)") +
           ")";
  if (err == EACCES || err == EPERM)
    return std::string(err == EACCES ? "EACCES" : "EPERM") + " (forbidden: perf_event_paranoid=" +
           first_line("/proc/sys/kernel/perf_event_paranoid") + " or a seccomp filter)";
  return std::string("errno (") + std::strerror(err) + ")";
}

int perf_open(const event_spec& s, int group_fd, bool inherit, bool user_only, int& err) {
  perf_event_attr a;
  std::memset(&a, 0, sizeof a);
  a.size = sizeof a;
  a.type = s.type;
  a.config = s.config;
  a.disabled = group_fd < 0 ? 1 : 0;  // members follow their leader
  a.inherit = inherit ? 1 : 0;
  a.exclude_kernel = user_only ? 1 : 0;
  a.exclude_hv = 1;
  a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  long fd = syscall(SYS_perf_event_open, &a, 0, -1, group_fd, PERF_FLAG_FD_CLOEXEC);
  err = fd < 0 ? errno : 0;
  return static_cast<int>(fd);
}

}  // namespace

// One row per event, in the enum's declaration order.
constexpr struct {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
  bool hardware;
} kSpecs[] = {
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, true},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, true},
    {"L1-dcache-load-misses", PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_L1D), true},
    {"LLC-load-misses", PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_LL), true},
    {"dTLB-load-misses", PERF_TYPE_HW_CACHE, cache_event(PERF_COUNT_HW_CACHE_DTLB), true},
    {"task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, false},
    {"page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, false},
    {"context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, false},
    {"cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, false},
};
static_assert(std::size(kSpecs) == static_cast<std::size_t>(event::cpu_migrations) + 1);

event_spec spec(event e) {
  auto i = static_cast<std::size_t>(e);
  if (i >= std::size(kSpecs)) return {};
  const auto& r = kSpecs[i];
  return {r.name, r.type, r.config, r.hardware};
}

std::vector<event> all_events() {
  return {event::cycles,          event::instructions,    event::branch_misses,
          event::l1d_read_misses, event::llc_read_misses, event::dtlb_read_misses,
          event::task_clock,      event::page_faults,     event::context_switches,
          event::cpu_migrations};
}

std::vector<event> software_events() {
  return {event::task_clock, event::page_faults, event::context_switches, event::cpu_migrations};
}

counters::counters(const std::vector<event>& events, bool with_threads) {
  for (event e : events) slots_.emplace_back(spec(e));
  open_all(with_threads);
}

counters::counters(const std::vector<event_spec>& specs, bool with_threads) {
  for (const auto& s : specs) slots_.emplace_back(s);
  open_all(with_threads);
}

void counters::open_all(bool with_threads) {
  for (std::size_t i = 0; i < slots_.size(); ++i) {
    slot& s = slots_[i];
    int& leader = s.spec.hardware ? hw_leader_ : sw_leader_;
    int group = leader >= 0 ? slots_[static_cast<std::size_t>(leader)].fd : -1;
    int err = 0;
    s.fd = perf_open(s.spec, group, with_threads, false, err);
    if (s.fd < 0 && (err == EACCES || err == EPERM)) {  // paranoid >= 2: user space only
      s.fd = perf_open(s.spec, group, with_threads, true, err);
      s.user_only = s.fd >= 0;
    }
    if (s.fd < 0) {
      s.error = explain(err);
      continue;
    }
    if (leader < 0) leader = static_cast<int>(i);
  }
}

counters::~counters() {
  for (auto& s : slots_)
    if (s.fd >= 0) close(s.fd);
}

void counters::start() {
  for (int l : {hw_leader_, sw_leader_}) {
    if (l < 0) continue;
    int fd = slots_[static_cast<std::size_t>(l)].fd;
    ioctl(fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
    ioctl(fd, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  }
}

void counters::stop() {
  for (int l : {hw_leader_, sw_leader_})
    if (l >= 0)
      ioctl(slots_[static_cast<std::size_t>(l)].fd, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
}

std::vector<reading> counters::read() const {
  std::vector<reading> out;
  for (const auto& s : slots_) {
    reading r;
    r.name = s.spec.name;
    std::uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running
    if (s.fd < 0) {
      r.status = "unavailable: " + s.error;
    } else if (::read(s.fd, v, sizeof v) != static_cast<ssize_t>(sizeof v)) {
      r.status = "unavailable: " + explain(errno) + " on read";
    } else if (v[2] == 0) {
      r.status = "unavailable: never counted (no PMU time for it)";
    } else {
      r.available = true;
      r.running_fraction = static_cast<double>(v[2]) / static_cast<double>(v[1]);
      r.value = static_cast<double>(v[0]) / r.running_fraction;
      char buf[64];
      std::snprintf(buf, sizeof buf, "scaled: counted %.0f%% of the time",
                    100 * r.running_fraction);
      r.status = v[2] < v[1] ? buf : "ok";
      if (s.user_only) r.status += ", user space only";
    }
    out.push_back(r);
  }
  // A virtual PMU can open and count nonsense: cycles per task-clock ns must look like a clock.
  const reading* tc = find(out, "task-clock");
  for (auto& r : out) {
    if (r.name != "cycles" || !r.available || !tc || !tc->available || tc->value <= 0) continue;
    double ghz = r.value / tc->value;
    if (ghz < 0.5 || ghz > 6.5) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "untrusted: %.2f GHz from cycles / task-clock", ghz);
      r.status = buf;
      r.available = false;
    }
  }
  return out;
}

const reading* find(const std::vector<reading>& rs, const std::string& name) {
  for (const auto& r : rs)
    if (r.name == name) return &r;
  return nullptr;
}

std::string counter_environment() {
  return std::string("CPU PMU ") + (cpu_pmu_present() ? "present" : "absent") +
         " in /sys/bus/event_source/devices, perf_event_paranoid=" +
         first_line("/proc/sys/kernel/perf_event_paranoid");
}

}  // namespace simdex::lab
