// Timing for the language and allocator experiments: kernels that run a number of calls,
// sampled in short batches, recorded in ns/op and cycles/op (lab::cycle_ns(), the value the
// harness flags "below one cycle" against), each checked to repeat its work
// per call and to make the calls it claims.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "lang_calls.h"
#include "lang_checks.h"
#include "registry.h"

namespace simdex::lab_bench::lang {

// One contender: run(calls) makes `calls` calls (or operations) and returns the elapsed ns.
struct kernel {
  std::string name;
  std::function<double(std::size_t calls)> run;
};

// The fastest of `batches` runs, per call. A batch is short (well under a scheduler time
// slice): on a shared machine a batch that lost the CPU is slower, never faster.
inline double best_per_call(const kernel& k, std::size_t calls, int batches) {
  double best = 0;
  for (int b = 0; b < batches; ++b) {
    double ns = k.run(calls) / static_cast<double>(calls);
    if (b == 0 || ns < best) best = ns;
  }
  return best;
}

// Samples every kernel reps() times, interleaved; records ns/op under `part` (ratios against
// `reference`) and cycles/op under "<part> cycles"; adds a per_call check for each kernel unless
// `check_per_call` is false (where nothing can be hoisted and the time per call depends on the
// count, as for allocators). Returns ns/op summaries in the kernels' order.
inline std::vector<lab::summary> measure_calls(trial& t, const std::string& part,
                                               const bench::params& p,
                                               const std::vector<kernel>& ks, std::size_t calls,
                                               const std::string& reference = "", int batches = 0,
                                               bool check_per_call = true) {
  if (batches == 0) batches = t.quick() ? 5 : 9;
  std::vector<trial::contender> cs;
  for (const auto& k : ks)
    cs.emplace_back(k.name, [&k, calls, batches] { return best_per_call(k, calls, batches); });
  auto s = t.measure(part, p, "ns/op", bench::better::lower, cs, reference);
  const double cyc = lab::cycle_ns();
  for (std::size_t i = 0; i < ks.size(); ++i) {
    std::vector<double> cycles;
    for (double ns : s[i].samples) cycles.push_back(ns / cyc);
    t.record(part + " cycles", p, ks[i].name, "cycles/op", bench::better::lower,
             lab::summarize(cycles));
    if (!check_per_call) continue;
    // Up to three tries: a hoisted loop fails every one, while a busy machine that stretched
    // one timing of a microsecond-long call (a throw) passes on the next.
    lab::check c;
    for (int attempt = 0; attempt < 3; ++attempt) {
      double n1 = best_per_call(ks[i], calls, 3) * static_cast<double>(calls);
      double n2 = best_per_call(ks[i], 2 * calls, 3) * static_cast<double>(2 * calls);
      c = per_call(part + ", " + ks[i].name, n1, n2, static_cast<double>(calls));
      if (c.status == lab::check_status::pass) break;
    }
    t.add(c);
  }
  return s;
}

// Runs `once` with the probe on and returns what the calls were.
inline observed probe_calls(const std::vector<int>& slots, const std::function<void()>& once) {
  probe_on();
  once();
  probe_off();
  return observe(slots);
}

// A plain C++ reference result per call count, computed once per count.
class reference {
 public:
  explicit reference(std::function<std::uint64_t(std::size_t)> f) : f_(std::move(f)) {}
  std::uint64_t operator()(std::size_t calls) {
    auto it = memo_.find(calls);
    if (it == memo_.end()) it = memo_.emplace(calls, f_(calls)).first;
    return it->second;
  }

 private:
  std::function<std::uint64_t(std::size_t)> f_;
  std::map<std::size_t, std::uint64_t> memo_;
};

// A long random sequence of small values, read in consecutive segments. A branch predictor
// learns a short random sequence that every run replays (a few thousand branches are enough on
// recent cores, and the figure then shows no mispredictions); here a segment comes back only
// after the whole sequence has been read.
class random_stream {
 public:
  random_stream(std::size_t n, unsigned values, std::uint64_t seed) : v_(n) {
    lab::rng r(seed);
    for (auto& x : v_) x = static_cast<std::uint8_t>(r.below(values));
  }
  // The next `count` values (count at most size()).
  const std::uint8_t* take(std::size_t count) {
    if (next_ + count > v_.size()) next_ = 0;
    const std::uint8_t* p = v_.data() + next_;
    next_ += count;
    return p;
  }
  std::size_t size() const { return v_.size(); }

 private:
  std::vector<std::uint8_t> v_;
  std::size_t next_ = 0;
};

// Counts runs and wrong results for a work_done check.
struct tally {
  std::size_t runs = 0, wrong = 0;
  void operator()(bool ok) {
    ++runs;
    wrong += !ok;
  }
};

// Elapsed ns of f(), whose result is compared with `want`.
template <class F>
double timed(F&& f, std::uint64_t want, tally& tl) {
  std::uint64_t t0 = lab::now_ns();
  std::uint64_t r = f();
  std::uint64_t t1 = lab::now_ns();
  tl(r == want);
  return static_cast<double>(t1 - t0);
}

// A kernel that times body(calls) and checks its result against want(calls).
template <class Body>
kernel checked(std::string name, reference& want, tally& work, Body body) {
  return {std::move(name), [&want, &work, body](std::size_t n) {
            return timed([&] { return body(n); }, want(n), work);
          }};
}

}  // namespace simdex::lab_bench::lang
