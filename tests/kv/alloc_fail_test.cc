// kv: every allocation of a write, failed in turn, as SQLite's malloc-failure tests do. Each
// write shape runs once to count its allocations K; then for each N in 1..K a copy of the
// starting file is opened, the N-th allocation made to fail, the shape run again, and what is
// left checked: the transaction takes only abort; after it the contents, validate() (no unit
// neither used nor free), the allocator's free counts and the used bytes are those of the last
// commit; a commit that failed after publishing refuses writes, and reopening finds the commit
// before; and the database takes a normal commit and reopens valid. The allocations: the tree
// nodes and a commit's free-space record (db_impl::fault_countdown), failing as a full disk does
// (io, ENOSPC) or with std::bad_alloc; and every operator new of the run (replaced below), once
// or for good until the failed transaction's abort has returned (memory that stays out: the
// abort, and the bookkeeping of the write that failed, must not need any). SIMDEX_KV_FAIL_ALL=1
// tries every N of every shape instead of a seeded sample.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <new>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kv/internal.h"
#include "kv/test_util.h"
#include "simdex/kv.h"

using namespace simdex;

namespace {
// While `countdown` is nonzero, every operator new of this thread counts it down, and the one
// that brings it to zero throws std::bad_alloc; with `lasting`, so does every one after it until
// memory_back().
struct new_fault {
  std::uint64_t countdown = 0;
  bool lasting = false;
  bool out = false;  // a lasting failure happened: every operator new fails
};
thread_local new_fault g_new;
// Ends a lasting failure: called once the failed transaction (or sub-transaction) is aborted.
void memory_back() { g_new.out = false; }
}  // namespace

// TSan's runtime defines operator new, so under it the last two modes below are skipped.
#if defined(__SANITIZE_THREAD__)
#define SIMDEX_KV_OWN_NEW 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SIMDEX_KV_OWN_NEW 0
#endif
#endif
#ifndef SIMDEX_KV_OWN_NEW
#define SIMDEX_KV_OWN_NEW 1
#endif

