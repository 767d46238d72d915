// The machine experiments' helpers, and their checks failing on deliberately broken kernels: a
// streamer that skips bytes it is credited with, a ping-pong box that does not wait for its
// turn, and two threads bouncing a line on one CPU (they can only take turns).
#include "simdex/lab/machine.h"

#include <gtest/gtest.h>

#include <vector>

#include "simdex/lab/concurrency.h"
#include "simdex/lab/streams.h"

namespace {

using namespace simdex;
using namespace simdex::lab;

TEST(LabMachine, PatternSumIsTheSumOfTheWords) {
  page_buffer buf(1 << 20, page_size::small);
  fill_words(buf.data(), buf.size(), 77);
  EXPECT_EQ(pattern_sum(77, buf.size() / 8), sum_words(buf.data(), buf.size()));
  EXPECT_NE(pattern_sum(78, buf.size() / 8), sum_words(buf.data(), buf.size()));
  EXPECT_EQ(pattern_sum(5, 0), 0u);
  EXPECT_EQ(pattern_sum(5, 3), 5u + 6 + 7);
}

TEST(LabMachine, CappedBytesStayWithinMemory) {
  const std::size_t avail = available_memory_bytes();
  ASSERT_GT(avail, 0u);
  const std::size_t unit = 1 << 20;
  std::size_t huge = capped_bytes(std::size_t{1} << 50, 0.25, unit);
  EXPECT_LE(huge, avail / 4 + unit);
  EXPECT_EQ(huge % unit, 0u);
  EXPECT_EQ(capped_bytes(3 * unit + 5, 0.25, unit), 3 * unit);
  EXPECT_EQ(capped_bytes(5, 0.25, unit), unit);
}

// A streamer reading its region over and over in chunks until stopped, as loaded_latency's do;
// `words_per_chunk` below a chunk's words is the broken variant that credits what it skipped.
std::uint64_t cyclic_reader(const std::byte* p, std::size_t region, std::size_t chunk,
                            std::size_t credited, std::size_t words_per_chunk) {
  std::uint64_t s = 0;
  for (std::size_t done = 0, off = 0; done < credited; done += chunk, off = (off + chunk) % region)
    s += sum_words(p + off, words_per_chunk * 8);
  return s;
}

TEST(LabMachine, CyclicReadOfEveryByteHolds) {
  page_buffer buf(64 << 10, page_size::small);
  fill_words(buf.data(), buf.size(), 3);
  const std::size_t chunk = 4 << 10, credited = 5 * buf.size() / 2;  // 2.5 passes
  auto s = cyclic_reader(buf.data(), buf.size(), chunk, credited, chunk / 8);
  auto c = bytes_read_cyclic(buf.data(), buf.size(), credited, s);
  EXPECT_EQ(c.status, check_status::pass) << c.detail;
  // The same read of exactly the region is bytes_read's case.
  EXPECT_EQ(bytes_read_cyclic(buf.data(), buf.size(), buf.size(), sum_words(buf.data(), buf.size()))
                .status,
            check_status::pass);
}

TEST(LabMachine, CyclicReaderSkippingBytesFails) {
  page_buffer buf(64 << 10, page_size::small);
  fill_words(buf.data(), buf.size(), 3);
  const std::size_t chunk = 4 << 10, credited = 5 * buf.size() / 2;
  // One word per chunk, the whole chunk credited (the study's one-byte-per-page pattern).
  auto s = cyclic_reader(buf.data(), buf.size(), chunk, credited, 1);
  auto c = bytes_read_cyclic(buf.data(), buf.size(), credited, s);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  // Credited for a pass it never made.
  s = cyclic_reader(buf.data(), buf.size(), chunk, credited, chunk / 8);
  EXPECT_EQ(bytes_read_cyclic(buf.data(), buf.size(), credited + buf.size(), s).status,
            check_status::fail);
}

// Exactly `n` round trips: thread 0 sends v and wants v + 1 back, thread 1 answers.
template <class Box>
std::uint64_t wrong_answers(Box& box, const std::vector<int>& cpus, int n) {
  std::uint64_t bad = 0;
  auto team = run_team(cpus, [&](int me) {
    for (std::uint64_t i = 0, v = 1; i < static_cast<std::uint64_t>(n); ++i, v += 2) {
      if (me == 0) {
        box.send(1, v);
        bad += box.recv(0) != v + 1;
      } else {
        box.send(0, box.recv(1) + 1);
      }
    }
  });
  EXPECT_TRUE(team.placement_verified) << team.detail();
  return bad;
}

std::vector<int> two_cpus() {
  auto all = allowed_cpus();
  return {all.front(), all.back()};
}

TEST(LabLineBox, EveryAnswerArrives) {
  line_box box;
  const int n = allowed_cpus().size() > 1 ? 20000 : 20;  // one CPU: a time slice per trip
  std::uint64_t bad = wrong_answers(box, two_cpus(), n);
  EXPECT_EQ(delivered("line box", 2u * n, 2u * n - bad, 0, 0).status, check_status::pass);
}

// The broken variant: a receiver that does not wait for its turn reads whatever the line holds.
class impatient_box {
 public:
  void send(int, std::uint64_t v) { value_.store(v, std::memory_order_release); }
  std::uint64_t recv(int) { return value_.load(std::memory_order_acquire); }

 private:
  alignas(64) std::atomic<std::uint64_t> value_{0};
};

TEST(LabLineBox, ReceiverThatDoesNotWaitFailsDelivered) {
  impatient_box box;
  const int n = 20000;
  std::uint64_t bad = wrong_answers(box, two_cpus(), n);
  auto c = delivered("impatient box", 2u * n, 2u * n - bad, 0, 0);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
}

// The broken placement: both ends of the ping-pong on one CPU. Each hand-off waits for the
// spinning peer's time slice to end, so round trips far above the median fill the run.
TEST(LabLineBox, PingPongOnOneCpuFailsOverlap) {
  line_box box;
  const int cpu = allowed_cpus().front();
  rtt_log log;
  constexpr std::uint64_t kStop = ~std::uint64_t{0};
  auto team = run_team({cpu, cpu}, [&](int me) {
    if (me == 1) {
      for (std::uint64_t v; (v = box.recv(1)) != kStop;) box.send(0, v + 1);
      return;
    }
    const std::uint64_t end = tsc() + static_cast<std::uint64_t>(60e6 * tsc_per_ns());
    for (std::uint64_t v = 1; tsc() < end; v += 2) {
      std::uint64_t t0 = tsc();
      box.send(1, v);
      box.recv(0);
      log.add(tsc() - t0);
    }
    box.send(1, kStop);
  });
  ASSERT_TRUE(team.placement_verified) << team.detail();
  auto c = overlap("one CPU", 1 - log.summarize().slow_share);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
}

}  // namespace
