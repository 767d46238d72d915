// Pinned teams: placement verified from inside each thread; a thread that is not where it was
// pinned fails the check.
#include "simdex/lab/threads.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>

#include "simdex/lab/validity.h"

namespace {

using namespace simdex::lab;

std::vector<int> two_cpus() {
  auto cpus = allowed_cpus();
  if (cpus.size() > 2) cpus.resize(2);
  return cpus;
}

TEST(LabThreads, PinnedTeamIsVerified) {
  auto cpus = two_cpus();
  ASSERT_FALSE(cpus.empty());
  std::atomic<int> ran{0};
  auto team = run_team(cpus, [&](int) { ran.fetch_add(1); });
  EXPECT_EQ(ran.load(), static_cast<int>(cpus.size()));
  ASSERT_EQ(team.threads.size(), cpus.size());
  for (std::size_t i = 0; i < cpus.size(); ++i) {
    EXPECT_TRUE(team.threads[i].pin_ok);
    EXPECT_EQ(team.threads[i].cpu_before, cpus[i]);
    EXPECT_EQ(team.threads[i].cpu_after, cpus[i]);
    EXPECT_LE(team.threads[i].start_ns, team.threads[i].end_ns);
  }
  EXPECT_TRUE(team.placement_verified);
  EXPECT_NE(placement("team", team).status, check_status::fail);
  // Wall time runs from the common start to the last end: at least each body's span.
  for (const auto& t : team.threads)
    EXPECT_GE(team.wall_ns, static_cast<double>(t.end_ns - t.start_ns));
}

// Pins every thread to the first allowed CPU, whatever was asked.
bool pin_elsewhere(int) { return pin_current_thread(allowed_cpus().front()); }
bool pin_refused(int) { return false; }

TEST(LabThreads, ThreadNotWherePinnedFails) {
  auto cpus = allowed_cpus();
  if (cpus.size() < 2) GTEST_SKIP() << "needs two allowed CPUs to pin a thread to the wrong one";
  auto team = run_team(
      {cpus[1]}, [](int) {}, pin_elsewhere);
  EXPECT_FALSE(team.placement_verified);
  auto k = placement("misplaced", team);
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_NE(k.detail.find("not where it was pinned"), std::string::npos) << k.detail;
}

TEST(LabThreads, RefusedPinFails) {
  auto team = run_team(
      {allowed_cpus().front()}, [](int) {}, pin_refused);
  EXPECT_FALSE(team.placement_verified);
  EXPECT_EQ(placement("refused", team).status, check_status::fail);
  EXPECT_NE(team.detail().find("pin refused"), std::string::npos) << team.detail();
}

TEST(LabThreads, TopologyCoversAllowedCpus) {
  auto topo = topology();
  EXPECT_EQ(topo.size(), allowed_cpus().size());
  for (const auto& p : topo) EXPECT_GE(p.cpu, 0);
}

}  // namespace
