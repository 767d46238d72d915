#include "simdex/lab/threads.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include "simdex/lab/system.h"
#include "simdex/lab/timing.h"

namespace simdex::lab {
namespace {

int read_int(const std::string& path) {
  std::string s = first_line(path);
  return s.empty() ? -1 : std::atoi(s.c_str());
}

// "0-3,8,10-11" -> {0,1,2,3,8,10,11}
std::vector<int> parse_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, ',')) {
    int a = -1, b = -1;
    if (std::sscanf(part.c_str(), "%d-%d", &a, &b) == 2)
      for (int x = a; x <= b; ++x) out.push_back(x);
    else if (std::sscanf(part.c_str(), "%d", &a) == 1)
      out.push_back(a);
  }
  return out;
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

}  // namespace

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

std::vector<cpu_place> topology() {
  std::vector<cpu_place> out;
  for (int c : allowed_cpus()) {
    std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/";
    cpu_place p;
    p.cpu = c;
    p.core = read_int(dir + "topology/core_id");
    p.package = read_int(dir + "topology/physical_package_id");
    for (int s : parse_list(first_line(dir + "topology/thread_siblings_list")))
      if (s != c) p.smt_siblings.push_back(s);
    for (int i = 0; i < 8; ++i) {
      std::string idx = dir + "cache/index" + std::to_string(i) + "/";
      if (read_int(idx + "level") == 3) {
        auto shared = parse_list(first_line(idx + "shared_cpu_list"));
        if (!shared.empty()) p.l3 = *std::min_element(shared.begin(), shared.end());
      }
    }
    out.push_back(p);
  }
  return out;
}

bool pin_current_thread(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

std::string team_report::detail() const {
  std::string s;
  for (const auto& t : threads) {
    if (!s.empty()) s += ", ";
    s += "cpu " + std::to_string(t.requested) + (t.pin_ok ? "" : " (pin refused)") + " -> " +
         std::to_string(t.cpu_before) + "/" + std::to_string(t.cpu_after);
  }
  return s;
}

team_report run_team(const std::vector<int>& cpus, const std::function<void(int)>& body,
                     pin_function pin) {
  team_report rep;
  rep.threads.resize(cpus.size());
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    threads.emplace_back([&, i] {
      thread_report& t = rep.threads[i];
      t.requested = cpus[i];
      t.pin_ok = pin(cpus[i]);
      std::this_thread::yield();  // let a fresh affinity mask take effect before looking
      t.cpu_before = sched_getcpu();
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (!go.load(std::memory_order_acquire)) {
      }
      double c0 = thread_cpu_ns();
      t.start_ns = now_ns();
      body(static_cast<int>(i));
      t.end_ns = now_ns();
      t.cpu_ns = thread_cpu_ns() - c0;
      t.cpu_after = sched_getcpu();
    });
  }
  while (ready.load(std::memory_order_acquire) < static_cast<int>(cpus.size())) {
    std::this_thread::yield();
  }
  std::uint64_t t0 = now_ns();
  go.store(true, std::memory_order_release);
  for (auto& th : threads) th.join();
  std::uint64_t last_end = t0, first_end = UINT64_MAX, last_start = 0;
  rep.placement_verified = !rep.threads.empty();
  for (const auto& t : rep.threads) {
    last_end = std::max(last_end, t.end_ns);
    first_end = std::min(first_end, t.end_ns);
    last_start = std::max(last_start, t.start_ns);
    if (!t.pin_ok || t.cpu_before != t.requested || t.cpu_after != t.requested)
      rep.placement_verified = false;
  }
  rep.wall_ns = static_cast<double>(last_end - t0);
  rep.overlapped = !rep.threads.empty() && last_start < first_end;
  return rep;
}

}  // namespace simdex::lab
