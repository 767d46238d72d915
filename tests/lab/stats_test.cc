// Summaries and interleaving.
#include "simdex/lab/stats.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using simdex::lab::interleaved;
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

}  // namespace