#if SIMDEX_KV_OWN_NEW
// This program's operator new (the array and nothrow forms call it), for the last mode below.
// Not inlined, nor the deletes: GCC would take a free() of what it saw malloc() return for a
// mismatch.
[[gnu::noinline]] void* operator new(std::size_t n) {
  if (g_new.out) [[unlikely]]
    throw std::bad_alloc();
  if (g_new.countdown && --g_new.countdown == 0) [[unlikely]] {
    g_new.out = g_new.lasting;
    throw std::bad_alloc();
  }
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

// What fails: the N-th node allocation of the database, as a full disk (io, ENOSPC) or with
// std::bad_alloc; or the N-th operator new anywhere in the shape's run (its own strings too),
// and (lasting) every one after it until the abort returned.
enum class mode { no_space, node_bad_alloc, any_bad_alloc, lasting_bad_alloc };
// In the last two modes a failure can come from the test's own code, so a transaction it left
// need not be broken.
bool g_library_only = true;

using tree_map = std::map<std::string, std::string>;
using db_map = std::map<std::string, tree_map>;

tree_map contents(const kv::view& v) {
  tree_map m;
  kv::cursor c = v.make_cursor();
  for (bool ok = c.first(); ok; ok = c.next()) m.emplace(c.key(), c.value());
  return m;
}

db_map contents(const kv::database& db) {
  db_map m;
  for (const std::string& t : db.trees()) m[t] = contents(db.read(t));
  return m;
}

// What a commit left: the trees, and the file's size and free bytes (validate() finds units
// neither used nor free; these find units that moved from free to used for nothing).
struct state {
  db_map trees;
  std::uint64_t file_bytes = 0, free_bytes = 0;
};
state state_of(const kv::database& db) {
  const kv::stats s = db.stat();
  return {contents(db), s.file_bytes, s.free_bytes};
}

// prefix + i in 5 digits, built by appends (GCC 12 misreads "literal" + string: PR 105651).
std::string key(int i, const char* prefix = "k") {
  const std::string digits = std::to_string(i);
  std::string s = prefix;
  s.append(digits.size() < 5 ? 5 - digits.size() : 0, '0');
  s += digits;
  return s;
}
std::string value(std::mt19937_64& r) {
  static const std::size_t sizes[] = {3, 20, 60, 100, 700};  // inline and value nodes
  return std::string(sizes[r() % 5], static_cast<char>('a' + r() % 26));
}

// A shape's run: its transactions, each committed through commit() so the harness knows which
// committed. skip_child: the sub-transaction shape leaves out its child (the state expected when
// the child's failure was absorbed).
struct run_ctx {
  int commits = 0;
  bool skip_child = false;
  bool absorbed = false;  // a sub-transaction failed and was aborted; the parent went on
  std::function<void()> after_commit = [] {};
};

// The error a failed allocation gives (or std::bad_alloc); anything else fails the test.
void expect_fault(std::exception_ptr p, bool bad_alloc) {
  try {
    std::rethrow_exception(p);
  } catch (const kv::error& e) {
    EXPECT_EQ(e.kind(), kv::error_kind::io) << e.what();
    EXPECT_EQ(std::string(e.what()).find("kv io: kv io"), std::string::npos) << e.what();
    // The failed allocation's own error is a full disk's; a later call's repeats its kind.
    if (e.detail().find("injected") != std::string::npos) {
      EXPECT_EQ(e.sys_errno(), ENOSPC);
    }
  } catch (const std::bad_alloc&) {
    EXPECT_TRUE(bad_alloc);
  }
}

// A transaction on `tree`: body, then commit; on a failure the transaction must refuse all but
// abort (when it is still open: the commit's own failure ends it), and is aborted.
template <class Body>
void in_tx(kv::database& db, std::string_view tree, run_ctx& ctx, Body body) {
  kv::write_tx w = db.write(tree);
  try {
    body(w);
    w.commit();
  } catch (...) {
    if (w.active()) {
      if (g_library_only) {
        EXPECT_THROW((void)w.get("k00001"), kv::error);
      }
      w.abort();
    }
    memory_back();
    throw;
  }
  ++ctx.commits;
  ctx.after_commit();
}

kv::detail::db_impl& impl(const std::string& path) {
  kv::detail::db_impl* p = kv::detail::database_at(path);
  if (!p) throw std::logic_error("no database open at " + path);
  return *p;
}

struct shape {
  const char* name;
  std::function<void(kv::database&, run_ctx&)> run;
  bool has_child = false;  // run_ctx::skip_child changes it
};

void upserts(kv::write_tx& w, int from, int n, int step, std::uint64_t seed) {
  std::mt19937_64 r(seed);
  for (int i = 0; i < n; ++i) w.upsert(key(from + i * step) + "u", value(r));
}

std::vector<shape> shapes() {
  std::vector<shape> s;
  s.push_back({"upsert splitting leaves", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [](kv::write_tx& w) { upserts(w, 0, 300, 7, 1); });
               }});
  s.push_back({"inner node growing", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [](kv::write_tx& w) {
                   for (int b = 1; b < 255; b += 2) w.upsert(std::string(1, char(b)) + "x", "v");
                 });
               }});
  s.push_back({"values in value nodes", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [](kv::write_tx& w) {
                   for (int i = 0; i < 80; ++i)
                     w.upsert(key(i * 31) + "b", std::string(65 + 37 * i, 'q'));
                 });
               }});
  s.push_back({"update replacing value nodes", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [](kv::write_tx& w) {
                   for (int i = 0; i < 400; i += 5)
                     w.update(key(i), i % 10 ? std::string(200, 'u') : std::string("small"));
                 });
               }});
  s.push_back({"removes merging and collapsing", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [](kv::write_tx& w) {
                   for (int i = 500; i < 1500; ++i)
                     if (i % 20) w.remove(key(i));
                 });
               }});
  s.push_back({"remove_range across leaves", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [](kv::write_tx& w) {
                   w.remove_range(key(100) + "5", key(1900) + "5");
                   w.remove_range(key(2003), key(2011));
                 });
               }});
  s.push_back({"bulk_load into an empty tree (its first commit)", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "fresh", c, [](kv::write_tx& w) {
                   std::mt19937_64 r(2);
                   std::vector<std::pair<std::string, std::string>> p;
                   for (int i = 0; i < 1500; ++i) p.emplace_back(key(i), value(r));
                   std::vector<std::pair<std::string_view, std::string_view>> v(p.begin(), p.end());
                   w.bulk_load(v);
                 });
               }});
  s.push_back({"bulk_load into a non-empty tree", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [](kv::write_tx& w) {
                   std::mt19937_64 r(3);
                   std::vector<std::pair<std::string, std::string>> p;
                   for (int i = 0; i < 300; ++i) p.emplace_back(key(i, "zk"), value(r));
                   std::vector<std::pair<std::string_view, std::string_view>> v(p.begin(), p.end());
                   w.bulk_load(v);
                 });
               }});
  s.push_back({"buffered puts applied by a read", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [](kv::write_tx& w) {
                   for (int i = 0; i < 150; ++i) w.put(key(i * 13) + "p", "small");
                   EXPECT_EQ(w.get(key(13) + "p"), "small");
                   for (int i = 0; i < 30; ++i) w.put(key(i * 11) + "q", "unapplied till commit");
                 });
               }});
  s.push_back({"a named tree's first commit", [](kv::database& db, run_ctx& c) {
                 in_tx(db, "newtree", c, [](kv::write_tx& w) { upserts(w, 0, 100, 1, 4); });
               }});
  s.push_back({"drop", [](kv::database& db, run_ctx& c) {
                 db.drop("t1");
                 ++c.commits;
                 c.after_commit();
               }});
  s.push_back({"a failing sub-transaction in a parent that commits",
               [](kv::database& db, run_ctx& c) {
                 in_tx(db, "", c, [&c](kv::write_tx& w) {
                   upserts(w, 3, 40, 50, 5);
                   const tree_map before = contents(w);
                   const kv::stats used_before = w.stat();
                   if (!c.skip_child) {
                     kv::write_tx sub = w.sub();
                     try {
                       upserts(sub, 1, 200, 9, 6);
                       for (int i = 600; i < 900; ++i) sub.remove(key(i));
                       sub.remove_range(key(1000), key(1400));
                       sub.upsert("big", std::string(5000, 'b'));
                       sub.commit();
                     } catch (...) {
                       const std::exception_ptr fault = std::current_exception();
                       if (g_library_only) {
                         EXPECT_THROW((void)sub.get("big"), kv::error);
                       }
                       sub.abort();
                       memory_back();
                       expect_fault(fault, true);
                       // The parent is as it was before the child, and goes on.
                       EXPECT_EQ(contents(w), before);
                       const kv::stats used_after = w.stat();
                       EXPECT_EQ(used_after.file_bytes - used_after.free_bytes,
                                 used_before.file_bytes - used_before.free_bytes);
                       EXPECT_NO_THROW(w.validate());
                       c.absorbed = true;
                     }
                   }
                   upserts(w, 5, 40, 50, 7);
                 });
               },
               true});
  s.push_back(
      {"two commits, the second writing a full free-space list", [](kv::database& db, run_ctx& c) {
         // The first's log of free-space changes outgrows the full list (plus its slack),
         // so the second writes a full list instead of a delta.
         in_tx(db, "", c, [](kv::write_tx& w) {
           for (int i = 0; i < 2400; i += 2) w.remove(key(i));
           upserts(w, 0, 1500, 1, 8);
         });
         in_tx(db, "", c, [](kv::write_tx& w) { w.upsert("last", "1"); });
         EXPECT_EQ(impl(db.path()).freelog.size(), 1u) << "no full list written";
       }});
  return s;
}

