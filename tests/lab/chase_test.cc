// The latency chain: one cycle through every node, the chase kernel follows it, and the on-chain
// check catches a loop whose loads are not on the dependency chain.
#include "simdex/lab/chase.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "simdex/lab/timing.h"
#include "simdex/lab/validity.h"

namespace {

using namespace simdex;
using namespace simdex::lab;

TEST(LabChain, OneCycleThroughEveryNode) {
  for (std::size_t stride : {std::size_t{64}, std::size_t{4096}}) {
    chain c({.span = std::size_t{1} << 20, .stride = stride});
    ASSERT_EQ(c.nodes(), (std::size_t{1} << 20) / stride);
    std::set<const void*> seen;
    const void* p = c.at_position(0);
    for (std::size_t i = 0; i < c.nodes(); ++i) {
      EXPECT_TRUE(seen.insert(p).second) << "node visited twice at step " << i;
      EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kLine, 0u);
      p = c.walk(p, 1);
    }
    EXPECT_EQ(p, c.at_position(0));  // back at the start after exactly nodes() steps
  }
}

TEST(LabChain, SpreadsNodesOverCacheSets) {
  chain spread({.span = std::size_t{1} << 20, .stride = 4096, .spread_sets = true});
  chain same({.span = std::size_t{1} << 20, .stride = 4096, .spread_sets = false});
  std::set<std::uintptr_t> lines_spread, lines_same;
  for (std::size_t k = 0; k < spread.nodes(); ++k) {
    lines_spread.insert(reinterpret_cast<std::uintptr_t>(spread.at_position(k)) % 4096);
    lines_same.insert(reinterpret_cast<std::uintptr_t>(same.at_position(k)) % 4096);
  }
  EXPECT_EQ(lines_spread.size(), 64u);  // every line offset of a page in use
  EXPECT_EQ(lines_same.size(), 1u);     // all in one set: the associativity experiment wants that
}

TEST(LabChain, RejectsBadLayouts) {
  EXPECT_THROW(chain({.span = 4096, .stride = 96}), std::invalid_argument);
  EXPECT_THROW(chain({.span = 64, .stride = 64}), std::invalid_argument);
}

TEST(LabChase, ChainsEndWhereTheLinksLead) {
  chain c({.span = std::size_t{1} << 20});
  for (int chains : {1, 2, 4, 8, 16}) {
    auto r = chase(c, chains, 1000);
    ASSERT_EQ(r.ends.size(), static_cast<std::size_t>(chains));
    for (int k = 0; k < chains; ++k)
      EXPECT_EQ(r.ends[k], c.walk(c.at_position(k * c.nodes() / chains), 1000));
    EXPECT_GT(r.ns_per_access, 0);
  }
  EXPECT_THROW(chase(c, 3, 10), std::invalid_argument);
}

TEST(LabOnChain, PassesForTheChaseKernel) {
  chain c({.span = std::size_t{1} << 20});
  auto k = on_chain(c, [](const void* s, std::size_t n) { return chase_from(s, n); });
  EXPECT_EQ(k.status, check_status::pass) << k.detail;
}

// The study's TLB loop: the next position comes from an index array beside the data, the data
// load is only kept alive. Its loads overlap; the check must say so.
TEST(LabOnChain, FailsForLoadsBesideTheChain) {
  chain c({.span = std::size_t{4} << 20, .stride = 4096});
  std::vector<std::size_t> next_pos(c.nodes());  // position k -> k + 1, captured before the check
  std::vector<const void*> node_at(c.nodes());
  for (std::size_t k = 0; k < c.nodes(); ++k) node_at[k] = c.at_position(k);
  auto broken = [&](const void* start, std::size_t steps) {
    std::size_t k = 0;
    while (node_at[k] != start) ++k;
    for (std::size_t s = 0; s < steps; ++s) {
      const void* data = *static_cast<const void* const*>(node_at[k]);  // loaded, not followed
      do_not_optimize(data);
      k = (k + 1) % node_at.size();
    }
    return node_at[k];
  };
  // Before any relink the broken loop even lands on the right node ...
  EXPECT_EQ(broken(c.at_position(0), 10), c.walk(c.at_position(0), 10));
  // ... which is why the check relinks first.
  auto k = on_chain(c, broken);
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_NE(k.detail.find("not a latency"), std::string::npos) << k.detail;
}

TEST(LabHugePages, ShareDecidesTheStatus) {
  EXPECT_EQ(huge_pages("x", 1.0).status, check_status::pass);
  EXPECT_EQ(huge_pages("x", 0.7).status, check_status::warn);
  EXPECT_EQ(huge_pages("x", 0.0).status, check_status::fail);
  chain small({.span = std::size_t{8} << 20, .pages = page_size::small});
  EXPECT_EQ(small.huge_share(), 0.0);  // MADV_NOHUGEPAGE holds, read back from smaps
}

}  // namespace
