// bench_kv: simdex::kv against LMDB (persistent, snapshots, one writer: the real peer) and
// absl::btree_map / std::map of std::string (in-memory speed limits: no persistence, no
// snapshots, no transactions), on psitri's workloads: key generators be_seq (big-endian u64),
// rand (8 bytes of XXH3_64(seq)) and str_rand (decimal string of XXH3_64(seq)), 8-byte values,
// rounds of N keys inserted in one transaction per round, then commits every 1 and every 100
// operations, gets (in insertion order, random hits, random misses), get_many, lower_bound,
// full iteration, remove, and a reader beside a writer. simdex runs twice: with the process's
// best primitive level and with the scalar kernels, so the primitives' system effect shows.
//
// Extra options: --items N (keys per round), --rounds R, --gens a,b (be_seq,rand,str_rand),
// --sync none|fsync, --no-scalar, --no-mem-peers.
#include <absl/container/btree_map.h>
#include <lmdb.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "simdex/cpu.h"
#include "simdex/kv.h"

using namespace simdex;
using namespace simdex::bench;

namespace {

// ---- keys and values
// ------------------------------------------------------------------------------

enum class gen { be_seq, rand, str_rand };
const char* gen_name(gen g) {
  return g == gen::be_seq ? "be_seq" : (g == gen::rand ? "rand" : "str_rand");
}

struct keybuf {
  char b[24];
  std::uint8_t n;
  std::string_view view() const { return {b, n}; }
};

keybuf make_key(gen g, std::uint64_t seq) {
  keybuf k;
  if (g == gen::be_seq) {
    for (int i = 7; i >= 0; --i, seq >>= 8) k.b[i] = static_cast<char>(seq & 0xFF);
    k.n = 8;
  } else {
    const std::uint64_t h = XXH3_64bits(&seq, sizeof seq);
    if (g == gen::rand) {
      std::memcpy(k.b, &h, 8);
      k.n = 8;
    } else {
      k.n = static_cast<std::uint8_t>(
          std::snprintf(k.b, sizeof k.b, "%llu", static_cast<unsigned long long>(h)));
    }
  }
  return k;
}

// Values: 8-byte slices of a 1 MiB random buffer.
struct values {
  std::vector<char> buf = std::vector<char>(1 << 20);
  values() {
    rng r(7);
    for (auto& c : buf) c = static_cast<char>(r.next());
  }
  std::string_view at(std::uint64_t i) const {
    return {buf.data() + (i * 8) % (buf.size() - 8), 8};
  }
};

// The shared 2-vCPU box runs other work too: single-threaded rates are per CPU-second of this
// process (user + system, page faults included), not per wall-second; the concurrent workload
// is wall-clock.
std::uint64_t cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

std::uint64_t rss_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f) {
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
    std::fclose(f);
  }
  return static_cast<std::uint64_t>(resident) * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
}

std::uint64_t file_size(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

// ---- the stores
// -------------------------------------------------------------------------------------

struct store {
  virtual ~store() = default;
  std::string name, version;
  bool persistent = false;
  virtual void begin() = 0;
  virtual void put(std::string_view k, std::string_view v) = 0;
  virtual void commit() = 0;
  virtual bool remove(std::string_view k) = 0;
  // Reads run on a snapshot taken by open_read (and closed by close_read).
  virtual void open_read() {}
  virtual void close_read() {}
  virtual bool get(std::string_view k, std::uint64_t& sink) = 0;
  virtual std::size_t get_many(const std::vector<keybuf>& keys, std::size_t from, std::size_t n,
                               std::uint64_t& sink) {
    std::size_t hits = 0;
    for (std::size_t i = 0; i < n; ++i) hits += get(keys[from + i].view(), sink);
    return hits;
  }
  virtual bool lower_bound(std::string_view k, std::uint64_t& sink) = 0;
  virtual std::uint64_t iterate() = 0;
  virtual std::uint64_t bytes_on_disk() { return 0; }
  virtual std::string shape() { return ""; }
  virtual std::string file() { return ""; }  // the file it maps (persistent stores)
  // A reader for one more thread, with snapshots of its own (nullptr: reads share the store's
  // state and cannot run on several threads).
  struct reader {
    virtual ~reader() = default;
    virtual void open() = 0;  // a snapshot of the last commit
    virtual void close() = 0;
    virtual bool get(std::string_view k, std::uint64_t& sink) = 0;
  };
  virtual std::unique_ptr<reader> make_reader() { return nullptr; }
};

// How much of this process's map of `path` sits on 2 MiB pages (FilePmdMapped of its Rss, from
// /proc/self/smaps): the two stores get the same advice, but where the kernel gives a file large
// folios depends on how its pages were written, and that moves random reads by tens of percent.
std::string huge_page_share(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "unknown (no such file)";
  std::FILE* f = std::fopen("/proc/self/smaps", "r");
  if (!f) return "unknown (no /proc/self/smaps)";
  char line[4096];
  bool ours = false;
  std::uint64_t rss = 0, pmd = 0, kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    // A mapping's first line: "start-end perms offset dev inode [path]". Matched by inode: a
    // map made before the file got its name shows the temporary name.
    unsigned long ino = 0;
    char dash = 0;
    if (std::isxdigit(static_cast<unsigned char>(line[0])) &&
        std::sscanf(line, "%*x%c%*x %*s %*x %*s %lu", &dash, &ino) == 2 && dash == '-') {
      ours = ino == st.st_ino;
    } else if (ours && std::sscanf(line, "Rss: %lu kB", &kb) == 1) {
      rss += kb;
    } else if (ours && std::sscanf(line, "FilePmdMapped: %lu kB", &kb) == 1) {
      pmd += kb;
    }
  }
  std::fclose(f);
  return std::to_string(pmd >> 10) + " of " + std::to_string(rss >> 10) +
         " MiB resident on 2 MiB pages";
}

