// The driver's view of a contender: each method runs one whole timed phase with the adapter's
// operations inlined into the loop (so the virtual call is paid once per phase, never per op)
// and returns the elapsed time plus a checksum the driver compares across contenders.
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/harness.h"
#include "ycsb.h"

namespace simdex::bench::btree {

struct phase {
  std::uint64_t ns = 0;
  std::uint64_t check = 0;
};

// Phases are timed in CPU time of this process (user + system, page faults included), not
// wall time: the shared 2-vCPU box often runs many times more runnable tasks than it has
// CPUs, and a wall-clock sample then mostly measures the scheduler.
inline std::uint64_t cpu_now_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

template <class K>
class runner {
 public:
  runner(std::string name, std::string version)
      : name_(std::move(name)), version_(std::move(version)) {}
  virtual ~runner() = default;
  const std::string& name() const { return name_; }
  const std::string& version() const { return version_; }

  virtual bool ordered() const = 0;
  virtual bool mutable_() const = 0;
  virtual bool batched() const = 0;  // has its own batch contains

  virtual void reset() = 0;
  virtual void insert_untimed(std::span<const K> keys) = 0;  // restore helpers
  virtual void erase_untimed(std::span<const K> keys) = 0;

  virtual phase insert_all(std::span<const K> keys) = 0;
  virtual phase erase_all(std::span<const K> keys) = 0;
  virtual phase churn(std::span<const K> out,
                      std::span<const K> in) = 0;  // erase out[i], insert in[i]
  virtual phase contains_all(std::span<const K> keys) = 0;
  // The batch API over spans of `chunk` keys when `use_batch` and the contender has one, else
  // a per-key loop writing the same output.
  virtual phase contains_batch(std::span<const K> keys, bool* found, std::size_t chunk,
                               bool use_batch) = 0;
  virtual phase lower_bound_all(std::span<const K> keys) = 0;
  // The batch lower_bound over spans of `chunk` keys when `use_batch` and the contender has
  // one, else a per-key loop; the checksum sums the keys found.
  virtual phase lower_bound_batch(std::span<const K> keys, std::size_t chunk, bool use_batch) = 0;
  // Latency: each probe's low bit comes from the previous answer, so lookups cannot overlap.
  virtual phase lower_bound_chain(std::span<const K> keys) = 0;
  virtual phase scan_all(std::span<const K> starts, std::size_t len) = 0;
  virtual phase build_sorted(std::span<const K> keys) = 0;  // from empty; the reset is untimed
  virtual phase build_unsorted(std::span<const K> keys) = 0;
  virtual phase ycsb(std::span<const op<K>> ops) = 0;

  virtual std::size_t size() const = 0;
  virtual std::size_t bytes() const = 0;  // allocator-level (simdex: memory_usage())

 private:
  std::string name_, version_;
};

template <class A>
class runner_impl final : public runner<typename A::key_type> {
  using K = typename A::key_type;

 public:
  template <class... Args>
  runner_impl(std::string name, std::string version, Args&&... args)
      : runner<K>(std::move(name), std::move(version)), a_(std::forward<Args>(args)...) {}

  A& adapter() { return a_; }
  bool ordered() const override { return A::kOrdered; }
  bool mutable_() const override { return A::kMutable; }
  bool batched() const override { return A::kBatch; }

  void reset() override { a_.reset(); }
  void insert_untimed(std::span<const K> keys) override {
    if constexpr (A::kMutable)
      for (K k : keys) a_.insert(k, k);
  }
  void erase_untimed(std::span<const K> keys) override {
    if constexpr (A::kMutable)
      for (K k : keys) a_.erase(k);
  }

