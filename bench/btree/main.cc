// bench_btree: simdex::btree_set/btree_map against std::set/map, absl::btree_set/map, JudyL,
// absl::flat_hash_set/map (point-lookup floor) and a sorted std::vector (read-only ceiling),
// through one driver. Workload definitions: docs/btree-bench.md.
//
// Fairness: every contender is built from the same keys and sees the same probe and operation
// streams; repetitions alternate contenders (harness group()); each mutating sample restores the
// key set outside the timed region; results are checksummed and compared across contenders;
// all peers allocate from page_buffer arenas of the page size under test (arena.h), simdex from
// its own arena with the same page size.
#include <absl/base/config.h>
#include <absl/container/btree_map.h>
#include <absl/container/btree_set.h>
#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "arena.h"
#include "common/harness.h"
#include "keys.h"
#include "peers_judy.h"
#include "peers_simdex.h"
#include "peers_sorted_vector.h"
#include "peers_stl.h"
#include "runner.h"
#include "ycsb.h"

using namespace simdex;
using namespace simdex::bench;
using namespace simdex::bench::btree;

namespace {

// --- options beyond the harness's ------------------------------------------------------------

struct plan_opts {
  std::vector<std::size_t> sizes;
  std::vector<std::string> key_types;
  std::vector<distribution> dists;
  std::vector<page_size> pages;
  std::string ycsb;     // "all", "first" (the first configuration only), "none"
  std::size_t ops = 0;  // probes / operations per sample
  bool std_set_64m = false;
};

[[noreturn]] void bad(const std::string& msg) {
  std::fprintf(stderr, "bench_btree: %s\n", msg.c_str());
  std::exit(2);
}

constexpr std::pair<const char*, distribution> kDists[] = {{"sparse", distribution::sparse},
                                                           {"dense", distribution::dense}};
constexpr std::pair<const char*, page_size> kPages[] = {{"2m", page_size::huge},
                                                        {"4k", page_size::small}};

std::size_t parse_count(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string suf = end;
  double mul = suf.empty()                ? 1
               : suf == "K" || suf == "k" ? 1 << 10
               : suf == "M" || suf == "m" ? 1 << 20
                                          : 0;
  if (mul == 0 || v <= 0) bad("bad count '" + s + "' (use e.g. 1M, 16M, 250K)");
  return static_cast<std::size_t>(v * mul);
}

// Removes this program's own options from argv (the rest goes to the harness).
std::vector<std::pair<std::string, std::string>> take_own_options(int& argc, char** argv) {
  static const char* kOwn[] = {"--sizes", "--keys", "--dists", "--pages", "--ycsb", "--ops"};
  std::vector<std::pair<std::string, std::string>> own;
  int w = 1;
  for (int i = 1; i < argc; ++i) {
    bool mine = false;
    for (const char* o : kOwn)
      if (std::strcmp(argv[i], o) == 0) {
        if (i + 1 >= argc) bad(std::string(o) + " needs a value");
        own.emplace_back(o, argv[++i]);
        mine = true;
      }
    if (std::strcmp(argv[i], "--with-std-set-64m") == 0) {
      own.emplace_back(argv[i], "");
      mine = true;
    }
    if (!mine) argv[w++] = argv[i];
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0)
      std::printf(
          "bench_btree extra options: --sizes 1M,16M,64M --keys u32,u64 --dists sparse,dense "
          "--pages 2m,4k --ycsb all|first|none --ops N --with-std-set-64m\n");
  }
  argc = w;
  return own;
}