struct kv_store : store {
  std::string path;
  kv::database db;
  std::optional<kv::write_tx> tx;
  std::optional<kv::snapshot> snap;
  kv::cursor cur;  // reused by lower_bound, as LMDB's cursor is
  std::vector<std::string_view> views;
  std::vector<std::optional<std::string_view>> outs;
  kv_store(const std::string& dir, kv::sync_mode sync, std::optional<isa> level,
           const char* label) {
    name = label;
    version = isa_name(level ? *level : active_isa());
    persistent = true;
    path = dir + "/" + label + ".kv";
    std::remove(path.c_str());
    db = kv::database::open(path, kv::options{sync, false, level});
  }
  std::string file() override { return path; }
  ~kv_store() override {
    tx.reset();
    snap.reset();
    db.close();
    std::remove(path.c_str());
  }
  void begin() override { tx.emplace(db.write()); }
  void put(std::string_view k, std::string_view v) override { tx->put(k, v); }
  void commit() override {
    tx->commit();
    tx.reset();
  }
  bool remove(std::string_view k) override { return tx->remove(k); }
  void open_read() override {
    snap.emplace(db.read());
    cur = snap->make_cursor();
  }
  void close_read() override {
    cur = kv::cursor();
    snap.reset();
  }
  bool get(std::string_view k, std::uint64_t& sink) override {
    auto v = snap->get(k);
    if (!v) return false;
    sink += static_cast<unsigned char>((*v)[0]);
    return true;
  }
  std::size_t get_many(const std::vector<keybuf>& keys, std::size_t from, std::size_t n,
                       std::uint64_t& sink) override {
    views.resize(n);
    outs.resize(n);
    for (std::size_t i = 0; i < n; ++i) views[i] = keys[from + i].view();
    snap->get_many(views, outs);
    std::size_t hits = 0;
    for (auto& o : outs)
      if (o) {
        ++hits;
        sink += static_cast<unsigned char>((*o)[0]);
      }
    return hits;
  }
  bool lower_bound(std::string_view k, std::uint64_t& sink) override {
    if (!cur.lower_bound(k)) return false;
    sink += static_cast<unsigned char>(cur.key()[0]);
    return true;
  }
  std::uint64_t iterate() override {
    kv::cursor c = snap->make_cursor();
    std::uint64_t n = 0;
    for (bool ok = c.first(); ok; ok = c.next()) n += c.value().size() == 8;
    return n;
  }
  struct kv_reader : reader {
    kv::database& db;
    std::optional<kv::snapshot> snap;
    explicit kv_reader(kv::database& d) : db(d) {}
    void open() override { snap.emplace(db.read()); }
    void close() override { snap.reset(); }
    bool get(std::string_view k, std::uint64_t& sink) override {
      auto v = snap->get(k);
      if (!v) return false;
      sink += static_cast<unsigned char>((*v)[0]);
      return true;
    }
  };
  std::unique_ptr<reader> make_reader() override { return std::make_unique<kv_reader>(db); }
  std::uint64_t bytes_on_disk() override { return file_size(path); }
  std::string shape() override {
    const auto s = db.stat();
    return "depth " + std::to_string(s.depth) + ", inner " + std::to_string(s.inner_nodes) +
           ", leaves " + std::to_string(s.leaf_nodes) + ", used " + std::to_string(s.file_bytes) +
           " B, free " + std::to_string(s.free_bytes) + " B";
  }
};

