// Producer-consumer transfers through any of the lab's queues, and ping-pong between two threads
// over any transport. Producers run until their time budget is spent; consumers drain the queue;
// every message carries its producer and sequence number, and the consumer checks order, count
// and a checksum of every payload word it read, so the rate credits only messages that arrived
// whole.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "concurrency_util.h"
#include "simdex/lab/queues.h"

namespace simdex::lab_bench::conc {

// A 256-byte message: word 0 is (producer << 40 | sequence), the others derive from it.
struct message256 {
  std::array<std::uint64_t, 32> w;
};

inline std::uint64_t tag(int producer, std::uint64_t seq) {
  return (static_cast<std::uint64_t>(producer) << 40) | seq;
}

// How a message of type M is made, read back (summing every word the consumer touches) and
// identified.
inline void make_message(std::uint64_t& m, std::uint64_t t) { m = t; }
inline std::uint64_t read_message(const std::uint64_t& m) { return m; }
inline std::uint64_t tag_of(const std::uint64_t& m) { return m; }

inline void make_message(message256& m, std::uint64_t t) {
  for (std::size_t k = 0; k < m.w.size(); ++k) m.w[k] = t * (2 * k + 1) + k;
}
inline std::uint64_t read_message(const message256& m) {
  std::uint64_t s = 0;
  for (std::uint64_t x : m.w) s += x;
  return s;
}
inline std::uint64_t tag_of(const message256& m) { return m.w[0]; }

struct transfer_spec {
  int producers = 1, consumers = 1;
  std::size_t batch = 1;
  lab::backoff wait = lab::backoff::spin;
  double budget_ns = 30e6;
  std::vector<int> cpus;  // empty: team_cpus(producers + consumers)
  lab::pin_function pin = lab::pin_current_thread;
};

struct transfer_result {
  double mmsgs_s = 0;
  std::uint64_t sent = 0, received = 0, sent_sum = 0, received_sum = 0;
  bool in_order = true;  // each consumer saw each producer's sequence numbers increase
};

// Threads 0..P-1 produce, P..P+C-1 consume.
template <class M, class Queue>
transfer_result transfer(Queue& q, const transfer_spec& spec, team_tally& tally,
                         bool measure_overlap = true) {
  const int threads = spec.producers + spec.consumers;
  std::vector<int> cpus = spec.cpus.empty() ? team_cpus(threads) : spec.cpus;
  budget b(spec.budget_ns);
  lab::heartbeat hb(threads);
  std::atomic<int> producers_done{0};
  struct alignas(64) tally_of_thread {
    std::uint64_t n = 0, sum = 0;
    bool in_order = true;
  };
  std::vector<tally_of_thread> per(static_cast<std::size_t>(threads));
  auto run = run_pinned(
      cpus,
      [&](int me) {
        auto& mine = per[static_cast<std::size_t>(me)];
        std::vector<M> buf(spec.batch);
        lab::waiter w(spec.wait);
        std::uint64_t loops = 0;
        if (me < spec.producers) {
          std::uint64_t seq = 0;
          while (b.left()) {
            for (auto& m : buf) {
              make_message(m, tag(me, ++seq));
              mine.sum += read_message(m);
            }
            std::size_t off = 0;
            while (off < buf.size()) {
              std::size_t n = q.push(buf.data() + off, buf.size() - off);
              off += n;
              if (n == 0) w.wait();
              if ((++loops & 63) == 0) hb.beat(me);
            }
            w.reset();
            mine.n += buf.size();
          }
          producers_done.fetch_add(1, std::memory_order_release);
        } else {
          std::vector<std::uint64_t> last(static_cast<std::size_t>(spec.producers), 0);
          for (;;) {
            std::size_t n = q.pop(buf.data(), buf.size());
            if ((++loops & 63) == 0) hb.beat(me);
            if (n == 0) {
              if (producers_done.load(std::memory_order_acquire) < spec.producers) {
                w.wait();
                continue;
              }
              // Every push happened before the last producer reported done: one more look
              // finds whatever is left.
              n = q.pop(buf.data(), buf.size());
              if (n == 0) break;
            }
            w.reset();
            for (std::size_t i = 0; i < n; ++i) {
              mine.sum += read_message(buf[i]);
              std::uint64_t t = tag_of(buf[i]);
              auto p = static_cast<std::size_t>(t >> 40);
              std::uint64_t seq = t & ((std::uint64_t{1} << 40) - 1);
              if (p >= last.size() || seq <= last[p]) {
                mine.in_order = false;
              } else {
                last[p] = seq;
              }
            }
            mine.n += n;
          }
        }
        hb.finish(me);
      },
      spec.pin);
  const auto& team = run.team;
  tally.add(run, team.wall_ns);
  if (measure_overlap) tally.co_running.push_back(hb.co_running());
  transfer_result r;
  for (int i = 0; i < threads; ++i) {
    const auto& t = per[static_cast<std::size_t>(i)];
    (i < spec.producers ? r.sent : r.received) += t.n;
    (i < spec.producers ? r.sent_sum : r.received_sum) += t.sum;
    r.in_order = r.in_order && t.in_order;
  }
  r.mmsgs_s = static_cast<double>(r.received) / team.wall_ns * 1e3;
  return r;
}

// Accumulates transfers' deliveries into one "delivered" check.
struct delivery_book {
  std::uint64_t sent = 0, received = 0, sent_sum = 0, received_sum = 0;
  bool in_order = true;
  void add(const transfer_result& r) {
    sent += r.sent;
    received += r.received;
    sent_sum += r.sent_sum;
    received_sum += r.received_sum;
    in_order = in_order && r.in_order;
  }
  lab::check check(const std::string& what) const {
    lab::check c = lab::delivered(what, sent, received, sent_sum, received_sum);
    if (c.status == lab::check_status::pass && !in_order)
      return {"delivered", lab::check_status::fail,
              what + ": a consumer saw a producer's messages out of order or twice"};
    return c;
  }
};

// A fresh queue of `capacity`, one transfer through it, its deliveries booked; returns million
// messages per second.
template <class M, class Queue>
double transfer_mmsgs(std::size_t capacity, const transfer_spec& spec, team_tally& tally,
                      delivery_book& delivered, bool measure_overlap = true) {
  auto q = std::make_unique<Queue>(capacity);
  transfer_result r = transfer<M>(*q, spec, tally, measure_overlap);
  delivered.add(r);
  return r.mmsgs_s;
}

}  // namespace simdex::lab_bench::conc