// The starting database: the default tree (short and long keys, inline values and value
// nodes) and a named one, over several commits.
void build_start(const std::string& path) {
  auto db = kv::database::open(path);
  std::mt19937_64 r(9);
  for (int part = 0; part < 3; ++part) {
    auto w = db.write();
    for (int i = part; i < 2400; i += 3)
      w.upsert(i % 7 ? key(i) : key(i) + std::string(150, 'L'), value(r));
    w.commit();
  }
  auto t = db.write("t1");
  for (int i = 0; i < 500; ++i) t.upsert(key(i), value(r));
  t.commit();
}

bool all_n() {
  const char* e = std::getenv("SIMDEX_KV_FAIL_ALL");
  return e && *e && std::string(e) != "0";
}

// N in 1..k to try: all, or (k over `most`) the first 12 (a transaction's first writes grow
// its vectors: failures there found most defects), the last 4 (the commit) and a seeded sample.
std::vector<std::uint64_t> picks(std::uint64_t k, std::size_t most, std::uint64_t seed) {
  std::set<std::uint64_t> s;
  if (all_n() || k <= most) {
    for (std::uint64_t n = 1; n <= k; ++n) s.insert(n);
  } else {
    for (std::uint64_t n = 1; n <= 12; ++n) s.insert(n);
    for (std::uint64_t n = 0; n < 4; ++n) s.insert(k - n);
    std::mt19937_64 r(seed);
    while (s.size() < most) s.insert(1 + r() % k);
  }
  return {s.begin(), s.end()};
}

