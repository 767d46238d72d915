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

}  // namespace