plan_opts make_plan(const options& o, const std::vector<std::pair<std::string, std::string>>& own) {
  plan_opts p;
  p.sizes = o.quick() ? std::vector<std::size_t>{1u << 20}
                      : std::vector<std::size_t>{1u << 20, 16u << 20, 64u << 20};
  p.key_types = {"u32", "u64"};
  p.dists = o.quick() ? std::vector<distribution>{distribution::sparse}
                      : std::vector<distribution>{distribution::sparse, distribution::dense};
  p.pages = {page_size::huge, page_size::small};
  p.ycsb = o.quick() ? "first" : "all";
  p.ops = o.quick() ? 100'000 : 1'000'000;
  for (const auto& [k, v] : own) {
    if (k == "--sizes") {
      p.sizes.clear();
      for (const auto& x : bench::split_list(v)) p.sizes.push_back(parse_count(x));
    } else if (k == "--keys") {
      p.key_types = bench::split_list(v);
      for (const auto& x : p.key_types)
        if (x != "u32" && x != "u64") bad("--keys wants u32 and/or u64");
    } else if (k == "--dists") {
      p.dists =
          bench::pick_each(v, kDists, [](auto&) { bad("--dists wants sparse and/or dense"); });
    } else if (k == "--pages") {
      p.pages = bench::pick_each(v, kPages, [](auto&) { bad("--pages wants 2m and/or 4k"); });
    } else if (k == "--ycsb") {
      if (v != "all" && v != "first" && v != "none") bad("--ycsb wants all, first or none");
      p.ycsb = v;
    } else if (k == "--ops") {
      p.ops = parse_count(v);
    } else if (k == "--with-std-set-64m") {
      p.std_set_64m = true;
    }
  }
  return p;
}

// The peers' library versions, as their headers give them.
#ifdef ABSL_LTS_RELEASE_VERSION
const std::string kAbslVersion = "lts " + std::to_string(ABSL_LTS_RELEASE_VERSION);
#else
const std::string kAbslVersion = "head";
#endif
#ifdef _GLIBCXX_RELEASE
const std::string kLibstdcxxVersion = "libstdc++ " + std::to_string(_GLIBCXX_RELEASE);
#else
const std::string kLibstdcxxVersion;
#endif

// --- contenders --------------------------------------------------------------------------------

template <class K, class A, class... Args>
std::unique_ptr<runner<K>> make(std::string name, std::string version, Args&&... args) {
  return std::make_unique<runner_impl<A>>(std::move(name), std::move(version),
                                          std::forward<Args>(args)...);
}

template <class K>
struct lineup {
  std::vector<std::unique_ptr<runner<K>>> all;
  runner<K>* simdex = nullptr;
  runner<K>* absl = nullptr;
  runner<K>* stdset = nullptr;
  runner<K>* judy = nullptr;
  runner<K>* hash = nullptr;
  runner<K>* vec = nullptr;
  std::function<std::size_t()> judy_own_bytes;

  // Contenders by capability, in a fixed order (simdex first).
  std::vector<runner<K>*> pick(bool need_mutable, bool need_ordered, bool with_vec,
                               bool with_hash) const {
    std::vector<runner<K>*> out;
    for (runner<K>* r : {simdex, absl, stdset, judy, hash, vec}) {
      if (!r) continue;
      if (r == vec && !with_vec) continue;
      if (r == hash && !with_hash) continue;
      if (need_mutable && !r->mutable_()) continue;
      if (need_ordered && !r->ordered()) continue;
      out.push_back(r);
    }
    return out;
  }
};

