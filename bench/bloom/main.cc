// bench_bloom: ns per key of Parquet SBBF probes and inserts, simdex against the spec's scalar
// loop and Arrow C++'s parquet::BlockSplitBloomFilter (pyarrow wheel), on the same bitsets and
// the same keys in one run. Post-hash figures take precomputed XXH64 hashes; hash-included ones
// start from int64 values. Hits (inserted keys) and misses (fresh random hashes) are separate.
//
// Bitsets are filled at random to the bit density of a filter at ~16 bits per value (37.5 %
// of bits set), then the hit keys are inserted; Arrow's filters are initialized from a copy of
// the same bytes, and every group checks that all contenders found the same number of keys.
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bloom/kernels.h"
#include "common/harness.h"
#include "simdex/memory.h"
#if SIMDEX_HAVE_ARROW_PEER
#include "peer_arrow.h"
#endif

using namespace simdex;
using namespace simdex::bench;
namespace bl = simdex::bloom;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kArrowMax = 128 * kMiB;

void random_fill(std::uint32_t* w, std::size_t words, std::uint64_t seed) {
  rng r(seed);
  for (std::size_t i = 0; i + 1 < words; i += 2) {
    std::uint64_t x = r.next() & (r.next() | r.next());  // each bit set with p = 3/8
    w[i] = static_cast<std::uint32_t>(x);
    w[i + 1] = static_cast<std::uint32_t>(x >> 32);
  }
}

std::string size_name(std::size_t bytes) {
  char buf[32];
  if (bytes >= kMiB)
    std::snprintf(buf, sizeof buf, "%g MiB", static_cast<double>(bytes) / kMiB);
  else
    std::snprintf(buf, sizeof buf, "%g KiB", static_cast<double>(bytes) / 1024);
  return buf;
}

// Times one pass of `body` (returning a count that must equal `expect`) in ns per key.
template <class Body>
double ns_per_key(std::size_t keys, std::size_t expect, Body&& body) {
  std::uint64_t t0 = now_ns();
  std::size_t found = body();
  std::uint64_t t1 = now_ns();
  do_not_optimize(found);
  if (expect != SIZE_MAX && found != expect)
    throw std::runtime_error("contenders disagree: " + std::to_string(found) + " vs " +
                             std::to_string(expect));
  return static_cast<double>(t1 - t0) / static_cast<double>(keys);
}

struct keys {
  std::vector<std::int64_t> hit_values, miss_values;
  std::vector<std::uint64_t> hits, misses;  // XXH64 of the values
};

keys make_keys(std::size_t n, std::uint64_t seed) {
  rng r(seed);
  keys k;
  k.hit_values.resize(n);
  k.miss_values.resize(n);
  for (auto& v : k.hit_values) v = static_cast<std::int64_t>(r.next());
  for (auto& v : k.miss_values) v = static_cast<std::int64_t>(r.next());
  k.hits.resize(n);
  k.misses.resize(n);
  bl::hash_int64s(k.hit_values.data(), n, k.hits.data());
  bl::hash_int64s(k.miss_values.data(), n, k.misses.data());
  return k;
}

std::size_t count_ours(const bl::filter& f, const std::vector<std::uint64_t>& h) {
  std::size_t c = 0;
  for (std::uint64_t x : h) c += f.check(x);
  return c;
}

// The consumer of a 0/1 byte array: eight bytes at a time, their sum is the top byte of one
// multiply (no carries: at most 8). Cheap beside the probes, as Arrow's count riding in its own
// loop is (std::popcount is no fit: this file is built for baseline x86-64, where it is a
// libgcc call per word, which added ~0.6 ns per key to the byte-output figures).
std::size_t count_bytes(const std::uint8_t* p, std::size_t n) {
  std::size_t c = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    c += static_cast<std::size_t>((w * 0x0101010101010101) >> 56);
  }
  for (; i < n; ++i) c += p[i];
  return c;
}

