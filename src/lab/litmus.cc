#include "simdex/lab/litmus.h"

#include <atomic>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "enum_names.h"
#include "simdex/lab/concurrency.h"
#include "simdex/lab/queues.h"
#include "simdex/lab/timing.h"

namespace simdex::lab {
namespace {

using mo = std::memory_order;

struct alignas(64) line {
  std::atomic<std::uint64_t> v{0};
};

struct litmus_state {
  line x, y;    // MP: x = data, y = flag. SB: x = thread 0's variable, y = thread 1's
  line arrive;  // the per-round barrier: each thread adds 1 per round
  line done0;   // serialized schedule: rounds thread 0 has finished
  line stop;    // r + 1: thread 0 ran out of time before round r; both stop there
};

void barrier(litmus_state& s, std::uint64_t round) {
  s.arrive.v.fetch_add(1, std::memory_order_acq_rel);
  waiter w(backoff::hybrid);  // two threads on one CPU must let each other run
  while (s.arrive.v.load(std::memory_order_acquire) < 2 * (round + 1)) w.wait();
}

void delay(int iterations) {
  for (int i = 0; i < iterations; ++i) asm volatile("" ::: "memory");
}

// One thread's part of every round. S0/S1: thread 0's first and second store orders (MP writer:
// data, flag; SB: its store); L0/L1: the loads' orders (MP reader: flag, data; SB: its load).
template <mo S0, mo S1, mo L0, mo L1>
std::uint64_t litmus_body(litmus_test t, int me, litmus_state& s, std::vector<std::uint8_t>& seen,
                          std::uint64_t rounds, const litmus_options& opt) {
  rng r(opt.seed * 2 + static_cast<std::uint64_t>(me));
  const auto span = static_cast<std::uint64_t>(opt.max_delay > 0 ? opt.max_delay : 1);
  // The budget starts when the rounds do, not when the threads were created.
  const std::uint64_t deadline =
      opt.budget_ns > 0 ? tsc() + static_cast<std::uint64_t>(opt.budget_ns * tsc_per_ns()) : 0;
  for (std::uint64_t round = 0; round < rounds; ++round) {
    // Thread 0 announces the stop before it arrives, so thread 1 sees it after the barrier.
    if (me == 0 && deadline && tsc() > deadline) s.stop.v.store(round + 1, mo::relaxed);
    barrier(s, round);
    if (s.stop.v.load(std::memory_order_relaxed) == round + 1) return round;
    const std::uint64_t v = round + 1;
    if (me == 1 && opt.schedule == litmus_schedule::serialized) {
      waiter w(backoff::hybrid);
      while (s.done0.v.load(std::memory_order_acquire) < v) w.wait();
    }
    delay(static_cast<int>(r.below(span)));
    std::uint8_t out = 0;
    if (t == litmus_test::message_passing) {
      if (me == 0) {
        if (opt.writer_flag_first) {
          s.y.v.store(v, S1);
          s.x.v.store(v, S0);
        } else {
          s.x.v.store(v, S0);
          s.y.v.store(v, S1);
        }
      } else {
        bool flag = s.y.v.load(L0) == v;
        bool data = s.x.v.load(L1) == v;
        out = static_cast<std::uint8_t>(flag | (data << 1));
      }
    } else if (me == 0) {
      s.x.v.store(v, S0);
      out = s.y.v.load(L0) == v;
    } else {
      s.y.v.store(v, S0);
      out = s.x.v.load(L0) == v;
    }
    seen[round] = out;
    if (me == 0 && opt.schedule == litmus_schedule::serialized)
      s.done0.v.store(v, std::memory_order_release);
  }
  return rounds;
}

using body_fn = std::uint64_t (*)(litmus_test, int, litmus_state&, std::vector<std::uint8_t>&,
                                  std::uint64_t, const litmus_options&);

body_fn pick(litmus_test t, litmus_order o) {
  constexpr mo rlx = std::memory_order_relaxed, rel = std::memory_order_release,
               acq = std::memory_order_acquire, sc = std::memory_order_seq_cst;
  if (o == litmus_order::seq_cst) return litmus_body<sc, sc, sc, sc>;
  if (o == litmus_order::relaxed) return litmus_body<rlx, rlx, rlx, rlx>;
  // Release/acquire. MP: data relaxed, flag released; flag acquired, data relaxed. SB: each
  // store released, each load acquired.
  if (t == litmus_test::message_passing) return litmus_body<rlx, rel, acq, rlx>;
  return litmus_body<rel, rel, acq, acq>;
}

check make(std::string name, check_status s, std::string detail) {
  return {std::move(name), s, std::move(detail)};
}

std::string outcome_list(litmus_test t, const litmus_outcomes& r) {
  static const char* mp[4] = {"flag 0 data 0", "flag 1 data 0", "flag 0 data 1", "flag 1 data 1"};
  static const char* sb[4] = {"r0=0 r1=0", "r0=1 r1=0", "r0=0 r1=1", "r0=1 r1=1"};
  std::string s;
  for (int i = 0; i < 4; ++i) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s: %llu", i ? ", " : "",
                  (t == litmus_test::message_passing ? mp : sb)[i],
                  static_cast<unsigned long long>(r.counts[i]));
    s += buf;
  }
  return s;
}

}  // namespace