template <class K, bool Map>
lineup<K> make_lineup(page_size pg, bool with_std) {
  lineup<K> l;
  using V = std::uint64_t;
  auto add = [&](std::unique_ptr<runner<K>> r, runner<K>*& slot) {
    slot = r.get();
    l.all.push_back(std::move(r));
  };
#if SIMDEX_HAVE_BTREE
  add(make<K, simdex_adapter<K, Map>>(Map ? "simdex::btree_map" : "simdex::btree_set", "", pg),
      l.simdex);
#endif
  if constexpr (Map) {
    using absl_t = absl::btree_map<K, V, std::less<K>, arena_alloc<std::pair<const K, V>>>;
    using std_t = std::map<K, V, std::less<K>, arena_alloc<std::pair<const K, V>>>;
    using hash_t = absl::flat_hash_map<K, V, absl::Hash<K>, std::equal_to<K>,
                                       arena_alloc<std::pair<const K, V>>>;
    add(make<K, stl_adapter<absl_t, true>>("absl::btree_map", kAbslVersion, pg), l.absl);
    if (with_std)
      add(make<K, stl_adapter<std_t, true>>("std::map", kLibstdcxxVersion, pg), l.stdset);
    add(make<K, judy_adapter<K, true>>("JudyL", "libJudy.so.1", pg), l.judy);
    add(make<K, stl_adapter<hash_t, false>>("absl::flat_hash_map", kAbslVersion, pg), l.hash);
  } else {
    using absl_t = absl::btree_set<K, std::less<K>, arena_alloc<K>>;
    using std_t = std::set<K, std::less<K>, arena_alloc<K>>;
    using hash_t = absl::flat_hash_set<K, absl::Hash<K>, std::equal_to<K>, arena_alloc<K>>;
    add(make<K, stl_adapter<absl_t, true>>("absl::btree_set", kAbslVersion, pg), l.absl);
    if (with_std)
      add(make<K, stl_adapter<std_t, true>>("std::set", kLibstdcxxVersion, pg), l.stdset);
    auto judy = std::make_unique<runner_impl<judy_adapter<K, false>>>("JudyL", "libJudy.so.1", pg);
    auto* jp = judy.get();
    l.judy_own_bytes = [jp] { return jp->adapter().own_bytes(); };
    add(std::move(judy), l.judy);
    add(make<K, stl_adapter<hash_t, false>>("absl::flat_hash_set", kAbslVersion, pg), l.hash);
  }
  add(make<K, sorted_vector_adapter<K, Map>>("sorted std::vector", kLibstdcxxVersion, pg), l.vec);
  return l;
}

// --- one configuration (N, key type, distribution, page size) -----------------------------------

bool g_mismatch = false;

template <class K>
class suite {
 public:
  suite(session& s, const plan_opts& po, std::size_t n, distribution d, page_size pg,
        const keyset<K>& ks, const zipf& z)
      : s_(s),
        po_(po),
        n_(n),
        pg_(pg),
        ks_(ks),
        z_(z),
        reps_(static_cast<std::size_t>(s.opts().repetitions())) {
    base_ = {{"n", static_cast<std::int64_t>(n)},
             {"key", std::string(sizeof(K) == 4 ? "u32" : "u64")},
             {"keys", std::string(distribution_name(d))},
             {"pages", std::string(page_size_name(pg))}};
    q_ = po.ops;
    m_ = std::min(ks.absent.size(), q_);
    with_std_ = n < (64u << 20) || po.std_set_64m;
  }