#if SIMDEX_HAVE_ARROW_PEER
// Arrow refuses filters over 128 MiB: a larger working set is split into 128 MiB filters and
// each key is routed to the slice holding our block, with its hash rewritten so Arrow's block
// index within the slice is the same block (same bytes, same answers).
struct arrow_side {
  std::vector<arrow_peer::filter> filters;
  int shift = 0;  // log2(number of slices)
  std::vector<std::uint8_t> hit_ids, miss_ids;
  std::vector<std::uint64_t> hits, misses;

  void route(const std::vector<std::uint64_t>& in, std::vector<std::uint8_t>& ids,
             std::vector<std::uint64_t>& out) const {
    ids.resize(in.size());
    out.resize(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::uint32_t hi = static_cast<std::uint32_t>(in[i] >> 32);
      ids[i] = shift ? static_cast<std::uint8_t>(hi >> (32 - shift)) : 0;
      std::uint64_t hi2 = shift ? static_cast<std::uint32_t>(hi << shift) : hi;
      out[i] = hi2 << 32 | (in[i] & 0xffffffffu);
    }
  }
  std::size_t count(bool hit) const {
    const auto& h = hit ? hits : misses;
    if (shift == 0) return filters[0].count_found(h.data(), h.size());
    const auto& ids = hit ? hit_ids : miss_ids;
    return arrow_peer::count_found_routed(filters.data(), ids.data(), h.data(), h.size());
  }
};
#endif

struct env {
  session& s;
  bool full;
};

