// Counters: every reading has a value or says why not; software page faults count first touches.
#include "simdex/lab/counters.h"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <functional>

#include "simdex/lab/threads.h"
#include "simdex/lab/validity.h"
#include "simdex/memory.h"

namespace {

using namespace simdex;
using namespace simdex::lab;

TEST(LabCounters, EveryCounterHasAValueOrAReason) {
  counters c;
  c.start();
  volatile std::uint64_t x = 0;
  for (int i = 0; i < 100000; ++i) x = x + 1;
  c.stop();
  auto rs = c.read();
  ASSERT_EQ(rs.size(), all_events().size());
  for (const auto& r : rs) {
    if (r.available) {
      EXPECT_GE(r.value, 0) << r.name;
      EXPECT_EQ(r.status.rfind("ok", 0) == 0 || r.status.rfind("scaled", 0) == 0, true) << r.status;
    } else {
      EXPECT_TRUE(r.status.rfind("unavailable: ", 0) == 0 || r.status.rfind("untrusted: ", 0) == 0)
          << r.name << ": " << r.status;
    }
  }
  EXPECT_EQ(counters_reported(rs).status, check_status::pass);
}

// An event no PMU has must say "unavailable" with the errno, never read as 0.
TEST(LabCounters, UnavailableSaysSoWithTheErrno) {
  counters c(std::vector<event_spec>{{"bogus", PERF_TYPE_HARDWARE, 0xfff0, true},
                                     {"bogus-type", 0x7fff0000u, 1, false}});
  c.start();
  c.stop();
  auto rs = c.read();
  ASSERT_EQ(rs.size(), 2u);
  for (const auto& r : rs) {
    EXPECT_FALSE(r.available) << r.name;
    EXPECT_EQ(r.status.rfind("unavailable: E", 0), 0u) << r.status;  // "unavailable: EINVAL (...)"
    EXPECT_NE(r.status.find('('), std::string::npos) << r.status;
  }
  EXPECT_EQ(counters_reported(rs).status, check_status::pass);
  EXPECT_FALSE(counter_environment().empty());
}

TEST(LabCounters, ReportedCheckFailsWithoutReason) {
  std::vector<reading> rs(1);
  rs[0].name = "cycles";  // neither a value nor a status
  EXPECT_EQ(counters_reported(rs).status, check_status::fail);
}

// The page-fault reading over `run`, which first-touches `pages` fresh pages through `touch`.
reading faults_over(std::size_t pages, bool with_threads,
                    const std::function<void(const std::function<void()>&)>& run) {
  page_buffer fresh(pages * 4096, page_size::small);
  counters c(software_events(), with_threads);
  c.start();
  run([&] {
    for (std::size_t p = 0; p < pages; ++p) fresh.data()[p * 4096] = std::byte{1};
  });
  c.stop();
  auto rs = c.read();
  return *find(rs, "page-faults");
}

TEST(LabCounters, FirstTouchFaultsOncePerPage) {
  const std::size_t pages = 512;
  reading faults = faults_over(pages, false, [](const auto& touch) { touch(); });
  if (!faults.available) GTEST_SKIP() << "software counters unavailable here: " << faults.status;
  EXPECT_EQ(faults_per_page("first touch", &faults, pages).status, check_status::pass);
  // Crediting twice the pages touched (half of the "touched" pages never faulted) must fail.
  EXPECT_EQ(faults_per_page("first touch", &faults, 2 * pages).status, check_status::fail);
  EXPECT_EQ(faults_per_page("x", nullptr, pages).status, check_status::warn);
}

// Counting a team's threads (inherit): faults taken inside a pinned worker reach the reading.
TEST(LabCounters, CountsTheTeamsThreads) {
  const std::size_t pages = 256;
  reading faults = faults_over(pages, true, [](const auto& touch) {
    run_team({allowed_cpus().front()}, [&](int) { touch(); });
  });
  if (!faults.available) GTEST_SKIP() << "software counters unavailable here: " << faults.status;
  EXPECT_GE(faults.value, static_cast<double>(pages));
}

}  // namespace