  void run_sets() {
    lineup<K> l = make_lineup<K, false>(pg_, with_std_);
    static bool noted = false;  // once per run, not per configuration
    if (!with_std_ && !noted) {
      noted = true;
      s_.note(
          "std::set/std::map skipped at N >= 64M (about 3 GiB and minutes to build); "
          "--with-std-set-64m keeps them");
    }
    rng r(0x5eed ^ n_);
    const std::string ref = "absl::btree_set";

    // Builds from empty: each sample resets its own structure untimed, so one structure per
    // contender is alive at a time.
    auto builders = l.pick(true, true, false, false);
    group("seq_insert", {{"ops", (std::int64_t)n_}}, "ns/op", builders, ref,
          static_cast<double>(n_), [&](runner<K>& x, std::size_t) {
            x.reset();
            return x.insert_all(ks_.sorted);
          });
    if (s_.opts().wants("seq_insert")) record_bytes(l, builders, "bytes_per_key_seq_insert", ref);
    auto bulk = l.pick(false, true, true, false);
    group("bulk_build_sorted", {}, "ns/key", bulk, ref, static_cast<double>(n_),
          [&](runner<K>& x, std::size_t) { return x.build_sorted(ks_.sorted); });
    if (s_.opts().wants("bulk_build_sorted"))
      record_bytes(l, bulk, "bytes_per_key_bulk_build", ref);
    if (s_.opts()
            .full())  // per-key random inserts for the peers: slow, and rand_insert covers them
      group("bulk_build_unsorted", {}, "ns/key", bulk, ref, static_cast<double>(n_),
            [&](runner<K>& x, std::size_t) { return x.build_unsorted(ks_.keys); });

    // The structure every other workload uses: N keys inserted one by one in random order. The
    // ordered mutable contenders build it as the timed fill_random workload (the last sample's
    // tree is what the later workloads read); the others, and every contender when fill_random
    // is filtered out, build it untimed (the read-only vector is bulk-built). Huge-page use is
    // the process's AnonHugePages growth during that build.
    auto everyone = l.pick(false, false, true, true);
    auto writers = l.pick(true, true, false, false);
    std::map<const runner<K>*, double> huge;
    auto build = [&](runner<K>& x) {
      x.reset();
      std::size_t h0 = process_huge_bytes();
      phase ph;
      if (x.mutable_())
        ph = x.insert_all(ks_.keys);
      else
        ph = x.build_sorted(ks_.sorted);
      std::size_t h1 = process_huge_bytes();
      huge[&x] = static_cast<double>(h1 > h0 ? h1 - h0 : 0);
      return ph;
    };
    group("fill_random", {{"ops", (std::int64_t)n_}}, "ns/op", writers, ref,
          static_cast<double>(n_), [&](runner<K>& x, std::size_t) { return build(x); });
    for (runner<K>* x : everyone)
      if (!huge.count(x)) build(*x);
    if (s_.opts().wants("bytes_per_key")) record_bytes(l, everyone, "bytes_per_key", ref);
    for (std::size_t i = 0; i < everyone.size() && s_.opts().wants("huge_page_share"); ++i)
      s_.record("huge_page_share", base_, everyone[i]->name(), everyone[i]->version(), "fraction",
                better::higher,
                {std::min(1.0, huge[everyone[i]] / static_cast<double>(std::max<std::size_t>(
                                                       1, everyone[i]->bytes())))});
    if (l.judy_own_bytes && s_.opts().wants("bytes_per_key"))
      s_.record("bytes_per_key", base_, "JudyL (JudyLMemUsed)", "own count", "B/key", better::lower,
                {static_cast<double>(l.judy_own_bytes()) / static_cast<double>(n_)});

    // Reads.
    auto hits = draws(r, [&] { return ks_.keys[r.below(ks_.keys.size())]; });
    auto misses = draws(r, [&] { return ks_.absent[r.below(ks_.absent.size())]; });
    auto anywhere = draws(r, [&] { return uniform_key(r); });
    group("contains_hit", {{"ops", (std::int64_t)q_}}, "ns/op", everyone, ref,
          static_cast<double>(q_),
          [&](runner<K>& x, std::size_t i) { return x.contains_all(hits[i]); });
    group("contains_miss", {{"ops", (std::int64_t)q_}}, "ns/op", everyone, ref,
          static_cast<double>(q_),
          [&](runner<K>& x, std::size_t i) { return x.contains_all(misses[i]); });
    auto ordered = l.pick(false, true, true, false);
    group("lower_bound",
          {{"ops", (std::int64_t)q_}, {"probes", std::string("uniform over key range")}}, "ns/op",
          ordered, ref, static_cast<double>(q_),
          [&](runner<K>& x, std::size_t i) { return x.lower_bound_all(anywhere[i]); });
    group("lower_bound_latency",
          {{"ops", (std::int64_t)q_}, {"probes", std::string("uniform, dependent chain")}}, "ns/op",
          ordered, ref, static_cast<double>(q_),
          [&](runner<K>& x, std::size_t i) { return x.lower_bound_chain(anywhere[i]); });
    for (std::size_t len : {10u, 100u, 10000u}) {
      std::size_t scans = std::min(q_, std::max<std::size_t>(32, q_ / len));
      std::vector<std::vector<K>> starts(reps_);
      for (std::size_t i = 0; i < reps_; ++i)
        starts[i].assign(anywhere[i].begin(),
                         anywhere[i].begin() + static_cast<std::ptrdiff_t>(scans));
      group("scan", {{"len", (std::int64_t)len}, {"scans", (std::int64_t)scans}}, "ns/scan",
            ordered, ref, static_cast<double>(scans),
            [&](runner<K>& x, std::size_t i) { return x.scan_all(starts[i], len); });
    }
    batched(l, hits, anywhere, ref);

    // Mutations at size N; each sample puts the key set back untimed.
    std::vector<std::vector<K>> fresh(reps_);
    for (auto& v : fresh) {
      v.assign(ks_.absent.begin(), ks_.absent.begin() + static_cast<std::ptrdiff_t>(m_));
      shuffle(v, r);
    }
    auto present = [&](std::size_t i) {
      std::size_t off = (i * m_) % (n_ - m_ + 1);
      return std::span<const K>(ks_.keys.data() + off, m_);
    };
    params mp = {{"ops", (std::int64_t)m_}};
    group("rand_insert", mp, "ns/op", writers, ref, static_cast<double>(m_),
          [&](runner<K>& x, std::size_t i) {
            phase ph = x.insert_all(fresh[i]);
            x.erase_untimed(fresh[i]);
            return ph;
          });
    group("rand_delete", mp, "ns/op", writers, ref, static_cast<double>(m_),
          [&](runner<K>& x, std::size_t i) {
            phase ph = x.erase_all(present(i));
            x.insert_untimed(present(i));
            return ph;
          });
    group("churn",
          {{"ops", (std::int64_t)(2 * m_)},
           {"op", std::string("erase a present key, insert an absent one")}},
          "ns/op", writers, ref, static_cast<double>(2 * m_), [&](runner<K>& x, std::size_t i) {
            phase ph = x.churn(present(i), fresh[i]);
            x.erase_untimed(fresh[i]);
            x.insert_untimed(present(i));
            return ph;
          });
    // A random half erased one by one: a window of the (random) insertion order, a different
    // one each repetition; the half goes back untimed.
    std::size_t half = n_ / 2;
    auto window = [&](std::size_t i) {
      return std::span<const K>(ks_.keys.data() + (i * half) / reps_, half);
    };
    group("erase_half", {{"ops", (std::int64_t)half}}, "ns/op", writers, ref,
          static_cast<double>(half), [&](runner<K>& x, std::size_t i) {
            phase ph = x.erase_all(window(i));
            x.insert_untimed(window(i));
            return ph;
          });
    for (runner<K>* x : everyone)
      if (x->size() != n_)
        fail(x->name() + " holds " + std::to_string(x->size()) + " keys after the mutations, not " +
             std::to_string(n_));
  }