// Single filter of `bytes`: post-hash single/bulk checks, inserts, hash-included checks.
void run_single_filter(env& e, std::size_t bytes, const keys& k) {
  session& s = e.s;
  const std::size_t n = k.hits.size();
  const std::uint64_t blocks = bytes / bl::kBlockBytes;
  bl::filter base = bl::filter::with_blocks(blocks, page_size::small);
  random_fill(base.words(), static_cast<std::size_t>(blocks) * 8, bytes);
  base.insert(k.hits);
  const std::size_t miss_fp = count_ours(base, k.misses);  // false positives at this fill

#if SIMDEX_HAVE_ARROW_PEER
  arrow_side arrow;
  {
    std::size_t slices = bytes > kArrowMax ? bytes / kArrowMax : 1;
    while ((std::size_t{1} << arrow.shift) < slices) ++arrow.shift;
    std::size_t slice = bytes / slices;
    const auto* raw = reinterpret_cast<const std::uint8_t*>(base.words());
    for (std::size_t i = 0; i < slices; ++i)
      arrow.filters.emplace_back(raw + i * slice, static_cast<std::uint32_t>(slice));
    arrow.route(k.hits, arrow.hit_ids, arrow.hits);
    arrow.route(k.misses, arrow.miss_ids, arrow.misses);
  }
  const std::string arrow_name = std::string("arrow-") + arrow_peer::version();
#endif

  std::vector<page_size> page_modes = {page_size::small};
  if (bytes >= 2 * kMiB) page_modes.push_back(page_size::huge);
  std::vector<std::uint8_t> out(n);
  std::vector<std::uint64_t> bits((n + 63) / 64);

  for (page_size pages : page_modes) {
    bl::filter f = bl::filter::with_blocks(blocks, pages);
    std::memcpy(f.words(), base.words(), bytes);
    const std::size_t huge = f.huge_page_bytes();
    const std::string pname = bytes < 2 * kMiB ? "heap" : page_size_name(pages);
    s.note("filter " + size_name(bytes) + " pages=" + pname + ": simdex bitset on huge pages " +
           size_name(huge) + " of " + size_name(bytes));
    for (bool hit : {true, false}) {
      const auto& h = hit ? k.hits : k.misses;
      const auto& values = hit ? k.hit_values : k.miss_values;
      const std::size_t expect = hit ? n : miss_fp;
      params p = {{"filter_bytes", static_cast<std::int64_t>(bytes)},
                  {"pages", pname},
                  {"keys", static_cast<std::int64_t>(n)},
                  {"probe", std::string(hit ? "hit" : "miss")}};
      const contender spec = {"spec-scalar", "spec loop", [&] {
                                return ns_per_key(n, expect, [&] {
                                  std::size_t c = 0;
                                  for (std::uint64_t x : h)
                                    c += bl::spec::check(f.words(), blocks, x);
                                  return c;
                                });
                              }};
      // A post-hash check group, against Arrow's FindHash on the same keys where the peer is
      // built (else against the spec loop).
      auto report_check = [&](const char* workload, const char* arrow_call,
                              std::vector<contender> cs) {
#if SIMDEX_HAVE_ARROW_PEER
        cs.push_back({arrow_name, arrow_call,
                      [&] { return ns_per_key(n, expect, [&] { return arrow.count(hit); }); }});
        s.group(workload, p, "ns/key", better::lower, cs, arrow_name);
#else
        (void)arrow_call;
        s.group(workload, p, "ns/key", better::lower, cs, "spec-scalar");
#endif
      };

      if (s.opts().wants("check_single")) {
        std::vector<contender> cs = {
            {"simdex", "check",
             [&] { return ns_per_key(n, expect, [&] { return count_ours(f, h); }); }},
            spec,
        };
        report_check("check_single", "FindHash", std::move(cs));
      }

      if (s.opts().wants("check_bulk")) {
        std::vector<contender> cs = {
            {"simdex-bulk", "bytes",
             [&] {
               return ns_per_key(n, expect, [&] {
                 f.check(h, out.data());
                 return count_bytes(out.data(), n);
               });
             }},
            {"simdex-bulk-bitmap", "bits",
             [&] {
               return ns_per_key(n, expect, [&] {
                 f.check_bits(h, bits.data());
                 std::size_t c = 0;
                 for (std::uint64_t w : bits)
                   c += static_cast<std::size_t>(__builtin_popcountll(w));
                 return c;
               });
             }},
            spec,
        };
        // Each level's bulk kernel, to show what AVX-512 adds over AVX2.
        add_levels(
            cs, bl::kernel_tables(), "simdex-bulk-",
            [&](const bl::kernels* t) {
              return [&, t] {
                return ns_per_key(n, expect, [&] {
                  t->check_bulk(f.words(), blocks, h.data(), n, out.data());
                  return count_bytes(out.data(), n);
                });
              };
            },
            isa::sse42);
        report_check("check_bulk", "FindHash loop", std::move(cs));
      }

      if (s.opts().wants("hash_check_int64") && bytes <= kArrowMax) {
        constexpr std::size_t kChunk = 1024;
        std::vector<contender> cs = {
            {"simdex-bulk", "hash_int64s+check",
             [&] {
               return ns_per_key(n, expect, [&] {
                 std::uint64_t hb[kChunk];
                 std::uint8_t ob[kChunk];
                 std::size_t c = 0;
                 for (std::size_t i = 0; i < n; i += kChunk) {
                   std::size_t m = std::min(kChunk, n - i);
                   bl::hash_int64s(values.data() + i, m, hb);
                   f.check({hb, m}, ob);
                   c += count_bytes(ob, m);
                 }
                 return c;
               });
             }},
            {"simdex", "hash_int64+check",
             [&] {
               return ns_per_key(n, expect, [&] {
                 std::size_t c = 0;
                 for (std::int64_t v : values) c += f.check(bl::hash_int64(v));
                 return c;
               });
             }},
        };
#if SIMDEX_HAVE_ARROW_PEER
        const std::string ab = arrow_name + "-batch";
        cs.push_back({arrow_name, "Hash+FindHash", [&] {
                        return ns_per_key(n, expect, [&] {
                          return arrow.filters[0].hash_find_each(values.data(), n);
                        });
                      }});
        cs.push_back({ab, "Hashes+FindHash", [&] {
                        return ns_per_key(n, expect, [&] {
                          return arrow.filters[0].hash_find_batch(values.data(), n);
                        });
                      }});
        s.group("hash_check_int64", p, "ns/key", better::lower, cs, arrow_name);
#else
        s.group("hash_check_int64", p, "ns/key", better::lower, cs, "simdex");
#endif
      }
    }

    // Inserts of the hit keys again (already present, so the bitset, and every later figure,
    // stays as it was; the load-OR-store work is the same).
    if (s.opts().wants("insert") && bytes <= kArrowMax) {
      params p = {{"filter_bytes", static_cast<std::int64_t>(bytes)},
                  {"pages", pname},
                  {"keys", static_cast<std::int64_t>(n)}};
      const auto& h = k.hits;
      std::vector<contender> cs = {
          {"simdex", "insert",
           [&] {
             return ns_per_key(n, SIZE_MAX, [&] {
               for (std::uint64_t x : h) f.insert(x);
               return static_cast<std::size_t>(f.words()[0]);
             });
           }},
          {"simdex-bulk", "insert(span)",
           [&] {
             return ns_per_key(n, SIZE_MAX, [&] {
               f.insert(h);
               return static_cast<std::size_t>(f.words()[0]);
             });
           }},
          {"spec-scalar", "spec loop",
           [&] {
             return ns_per_key(n, SIZE_MAX, [&] {
               for (std::uint64_t x : h) bl::spec::insert(f.words(), blocks, x);
               return static_cast<std::size_t>(f.words()[0]);
             });
           }},
      };
#if SIMDEX_HAVE_ARROW_PEER
      cs.push_back({arrow_name, "InsertHash", [&] {
                      return ns_per_key(n, SIZE_MAX, [&] {
                        arrow.filters[0].insert_each(h.data(), n);
                        return static_cast<std::size_t>(arrow.filters[0].find(h[0]));
                      });
                    }});
      cs.push_back({arrow_name + "-batch", "InsertHashes", [&] {
                      return ns_per_key(n, SIZE_MAX, [&] {
                        arrow.filters[0].insert_hashes(h.data(), n);
                        return static_cast<std::size_t>(arrow.filters[0].find(h[0]));
                      });
                    }});
      s.group("insert", p, "ns/key", better::lower, cs, arrow_name);
#else
      s.group("insert", p, "ns/key", better::lower, cs, "spec-scalar");
#endif
      if (count_ours(f, k.misses) != miss_fp) throw std::runtime_error("insert changed the filter");
    }
  }
}