const char* litmus_name(litmus_test t) { return t == litmus_test::message_passing ? "MP" : "SB"; }

const char* order_name(litmus_order o) {
  return enum_name(o, {"relaxed", "acquire/release", "seq_cst"});
}

litmus_outcomes& litmus_outcomes::operator+=(const litmus_outcomes& o) {
  for (int i = 0; i < 4; ++i) counts[i] += o.counts[i];
  rounds += o.rounds;
  return *this;
}

int tso_forbidden(litmus_test t, litmus_order o) {
  if (t == litmus_test::message_passing) return 1;  // flag seen, data not
  return o == litmus_order::seq_cst ? 0 : -1;       // neither saw the other
}

std::uint64_t race_witness(litmus_test t, const litmus_outcomes& r) {
  if (t == litmus_test::message_passing) return r.counts[2];
  return r.counts[0] + r.counts[3];
}

litmus_run run_litmus(litmus_test t, litmus_order o, std::uint64_t rounds,
                      const std::vector<int>& cpus, const litmus_options& opt) {
  if (cpus.size() != 2) throw std::invalid_argument("run_litmus: needs exactly two CPUs");
  auto state = std::make_unique<litmus_state>();
  std::vector<std::uint8_t> seen[2] = {std::vector<std::uint8_t>(rounds),
                                       std::vector<std::uint8_t>(rounds)};
  body_fn body = pick(t, o);
  std::uint64_t ran = rounds;
  litmus_run out;
  out.team = run_team(
      cpus,
      [&](int me) {
        std::uint64_t n = body(t, me, *state, seen[me], rounds, opt);
        if (me == 0) ran = n;
      },
      opt.pin);
  out.outcomes.rounds = ran;
  for (std::uint64_t i = 0; i < ran; ++i) {
    int idx = t == litmus_test::message_passing ? seen[1][i] : seen[0][i] | (seen[1][i] << 1);
    ++out.outcomes.counts[idx];
  }
  return out;
}

check litmus_raced(const std::string& what, litmus_test t, const litmus_outcomes& r) {
  std::uint64_t w = race_witness(t, r);
  std::string d = what + ": " + outcome_list(t, r);
  if (w > 0)
    return make("raced", check_status::pass,
                d + "; " + std::to_string(w) + " outcomes only overlapping threads can produce");
  return make("raced", check_status::fail,
              d + "; no outcome that needs the threads to overlap: the harness ran them one "
                  "after the other, so a zero count of a reordering proves nothing");
}

check litmus_allowed(const std::string& what, litmus_test t, litmus_order o,
                     const litmus_outcomes& r) {
  int f = tso_forbidden(t, o);
  std::string d = what + ": " + outcome_list(t, r);
  if (f < 0) return make("x86_tso", check_status::pass, d + "; x86-TSO allows every outcome here");
  if (r.counts[f] == 0)
    return make("x86_tso", check_status::pass, d + "; the outcome x86-TSO forbids never occurred");
  return make("x86_tso", check_status::fail,
              d + "; x86-TSO forbids the outcome seen " + std::to_string(r.counts[f]) +
                  " times: the compiler reordered the accesses or the harness is broken");
}

}  // namespace simdex::lab