[[noreturn]] void lmdb_fail(const char* what, int rc) {
  std::fprintf(stderr, "bench_kv: lmdb %s: %s\n", what, mdb_strerror(rc));
  std::exit(1);
}
#define LMDB_CHECK(call)                 \
  do {                                   \
    const int rc_ = (call);              \
    if (rc_ != 0) lmdb_fail(#call, rc_); \
  } while (0)

struct lmdb_store : store {
  std::string path;
  MDB_env* env = nullptr;
  MDB_dbi dbi = 0;
  MDB_txn* txn = nullptr;
  MDB_txn* rtxn = nullptr;
  MDB_cursor* rcur = nullptr;
  // writemap: MDB_WRITEMAP, LMDB's faster write path (pages written through the map, as
  // simdex writes its own) at the cost of its protection against stray writes.
  lmdb_store(const std::string& dir, kv::sync_mode sync, bool writemap) {
    name = writemap ? "lmdb-writemap" : "lmdb";
    int maj, min, pat;
    mdb_version(&maj, &min, &pat);
    version = std::to_string(maj) + "." + std::to_string(min) + "." + std::to_string(pat);
    persistent = true;
    path = dir + "/" + name + ".mdb";
    std::remove(path.c_str());
    std::remove((path + "-lock").c_str());
    LMDB_CHECK(mdb_env_create(&env));
    LMDB_CHECK(mdb_env_set_mapsize(env, std::size_t{64} << 30));
    LMDB_CHECK(mdb_env_set_maxreaders(env, 126));
    // sync none: MDB_NOSYNC (commits reach the page cache only, like simdex's none).
    const unsigned flags = MDB_NOSUBDIR | (sync == kv::sync_mode::none ? MDB_NOSYNC : 0u) |
                           (writemap ? MDB_WRITEMAP : 0u);
    LMDB_CHECK(mdb_env_open(env, path.c_str(), flags, 0644));
    // The advice simdex gives its own map (src/kv/store.cc, advise_map): 2 MiB pages under sync
    // none, no readahead under fsync. LMDB gives none of its own by default.
    MDB_envinfo info;
    LMDB_CHECK(mdb_env_info(env, &info));
    madvise(info.me_mapaddr, info.me_mapsize,
            sync == kv::sync_mode::none ? MADV_HUGEPAGE : MADV_RANDOM);
    MDB_txn* t;
    LMDB_CHECK(mdb_txn_begin(env, nullptr, 0, &t));
    LMDB_CHECK(mdb_dbi_open(t, nullptr, 0, &dbi));
    LMDB_CHECK(mdb_txn_commit(t));
  }
  std::string file() override { return path; }
  ~lmdb_store() override {
    close_read();
    if (txn) mdb_txn_abort(txn);
    mdb_env_close(env);
    std::remove(path.c_str());
    std::remove((path + "-lock").c_str());
  }
  static MDB_val val(std::string_view s) { return {s.size(), const_cast<char*>(s.data())}; }
  void begin() override { LMDB_CHECK(mdb_txn_begin(env, nullptr, 0, &txn)); }
  void put(std::string_view k, std::string_view v) override {
    MDB_val a = val(k), b = val(v);
    LMDB_CHECK(mdb_put(txn, dbi, &a, &b, 0));
  }
  void commit() override {
    LMDB_CHECK(mdb_txn_commit(txn));
    txn = nullptr;
  }
  bool remove(std::string_view k) override {
    MDB_val a = val(k);
    const int rc = mdb_del(txn, dbi, &a, nullptr);
    if (rc == MDB_NOTFOUND) return false;
    if (rc) lmdb_fail("mdb_del", rc);
    return true;
  }
  void open_read() override {
    LMDB_CHECK(mdb_txn_begin(env, nullptr, MDB_RDONLY, &rtxn));
    LMDB_CHECK(mdb_cursor_open(rtxn, dbi, &rcur));
  }
  void close_read() override {
    if (rcur) mdb_cursor_close(rcur);
    if (rtxn) mdb_txn_abort(rtxn);
    rcur = nullptr;
    rtxn = nullptr;
  }
  bool get(std::string_view k, std::uint64_t& sink) override {
    MDB_val a = val(k), b;
    if (mdb_get(rtxn, dbi, &a, &b) != 0) return false;
    sink += static_cast<unsigned char>(static_cast<const char*>(b.mv_data)[0]);
    return true;
  }
  bool lower_bound(std::string_view k, std::uint64_t& sink) override {
    MDB_val a = val(k), b;
    if (mdb_cursor_get(rcur, &a, &b, MDB_SET_RANGE) != 0) return false;
    sink += static_cast<unsigned char>(static_cast<const char*>(a.mv_data)[0]);
    return true;
  }
  std::uint64_t iterate() override {
    MDB_val a, b;
    std::uint64_t n = 0;
    for (int rc = mdb_cursor_get(rcur, &a, &b, MDB_FIRST); rc == 0;
         rc = mdb_cursor_get(rcur, &a, &b, MDB_NEXT))
      n += b.mv_size == 8;
    return n;
  }
  // LMDB's read transactions are per thread (a slot in its reader table, taken without a lock
  // once the thread has one).
  struct lmdb_reader : reader {
    MDB_env* env;
    MDB_dbi dbi;
    MDB_txn* txn = nullptr;
    lmdb_reader(MDB_env* e, MDB_dbi d) : env(e), dbi(d) {}
    ~lmdb_reader() override { close(); }
    void open() override { LMDB_CHECK(mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn)); }
    void close() override {
      if (txn) mdb_txn_abort(txn);
      txn = nullptr;
    }
    bool get(std::string_view k, std::uint64_t& sink) override {
      MDB_val a = val(k), b;
      if (mdb_get(txn, dbi, &a, &b) != 0) return false;
      sink += static_cast<unsigned char>(static_cast<const char*>(b.mv_data)[0]);
      return true;
    }
  };
  std::unique_ptr<reader> make_reader() override { return std::make_unique<lmdb_reader>(env, dbi); }
  std::uint64_t bytes_on_disk() override { return file_size(path); }
  std::string shape() override {
    MDB_stat s;
    mdb_env_stat(env, &s);
    return "depth " + std::to_string(s.ms_depth) + ", branch pages " +
           std::to_string(s.ms_branch_pages) + ", leaf pages " + std::to_string(s.ms_leaf_pages) +
           ", overflow " + std::to_string(s.ms_overflow_pages);
  }
};

