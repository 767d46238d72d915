// btree_profile: one structure, one operation, for deterministic counts under valgrind.
//
//   btree_profile --who simdex|absl --key u32|u64 --n 16M --pages 2m|4k --op contains_hit
//   valgrind --tool=callgrind --cache-sim=yes --instr-atstart=no --collect-atstart=no
//     --D1=65536,8,64 --LL=33554432,16,64 build/<dir>/bench/btree/btree_profile ...
//
// The structure is built by random single inserts (or --build batch: one insert_batch, which is
// faster under valgrind but packs pages fuller), then `--warm` operations run with the cache
// simulation on and collection off, then `--ops` operations are counted. Natively it prints the
// time per operation of that one run (no peers, no repetitions: bench_btree is the benchmark).
// Operations (a comma-separated list runs on one tree, in order): contains_hit, contains_miss,
// lower_bound, upper_bound (half of them present keys), chain (dependent lower_bounds), scan10,
// insert (absent keys), erase (present keys), batch1024 (contains_batch over spans of 1024 hits, or
// a contains per key where there is no batch call); alone: fill (N inserts from empty, the second
// half counted), erase_half.
#include <absl/container/btree_set.h>
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else  // no valgrind headers: the markers do nothing and the program only times the operation
#define CALLGRIND_START_INSTRUMENTATION
#define CALLGRIND_STOP_INSTRUMENTATION
#define CALLGRIND_TOGGLE_COLLECT
#endif

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "arena.h"
#include "common/harness.h"
#include "keys.h"
#include "peers_simdex.h"
#include "peers_stl.h"
#include "runner.h"

using namespace simdex;
using namespace simdex::bench;
using namespace simdex::bench::btree;

namespace {

struct args {
  std::string who = "simdex", key = "u64", op = "contains_hit", build = "random";
  std::size_t n = 1u << 20, ops = 100'000, warm = 100'000;
  page_size pages = page_size::huge;
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "btree_profile: %s\nusage: btree_profile --who simdex|absl --key u32|u64 --n N "
               "--pages 2m|4k --build random|batch --op OP --ops N --warm N\n",
               why);
  std::exit(2);
}

std::size_t count_arg(const char* s) {
  char* end = nullptr;
  double v = std::strtod(s, &end);
  double mul = *end == 'K' || *end == 'k' ? 1 << 10 : *end == 'M' || *end == 'm' ? 1 << 20 : 1;
  if (v <= 0) usage("bad count");
  return static_cast<std::size_t>(v * mul);
}

args parse(int argc, char** argv) {
  args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    const char* v = argv[i + 1];
    if (k == "--who")
      a.who = v;
    else if (k == "--key")
      a.key = v;
    else if (k == "--op")
      a.op = v;
    else if (k == "--build")
      a.build = v;
    else if (k == "--n")
      a.n = count_arg(v);
    else if (k == "--ops")
      a.ops = count_arg(v);
    else if (k == "--warm")
      a.warm = count_arg(v);
    else if (k == "--pages")
      a.pages = std::strcmp(v, "4k") == 0 ? page_size::small : page_size::huge;
    else
      usage(("unknown option " + k).c_str());
  }
  return a;
}

template <class A>
void build(A& s, const keyset<typename A::key_type>& ks, const args& a) {
  if (a.build == "batch")
    s.build_unsorted(ks.keys);
  else
    for (auto k : ks.keys) s.insert(k, k);
}

// Runs `f(i)` for i in [0, warm) uncounted and [warm, warm + ops) counted; returns ns/op of the
// counted part.
template <class F>
double measured(const args& a, F&& f) {
  std::uint64_t sink = 0;
  CALLGRIND_START_INSTRUMENTATION;
  for (std::size_t i = 0; i < a.warm; ++i) sink += f(i);
  CALLGRIND_TOGGLE_COLLECT;
  std::uint64_t t0 = cpu_now_ns();
  for (std::size_t i = a.warm; i < a.warm + a.ops; ++i) sink += f(i);
  std::uint64_t t1 = cpu_now_ns();
  CALLGRIND_TOGGLE_COLLECT;
  CALLGRIND_STOP_INSTRUMENTATION;
  do_not_optimize(sink);
  return static_cast<double>(t1 - t0) / static_cast<double>(a.ops);
}

