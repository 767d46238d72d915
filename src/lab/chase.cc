#include "simdex/lab/chase.h"

#include <algorithm>
#include <stdexcept>

#include "simdex/lab/timing.h"
#include "timed_chase.h"

namespace simdex::lab {

chain::chain(const chain_layout& layout, std::uint64_t seed)
    : layout_(layout), buf_(layout.span, layout.pages) {
  if (layout_.stride < kLine || layout_.stride % kLine)
    throw std::invalid_argument("chain: stride must be a multiple of 64 bytes");
  std::size_t n = layout_.span / layout_.stride;
  if (n < 2 || n > 0xffffffffu) throw std::invalid_argument("chain: needs 2 .. 2^32 nodes");
  order_.resize(n);
  relink(seed);
}

std::byte* chain::node(std::size_t i) const noexcept {
  std::size_t slot_lines = layout_.stride / kLine;
  std::size_t line = layout_.spread_sets ? i % slot_lines : 0;
  return buf_.data() + i * layout_.stride + line * kLine;
}

void chain::relink(std::uint64_t seed) {
  std::size_t n = order_.size();
  // Sattolo's shuffle: a uniformly random permutation with a single cycle through all nodes.
  std::vector<std::uint32_t> next(n);
  for (std::size_t i = 0; i < n; ++i) next[i] = static_cast<std::uint32_t>(i);
  rng r(seed);
  for (std::size_t i = n - 1; i > 0; --i) std::swap(next[i], next[r.below(i)]);
  std::uint32_t at = 0;
  for (std::size_t k = 0; k < n; ++k) {
    order_[k] = at;
    *reinterpret_cast<const void**>(node(at)) = node(next[at]);
    at = next[at];
  }
}

const void* chain::at_position(std::size_t k) const noexcept { return node(order_[k % nodes()]); }

const void* chain::walk(const void* from, std::size_t steps) const {
  for (std::size_t s = 0; s < steps; ++s) from = *static_cast<const void* const*>(from);
  return from;
}

double chain::huge_share() const {
  return buf_.size() ? static_cast<double>(buf_.huge_bytes()) / static_cast<double>(buf_.size())
                     : 0;
}

const void* chase_from(const void* p, std::size_t steps) {
  for (std::size_t s = 0; s < steps; ++s) p = *static_cast<const void* const*>(p);
  return p;
}

namespace {

template <int Chains>
double run_chains(const void** ends, std::size_t steps) {
  const void* p[Chains];
  for (int c = 0; c < Chains; ++c) p[c] = ends[c];
  std::uint64_t t0 = now_ns();
  for (std::size_t s = 0; s < steps; ++s)
    for (int c = 0; c < Chains; ++c) p[c] = *static_cast<const void* const*>(p[c]);
  std::uint64_t t1 = now_ns();
  for (int c = 0; c < Chains; ++c) ends[c] = p[c];
  return static_cast<double>(t1 - t0);
}

}  // namespace

double chase_loop(const void** ends, int chains, std::size_t steps) {
  // The chain count is a template argument so that each chain's pointer stays in a register.
  switch (chains) {
    case 1:
      return run_chains<1>(ends, steps);
    case 2:
      return run_chains<2>(ends, steps);
    case 4:
      return run_chains<4>(ends, steps);
    case 8:
      return run_chains<8>(ends, steps);
    case 16:
      return run_chains<16>(ends, steps);
    default:
      throw std::invalid_argument("chase: chains must be 1, 2, 4, 8 or 16");
  }
}

namespace {

// The loop from the given starts; the ends are its only result, so they are used.
chase_result chase_from_starts(std::vector<const void*> starts, std::size_t steps) {
  chase_result r;
  r.ends = std::move(starts);
  int chains = static_cast<int>(r.ends.size());
  double ns = chase_loop(r.ends.data(), chains, steps);
  for (const void* e : r.ends) do_not_optimize(e);
  r.ns_per_access = ns / static_cast<double>(steps * r.ends.size());
  return r;
}

}  // namespace

double chase_window(const chain& c, std::size_t from, std::size_t steps) {
  return chase_at(c, 1, from, steps).ns_per_access;
}

chase_result chase(const chain& c, int chains, std::size_t steps) {
  std::vector<const void*> starts;
  for (int k = 0; k < chains; ++k)
    starts.push_back(c.at_position(static_cast<std::size_t>(k) * c.nodes() / chains));
  return chase_from_starts(std::move(starts), steps);
}

chase_result chase_at(const chain& c, int chains, std::size_t from, std::size_t steps) {
  std::vector<const void*> starts;
  for (int k = 0; k < chains; ++k)
    starts.push_back(c.at_position((from + static_cast<std::size_t>(k) * steps) % c.nodes()));
  return chase_from_starts(std::move(starts), steps);
}

double chain_cursor::sample(int chains, std::size_t steps) {
  double ns = chase_at(c_, chains, at_, steps).ns_per_access;
  at_ = (at_ + static_cast<std::size_t>(chains) * steps) % c_.nodes();
  return ns;
}

std::size_t chain_cursor::take(std::size_t steps) {
  std::size_t from = at_;
  at_ = (at_ + steps) % c_.nodes();
  return from;
}

}  // namespace simdex::lab