// In-memory limits: std::string keys and values in an ordered container.
template <class Map>
struct map_store : store {
  Map m;
  explicit map_store(const char* label) { name = label; }
  void begin() override {}
  void put(std::string_view k, std::string_view v) override {
    m.insert_or_assign(std::string(k), std::string(v));
  }
  void commit() override {}
  bool remove(std::string_view k) override { return m.erase(std::string(k)) != 0; }
  bool get(std::string_view k, std::uint64_t& sink) override {
    auto it = m.find(std::string(k));
    if (it == m.end()) return false;
    sink += static_cast<unsigned char>(it->second[0]);
    return true;
  }
  bool lower_bound(std::string_view k, std::uint64_t& sink) override {
    auto it = m.lower_bound(std::string(k));
    if (it == m.end()) return false;
    sink += static_cast<unsigned char>(it->first[0]);
    return true;
  }
  std::uint64_t iterate() override {
    std::uint64_t n = 0;
    for (auto& [k, v] : m) n += v.size() == 8;
    return n;
  }
};

// ---- driver
// -------------------------------------------------------------------------------------------

struct config {
  std::uint64_t items = 1000000;
  int rounds = 0;  // 0: 2 quick, 20 full
  std::vector<gen> gens{gen::be_seq, gen::rand, gen::str_rand};
  kv::sync_mode sync = kv::sync_mode::none;
  bool scalar = true, mem_peers = true;
};

constexpr std::pair<const char*, gen> kGens[] = {
    {"be_seq", gen::be_seq}, {"rand", gen::rand}, {"str_rand", gen::str_rand}};

[[noreturn]] void usage_fail(const std::string& m) {
  std::fprintf(stderr, "bench_kv: %s\n", m.c_str());
  std::exit(2);
}

config parse_own(int& argc, char** argv) {
  config c;
  int w = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage_fail(a + " wants a value");
      return argv[++i];
    };
    if (a == "--items") {
      c.items = std::strtoull(next().c_str(), nullptr, 10);
      if (c.items == 0) usage_fail("--items wants a positive number");
    } else if (a == "--rounds") {
      c.rounds = std::atoi(next().c_str());
      if (c.rounds <= 0) usage_fail("--rounds wants a positive number");
    } else if (a == "--gens") {
      c.gens = bench::pick_each(
          next(), kGens, [](const std::string& g) { usage_fail("unknown generator '" + g + "'"); });
    } else if (a == "--sync") {
      const std::string s = next();
      if (s == "none")
        c.sync = kv::sync_mode::none;
      else if (s == "fsync")
        c.sync = kv::sync_mode::fsync;
      else
        usage_fail("--sync wants none or fsync");
    } else if (a == "--no-scalar") {
      c.scalar = false;
    } else if (a == "--no-mem-peers") {
      c.mem_peers = false;
    } else {
      argv[w++] = argv[i];
    }
  }
  argc = w;
  return c;
}

struct driver {
  session& s;
  config cfg;
  values vals;
  std::string dir;
  // --only NAME: the stores are still filled (every workload reads them), but only the
  // workloads it names are measured and recorded.
  bool wants(const std::string& workload) const { return s.opts().wants(workload); }
  void rec(const std::string& workload, const params& p, store& st, const std::string& unit,
           std::vector<double> samples) {
    if (!wants(workload)) return;
    s.record(workload, p, st.name, st.version, unit, better::higher, std::move(samples));
  }

  std::vector<std::unique_ptr<store>> make_stores() {
    std::vector<std::unique_ptr<store>> v;
    v.push_back(std::make_unique<kv_store>(dir, cfg.sync, std::nullopt, "simdex"));
    if (cfg.scalar)
      v.push_back(std::make_unique<kv_store>(dir, cfg.sync, isa::scalar, "simdex-scalar"));
    v.push_back(std::make_unique<lmdb_store>(dir, cfg.sync, false));
    v.push_back(std::make_unique<lmdb_store>(dir, cfg.sync, true));
    if (cfg.mem_peers) {
      v.push_back(std::make_unique<map_store<absl::btree_map<std::string, std::string>>>(
          "absl::btree_map"));
      v.push_back(std::make_unique<map_store<std::map<std::string, std::string>>>("std::map"));
    }
    return v;
  }

