// Wording of the advisory checks: a detail reads as one sentence a reader can quote.
#include "simdex/lab/validity.h"

#include <gtest/gtest.h>

#include <string>

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
  std::vector<check> cs = {{"placement", check_status::pass, "verified"},
                           {"steady", check_status::warn, "max/min 1.7"},
                           {"run_queue", check_status::fail, "ring: 2.85e+03 us on a run queue"},
                           {"overlap", check_status::fail, "ran side by side 20% of the time"}};
  EXPECT_EQ(invalid_reason(cs),
            "not a valid measurement: run_queue failed: ring: 2.85e+03 us on a run queue");
  cs[2].status = cs[3].status = check_status::pass;
  EXPECT_EQ(invalid_reason(cs), "");  // warnings do not withhold a verdict
}

}  // namespace
