// Helpers the memory experiments share: units, sizes and the standard latency checks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <string>

#include "lab/format.h"
#include "lab/timed_chase.h"
#include "registry.h"

namespace simdex::lab_bench::mem {

using lab::format;

constexpr std::size_t KiB = std::size_t{1} << 10;
constexpr std::size_t MiB = std::size_t{1} << 20;

inline double gib_s(double bytes, double ns) { return bytes / (1 << 30) / (ns * 1e-9); }

inline std::string size_label(std::size_t bytes) {
  if (bytes >= MiB && bytes % MiB == 0) return std::to_string(bytes / MiB) + " MiB";
  return std::to_string(bytes / KiB) + " KiB";
}

// The working set the DRAM figures use: the machine probe's, so both print the same thing.
inline std::size_t dram_bytes(const trial& t) {
  if (t.limits()) return t.limits()->bytes;
  return t.quick() ? 256 * MiB : 1024 * MiB;
}

// Wall time of one call of f, in ns.
template <class F>
double time_ns(F&& f) {
  std::uint64_t t0 = lab::now_ns();
  f();
  lab::clobber_memory();
  return static_cast<double>(lab::now_ns() - t0);
}

// Time to stream [p, p + bytes) once with sum_words, in ns; the sum lands in `sum`.
inline double read_ns(const void* p, std::size_t bytes, std::uint64_t& sum) {
  std::uint64_t t0 = lab::now_ns();
  sum = lab::sum_words(p, bytes);
  std::uint64_t t1 = lab::now_ns();
  lab::do_not_optimize(sum);
  return static_cast<double>(t1 - t0);
}

// memcpy over a buffer the size of an experiment's working set, sampled among the experiment's
// own samples: the bandwidth limit then moves with the machine's load as the figures do.
class memcpy_limit {
 public:
  explicit memcpy_limit(std::size_t bytes) : buf_(bytes, page_size::small) {
    std::memset(buf_.data(), 1, buf_.size());
  }
  trial::contender contender() {
    return {"memcpy (limit)", [this] { return lab::memcpy_gib_s(buf_, round_++); }};
  }

 private:
  page_buffer buf_;
  int round_ = 0;
};

// Adds the latency checks for a chain measured with the lab's timed loop: every load of that
// loop on the chain, with each chain count the experiment timed (relinks the chain: call after
// measuring) and, for 2 MiB pages, the share the kernel granted.
inline void latency_checks(trial& t, lab::chain& c, const std::string& what,
                           std::initializer_list<int> chains = {1}) {
  if (c.layout().pages == page_size::huge) t.add(lab::huge_pages(what, c.huge_share()));
  lab::check k = lab::on_chain_timed(c, chains);
  k.detail = what + ": " + k.detail;
  t.add(k);
}

// Cache sizes of cpu0 as plot markers ("L1 48 KiB", ...).
inline std::vector<marker> cache_markers() {
  std::vector<marker> out;
  for (const auto& c : lab::data_caches())
    out.push_back({static_cast<double>(c.bytes), format("L%d ", c.level) + size_label(c.bytes)});
  return out;
}

}  // namespace simdex::lab_bench::mem