  void run_ycsb() {
    lineup<K> l = make_lineup<K, true>(pg_, with_std_);
    const std::string ref = "absl::btree_map";
    auto maps = l.pick(false, false, true, true);
    for (runner<K>* x : maps) {
      x->reset();
      if (x->mutable_())
        x->insert_untimed(ks_.keys);
      else
        x->build_sorted(ks_.sorted);
    }
    rng r(0x9c5b ^ n_);
    for (const ycsb_mix& mix : ycsb_mixes())
      for (bool zipfian : {false, true}) {
        // E's operations are scans of ~50 keys each: a quarter of the count keeps its samples
        // as long as the other mixes'.
        std::size_t count = mix.scan > 0 ? std::max<std::size_t>(1, q_ / 4) : q_;
        std::vector<std::vector<op<K>>> streams(reps_);
        std::size_t inserted = 0;  // every stream inserts from absent[0]; remove the longest prefix
        for (auto& st : streams) {
          std::size_t k = 0;
          st = make_ycsb(mix, zipfian, ks_, z_, count, r, k);
          inserted = std::max(inserted, k);
        }
        bool read_only = mix.update == 0 && mix.insert == 0 && mix.rmw == 0;
        auto who = l.pick(!read_only, mix.scan > 0, read_only, mix.scan == 0);
        std::span<const K> added(ks_.absent.data(), inserted);
        group(
            std::string("ycsb_") + mix.name,
            {{"dist", std::string(zipfian ? "zipf0.99" : "uniform")}, {"ops", (std::int64_t)count}},
            "ns/op", who, ref, static_cast<double>(count), [&](runner<K>& x, std::size_t i) {
              phase ph = x.ycsb(streams[i]);
              x.erase_untimed(added);
              return ph;
            });
      }
  }

