// YCSB core workloads A-F as operation streams over an ordered key-value map (value = u64).
// Mapping: read = find and consume the value; update = overwrite an existing key's value;
// insert = a key not yet present (taken from the key set's absent pool); scan = lower_bound
// on an existing key, then read up to 1..100 values (uniform); read-modify-write = find, then
// write value + 1. Key choice: uniform over the present keys, or Zipf(0.99) over them with the
// rank order scrambled (rank r -> the r-th key in random insertion order). D reads "latest":
// Zipf(0.99) over recency (newest first) in the zipf variant, uniform in the uniform one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "keys.h"

namespace simdex::bench::btree {

enum class op_kind : std::uint8_t { read, update, insert, scan, rmw };

template <class K>
struct op {
  K key;
  std::uint32_t arg;  // scan length, or the low bits of the value written
  op_kind kind;
};

struct ycsb_mix {
  char name;
  double read, update, insert, scan, rmw;  // fractions, summing to 1
};

inline const std::vector<ycsb_mix>& ycsb_mixes() {
  static const std::vector<ycsb_mix> m = {
      {'A', 0.50, 0.50, 0, 0, 0}, {'B', 0.95, 0.05, 0, 0, 0}, {'C', 1.0, 0, 0, 0, 0},
      {'D', 0.95, 0, 0.05, 0, 0}, {'E', 0, 0, 0.05, 0.95, 0}, {'F', 0.50, 0, 0, 0, 0.50},
  };
  return m;
}

// One stream of `count` operations. Inserted keys are absent[0 .. inserts), returned in
// `inserted` so the caller can remove them after the timed phase.
template <class K>
std::vector<op<K>> make_ycsb(const ycsb_mix& mix, bool zipfian, const keyset<K>& ks, const zipf& z,
                             std::size_t count, rng& r, std::size_t& inserted) {
  std::vector<op<K>> ops(count);
  std::size_t n = ks.keys.size();
  inserted = 0;
  auto key_at = [&](std::size_t i) { return i < n ? ks.keys[i] : ks.absent[i - n]; };
  for (auto& o : ops) {
    double u = static_cast<double>(r.next() >> 11) * 0x1.0p-53;
    o.arg = static_cast<std::uint32_t>(r.next());
    std::size_t live = n + inserted;
    std::size_t pick;
    if (mix.name == 'D')
      pick = zipfian ? live - 1 - std::min<std::size_t>(z.next(r), live - 1) : r.below(live);
    else
      pick = zipfian ? z.next(r) % live : r.below(live);
    if ((u -= mix.read) < 0)
      o.kind = op_kind::read;
    else if ((u -= mix.update) < 0)
      o.kind = op_kind::update;
    else if ((u -= mix.insert) < 0)
      o.kind = op_kind::insert;
    else if ((u -= mix.scan) < 0)
      o.kind = op_kind::scan;
    else
      o.kind = mix.rmw > 0 ? op_kind::rmw : op_kind::read;
    if (o.kind == op_kind::insert && inserted < ks.absent.size()) {
      o.key = ks.absent[inserted++];
    } else {
      if (o.kind == op_kind::insert) o.kind = op_kind::read;  // absent pool exhausted
      o.key = key_at(pick);
    }
    if (o.kind == op_kind::scan) o.arg = 1 + static_cast<std::uint32_t>(r.below(100));
  }
  return ops;
}

}  // namespace simdex::bench::btree
