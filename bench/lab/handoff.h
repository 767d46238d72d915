// Hand-offs between two pinned threads over a transport: ping-pong (thread 0 sends v, thread 1
// answers v + 1; every round trip timed with the TSC) and one-way streams (thread 0 sends
// 1, 2, 3, ...; thread 1 sums what arrives). A transport has send(to, v) and recv(me); the
// value kStop ends the run. Every answer and every streamed value is checked.
#pragma once

#include <condition_variable>
#include <mutex>

#include "concurrency_util.h"
#include "simdex/lab/ipc.h"
#include "simdex/lab/queues.h"

namespace simdex::lab_bench::conc {

constexpr std::uint64_t kStop = ~std::uint64_t{0};

// One slot per direction in its own cache line: the sender waits for the slot to be empty,
// writes the value and raises `full` with order S; the receiver waits for `full` with order L.
// With backoff::yield the waits give the CPU away instead of pausing.
template <std::memory_order S = std::memory_order_release,
          std::memory_order L = std::memory_order_acquire>
class mailbox {
 public:
  explicit mailbox(lab::backoff b = lab::backoff::spin) : wait_(b) {}
  void send(int to, std::uint64_t v) {
    slot& s = slots_[to];
    lab::waiter w(wait_);
    while (s.full.load(L)) w.wait();
    s.value = v;
    s.full.store(true, S);
  }
  std::uint64_t recv(int me) {
    slot& s = slots_[me];
    lab::waiter w(wait_);
    while (!s.full.load(L)) w.wait();
    std::uint64_t v = s.value;
    s.full.store(false, S);
    return v;
  }

 private:
  struct alignas(64) slot {
    std::atomic<bool> full{false};
    std::uint64_t value = 0;
  };
  slot slots_[2];
  lab::backoff wait_;
};

// The same hand-off through a mutex and a condition variable: the receiver sleeps.
class condvar_box {
 public:
  void send(int to, std::uint64_t v) {
    {
      std::lock_guard<std::mutex> g(m_);
      value_[to] = v;
      full_[to] = true;
    }
    cv_[to].notify_one();
  }
  std::uint64_t recv(int me) {
    std::unique_lock<std::mutex> g(m_);
    cv_[me].wait(g, [&] { return full_[me]; });
    full_[me] = false;
    return value_[me];
  }

 private:
  std::mutex m_;
  std::condition_variable cv_[2];
  std::uint64_t value_[2] = {0, 0};
  bool full_[2] = {false, false};
};

// Eight bytes per write() and per read() through a kernel channel.
class fd_box {
 public:
  explicit fd_box(lab::channel& c) : c_(c) {}
  void send(int to, std::uint64_t v) {
    if (!lab::write_all(to == 1 ? c_.a.write_fd : c_.b.write_fd, &v, sizeof v))
      throw std::runtime_error("write to the channel failed");
  }
  std::uint64_t recv(int me) {
    std::uint64_t v = 0;
    if (!lab::read_all(me == 0 ? c_.a.read_fd : c_.b.read_fd, &v, sizeof v))
      throw std::runtime_error("read from the channel failed");
    return v;
  }

 private:
  lab::channel& c_;
};

struct handoff_result {
  double per_s = 0;          // hand-offs (ping-pong: 2 per round trip) or messages per second
  std::uint64_t count = 0;   // hand-offs or messages
  std::uint64_t bad = 0;     // wrong answers or values
  lab::rtt_log::report rtt;  // ping-pong only
  lab::reading switches;     // context switches of both threads while they handed off
};

// Accumulates hand-offs for a "delivered" check: every answer or value as expected.
struct handoff_book {
  std::uint64_t count = 0, bad = 0;
  void add(const handoff_result& r) {
    count += r.count;
    bad += r.bad;
  }
  lab::check check(const std::string& what) const {
    return lab::delivered(what, count, count - bad, 0, 0);
  }
};

template <class Box>
handoff_result ping_pong(Box& box, const std::vector<int>& cpus, double budget_ns,
                         team_tally& tally) {
  budget b(budget_ns);
  lab::rtt_log log;
  log.reserve(1 << 16);
  std::uint64_t trips = 0, bad = 0;
  auto run = run_pinned(cpus, [&](int me) {
    if (me == 1) {
      for (std::uint64_t v; (v = box.recv(1)) != kStop;) box.send(0, v + 1);
      return;
    }
    std::uint64_t v = 1;
    while (b.left()) {
      std::uint64_t t0 = lab::tsc();
      box.send(1, v);
      std::uint64_t got = box.recv(0);
      log.add(lab::tsc() - t0);
      bad += got != v + 1;
      v += 2;
      ++trips;
    }
    box.send(1, kStop);
  });
  const auto& team = run.team;
  tally.add(run, team.wall_ns);
  handoff_result r;
  r.rtt = log.summarize();
  tally.co_running.push_back(1 - r.rtt.slow_share);
  r.count = 2 * trips;
  r.bad = 2 * bad;
  r.per_s = static_cast<double>(r.count) / team.wall_ns * 1e9;
  r.switches = run.switches;
  return r;
}

// Thread 0 sends 1, 2, 3, ... until the budget is spent; thread 1 receives and checks each.
template <class Box>
handoff_result stream(Box& box, const std::vector<int>& cpus, double budget_ns, team_tally& tally) {
  budget b(budget_ns);
  lab::heartbeat hb(2);
  std::uint64_t sent = 0, received = 0, bad = 0;
  auto run = run_pinned(cpus, [&](int me) {
    if (me == 0) {
      while (b.left()) {
        box.send(1, ++sent);
        if ((sent & 7) == 0) hb.beat(0);
      }
      box.send(1, kStop);
    } else {
      for (std::uint64_t v; (v = box.recv(1)) != kStop;) {
        bad += v != ++received;
        if ((received & 7) == 0) hb.beat(1);
      }
    }
    hb.finish(me);
  });
  const auto& team = run.team;
  tally.add(run, team.wall_ns);
  tally.co_running.push_back(hb.co_running());
  handoff_result r;
  r.count = sent;
  r.bad = bad + (received != sent ? 1 : 0);
  r.per_s = static_cast<double>(received) / team.wall_ns * 1e9;
  r.switches = run.switches;
  return r;
}

}  // namespace simdex::lab_bench::conc