// One hash against many small filters (row-group skipping). Layouts: "filters", each filter its
// own allocation as the library makes it (a bl::filter per row group, what from_parquet and
// BloomFilter give; Arrow's Init copies into its own pool in every layout), and "arena", all
// filters back to back in one buffer at a power-of-two stride: one hash then lands at the same
// page offset in every filter, so all the lines of a probe share one L1 set (docs/bloom.md), a
// layout that no simdex API produces, kept to show what it costs. "simdex-filter-major" asks
// the same questions all at once through the many-hash check_filters.
void run_many_filters(env& e, std::size_t total, std::size_t each, std::size_t queries) {
  if (!e.s.opts().wants("check_many_filters")) return;
  session& s = e.s;
  const std::size_t nf = total / each;
  const std::uint64_t blocks = each / bl::kBlockBytes;
  rng r(total + each);
  std::vector<std::uint64_t> q(queries);
  for (auto& x : q) x = r.next();

  struct layout {
    const char* name;
    page_size pages;
  };
  std::vector<layout> layouts = {{"filters", page_size::small}, {"arena", page_size::small}};
  if (total >= 2 * kMiB) layouts.push_back({"arena", page_size::huge});
  std::vector<std::uint32_t> bytes(total / 4);
  random_fill(bytes.data(), bytes.size(), 7);
#if SIMDEX_HAVE_ARROW_PEER
  std::vector<arrow_peer::filter> arrow;
  std::vector<const arrow_peer::filter*> arrow_ptrs;
  for (std::size_t i = 0; i < nf; ++i)
    arrow.emplace_back(bytes.data() + i * each / 4, static_cast<std::uint32_t>(each));
  for (auto& a : arrow) arrow_ptrs.push_back(&a);
  const std::string arrow_name = std::string("arrow-") + arrow_peer::version();
#endif
  std::size_t expect = SIZE_MAX;
  for (const layout& lay : layouts) {
    const bool arena_layout = lay.name == std::string("arena");
    page_buffer arena(arena_layout ? total : 0, lay.pages);
    std::vector<bl::filter> own;
    std::vector<bl::filter_view> views(nf);
    for (std::size_t i = 0; i < nf; ++i) {
      if (arena_layout) {
        std::memcpy(arena.data() + i * each, bytes.data() + i * each / 4, each);
        views[i] = {reinterpret_cast<const std::uint32_t*>(arena.data() + i * each), blocks};
      } else {
        own.push_back(bl::filter::from_bitset(bytes.data() + i * each / 4, each));
        views[i] = own.back().view();
      }
    }
    const std::string pname = !arena_layout ? "heap" : page_size_name(lay.pages);
    if (arena_layout)
      s.note("many filters " + size_name(total) + " layout=arena pages=" + pname +
             ": simdex arena on huge pages " + size_name(arena.huge_bytes()));
    std::vector<std::uint8_t> out(nf);
    auto ours = [&] {
      std::size_t c = 0;
      for (std::uint64_t h : q) {
        bl::check_filters(views, h, out.data());
        c += count_bytes(out.data(), nf);
      }
      return c;
    };
    if (expect == SIZE_MAX) expect = ours();
    const std::size_t probes = queries * nf;
    params p = {{"total_bytes", static_cast<std::int64_t>(total)},
                {"filter_bytes", static_cast<std::int64_t>(each)},
                {"filters", static_cast<std::int64_t>(nf)},
                {"queries", static_cast<std::int64_t>(queries)},
                {"layout", std::string(lay.name)},
                {"pages", pname}};
    // All queries at once, filter by filter (what dataset pruning of many keys does): the same
    // probes, but one filter's probes go to different blocks, so the arena costs no L1 set.
    std::vector<std::uint8_t> grid(nf * queries);
    auto filter_major = [&] {
      bl::check_filters(views, q, grid.data());
      return count_bytes(grid.data(), grid.size());
    };
    std::vector<contender> cs = {
        {"simdex", "check_filters", [&] { return ns_per_key(probes, expect, ours); }},
        {"simdex-filter-major", "check_filters(hashes)",
         [&] { return ns_per_key(probes, expect, filter_major); }},
        {"spec-scalar", "spec loop",
         [&] {
           return ns_per_key(probes, expect, [&] {
             std::size_t c = 0;
             for (std::uint64_t h : q)
               for (const auto& v : views) c += bl::spec::check(v.words, v.blocks, h);
             return c;
           });
         }},
    };
#if SIMDEX_HAVE_ARROW_PEER
    cs.push_back({arrow_name, "FindHash per filter", [&] {
                    return ns_per_key(probes, expect, [&] {
                      std::size_t c = 0;
                      for (std::uint64_t h : q)
                        c += arrow_peer::count_found_many(arrow_ptrs.data(), nf, h);
                      return c;
                    });
                  }});
    s.group("check_many_filters", p, "ns/probe", better::lower, cs, arrow_name);
#else
    s.group("check_many_filters", p, "ns/probe", better::lower, cs, "spec-scalar");
#endif
  }
}