// The allocator's counts of free units are those of its extents (stat() reports the counts;
// validate() checks the extents).
void expect_counts_exact(const kv::detail::db_impl& d, const std::string& where) {
  std::uint64_t free = 0, freed = 0;
  d.alloc.each([&](std::uint32_t, std::uint32_t units) { free += units; });
  for (const auto& f : d.freed) freed += f.units;
  EXPECT_EQ(d.alloc.free_units, free) << where;
  EXPECT_EQ(d.freed_units, freed) << where;
}

// `used`: compare the used bytes too (not after an absorbed sub-transaction failure, whose
// run differs from the one without it in ways that change sizes: the transaction's write count
// gives leaves slack, the free-space log is longer).
void expect_state(const kv::database& db, const state& want, const std::string& where, bool used) {
  ASSERT_NO_THROW(db.validate()) << where;
  expect_counts_exact(impl(db.path()), where);
  const state got = state_of(db);
  EXPECT_TRUE(got.trees == want.trees) << where << ": contents differ";
  if (!used) return;
  EXPECT_EQ(got.file_bytes - got.free_bytes, want.file_bytes - want.free_bytes)
      << where << ": used bytes differ (file " << got.file_bytes << " free " << got.free_bytes
      << ", wanted file " << want.file_bytes << " free " << want.free_bytes << ")";
}

// Arms the failure of the n-th allocation of the mode's kind (n = 0: none, counting them).
void arm(mode m, kv::detail::db_impl& d, std::uint64_t n) {
  if (m == mode::any_bad_alloc || m == mode::lasting_bad_alloc) {
    g_new.countdown = n ? n : UINT64_MAX;
    g_new.lasting = m == mode::lasting_bad_alloc;
  } else {
    d.fault_countdown = n ? n : UINT64_MAX;
    d.fault_bad_alloc = m == mode::node_bad_alloc;
  }
}
// Disarms it; returns how many allocations it counted (when armed with 0), or 0 when the armed
// failure happened.
std::uint64_t disarm(mode m, kv::detail::db_impl& d) {
  if (m == mode::any_bad_alloc || m == mode::lasting_bad_alloc) {
    const std::uint64_t left = g_new.countdown ? UINT64_MAX - g_new.countdown : 0;
    g_new = {};
    return left;
  }
  const std::uint64_t left = d.fault_countdown ? UINT64_MAX - d.fault_countdown : 0;
  d.fault_countdown = 0;
  d.fault_bad_alloc = false;
  return left;
}
struct paused {  // the test's own checks in the middle of a run are not counted
  new_fault saved = std::exchange(g_new, {});
  ~paused() { g_new = saved; }
};