template <class A>
int run(const args& a) {
  using K = typename A::key_type;
  std::size_t total = a.warm + a.ops;
  keyset<K> ks =
      make_keyset<K>(a.n, std::max(total, a.n / 8), distribution::sparse, 0x9f0f11e ^ a.n);
  A s(a.pages);
  rng r(42);
  auto report = [&](const std::string& op, double ns) {
    std::printf("%s %s n=%zu pages=%s build=%s op=%s: %.1f ns/op, size %zu, %.2f B/key\n",
                a.who.c_str(), a.key.c_str(), a.n, page_size_name(a.pages), a.build.c_str(),
                op.c_str(), ns, s.size(),
                static_cast<double>(s.bytes()) / static_cast<double>(s.size() ? s.size() : 1));
    std::fflush(stdout);
  };
  if (a.op == "fill") {  // the warm-up is the first half of the fill itself
    args b = a;
    b.warm = a.n / 2;
    b.ops = a.n - b.warm;
    report(a.op, measured(b, [&](std::size_t i) { return s.insert(ks.keys[i], 0); }));
    return 0;
  }
  build(s, ks, a);
  if (a.op == "erase_half") {
    std::vector<K> gone(ks.keys.begin(), ks.keys.begin() + static_cast<std::ptrdiff_t>(a.n / 2));
    shuffle(gone, r);
    args b = a;
    b.warm = gone.size() / 4;
    b.ops = gone.size() - b.warm;
    report(a.op, measured(b, [&](std::size_t i) { return s.erase(gone[i]); }));
    return 0;
  }
  std::vector<K> hits(total), misses(total), anywhere(total);
  for (auto& k : hits) k = ks.keys[r.below(ks.keys.size())];
  for (auto& k : misses) k = ks.absent[r.below(ks.absent.size())];
  for (auto& k : anywhere) k = static_cast<K>(r.next());
  for (const std::string& op : bench::split_list(a.op)) {
    std::uint64_t prev = 0;
    auto lb = [&](K k) -> std::uint64_t {
      K out{};
      return s.lower_bound(k, out) ? static_cast<std::uint64_t>(out) : 1;
    };
    auto ub = [&](K k) -> std::uint64_t {
      K out{};
      return s.upper_bound(k, out) ? static_cast<std::uint64_t>(out) : 1;
    };
    double ns = 0;
    if (op == "contains_hit")
      ns = measured(a, [&](std::size_t i) { return s.contains(hits[i]); });
    else if (op == "contains_miss")
      ns = measured(a, [&](std::size_t i) { return s.contains(misses[i]); });
    else if (op == "lower_bound")
      ns = measured(a, [&](std::size_t i) { return lb(anywhere[i]); });
    else if (op == "upper_bound")  // half of the keys present, so both of its cases count
      ns = measured(a, [&](std::size_t i) { return ub(i % 2 ? hits[i] : anywhere[i]); });
    else if (op == "chain")
      ns = measured(
          a, [&](std::size_t i) { return prev = lb(static_cast<K>(anywhere[i] ^ (prev & 1))); });
    else if (op == "scan10")
      ns = measured(a, [&](std::size_t i) { return s.scan(anywhere[i], 10); });
    else if (op == "insert")  // absent keys; the next op sees N + warm + ops keys
      ns = measured(a, [&](std::size_t i) { return s.insert(ks.absent[i], 0); });
    else if (op == "erase")
      ns = measured(a, [&](std::size_t i) { return s.erase(ks.keys[i]); });
    else if (op == "batch1024") {
      // Structures without a batch call answer the same spans key by key (the per-key loop
      // the batch is compared with).
      std::unique_ptr<bool[]> out(new bool[1024]);
      args b = a;
      b.warm = a.warm / 1024;
      b.ops = a.ops / 1024;
      ns = measured(b,
                    [&](std::size_t i) {
                      const K* q = hits.data() + i * 1024;
                      if constexpr (A::kBatch)
                        s.contains_batch(std::span<const K>(q, 1024), out.get());
                      else
                        for (std::size_t j = 0; j < 1024; ++j) out[j] = s.contains(q[j]);
                      return out[7];
                    }) /
           1024;
    } else
      usage(("unknown op " + op).c_str());
    report(op, ns);
  }
  return 0;
}

template <class K>
int dispatch_who(const args& a) {
  if (a.who == "simdex") return run<simdex_adapter<K, false>>(a);
  if (a.who == "absl")
    return run<stl_adapter<absl::btree_set<K, std::less<K>, arena_alloc<K>>, true>>(a);
  usage("--who wants simdex or absl");
}

}  // namespace

int main(int argc, char** argv) {
  args a = parse(argc, argv);
  if (a.key == "u32") return dispatch_who<std::uint32_t>(a);
  if (a.key == "u64") return dispatch_who<std::uint64_t>(a);
  usage("--key wants u32 or u64");
}