// Batch XXH64 of int64 values, each level's kernel beside Arrow's Hashes().
void run_hash(env& e, const keys& k) {
  if (!e.s.opts().wants("hash_int64")) return;
  const auto& v = k.hit_values;
  const std::size_t n = v.size();
  std::vector<std::uint64_t> out(n);
  auto sum = [&] {
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < n; i += 4096) x += out[i];
    return static_cast<std::size_t>(x);
  };
  std::vector<contender> cs;
  add_levels(cs, bl::kernel_tables(), "simdex-", [&](const bl::kernels* t) {
    return [&, t] {
      return ns_per_key(n, SIZE_MAX, [&] {
        t->hash_u64s(v.data(), n, out.data());
        return sum();
      });
    };
  });
  std::string ref = "simdex-scalar";
#if SIMDEX_HAVE_ARROW_PEER
  std::uint32_t zero[8] = {};
  arrow_peer::filter a(zero, 32);
  ref = std::string("arrow-") + arrow_peer::version();
  cs.push_back({ref, "Hashes", [&] {
                  return ns_per_key(n, SIZE_MAX, [&] {
                    a.hashes(v.data(), n, out.data());
                    return sum();
                  });
                }});
#endif
  e.s.group("hash_int64", {{"values", static_cast<std::int64_t>(n)}}, "ns/value", better::lower, cs,
            ref);
}

}  // namespace