 private:
  template <class Gen>
  std::vector<std::vector<K>> draws(rng&, Gen&& g) {
    std::vector<std::vector<K>> out(reps_, std::vector<K>(q_));
    for (auto& v : out)
      for (auto& k : v) k = g();
    return out;
  }
  K uniform_key(rng& r) const {
    if (ks_.domain_hi == static_cast<K>(~K{0})) return static_cast<K>(r.next());
    return static_cast<K>(r.below(static_cast<std::uint64_t>(ks_.domain_hi) + 1));
  }

  // simdex's batch calls over spans of B keys against per-key loops (simdex's own, Abseil's,
  // JudyL's, and for contains the hash set's).
  void batched(const lineup<K>& l, const std::vector<std::vector<K>>& hits,
               const std::vector<std::vector<K>>& anywhere, const std::string& ref) {
    if (!l.simdex) return;
    std::unique_ptr<bool[]> found(new bool[q_]);
    for (bool lb : {false, true})
      for (std::size_t chunk : {std::size_t{256}, std::size_t{1024}, q_}) {
        std::vector<runner<K>*> who = {l.simdex, l.simdex, l.absl, l.judy};
        if (!lb) who.push_back(l.hash);
        std::vector<std::string> names;
        for (std::size_t c = 0; c < who.size(); ++c)
          names.push_back(who[c]->name() + (c == 0 ? " batch" : " per-key"));
        group(
            lb ? "lower_bound_batched" : "contains_hit_batched",
            {{"batch", (std::int64_t)chunk}, {"ops", (std::int64_t)q_}}, "ns/op", who,
            ref + " per-key", static_cast<double>(q_),
            [&, chunk, lb](runner<K>& x, std::size_t i, std::size_t c) {
              if (lb) return x.lower_bound_batch(anywhere[i], chunk, c == 0);
              return x.contains_batch(hits[i], found.get(), chunk, c == 0);
            },
            names, /*rotate=*/true);
      }
  }

  void record_bytes(const lineup<K>& l, const std::vector<runner<K>*>& who, const std::string& w,
                    const std::string& ref) {
    double ref_v = l.absl ? static_cast<double>(l.absl->bytes()) / static_cast<double>(n_) : 0;
    for (runner<K>* x : who)
      s_.record(w, base_, x->name(), x->version(), "B/key", better::lower,
                {static_cast<double>(x->bytes()) / static_cast<double>(n_)}, ref, ref_v);
  }

  void fail(const std::string& what) {
    g_mismatch = true;
    s_.note("ERROR: " + what);
  }

  using sample_fn = std::function<phase(runner<K>&, std::size_t)>;
  using sample_fn_c = std::function<phase(runner<K>&, std::size_t, std::size_t)>;

  void group(const std::string& w, params extra, const std::string& unit,
             const std::vector<runner<K>*>& who, const std::string& ref, double per, sample_fn f) {
    group(w, std::move(extra), unit, who, ref, per,
          [f](runner<K>& x, std::size_t i, std::size_t) { return f(x, i); }, {});
  }
  // Runs one harness group; contender c's i-th call gets input i (the same for every contender),
  // and the checksums of one input must agree across contenders. With `rotate`, contender c's
  // i-th call gets input i + c instead: contenders that share a structure (simdex's batch and
  // its own per-key loop) would otherwise each find the keys the one before just walked.
  void group(const std::string& w, params extra, const std::string& unit,
             const std::vector<runner<K>*>& who, const std::string& ref, double per, sample_fn_c f,
             std::vector<std::string> names, bool rotate = false) {
    if (!s_.opts().wants(w) || who.empty()) return;
    params p = base_;
    p.insert(p.end(), extra.begin(), extra.end());
    std::vector<std::size_t> calls(who.size(), 0);
    std::vector<std::map<std::size_t, std::uint64_t>> checks(who.size());  // input -> checksum
    std::vector<contender> cs;
    for (std::size_t c = 0; c < who.size(); ++c) {
      runner<K>* x = who[c];
      cs.push_back({names.empty() ? x->name() : names[c], x->version(), [&, x, c, rotate] {
                      const std::size_t i = (calls[c]++ + (rotate ? c : 0)) % reps_;
                      phase ph = f(*x, i, c);
                      checks[c][i] = ph.check;
                      return static_cast<double>(ph.ns) / per;
                    }});
    }
    s_.group(w, p, unit, better::lower, cs, ref);
    for (std::size_t c = 1; c < who.size(); ++c)
      for (const auto& [i, check] : checks[c])
        if (auto it = checks[0].find(i); it != checks[0].end() && it->second != check)
          fail(w + ": " + cs[c].name + " disagrees with " + cs[0].name + " (checksums differ)");
  }