  phase insert_all(std::span<const K> keys) override {
    return each(keys, [&](K k) -> std::uint64_t {
      if constexpr (A::kMutable) return a_.insert(k, k);
      return 0;
    });
  }
  phase erase_all(std::span<const K> keys) override {
    return each(keys, [&](K k) -> std::uint64_t {
      if constexpr (A::kMutable) return a_.erase(k);
      return 0;
    });
  }
  phase churn(std::span<const K> out, std::span<const K> in) override {
    return timed([&] {
      std::uint64_t n = 0;
      if constexpr (A::kMutable)
        for (std::size_t i = 0; i < out.size(); ++i)
          n += a_.erase(out[i]) + 2 * a_.insert(in[i], in[i]);
      return n;
    });
  }
  phase contains_all(std::span<const K> keys) override {
    return each(keys, [&](K k) -> std::uint64_t { return a_.contains(k); });
  }
  phase contains_batch(std::span<const K> keys, bool* found, std::size_t chunk,
                       bool use_batch) override {
    return timed([&] {
      bool done = false;
      if constexpr (A::kBatch)
        if (use_batch) {
          for (std::size_t i = 0; i < keys.size(); i += chunk)
            a_.contains_batch(keys.subspan(i, std::min(chunk, keys.size() - i)), found + i);
          done = true;
        }
      if (!done)
        for (std::size_t i = 0; i < keys.size(); ++i) found[i] = a_.contains(keys[i]);
      std::uint64_t n = 0;  // counting the hits is part of consuming the answer
      for (std::size_t i = 0; i < keys.size(); ++i) n += found[i];
      return n;
    });
  }
  phase lower_bound_all(std::span<const K> keys) override {
    return each(keys, [&](K k) { return lower_bound_value(k); });
  }
  phase lower_bound_batch(std::span<const K> keys, std::size_t chunk, bool use_batch) override {
    return timed([&] {
      std::uint64_t sum = 0;
      bool done = false;
      if constexpr (A::kBatch)
        if (use_batch) {
          for (std::size_t i = 0; i < keys.size(); i += chunk)
            sum += a_.lower_bound_batch(keys.subspan(i, std::min(chunk, keys.size() - i)), kNone);
          done = true;
        }
      if (!done)
        for (K k : keys) sum += lower_bound_value(k);
      return sum;
    });
  }
  phase lower_bound_chain(std::span<const K> keys) override {
    return timed([&] {
      std::uint64_t sum = 0, prev = 0;
      for (K k : keys) {
        prev = lower_bound_value(static_cast<K>(k ^ (prev & 1)));
        sum += prev;
      }
      return sum;
    });
  }
  phase scan_all(std::span<const K> starts, std::size_t len) override {
    return each(starts, [&](K k) -> std::uint64_t {
      if constexpr (A::kOrdered) return a_.scan(k, len);
      return 0;
    });
  }
  phase build_sorted(std::span<const K> keys) override {
    a_.reset();
    return timed([&] {
      a_.build_sorted(keys);
      return static_cast<std::uint64_t>(a_.size());
    });
  }
  phase build_unsorted(std::span<const K> keys) override {
    a_.reset();
    return timed([&] {
      a_.build_unsorted(keys);
      return static_cast<std::uint64_t>(a_.size());
    });
  }
  // The checksum counts found keys and sums scanned values (identical for every contender that
  // runs the same writes); read values are consumed separately.
  phase ycsb(std::span<const op<K>> ops) override {
    return timed([&] {
      std::uint64_t sum = 0, check = 0;
      for (const op<K>& o : ops) {
        std::uint64_t v = 0;
        switch (o.kind) {
          case op_kind::read:
            if (a_.find(o.key, v)) sum += v, ++check;
            break;
          case op_kind::update:
            if constexpr (A::kMutable) check += a_.assign(o.key, o.arg);
            break;
          case op_kind::insert:
            if constexpr (A::kMutable) check += a_.insert(o.key, o.arg);
            break;
          case op_kind::scan:
            if constexpr (A::kOrdered) check += a_.scan(o.key, o.arg);
            break;
          case op_kind::rmw:
            if constexpr (A::kMutable) {
              if (a_.find(o.key, v)) sum += v, ++check;
              a_.add_to(o.key, 1);
            }
            break;
        }
      }
      do_not_optimize(sum);
      return check;
    });
  }

  std::size_t size() const override { return a_.size(); }
  std::size_t bytes() const override { return a_.bytes(); }

 private:
  // The value a lower_bound answer contributes to a checksum: the key found, or kNone at end().
  static constexpr std::uint64_t kNone = 0x5bd1e995u;
  std::uint64_t lower_bound_value(K k) const {
    K out{};
    if constexpr (A::kOrdered)
      if (a_.lower_bound(k, out)) return static_cast<std::uint64_t>(out);
    return kNone;
  }
  // Times f over every key and sums its results (the checksum).
  template <class F>
  phase each(std::span<const K> keys, F&& f) {
    return timed([&] {
      std::uint64_t sum = 0;
      for (K k : keys) sum += f(k);
      return sum;
    });
  }
  template <class F>
  static phase timed(F&& body) {
    clobber_memory();
    std::uint64_t t0 = cpu_now_ns();
    const std::uint64_t check = body();
    std::uint64_t t1 = cpu_now_ns();
    do_not_optimize(check);
    return {t1 - t0, check};
  }
  A a_;
};

}  // namespace simdex::bench::btree