  // Inserts [from, to) with a commit every `every` operations (0: one transaction).
  double insert(store& st, gen g, std::uint64_t from, std::uint64_t to, std::uint64_t every) {
    const std::uint64_t t0 = cpu_ns();
    st.begin();
    std::uint64_t inside = 0;
    for (std::uint64_t i = from; i < to; ++i) {
      st.put(make_key(g, i).view(), vals.at(i));
      if (every && ++inside == every) {
        st.commit();
        st.begin();
        inside = 0;
      }
    }
    st.commit();
    return static_cast<double>(to - from) / (static_cast<double>(cpu_ns() - t0) / 1e9) / 1e6;
  }

  void run_gen(gen g) {
    const int rounds = cfg.rounds ? cfg.rounds : (s.opts().quick() ? 2 : 20);
    const std::string gn = gen_name(g);
    auto stores = make_stores();
    std::vector<std::uint64_t> rss_before(stores.size());
    std::vector<std::uint64_t> rss_grow(stores.size(), 0);
    std::uint64_t n = 0;
    // Insert rounds, one transaction per round; stores take turns inside each round.
    for (int r = 0; r < rounds; ++r) {
      for (std::size_t i = 0; i < stores.size(); ++i) {
        const std::uint64_t before = rss_bytes();
        const double rate = insert(*stores[i], g, n, n + cfg.items, 0);
        rss_grow[i] += rss_bytes() - std::min(rss_bytes(), before);
        params p{{"gen", gn},
                 {"round", std::int64_t{r + 1}},
                 {"keys", static_cast<std::int64_t>(n + cfg.items)}};
        rec("insert/tx-per-round", p, *stores[i], "Mops/s", {rate});
      }
      n += cfg.items;
      progress(r + 1, rounds, "insert " + gn);
    }
    params base{{"gen", gn}, {"keys", static_cast<std::int64_t>(n)}};
    // Commit every 1 and every 100 operations (persistent stores only).
    // The keys go in as repetitions, the stores taking turns, so each rate is a median.
    if (g == gen::rand && wants("insert/commit-every")) {
      const auto reps = static_cast<std::uint64_t>(s.opts().repetitions());
      for (std::uint64_t every : {std::uint64_t{1}, std::uint64_t{100}}) {
        const std::uint64_t cnt =
            every == 1 ? std::min<std::uint64_t>(cfg.items / 10, 100000) : cfg.items / 2;
        const std::uint64_t parts = std::max<std::uint64_t>(std::min(reps, cnt), 1);
        const std::uint64_t part = cnt / parts, used = part * parts;
        std::vector<std::vector<double>> rates(stores.size());
        for (std::uint64_t j = 0; j < parts; ++j)
          for (std::size_t i = 0; i < stores.size(); ++i)
            if (stores[i]->persistent)
              rates[i].push_back(insert(*stores[i], g, n + j * part, n + (j + 1) * part, every));
        for (std::size_t i = 0; i < stores.size(); ++i) {
          if (!stores[i]->persistent) continue;
          params p = base;
          p.push_back({"commit_every", static_cast<std::int64_t>(every)});
          p.push_back({"ops", static_cast<std::int64_t>(used)});
          rec("insert/commit-every", p, *stores[i], "Mops/s", std::move(rates[i]));
        }
        // Keep every store at the same key set.
        for (auto& st : stores)
          if (!st->persistent) insert(*st, g, n, n + used, 0);
        n += used;
      }
    }
    base = params{{"gen", gn}, {"keys", static_cast<std::int64_t>(n)}};
    for (std::size_t i = 0; i < stores.size(); ++i) {
      params p = base;
      const double rss = static_cast<double>(rss_grow[i]) / static_cast<double>(n);
      if (wants("bytes-per-key/rss-growth"))
        s.record("bytes-per-key/rss-growth", p, stores[i]->name, stores[i]->version, "B/key",
                 better::lower, {rss});
      if (stores[i]->persistent && wants("bytes-per-key/file")) {
        const double fb = static_cast<double>(stores[i]->bytes_on_disk()) / static_cast<double>(n);
        s.record("bytes-per-key/file", p, stores[i]->name, stores[i]->version, "B/key",
                 better::lower, {fb});
        s.note(gn + " " + stores[i]->name + " shape at " + std::to_string(n) +
               " keys: " + stores[i]->shape());
      }
    }
    reads(g, stores, n, base);
    for (auto& st : stores)
      if (!st->file().empty())
        s.note(gn + " " + st->name + " file map after the reads at " + std::to_string(n) +
               " keys: " + huge_page_share(st->file()));
    if (g == gen::rand) {
      const char* conc[] = {"concurrent/reader-alone", "concurrent/reader-with-writer",
                            "concurrent/reader-alone-wall", "concurrent/reader-with-writer-wall",
                            "concurrent/writer-100-per-10ms"};
      if (std::any_of(std::begin(conc), std::end(conc), [&](const char* w) { return wants(w); }))
        concurrent(g, stores, n, base);
      if (wants("concurrent/readers")) readers(g, stores, n, base, false);
      if (wants("concurrent/readers-with-writer") ||
          wants("concurrent/readers-with-writer/inserts"))
        readers(g, stores, n, base, true);
      if (!wants("remove/random")) return;
      // Remove: half a round of random present keys, one transaction.
      const std::uint64_t cnt = cfg.items / 2;
      std::vector<keybuf> keys;
      rng pick(11);
      for (std::uint64_t i = 0; i < cnt; ++i) keys.push_back(make_key(g, pick.below(n)));
      for (auto& st : stores) {
        const std::uint64_t t0 = cpu_ns();
        st->begin();
        std::uint64_t hit = 0;
        for (auto& k : keys) hit += st->remove(k.view());
        st->commit();
        const double rate =
            static_cast<double>(cnt) / (static_cast<double>(cpu_ns() - t0) / 1e9) / 1e6;
        params p = base;
        p.push_back({"ops", static_cast<std::int64_t>(cnt)});
        rec("remove/random", p, *st, "Mops/s", {rate});
        do_not_optimize(hit);
      }
    }
  }

