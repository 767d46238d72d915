// The loop every latency figure times, started where the caller says, and the on-chain check run
// on that same loop. chase() and chase_window() (simdex/lab/chase.h) are this loop from fixed
// starts; the lab's samples take their starts from a chain_cursor instead, so that each sample
// walks on where the last one on that chain stopped. Internal to the lab (src/lab, bench/lab and
// tests/lab).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>

#include "simdex/lab/chase.h"
#include "simdex/lab/validity.h"

namespace simdex::lab {

// `chains` dependent chains (1, 2, 4, 8 or 16), chain k from ends[k], `steps` loads each: leaves
// where each chain stopped in ends[k] and returns the wall time in ns. Throws
// std::invalid_argument for another chain count.
double chase_loop(const void** ends, int chains, std::size_t steps);

// `chains` chains of `steps` loads, chain k from cycle position from + k * steps (modulo
// nodes()): together they walk positions [from, from + chains * steps) once.
chase_result chase_at(const chain& c, int chains, std::size_t from, std::size_t steps);

// Where the next sample on a chain starts. Every contender timing a chain takes its positions
// from that chain's one cursor, so no sample walks lines that another sample (or a pilot) has
// just pulled into the caches: a line comes round again only after the whole cycle was walked.
class chain_cursor {
 public:
  explicit chain_cursor(const chain& c) : c_(c) {}
  const chain& walked() const noexcept { return c_; }
  std::size_t at() const noexcept { return at_; }
  // ns per access of `chains` chains of `steps` loads each, from the next unwalked positions.
  double sample(int chains, std::size_t steps);
  // Hands `steps` positions to a loop of the caller's own; returns the first (< nodes()).
  std::size_t take(std::size_t steps);

 private:
  const chain& c_;
  std::size_t at_ = 0;
};

// on_chain for the loop the figures time: relinks `c` into a new random cycle, runs `loop` with
// each chain count in `chains` (chain k from position k * nodes() / count of the new cycle) and
// compares every chain's end with chain::walk over the new links. `loop` is chase_loop; a test
// hands in a broken one.
using chase_loop_fn = std::function<double(const void** ends, int chains, std::size_t steps)>;
check on_chain_timed(chain& c, std::initializer_list<int> chains,
                     const chase_loop_fn& loop = chase_loop, std::uint64_t seed = 7);

}  // namespace simdex::lab