// Every picked N of one shape.
void try_shape(const shape& sh, const std::string& start, const std::string& work, mode m,
               std::size_t most) {
  const bool bad_alloc = m != mode::no_space;
  static const char* const names[] = {"ENOSPC", "bad_alloc of a node", "bad_alloc anywhere",
                                      "bad_alloc anywhere, lasting through the abort"};
  namespace fs = std::filesystem;
  auto fresh = [&] {
    fs::copy_file(start, work, fs::copy_options::overwrite_existing);
    return kv::database::open(work);
  };
  // The counting runs: K, and the state after each commit (state 0: before any), as the run
  // goes on, and as it goes on when its sub-transaction's failure is absorbed.
  std::vector<state> states, absorbed_states;
  std::uint64_t k = 0;
  for (const bool skip : {false, true}) {
    if (skip && !sh.has_child) {
      absorbed_states = states;
      break;
    }
    auto db = fresh();
    std::vector<state>& into = skip ? absorbed_states : states;
    into.push_back(state_of(db));
    run_ctx c;
    c.skip_child = skip;
    c.after_commit = [&] {
      paused p;
      into.push_back(state_of(db));
    };
    auto& d = impl(work);
    arm(m, d, 0);
    sh.run(db, c);
    const std::uint64_t calls = disarm(m, d);
    if (!skip) k = calls;
  }
  ASSERT_GT(k, 0u) << sh.name;
  int failed_commits = 0, aborted = 0, absorbed = 0;
  for (const std::uint64_t n : picks(k, most, k * 31 + static_cast<int>(m))) {
    const std::string where = std::string(sh.name) + ", " + names[static_cast<int>(m)] +
                              ", allocation " + std::to_string(n) + " of " + std::to_string(k);
    SCOPED_TRACE(where);
    auto db = fresh();
    auto& d = impl(work);
    run_ctx c;
    c.after_commit = [] {};
    arm(m, d, n);
    bool threw = false;
    try {
      sh.run(db, c);
    } catch (...) {
      memory_back();  // a lasting failure outside in_tx (drop's own transaction) ends here
      threw = true;
      expect_fault(std::current_exception(), bad_alloc);
    }
    ASSERT_EQ(disarm(m, d), 0u) << where << ": the failure was not reached";
    // Not thrown: absorbed by the shape (its sub-transaction's abort), or by the library (a
    // give-back that ran out of memory in a sub-transaction's commit waits for the next end).
    ASSERT_FALSE(threw && c.absorbed) << where;
    const auto& expect = c.absorbed ? absorbed_states : states;
    ASSERT_LT(static_cast<std::size_t>(c.commits), expect.size()) << where;
    // A commit that failed after publishing: the database refuses writes until reopened.
    bool commit_failed = false;
    try {
      db.write().abort();
    } catch (const kv::error& e) {
      EXPECT_EQ(e.kind(), kv::error_kind::io) << where << ": " << e.what();
      commit_failed = true;
    }
    if (commit_failed) {
      ++failed_commits;
      ASSERT_LT(static_cast<std::size_t>(c.commits) + 1, expect.size()) << where;
      EXPECT_TRUE(contents(db) == expect[c.commits + 1].trees) << where << ": not published";
      db.close();
      db = kv::database::open(work);
    } else if (c.absorbed) {
      ++absorbed;
    } else {
      ++aborted;
    }
    expect_state(db, expect[c.commits], where, !c.absorbed);
    if (::testing::Test::HasFailure()) return;
    // The database goes on: a normal commit, and the file reopens valid with it.
    {
      auto w = db.write("after");
      w.upsert("after", std::string(100, 'a'));
      w.commit();
    }
    db.close();
    db = kv::database::open(work);
    ASSERT_NO_THROW(db.validate()) << where;
    EXPECT_EQ(db.read("after").get("after"), std::string(100, 'a')) << where;
  }
  // Each run took one of the paths it was meant to exercise.
  EXPECT_GT(aborted + failed_commits + absorbed, 0) << sh.name;
}

class KvAllocFail : public ::testing::TestWithParam<mode> {};

TEST_P(KvAllocFail, EveryAllocationOfEveryShape) {
  const mode m = GetParam();
  const bool any = m == mode::any_bad_alloc || m == mode::lasting_bad_alloc;
  if (any && !SIMDEX_KV_OWN_NEW) GTEST_SKIP() << "operator new is TSan's";
  const auto tag = static_cast<std::uint64_t>(m);
  const std::string start = kvt::tmp_path(kvt::numbered("allocfail_start", tag));
  const std::string work = kvt::tmp_path(kvt::numbered("allocfail_work", tag));
  build_start(start);
  g_library_only = !any;
  for (const shape& sh : shapes()) {
    SCOPED_TRACE(sh.name);
    try_shape(sh, start, work, m, any ? 32 : 16);
    if (HasFailure()) break;
  }
  g_library_only = true;
  std::remove(start.c_str());
  std::remove(work.c_str());
}

std::string mode_name(const ::testing::TestParamInfo<mode>& i) {
  static const char* const names[] = {"NoSpace", "NodeBadAlloc", "AnyBadAlloc",
                                      "AnyBadAllocLasting"};
  return names[static_cast<int>(i.param)];
}
INSTANTIATE_TEST_SUITE_P(Faults, KvAllocFail,
                         ::testing::Values(mode::no_space, mode::node_bad_alloc,
                                           mode::any_bad_alloc, mode::lasting_bad_alloc),
                         mode_name);

}  // namespace
