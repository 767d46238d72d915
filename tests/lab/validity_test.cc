// Wording of the advisory checks: a detail reads as one sentence a reader can quote.
#include "simdex/lab/validity.h"

#include <gtest/gtest.h>

#include <string>

#include "lab/one_cpu.h"

namespace {

using namespace simdex::lab;

// The unit was printed twice: "277 ns/access (plausible 70 - 260) ns/access".
TEST(LabInRange, NamesTheUnitOnce) {
  auto k = in_range("DRAM latency", 277, 70, 260, "ns/access");
  EXPECT_EQ(k.status, check_status::warn);
  EXPECT_EQ(k.detail, "DRAM latency: 277 ns/access (plausible 70 - 260)");
  EXPECT_EQ(in_range("x", 100, 70, 260, "ns").status, check_status::pass);
}

// A failed check withheld the verdict with its detail alone ("not a valid measurement: SPSC
// ring, batch 1, yield: 2.85e+03 us on a run queue ..."): docs/lab.md and the report promise the
// reason names the check.
TEST(LabInvalidReason, NamesTheFirstFailedCheck) {
  if (allowed_cpus().size() < 2) GTEST_SKIP() << "one allowed CPU: OneCpuExplainsTheFailure";
  std::vector<check> cs = {{"placement", check_status::pass, "verified"},
                           {"steady", check_status::warn, "max/min 1.7"},
                           {"run_queue", check_status::fail, "ring: 2.85e+03 us on a run queue"},
                           {"overlap", check_status::fail, "ran side by side 20% of the time"}};
  EXPECT_EQ(invalid_reason(cs),
            "not a valid measurement: run_queue failed: ring: 2.85e+03 us on a run queue");
  cs[2].status = cs[3].status = check_status::pass;
  EXPECT_EQ(invalid_reason(cs), "");  // warnings do not withhold a verdict
}

// docs/lab.md promises a "steady" warning where repetitions disagree; no experiment ran it, so
// a figure whose samples spread 3x read as firmly as a steady one.
TEST(LabSteady, WarnsNamingTheNoisiestFigures) {
  std::vector<std::pair<std::string, summary>> figures = {{"a: x", summarize({10, 11, 10.5})},
                                                          {"b: y", summarize({10, 30, 12})},
                                                          {"c: z", summarize({10, 16, 11})}};
  auto k = steady(figures);
  EXPECT_EQ(k.name, "steady");
  EXPECT_EQ(k.status, check_status::warn);
  EXPECT_EQ(k.detail,
            "2 of 3 figures vary more than 1.5x (max/min) over their repetitions: b: y 3.00, c: z "
            "1.60");
  // The same samples in another unit (GiB/s beside messages/s) are one figure.
  figures.push_back({"b in GiB/s: y", summarize({1, 3, 1.2})});
  EXPECT_EQ(steady(figures).detail, k.detail);
  figures.resize(1);
  EXPECT_EQ(steady(figures).status, check_status::pass);
}

// One or two repetitions agree with themselves: --reps 1 must not read as steady.
TEST(LabSteady, TooFewRepetitionsWarn) {
  auto k = steady({{"a: x", summarize({10})}, {"b: y", summarize({10, 10.1, 10})}});
  EXPECT_EQ(k.status, check_status::warn);
  EXPECT_EQ(k.detail,
            "1 repetition per figure: too few to tell whether repetitions agree (3 or more)");
  EXPECT_EQ(steady({}).status, check_status::pass);
}

// Under taskset -c 0 the threads of a team meant for two CPUs take turns on one: run_queue and
// overlap fail, and the verdict's reason said "not a valid measurement" where the experiments'
// own verdicts say "one CPU allowed". With a failure one CPU does not explain, it is as before.
TEST(LabInvalidReason, OneCpuExplainsTheFailure) {
  std::vector<check> cs = {{"placement", check_status::pass, "verified"},
                           {"run_queue", check_status::fail, "ring: 2.85e+03 us on a run queue"},
                           {"overlap", check_status::fail, "ran side by side 0% of the time"},
                           {"context_switches", check_status::fail, "spin: 1.1 per hand-off"}};
  const int cpu = allowed_cpus().front();
  simdex::lab_test::only_one_cpu one;
  EXPECT_EQ(invalid_reason(cs), "one CPU allowed (CPU " + std::to_string(cpu) +
                                    "), so run_queue failed: ring: 2.85e+03 us on a run queue");
  cs.push_back({"exclusive", check_status::fail, "the counter lost 12 increments"});
  EXPECT_EQ(invalid_reason(cs),
            "not a valid measurement: run_queue failed: ring: 2.85e+03 us on a run queue");
  cs[1].status = cs[2].status = cs[3].status = check_status::pass;
  EXPECT_EQ(invalid_reason(cs),
            "not a valid measurement: exclusive failed: the counter lost 12 increments");
}

}  // namespace
