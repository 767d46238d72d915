// The machine limits every benchmark's JSON carries: filled, and from the lab's kernels.
#include "simdex/lab/limits.h"

#include <gtest/gtest.h>

#include "simdex/lab/timing.h"

namespace {

using namespace simdex::lab;

TEST(LabLimits, EveryFigureFilled) {
  auto m = measure_memory_limits(std::size_t{8} << 20, 2, 2000);
  EXPECT_EQ(m.bytes, std::size_t{8} << 20);
  for (const summary* s : {&m.memcpy_4k, &m.memcpy_2m, &m.latency_1_4k, &m.latency_16_4k,
                           &m.latency_1_2m, &m.latency_16_2m}) {
    EXPECT_EQ(s->samples.size(), 2u);
    EXPECT_GT(s->median, 0);
  }
  EXPECT_GT(m.cycle_ns, 0);
  EXPECT_EQ(m.huge_bytes_4k, 0u);
}

TEST(LabClock, Calibrates) {
  auto c = calibrate_clock();
  EXPECT_GT(c.tsc_ghz, 0);
  EXPECT_GT(c.now_ns_cost, 0);
  EXPECT_GT(c.core_ghz, 0);
}

// The cycle time is one value per process: the probe's, the clock calibration's and the one
// every cycles/op figure and "below one cycle" flag divides by.
TEST(LabClock, OneCycleTimePerRun) {
  double cyc = cycle_ns();
  EXPECT_GT(cyc, 0);
  EXPECT_EQ(cycle_ns(), cyc);
  EXPECT_EQ(calibrate_clock().cycle_ns, cyc);
  EXPECT_EQ(measure_memory_limits(std::size_t{4} << 20, 1, 1000).cycle_ns, cyc);
}

// The cycle time's chain runs at one add a cycle: a multiply (3 cycles of latency on x86 cores)
// takes three of them. Chains of add-immediate failed this on Intel's Golden Cove cores, which
// fold them at rename (a Xeon read 9.95 GHz).
TEST(LabClock, AddChainRunsOneAddPerCycle) {
  double ratio = mul_chain_ns() / cycle_ns();
  EXPECT_GT(ratio, 2.4) << "multiply chain " << mul_chain_ns() << " ns, cycle " << cycle_ns();
  EXPECT_LT(ratio, 3.6) << "multiply chain " << mul_chain_ns() << " ns, cycle " << cycle_ns();
}

}  // namespace
