// Latency: a dependent pointer chase over 64-byte lines. Each node is one cache line holding
// the address of the next node, the nodes form one random cycle (Sattolo), so every load's
// address is the value of the load before it: loads cannot overlap, prefetchers cannot guess.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "simdex/memory.h"

namespace simdex::lab {

constexpr std::size_t kLine = 64;

struct chain_layout {
  std::size_t span = 0;        // bytes the nodes are spread over
  std::size_t stride = kLine;  // one node per `stride` bytes (a multiple of 64)
  bool spread_sets = true;     // stride > 64: move each node to a different line of its slot,
                               // so nodes do not all land in one cache set
  page_size pages = page_size::small;
};

class chain {
 public:
  explicit chain(const chain_layout& layout, std::uint64_t seed = 42);

  // A new random cycle over the same nodes (the old links are overwritten in memory).
  void relink(std::uint64_t seed);

  std::size_t nodes() const noexcept { return order_.size(); }
  const chain_layout& layout() const noexcept { return layout_; }
  const page_buffer& buffer() const noexcept { return buf_; }
  // The node at position `k` of the cycle (k < nodes()).
  const void* at_position(std::size_t k) const noexcept;
  // Follows the links `steps` times in plain C++ (untimed; the reference for checks).
  const void* walk(const void* from, std::size_t steps) const;
  // Share of the buffer the kernel backs with 2 MiB pages, read from /proc/self/smaps.
  double huge_share() const;

 private:
  std::byte* node(std::size_t i) const noexcept;
  chain_layout layout_;
  page_buffer buf_;
  std::vector<std::uint32_t> order_;  // node indices in cycle order
};

// One dependent chain: `steps` loads starting at `start`; returns where it ended.
const void* chase_from(const void* start, std::size_t steps);

struct chase_result {
  double ns_per_access = 0;       // wall time / (steps * chains)
  std::vector<const void*> ends;  // where each chain stopped
};

// `chains` independent chains (1, 2, 4, 8 or 16), started evenly spaced around the cycle, each
// `steps` loads long. One chain is latency; many chains show how much of it the core overlaps.
// Every call starts at the same positions, so repeated calls walk lines the first one cached:
// the lab's own samples go through a cursor that moves on (src/lab/timed_chase.h).
chase_result chase(const chain& c, int chains, std::size_t steps);

// One chain of `steps` loads from cycle position `from` (modulo nodes()), in ns per access.
// Windows that each start where the last one stopped touch no line twice until the whole cycle
// is walked, so none finds its lines still cached.
double chase_window(const chain& c, std::size_t from, std::size_t steps);

}  // namespace simdex::lab