  // Read workloads through the harness: contenders alternate, each sample a batch of lookups.
  void reads(gen g, std::vector<std::unique_ptr<store>>& stores, std::uint64_t n,
             const params& base) {
    const std::size_t probes = std::min<std::uint64_t>(n, s.opts().quick() ? 200000 : 500000);
    std::vector<keybuf> seq_keys, hits, misses;
    rng r(5);
    const std::uint64_t seq_start = r.below(n - std::min<std::uint64_t>(n, probes) + 1);
    for (std::size_t i = 0; i < probes; ++i) {
      seq_keys.push_back(make_key(g, seq_start + i));
      hits.push_back(make_key(g, r.below(n)));
      misses.push_back(make_key(g, n + 1000000000ull + r.below(n)));
    }
    for (auto& st : stores) st->open_read();
    // One group: every store runs body(store) in turn, which returns the operations it did.
    auto each_store = [&](const std::string& wl, const params& p, auto body) {
      if (!wants(wl)) return;
      std::vector<contender> cs;
      for (auto& st : stores) {
        store* sp = st.get();
        cs.push_back({sp->name, sp->version, [&body, sp] {
                        const std::uint64_t t0 = cpu_ns();
                        const std::uint64_t ops = body(*sp);
                        return static_cast<double>(ops) /
                               (static_cast<double>(cpu_ns() - t0) / 1e9) / 1e6;
                      }});
      }
      s.group(wl, p, "Mops/s", better::higher, cs, "lmdb");
    };
    auto expect = [](bool ok, const store& st, const char* wl, std::uint64_t got,
                     std::uint64_t of) {
      if (ok) return;
      std::fprintf(stderr, "bench_kv: %s %s found %llu of %llu\n", st.name.c_str(), wl,
                   static_cast<unsigned long long>(got), static_cast<unsigned long long>(of));
      std::exit(1);
    };
    auto point = [&](const char* wl, const std::vector<keybuf>& keys, bool expect_hits) {
      params p = base;
      p.push_back({"probes", static_cast<std::int64_t>(keys.size())});
      each_store(wl, p, [&](store& st) {
        std::uint64_t sink = 0, found = 0;
        for (auto& k : keys) found += st.get(k.view(), sink);
        do_not_optimize(sink);
        expect(expect_hits ? found == keys.size() : found <= keys.size() / 1000, st, wl, found,
               keys.size());
        return keys.size();
      });
    };
    point("get/insertion-order", seq_keys, true);
    point("get/random-hit", hits, true);
    point("get/random-miss", misses, false);
    params pb = base;
    pb.push_back({"batch", std::int64_t{1024}});
    each_store("get_many/random-hit", pb, [&](store& st) {
      std::uint64_t sink = 0, found = 0;
      for (std::size_t i = 0; i < hits.size(); i += 1024)
        found += st.get_many(hits, i, std::min<std::size_t>(1024, hits.size() - i), sink);
      do_not_optimize(sink);
      expect(found == hits.size(), st, "get_many", found, hits.size());
      return hits.size();
    });
    each_store("lower_bound/random", base, [&](store& st) {
      std::uint64_t sink = 0;
      for (auto& k : misses) st.lower_bound(k.view(), sink);
      do_not_optimize(sink);
      return misses.size();
    });
    each_store("iterate/full", base, [&](store& st) {
      const std::uint64_t got = st.iterate();
      expect(got == n, st, "iterate", got, n);
      return n;
    });
    for (auto& st : stores) st->close_read();
  }

