// The lab's queues and locks against a plain reference: capacity, batches, FIFO order, and every
// item exactly once when producers and consumers run at the same time.
#include "simdex/lab/queues.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <thread>

namespace {

using namespace simdex::lab;

template <class Q>
void fill_and_drain(Q& q, std::size_t capacity) {
  std::vector<std::uint64_t> in(capacity + 5), out(capacity + 5);
  std::iota(in.begin(), in.end(), 1);
  EXPECT_EQ(q.push(in.data(), in.size()), capacity);  // only what fits
  std::uint64_t extra = 99;
  EXPECT_FALSE(q.push(extra));
  EXPECT_EQ(q.pop(out.data(), 3), 3u);
  EXPECT_EQ(q.push(in.data() + capacity, 3), 3u);  // wraps around
  EXPECT_EQ(q.pop(out.data() + 3, out.size()), capacity);
  std::uint64_t none = 0;
  EXPECT_FALSE(q.pop(none));
  out.resize(capacity + 3);
  std::vector<std::uint64_t> want(in.begin(), in.begin() + static_cast<long>(capacity + 3));
  EXPECT_EQ(out, want);
}

TEST(LabQueues, SingleThreadSemantics) {
  spsc_ring<std::uint64_t> s(16);
  fill_and_drain(s, 16);
  mutex_queue<std::uint64_t> m(16);
  fill_and_drain(m, 16);
  mpmc_ring<std::uint64_t> r(16);
  fill_and_drain(r, 16);
}

// P producers push their tagged sequences, C consumers pop; every item arrives once and each
// consumer sees each producer's items in order.
template <class Q>
void concurrent(Q& q, int producers, int consumers, std::uint64_t per_producer) {
  std::atomic<int> done{0};
  std::vector<std::vector<std::uint64_t>> seen(static_cast<std::size_t>(consumers));
  std::vector<std::thread> ts;
  for (int p = 0; p < producers; ++p)
    ts.emplace_back([&, p] {
      waiter w(backoff::hybrid);
      for (std::uint64_t i = 1; i <= per_producer; ++i)
        while (!q.push((static_cast<std::uint64_t>(p) << 32) | i)) w.wait();
      done.fetch_add(1);
    });
  for (int c = 0; c < consumers; ++c)
    ts.emplace_back([&, c] {
      waiter w(backoff::hybrid);
      std::uint64_t v = 0;
      for (;;) {
        if (q.pop(v)) {
          seen[static_cast<std::size_t>(c)].push_back(v);
        } else if (done.load() == producers) {
          if (!q.pop(v)) break;
          seen[static_cast<std::size_t>(c)].push_back(v);
        } else {
          w.wait();
        }
      }
    });
  for (auto& t : ts) t.join();
  std::vector<std::uint64_t> all;
  for (const auto& s : seen) {
    std::vector<std::uint64_t> last(static_cast<std::size_t>(producers), 0);
    for (auto v : s) {
      auto p = static_cast<std::size_t>(v >> 32);
      EXPECT_GT(v & 0xffffffffu, last[p]);
      last[p] = v & 0xffffffffu;
    }
    all.insert(all.end(), s.begin(), s.end());
  }
  ASSERT_EQ(all.size(), static_cast<std::size_t>(producers) * per_producer);
  std::sort(all.begin(), all.end());
  EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
}

TEST(LabQueues, ConcurrentTransfersLoseNothing) {
  spsc_ring<std::uint64_t> s(64);
  concurrent(s, 1, 1, 20000);
  mutex_queue<std::uint64_t> m(64);
  concurrent(m, 3, 2, 5000);
  mpmc_ring<std::uint64_t> r(64);
  concurrent(r, 3, 2, 5000);
}

TEST(LabQueues, SeqCstRingIsTheSameQueue) {
  spsc_ring<std::uint64_t, std::memory_order_seq_cst, std::memory_order_seq_cst> s(16);
  fill_and_drain(s, 16);
}

TEST(LabQueues, WaiterYieldsOnlyWhenAsked) {
  waiter spin(backoff::spin), yield(backoff::yield), hybrid(backoff::hybrid);
  for (int i = 0; i < 100; ++i) {
    spin.wait();
    yield.wait();
    hybrid.wait();
  }
  EXPECT_EQ(spin.yields(), 0u);
  EXPECT_EQ(yield.yields(), 100u);
  EXPECT_EQ(hybrid.yields(), 100u - waiter::kHybridSpins);
  EXPECT_STREQ(backoff_name(backoff::hybrid), "hybrid");
}

}  // namespace