int main(int argc, char** argv) {
  session s(parse_options(argc, argv, "bloom"));
  env e{s, s.opts().full()};
  const std::size_t n = 1'000'000;
  std::vector<std::size_t> sizes = {kMiB / 2, 32 * kMiB};
  if (e.full) sizes = {kMiB / 2, 128 * kMiB, 1024 * kMiB};
  struct many {
    std::size_t total, each, queries;
  };
  std::vector<many> manys = {{kMiB / 2, 8 << 10, 16384}, {32 * kMiB, 32 << 10, 1024}};
  if (e.full)
    manys = {{kMiB / 2, 8 << 10, 16384}, {128 * kMiB, 32 << 10, 256}, {1024 * kMiB, 64 << 10, 64}};

  int groups = 0;
  for (std::size_t b : sizes) groups += (b >= 2 * kMiB ? 2 : 1) * (b <= kArrowMax ? 7 : 4);
  for (const auto& m : manys) groups += m.total >= 2 * kMiB ? 3 : 2;
  groups += 1;  // hash_int64
  s.plan(groups);
  s.note(
      "ns per key; throughput of independent keys. Post-hash workloads take XXH64 hashes computed "
      "beforehand; hash_check_int64 starts from int64 values. 'hit' keys were inserted, 'miss' "
      "keys "
      "are fresh random hashes (their false positives count as found for every contender).");
  s.note(
      "Bitsets: random fill at 37.5% bits set (a filter at ~16 bits/value) plus the hit keys; "
      "Arrow filters are Init()ed from a copy of the same bytes, and each figure checks that every "
      "contender found the same number of keys.");
  s.note(
      "simdex single-key calls go through the level's check pointer kept in the filter (one "
      "indirect call per key), "
      "Arrow's through its virtual FindHash/InsertHash into libparquet.");
#if SIMDEX_HAVE_ARROW_PEER
  s.note(
      std::string("Arrow C++ peer: parquet::BlockSplitBloomFilter from the pyarrow ") +
      arrow_peer::version() +
      " wheel's libparquet; its bitset lives in Arrow's memory pool (not madvised for huge pages; "
      "THP mode " +
      thp_mode() + "), so compare it with the simdex pages=4k rows for equal footing.");
  s.note(
      "Arrow rejects filters over 128 MiB: the 1 GiB single-filter regime runs Arrow on 8 x 128 "
      "MiB "
      "filters holding the same bytes, each key routed to its slice with its hash rewritten to the "
      "same "
      "block (one extra array read per key on Arrow's side).");
#else
  s.note("Arrow C++ peer not built (pyarrow with Arrow C++ headers not found at configure time)");
#endif

  for (std::size_t b : sizes) {
    keys k = make_keys(n, b);
    run_single_filter(e, b, k);
  }
  run_hash(e, make_keys(n, 99));
  for (const auto& m : manys) run_many_filters(e, m.total, m.each, m.queries);
  s.write();
}