  // One reader of random hits alone, then beside a writer committing 100 inserts every 10 ms
  // (the same write load for every store), in alternating samples. The reader's rate is
  // counted per CPU-second of its own thread (what the writer costs it in shared caches, locks
  // and memory traffic) and per wall-second (on a shared 2-vCPU machine that mostly measures
  // the scheduler).
  void concurrent(gen g, std::vector<std::unique_ptr<store>>& stores, std::uint64_t n,
                  const params& base) {
    const double secs = s.opts().quick() ? 0.5 : 1.0;
    const int reps = s.opts().repetitions();
    for (auto& st : stores) {
      if (!st->persistent) continue;
      struct rates {
        double cpu = 0, wall = 0;
      };
      auto reader = [&](std::atomic<bool>& stop, rates& out) {
        rng r(3);
        std::uint64_t ops = 0, sink = 0;
        const std::uint64_t t0 = now_ns(), c0 = thread_cpu_ns();
        std::vector<keybuf> batch(1000);
        while (!stop.load(std::memory_order_relaxed)) {
          for (auto& k : batch) k = make_key(g, r.below(n));
          st->open_read();
          for (auto& k : batch) sink += st->get(k.view(), sink);
          st->close_read();
          ops += batch.size();
        }
        do_not_optimize(sink);
        const double o = static_cast<double>(ops) / 1e6;
        out.cpu = o / (static_cast<double>(thread_cpu_ns() - c0) / 1e9);
        out.wall = o / (static_cast<double>(now_ns() - t0) / 1e9);
      };
      std::vector<double> alone, with, alone_wall, with_wall, writer;
      std::uint64_t w = n + 5000000000ull;  // far from the reader's range: every write is new
      for (int rep = 0; rep < reps; ++rep) {
        rates a, b;
        {
          std::atomic<bool> stop{false};
          std::thread t([&] { reader(stop, a); });
          std::this_thread::sleep_for(std::chrono::duration<double>(secs));
          stop = true;
          t.join();
        }
        {
          std::atomic<bool> stop{false};
          std::thread t([&] { reader(stop, b); });
          const std::uint64_t t0 = now_ns(), wstart = w;
          for (int c = 1; static_cast<double>(now_ns() - t0) / 1e9 < secs; ++c) {
            st->begin();
            for (int i = 0; i < 100; ++i, ++w) st->put(make_key(g, w).view(), vals.at(w));
            st->commit();
            const std::uint64_t due = t0 + static_cast<std::uint64_t>(c) * 10000000ull;
            const std::uint64_t now = now_ns();
            if (due > now) std::this_thread::sleep_for(std::chrono::nanoseconds(due - now));
          }
          stop = true;
          t.join();
          writer.push_back(static_cast<double>(w - wstart) /
                           (static_cast<double>(now_ns() - t0) / 1e9) / 1e6);
        }
        alone.push_back(a.cpu);
        with.push_back(b.cpu);
        alone_wall.push_back(a.wall);
        with_wall.push_back(b.wall);
      }
      const std::string name = st->name;
      rec("concurrent/reader-alone", base, *st, "Mops/s", alone);
      if (wants("concurrent/reader-with-writer"))
        s.record("concurrent/reader-with-writer", base, name, st->version, "Mops/s", better::higher,
                 with, name + " reader alone", summarize(alone).median);
      rec("concurrent/reader-alone-wall", base, *st, "Mops/s", alone_wall);
      if (wants("concurrent/reader-with-writer-wall"))
        s.record("concurrent/reader-with-writer-wall", base, name, st->version, "Mops/s",
                 better::higher, with_wall, name + " reader alone", summarize(alone_wall).median);
      rec("concurrent/writer-100-per-10ms", base, *st, "Mops/s", writer);
    }
  }

