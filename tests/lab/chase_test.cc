// The latency chain: one cycle through every node, the chase kernel follows it, and the on-chain
// check catches a loop whose loads are not on the dependency chain.
#include "simdex/lab/chase.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "lab/timed_chase.h"
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

// Chain k of a sample starts where chain k - 1 stops, so one sample walks a run of consecutive
// positions once.
TEST(LabChase, ChainsFromAPositionWalkConsecutiveRuns) {
  chain c({.span = std::size_t{1} << 20});
  const std::size_t from = 5000, steps = 300;
  auto r = chase_at(c, 16, from, steps);
  ASSERT_EQ(r.ends.size(), 16u);
  for (std::size_t k = 0; k < 16; ++k)
    EXPECT_EQ(r.ends[k], c.at_position((from + (k + 1) * steps) % c.nodes())) << "chain " << k;
  EXPECT_EQ(chase_at(c, 1, c.nodes() - 10, 20).ends[0], c.at_position(10));  // wraps round
  EXPECT_THROW(chase_at(c, 3, 0, 10), std::invalid_argument);
}

// Every sample on a chain, whatever its chain count or loop, starts where the last one stopped:
// repetitions used to start at position 0 and re-walk the lines the first one pulled in, and
// the study's TLB loop warmed the lines the next 4 KiB sample timed.
TEST(LabChainCursor, SamplesTakeConsecutivePositions) {
  chain c({.span = std::size_t{1} << 20});  // 16384 nodes
  chain_cursor at(c);
  EXPECT_EQ(&at.walked(), &c);
  EXPECT_EQ(at.at(), 0u);
  EXPECT_GT(at.sample(1, 1000), 0);
  EXPECT_EQ(at.at(), 1000u);
  at.sample(16, 100);  // 16 chains of 100 loads: positions 1000 .. 2599
  EXPECT_EQ(at.at(), 2600u);
  EXPECT_EQ(at.take(500), 2600u);  // a loop of the caller's own
  EXPECT_EQ(at.at(), 3100u);
  at.sample(1, c.nodes() - 3100 + 7);  // round the cycle
  EXPECT_EQ(at.at(), 7u);
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

// The check runs the loop the figures time (chase_loop, every chain count given), not a loop
// of its own beside it.
TEST(LabOnChainTimed, PassesForTheTimedLoop) {
  chain c({.span = std::size_t{1} << 20});
  auto k = on_chain_timed(c, {1, 16});
  EXPECT_EQ(k.status, check_status::pass) << k.detail;
  EXPECT_NE(k.detail.find("1 and 16 chains"), std::string::npos) << k.detail;
  EXPECT_NE(on_chain_timed(c, {1}).detail.find("with 1 chain followed"), std::string::npos);
}

// A timed loop whose 16-chain version walks something else (here: its chains after the first
// follow an index array taken before the relink) fails, naming the chain count; its 1-chain
// version still passes.
TEST(LabOnChainTimed, FailsForA16ChainLoopOffTheLinks) {
  chain c({.span = std::size_t{4} << 20, .stride = 4096});
  std::map<const void*, const void*> old_next;  // the links before the check relinks
  for (std::size_t k = 0; k < c.nodes(); ++k) old_next[c.at_position(k)] = c.at_position(k + 1);
  auto broken = [&](const void** ends, int chains, std::size_t steps) {
    if (chains == 1) return chase_loop(ends, chains, steps);
    for (int k = 0; k < chains; ++k)
      for (std::size_t s = 0; s < steps; ++s) {
        const void* data = *static_cast<const void* const*>(ends[k]);  // loaded
        do_not_optimize(data);
        ends[k] = k == 0 ? data : old_next.at(ends[k]);  // chain 0 right, the others not
      }
    return 1.0;
  };
  EXPECT_EQ(on_chain_timed(c, {1}, broken).status, check_status::pass);
  auto k = on_chain_timed(c, {1, 16}, broken);
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_NE(k.detail.find("16 chains"), std::string::npos) << k.detail;
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
