// Summaries and interleaving.
#include "simdex/lab/stats.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lab/difference_rule.h"
#include "simdex/lab/validity.h"

namespace {

using simdex::lab::check_status;
using simdex::lab::difference_kind;
using simdex::lab::difference_of;
using simdex::lab::interleaved;
using simdex::lab::orderings;
using simdex::lab::spread;
using simdex::lab::spread_of;
using simdex::lab::summarize;

TEST(LabStats, MedianMinMaxNoisy) {
  auto s = summarize({5, 1, 3});
  EXPECT_EQ(s.median, 3);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 5);
  EXPECT_TRUE(s.noisy);                                  // 5 / 1 > 1.5
  EXPECT_EQ(s.samples, (std::vector<double>{5, 1, 3}));  // kept in the order taken
  auto even = summarize({2, 2.9, 2.5, 2.7});
  EXPECT_DOUBLE_EQ(even.median, 2.6);
  EXPECT_FALSE(even.noisy);
  EXPECT_EQ(summarize({}).median, 0);
}

TEST(LabStats, InterleavesContenders) {
  std::string order;
  auto s = interleaved(3, {[&] {
                             order += 'a';
                             return 1.0;
                           },
                           [&] {
                             order += 'b';
                             return 2.0;
                           }});
  EXPECT_EQ(order, "ababab");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].samples.size(), 3u);
  EXPECT_EQ(s[1].median, 2.0);
}

// The spread check that marks a DRAM figure noisy: a steady set passes, a scattered one warns,
// one outlier among many moves neither percentile.
TEST(LabStats, SpreadMarksScatteredRepetitions) {
  std::vector<double> steady(20, 200.0), scattered, outlier(20, 200.0);
  for (int i = 0; i < 20; ++i) scattered.push_back(150 + 10.0 * i);  // 150..340
  outlier[7] = 5000;
  auto s = spread_of(steady);
  EXPECT_EQ(s.n, 20u);
  EXPECT_EQ(s.relative, 0);
  EXPECT_EQ(spread("dram", s, 0.25).status, check_status::pass);
  auto w = spread_of(scattered);
  EXPECT_EQ(w.p10, 170);
  EXPECT_EQ(w.p90, 320);
  EXPECT_GT(w.relative, 0.25);
  auto c = spread("dram", w, 0.25);
  EXPECT_EQ(c.name, "spread");
  EXPECT_EQ(c.status, check_status::warn);
  EXPECT_NE(c.detail.find("170.0-320.0"), std::string::npos) << c.detail;
  EXPECT_EQ(spread_of(outlier).relative, 0);
  EXPECT_EQ(spread_of({}).n, 0u);
}

// A cost found as a difference of two timings (the lab's TLB figure: 4 KiB minus 2 MiB pages) is
// a figure only where the samples show it. A negative difference printed as a cost (-39.3 ns)
// on a noisy machine was what this replaced.
TEST(LabStats, DifferenceIsAFigureOnlyWhereTheSamplesShowIt) {
  auto apart =
      difference_of(summarize({120, 125, 130, 122, 128}), summarize({95, 100, 105, 98, 102}));
  EXPECT_EQ(apart.kind, difference_kind::measured);
  EXPECT_TRUE(apart.measured());
  EXPECT_DOUBLE_EQ(apart.value, 25);
  auto negative = difference_of(summarize({101, 98, 104}), summarize({141, 139, 150}));
  EXPECT_EQ(negative.kind, difference_kind::negative);
  EXPECT_FALSE(negative.measured());
  EXPECT_DOUBLE_EQ(negative.value, -40);  // the value is kept, for the report's wording
  // Medians 20 ns apart, but one 4 KiB sample below the slowest 2 MiB one: noise.
  auto overlap = difference_of(summarize({110, 120, 90}), summarize({100, 95, 92}));
  EXPECT_EQ(overlap.kind, difference_kind::within_noise);
  EXPECT_FALSE(overlap.measured());
  EXPECT_EQ(difference_of(summarize({}), summarize({1})).kind, difference_kind::within_noise);
}

// Samples apart are evidence only with enough of them: with n a side noise alone puts all of
// one above all of the other 1 time in C(2n, n). With --reps 1 that was 1 time in 2, and one
// sample a side decided "measured".
TEST(LabStats, TooFewRepetitionsMeasureNoDifference) {
  EXPECT_DOUBLE_EQ(orderings(1, 1), 2);
  EXPECT_DOUBLE_EQ(orderings(3, 3), 20);
  EXPECT_DOUBLE_EQ(orderings(4, 4), 70);
  EXPECT_DOUBLE_EQ(orderings(5, 5), 252);
  EXPECT_DOUBLE_EQ(orderings(10, 10), 184756);
  auto one = difference_of(summarize({150}), summarize({100}));
  EXPECT_EQ(one.kind, difference_kind::within_noise);
  EXPECT_DOUBLE_EQ(one.value, 50);
  EXPECT_EQ(difference_of(summarize({150, 151, 152, 153}), summarize({100, 101, 102, 103})).kind,
            difference_kind::within_noise);
  EXPECT_EQ(
      difference_of(summarize({150, 151, 152, 153, 154}), summarize({100, 101, 102, 103, 104}))
          .kind,
      difference_kind::measured);
  // A negative difference stays negative whatever the count.
  EXPECT_EQ(difference_of(summarize({100}), summarize({150})).kind, difference_kind::negative);
}

}  // namespace