  // Reader threads of random hits, no writer, 1, 2, 4, ... threads up to the CPUs this process
  // may use (and 12, psitri's published figure's count, where there are that many): each takes
  // a snapshot, makes 1000 gets and closes it, until the sample's time is up. The rate is all
  // threads' gets over the wall-clock span from the common start to the last thread's end, so
  // on a machine with fewer free cores than threads it measures the machine, not the store.
  // With `writer`, this thread meanwhile inserts new keys in transactions of 512 (psitri's
  // benchmark's batch), as psitri's readers run during its inserts; the reader counts then leave
  // a CPU for it.
  void readers(gen g, std::vector<std::unique_ptr<store>>& stores, std::uint64_t n,
               const params& base, bool writer) {
    const char* wl = writer ? "concurrent/readers-with-writer" : "concurrent/readers";
    const double secs = s.opts().quick() ? 0.3 : 1.0;
    const int reps = s.opts().repetitions();
    cpu_set_t set;
    const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
    std::vector<int> counts;
    for (int t = 1; t <= cpus; t *= 2) counts.push_back(t);
    if (cpus >= 12) counts.push_back(12);
    if (counts.back() != cpus && cpus != 12) counts.push_back(cpus);
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    if (writer)
      counts.erase(
          std::remove_if(counts.begin(), counts.end(), [&](int t) { return t > 1 && t >= cpus; }),
          counts.end());
    // The writer's keys: new to every store, far from the readers' range.
    std::vector<std::uint64_t> next(stores.size(), n + 7000000000ull);
    for (int threads : counts) {
      params p = base;
      p.push_back({"threads", static_cast<std::int64_t>(threads)});
      std::vector<std::vector<double>> rates(stores.size()), wrates(stores.size());
      for (int rep = 0; rep < reps; ++rep)  // stores take turns within each repetition
        for (std::size_t i = 0; i < stores.size(); ++i) {
          std::vector<std::unique_ptr<store::reader>> rs;
          for (int t = 0; t < threads; ++t) rs.push_back(stores[i]->make_reader());
          if (!rs.front()) continue;  // in-memory maps: one reader at a time
          std::atomic<bool> go{false}, stop{false};
          std::atomic<int> ready{0};
          std::vector<std::uint64_t> ops(static_cast<std::size_t>(threads), 0);
          std::vector<std::uint64_t> ends(static_cast<std::size_t>(threads), 0);
          std::vector<std::thread> team;
          for (int t = 0; t < threads; ++t)
            team.emplace_back([&, t] {
              auto& r = *rs[static_cast<std::size_t>(t)];
              rng pick(100 + static_cast<std::uint64_t>(t));
              std::vector<keybuf> batch(1000);
              std::uint64_t sink = 0, done = 0, found = 0;
              ready.fetch_add(1);
              while (!go.load(std::memory_order_acquire)) {
              }
              while (!stop.load(std::memory_order_relaxed)) {
                for (auto& k : batch) k = make_key(g, pick.below(n));
                r.open();
                for (auto& k : batch) found += r.get(k.view(), sink);
                r.close();
                done += batch.size();
              }
              do_not_optimize(sink);
              if (found != done) {
                std::fprintf(stderr, "bench_kv: %s reader found %llu of %llu present keys\n",
                             stores[i]->name.c_str(), static_cast<unsigned long long>(found),
                             static_cast<unsigned long long>(done));
                std::exit(1);
              }
              ops[static_cast<std::size_t>(t)] = done;
              ends[static_cast<std::size_t>(t)] = now_ns();
            });
          while (ready.load() < threads) std::this_thread::yield();
          const std::uint64_t t0 = now_ns();
          go.store(true, std::memory_order_release);
          if (writer) {
            std::uint64_t& w = next[i];
            const std::uint64_t w0 = w;
            while (static_cast<double>(now_ns() - t0) / 1e9 < secs) {
              stores[i]->begin();
              for (int k = 0; k < 512; ++k, ++w) stores[i]->put(make_key(g, w).view(), vals.at(w));
              stores[i]->commit();
            }
            wrates[i].push_back(static_cast<double>(w - w0) /
                                (static_cast<double>(now_ns() - t0) / 1e3));
          } else {
            std::this_thread::sleep_for(std::chrono::duration<double>(secs));
          }
          stop = true;
          for (auto& th : team) th.join();
          const std::uint64_t end = *std::max_element(ends.begin(), ends.end());
          std::uint64_t total = 0;
          for (auto o : ops) total += o;
          rates[i].push_back(static_cast<double>(total) / (static_cast<double>(end - t0) / 1e3));
        }
      for (std::size_t i = 0; i < stores.size(); ++i) {
        if (!rates[i].empty()) rec(wl, p, *stores[i], "Mops/s", rates[i]);
        if (!wrates[i].empty())
          rec("concurrent/readers-with-writer/inserts", p, *stores[i], "Mops/s", wrates[i]);
      }
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  config cfg = parse_own(argc, argv);
  session s(parse_options(argc, argv, "kv"));
  const char* tmp = std::getenv("TMPDIR");
  driver b{
      s, cfg, {}, std::string(tmp ? tmp : "/tmp") + "/simdex_bench_kv_" + std::to_string(getpid())};
  std::filesystem::create_directories(b.dir);
  const int rounds = cfg.rounds ? cfg.rounds : (s.opts().quick() ? 2 : 20);
  s.note(
      "rounds " + std::to_string(rounds) + " x " + std::to_string(cfg.items) +
      " keys, 8-byte values, sync " +
      (cfg.sync == kv::sync_mode::none ? "none (LMDB MDB_NOSYNC)" : "fsync (LMDB default flags)") +
      ", files in " + b.dir);
  s.note(
      "absl::btree_map and std::map of std::string are in-memory speed limits: no persistence, "
      "no snapshots, no transactions (their 'commits' do nothing)");
  s.note(
      "single-threaded rates are per CPU-second of the process (user+system), because the "
      "2-vCPU box is shared with other jobs; the concurrent reader figures are per CPU-second of "
      "the reader thread (and, as -wall, per wall-second)");
  s.note(
      "simdex-scalar is the same store with the scalar primitive kernels (what the SIMD "
      "primitives do for the whole store); simdex uses " +
      std::string(isa_name(active_isa())));
  for (gen g : cfg.gens) b.run_gen(g);
  std::filesystem::remove_all(b.dir);
  const std::string out = s.write();
  std::printf("%s\n", out.c_str());
  return 0;
}