  session& s_;
  const plan_opts& po_;
  std::size_t n_, q_ = 0, m_ = 0;
  page_size pg_;
  const keyset<K>& ks_;
  const zipf& z_;
  std::size_t reps_;
  bool with_std_ = true;
  params base_;
};

template <class K>
void run_key_type(session& s, const plan_opts& po, std::size_t n, distribution d, bool& ycsb_done) {
  std::size_t m = std::max<std::size_t>(n / 8, po.ops);
  keyset<K> ks =
      make_keyset<K>(n, m, d, 0xb7ee ^ (n * 31 + sizeof(K) * 7 + static_cast<std::size_t>(d)));
  zipf z(po.ycsb == "none" || ycsb_done ? 2 : n, 0.99);
  for (page_size pg : po.pages) {
    suite<K> su(s, po, n, d, pg, ks, z);
    su.run_sets();
    if (po.ycsb == "all" || (po.ycsb == "first" && !ycsb_done)) {
      su.run_ycsb();
      ycsb_done = true;
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  auto own = take_own_options(argc, argv);
  session s(parse_options(argc, argv, "btree"));
  plan_opts po = make_plan(s.opts(), own);

  int per_config = s.opts().full() ? 21 : 20, ycsb_groups = 12;
  int configs =
      static_cast<int>(po.sizes.size() * po.key_types.size() * po.dists.size() * po.pages.size());
  s.plan(configs * per_config + (po.ycsb == "all"     ? configs
                                 : po.ycsb == "first" ? 1
                                                      : 0) *
                                    ycsb_groups);
#if SIMDEX_HAVE_BTREE
  s.note("simdex::btree ISA level: " + std::string(simdex::btree_set<std::uint64_t>().isa()));
#else
  s.note("simdex::btree not built (SIMDEX_HAVE_BTREE unset): peers only");
#endif
  s.note(
      "pages=2m: every contender's memory is MADV_HUGEPAGE page_buffer arenas (peers through a "
      "counting "
      "allocator; JudyL through interposed JudyMalloc; simdex through btree_options.pages); "
      "pages=4k: the same "
      "arenas with MADV_NOHUGEPAGE. THP mode: " +
      thp_mode());
  s.note(
      "bytes_per_key: allocator-level bytes handed out (size rounded to 16) for peers; simdex "
      "reports memory_usage() (bytes in its live pages and inner nodes). Built by N "
      "random-order inserts unless named otherwise.");
  s.note(
      "rand_insert/rand_delete/churn run at size N: M absent keys inserted (then removed untimed), "
      "M present keys "
      "erased (then reinserted untimed); lower_bound probes are uniform over the key range");
  bool ycsb_done = po.ycsb == "none";
  for (std::size_t n : po.sizes)
    for (const std::string& kt : po.key_types)
      for (distribution d : po.dists) {
        if (kt == "u32")
          run_key_type<std::uint32_t>(s, po, n, d, ycsb_done);
        else
          run_key_type<std::uint64_t>(s, po, n, d, ycsb_done);
      }
  s.write();
  return g_mismatch ? 3 : 0;
}
