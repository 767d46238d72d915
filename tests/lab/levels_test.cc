// The cache_levels plateaus: a verdict may call the steps between them cache boundaries only
// when each plateau is plausibly the level it is labelled.
#include "lab/levels.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

using namespace simdex::lab;

constexpr double kCycle = 0.2746;  // ns per cycle at 3.64 GHz

std::vector<plateau> ladder(double l1, double l2, double l3, double dram) {
  return {{"L1", 1, l1}, {"L2", 2, l2}, {"L3", 3, l3}, {"DRAM", 0, dram}};
}

TEST(LabLevels, APlausibleLadderPasses) {
  auto k = levels_plausible(ladder(1.1, 3.9, 13.5, 95), kCycle);
  EXPECT_EQ(k.name, "levels");
  EXPECT_EQ(k.status, check_status::pass) << k.detail;
}

// The run that prompted it: "L3 175.2 ns (638 cycles)", a DRAM-level figure, and the verdict
// still confirmed a 1.3x step at each boundary.
TEST(LabLevels, ADramFigureLabelledL3Fails) {
  auto k = levels_plausible(ladder(1.1, 3.9, 175.2, 240), kCycle);
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_NE(k.detail.find("L3 175.2 ns (638 cycles)"), std::string::npos) << k.detail;
  EXPECT_NE(k.detail.find("outside 20-250 cycles"), std::string::npos) << k.detail;
  EXPECT_EQ(k.detail.find("L2 "), std::string::npos) << "only L3 is wrong: " << k.detail;
}

TEST(LabLevels, APlateauOutOfOrderFails) {
  // Each in its range, but L3 not above L2, and in another run L2 not below L3.
  auto k = levels_plausible(ladder(1.1, 9.0, 8.0, 95), kCycle);
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_NE(k.detail.find("L3 8.0 ns"), std::string::npos) << k.detail;
  EXPECT_NE(k.detail.find("not above L2"), std::string::npos) << k.detail;
  auto d = levels_plausible(ladder(1.1, 5.0, 60, 50), kCycle);
  EXPECT_EQ(d.status, check_status::fail);
  EXPECT_NE(d.detail.find("not below DRAM"), std::string::npos) << d.detail;
}

TEST(LabLevels, NoCacheLevelsCannotBeJudged) {
  EXPECT_EQ(levels_plausible({{"DRAM", 0, 95}}, kCycle).status, check_status::warn);
}

}  // namespace
