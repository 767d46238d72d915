// Threads and processes: a seeded stress test with a differential model of what every snapshot
// must see (reader threads beside a writer that commits, aborts, nests, drops and recreates
// trees, bulk-loads and removes ranges), compact/close beside readers, fork(), a second open of
// one file, and space reuse under long-lived snapshots. Short by default; longer with
// SIMDEX_KV_STRESS_ROUNDS=N (writer transactions; default 300) and SIMDEX_KV_STRESS_SEED=S.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kv/test_util.h"

namespace kv = simdex::kv;

namespace {

using tree_model = std::map<std::string, std::string>;
using tree_ptr = std::shared_ptr<const tree_model>;
// The committed state at one sequence number: every tree that exists, by name.
using db_model = std::map<std::string, tree_ptr>;

std::uint64_t env_u64(const char* name, std::uint64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : dflt;
}

// What each commit left, by sequence number: a reader finds what its snapshot must hold.
class history {
 public:
  void put(std::uint64_t seq, db_model m) {
    std::lock_guard<std::mutex> g(mu_);
    by_seq_[seq] = std::make_shared<const db_model>(std::move(m));
  }
  std::shared_ptr<const db_model> at(std::uint64_t seq) const {
    std::lock_guard<std::mutex> g(mu_);
    auto it = by_seq_.find(seq);
    return it == by_seq_.end() ? nullptr : it->second;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::uint64_t, std::shared_ptr<const db_model>> by_seq_;
};

std::string key_of(std::uint64_t n) {
  std::string k = kvt::numbered("k", n % 4000);
  if (n % 7 == 0) k += std::string(n % 40, 'x');  // some longer keys: deeper prefixes
  return k;
}
// Values name the commit that wrote them: a stale or torn read shows as a mismatch.
std::string value_of(std::uint64_t seq, std::uint64_t n) {
  std::string v = kvt::numbered("v", seq);
  v += ':';
  v += std::to_string(n);
  if (n % 5 == 0) v += std::string(70 + n % 90, static_cast<char>('a' + n % 26));  // out of line
  return v;
}

const char* const kTrees[] = {"", "t1", "t2"};

// Checks a snapshot against the model of its commit: point gets, get_many, a cursor walk over a
// random range both ways, count(), and now and then the whole tree.
void check_snapshot(const kv::snapshot& s, const tree_model& m, std::mt19937_64& r, bool whole) {
  ASSERT_EQ(s.size(), m.size());
  std::vector<std::string> keys;
  for (int i = 0; i < 16; ++i) keys.push_back(key_of(r()));
  for (const auto& k : keys) {
    auto it = m.find(k);
    auto got = s.get(k);
    ASSERT_EQ(got.has_value(), it != m.end()) << k;
    if (got) {
      ASSERT_EQ(*got, it->second) << k;
    }
  }
  std::vector<std::string_view> ks(keys.begin(), keys.end());
  std::vector<std::optional<std::string_view>> out(ks.size());
  s.get_many(ks, out);
  for (std::size_t i = 0; i < ks.size(); ++i) ASSERT_EQ(out[i], s.get(ks[i]));
  std::string lo = key_of(r()), hi = key_of(r());
  if (hi < lo) std::swap(lo, hi);
  auto a = m.lower_bound(lo), b = m.lower_bound(hi);
  ASSERT_EQ(s.count(lo, hi), static_cast<std::uint64_t>(std::distance(a, b)));
  kv::cursor c = s.make_cursor();
  auto it = a;
  for (bool ok = c.lower_bound(lo); ok && c.key() < hi; ok = c.next(), ++it) {
    ASSERT_NE(it, m.end());
    ASSERT_EQ(c.key(), it->first);
    ASSERT_EQ(c.value(), it->second);
  }
  ASSERT_EQ(it, b);
  if (whole) {
    ASSERT_NO_FATAL_FAILURE(kvt::expect_same(s, m));
  }
}

}  // namespace

// One writer, reader threads and a holder of old snapshots, checked against a model of every
// commit. The writer's transactions put, remove, nest sub-transactions it commits or aborts,
// remove ranges, bulk-load emptied trees, abort whole transactions, and drop and recreate the
// named trees; readers take snapshots of any tree and compare them with the model of the
// snapshot's commit, some held across many commits and checked again before release.
TEST(KvConcurrency, StressAgainstModel) {
  const std::uint64_t rounds = env_u64("SIMDEX_KV_STRESS_ROUNDS", 300);
  const std::uint64_t seed = env_u64("SIMDEX_KV_STRESS_SEED", 1);
  for (bool file : {true, false}) {
    SCOPED_TRACE(file ? "file" : "memory");
    const std::string path = kvt::tmp_path("stress");
    kv::database db = file ? kv::database::open(path) : kv::database::memory();
    history hist;
    db_model cur;  // the writer's: the last commit's
    std::uint64_t seq = db.read().seq();
    {
      kv::write_tx tx = db.write();
      tree_model m;
      for (std::uint64_t i = 0; i < 1500; ++i) {
        tx.put(key_of(i * 3), value_of(seq + 1, i * 3));
        m[key_of(i * 3)] = value_of(seq + 1, i * 3);
      }
      cur[""] = std::make_shared<const tree_model>(std::move(m));
      hist.put(++seq, cur);
      tx.commit();
    }
    kv::snapshot pinned = db.read();  // held through the whole run
    const db_model pinned_model = cur;

    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> checked{0}, refused{0};
    auto reader = [&](int id) {
      std::mt19937_64 r(seed * 1000 + id);
      std::vector<std::pair<kv::snapshot, tree_ptr>> held;
      while (!stop.load() || checked.load() < 8) {
        const char* name = kTrees[r() % 3];
        kv::snapshot s;
        try {
          s = db.read(name);
        } catch (const kv::error& e) {
          // A dropped named tree; the model cannot say at which commit the read happened.
          ASSERT_EQ(e.kind(), kv::error_kind::not_found);
          refused.fetch_add(1);
          continue;
        }
        auto m = hist.at(s.seq());
        ASSERT_TRUE(m) << "no model for commit " << s.seq();
        auto t = m->find(name);
        if (t == m->end()) {
          ASSERT_EQ(*name, '\0') << "read a tree that did not exist at its commit";
          ASSERT_EQ(s.size(), 0u);
        } else {
          ASSERT_NO_FATAL_FAILURE(check_snapshot(s, *t->second, r, r() % 16 == 0));
        }
        checked.fetch_add(1);
        if (r() % 8 == 0 && t != m->end()) held.emplace_back(std::move(s), t->second);
        // Held snapshots are checked again after commits happened, then some released.
        if (!held.empty() && r() % 4 == 0) {
          const std::size_t i = r() % held.size();
          ASSERT_NO_FATAL_FAILURE(check_snapshot(held[i].first, *held[i].second, r, r() % 4 == 0));
          if (r() % 2 == 0) held.erase(held.begin() + static_cast<std::ptrdiff_t>(i));
        }
        if (r() % 64 == 0) {
          const kv::stats st = db.stat();
          ASSERT_GE(st.file_bytes, st.node_bytes + st.free_bytes);
        }
      }
    };
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i) readers.emplace_back(reader, i);

    std::mt19937_64 r(seed);
    for (std::uint64_t round = 0; round < rounds; ++round) {
      const char* name = kTrees[r() % 3];
      const unsigned op = r() % 20;
      if (op == 0 && *name && cur.count(name)) {  // drop a named tree
        db_model next = cur;
        next.erase(name);
        hist.put(seq + 1, next);
        db.drop(name);
        ++seq;
        cur = std::move(next);
        continue;
      }
      kv::write_tx tx = db.write(name);
      tree_model m = cur.count(name) ? *cur.at(name) : tree_model{};
      const std::uint64_t v = seq + 1;
      if (op == 1 || m.empty()) {  // empty it, then bulk-load sorted pairs
        tx.remove_range({}, std::nullopt);
        m.clear();
        std::map<std::string, std::string> in;
        for (std::uint64_t i = 0, n = r() % 800; i < n; ++i) {
          const std::uint64_t x = r();
          in[key_of(x)] = value_of(v, x);
        }
        std::vector<std::pair<std::string_view, std::string_view>> pairs(in.begin(), in.end());
        tx.bulk_load(pairs);
        m = std::move(in);
      }
      for (std::uint64_t i = 0, n = 1 + r() % 40; i < n; ++i) {
        const std::uint64_t x = r();
        if (r() % 4) {
          tx.put(key_of(x), value_of(v, x));
          m[key_of(x)] = value_of(v, x);
        } else {
          ASSERT_EQ(tx.remove(key_of(x)), m.erase(key_of(x)) == 1);
        }
      }
      if (op == 2) {
        std::string lo = key_of(r()), hi = key_of(r());
        if (hi < lo) std::swap(lo, hi);
        const auto gone = std::distance(m.lower_bound(lo), m.lower_bound(hi));
        ASSERT_EQ(tx.remove_range(lo, hi), static_cast<std::uint64_t>(gone));
        m.erase(m.lower_bound(lo), m.lower_bound(hi));
      }
      if (op <= 8) {  // a sub-transaction, maybe nested again, committed or aborted
        kv::write_tx sub = tx.sub();
        tree_model sm = m;
        for (int i = 0; i < 10; ++i) {
          const std::uint64_t x = r();
          sub.put(key_of(x), value_of(v, x));
          sm[key_of(x)] = value_of(v, x);
        }
        if (r() % 2) {
          kv::write_tx sub2 = sub.sub();
          sub2.remove_range(key_of(r()), std::nullopt);
          sub2.abort();
        }
        if (r() % 2) {
          sub.commit();
          m = std::move(sm);
        } else {
          sub.abort();
        }
      }
      ASSERT_EQ(tx.size(), m.size());
      if (r() % 10 == 0) {
        tx.abort();
        continue;
      }
      db_model next = cur;
      next[name] = std::make_shared<const tree_model>(std::move(m));
      hist.put(seq + 1, next);
      tx.commit();
      ++seq;
      cur = std::move(next);
    }
    // On a loaded machine the writer can finish before the readers ran much.
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         checked.load() < 8 && std::chrono::steady_clock::now() < until;)
      std::this_thread::yield();
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_GE(checked.load(), 8u);
    // The snapshot held from the start reads as it was, every key.
    ASSERT_NO_FATAL_FAILURE(kvt::expect_same(pinned, *pinned_model.at("")));
    db.validate();
    pinned.release();
    for (const char* n : kTrees) {
      if (!cur.count(n)) continue;
      kv::snapshot s = db.read(n);
      ASSERT_NO_FATAL_FAILURE(kvt::expect_same(s, *cur.at(n)));
    }
    db.validate();
    db.close();
    if (file) std::remove(path.c_str());
  }
}

namespace {
// Runs `body` in a child made by fork(); the child's exit status: 0 when body returned true.
int in_child(const std::function<bool()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    bool ok = false;
    try {
      ok = body();
    } catch (...) {
    }
    _exit(ok ? 0 : 1);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
bool refused_busy(const std::function<void()>& call) {
  try {
    call();
  } catch (const kv::error& e) {
    return e.kind() == kv::error_kind::busy && e.detail().find("fork()") != std::string::npos;
  }
  return false;
}
}  // namespace

// A child made by fork() shared the parent's map and file but not its bookkeeping: its
// snapshots read nodes the parent went on reusing, and its commits wrote through a second
// allocator into the parent's file. Every call in the child is refused with busy now, and
// ending the objects there (release, abort, destructors, close) is harmless to the parent.
TEST(KvProcess, ForkedChildIsRefused) {
  for (bool file : {true, false}) {
    const std::string path = kvt::tmp_path("fork");
    kv::database db = file ? kv::database::open(path) : kv::database::memory();
    {
      kv::write_tx tx = db.write();
      for (int i = 0; i < 500; ++i) tx.put(kvt::numbered("k", i), "v");
      tx.commit();
    }
    kv::snapshot snap = db.read();
    kv::cursor cur = snap.make_cursor();
    ASSERT_TRUE(cur.first());
    std::optional<kv::write_tx> open_tx(db.write());
    open_tx->put("open", "1");
    const int status = in_child([&] {
      bool ok = refused_busy([&] { snap.get("k1"); }) && refused_busy([&] { cur.next(); }) &&
                refused_busy([&] { db.read(); }) && refused_busy([&] { db.stat(); }) &&
                refused_busy([&] { db.validate(); }) && refused_busy([&] { db.trees(); }) &&
                refused_busy([&] { open_tx->put("child", "1"); }) &&
                refused_busy([&] { open_tx->commit(); });
      // Ending them is allowed and touches nothing of the parent's.
      open_tx->abort();
      open_tx.reset();
      snap.release();
      db.close();
      return ok;
    });
    EXPECT_EQ(status, 0);
    // The parent goes on as if nothing happened.
    EXPECT_EQ(snap.get("k1"), "v");
    EXPECT_TRUE(cur.next());
    open_tx->commit();
    EXPECT_EQ(db.read().get("open"), "1");
    db.validate();
    db.close();
    if (file) std::remove(path.c_str());
  }
}

// A child made by fork() held the parent's exclusive file lock for as long as it lived (its
// copy of the descriptor and its copy of the map each kept the lock's open file alive): the
// parent could not close and reopen its own file while a forked worker ran.
TEST(KvProcess, ForkedChildDoesNotHoldTheFile) {
  const std::string path = kvt::tmp_path("fork_lock");
  kv::database db = kv::database::open(path);
  {
    kv::write_tx tx = db.write();
    tx.put("a", "1");
    tx.commit();
  }
  int go[2], ready[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    char c = 'r';
    // The child can neither use the parent's database nor open the file beside it.
    bool ok = refused_busy([&] { db.read(); });
    try {
      kv::database::open(path);
      ok = false;
    } catch (const kv::error& e) {
      ok = ok && e.kind() == kv::error_kind::busy;
    }
    if (write(ready[1], &c, 1) != 1) ok = false;
    if (read(go[0], &c, 1) != 1) ok = false;  // lives on while the parent reopens
    _exit(ok ? 0 : 1);
  }
  char c;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  db.close();
  std::optional<kv::database> again;
  std::optional<kv::error_kind> err;
  try {
    again = kv::database::open(path);
  } catch (const kv::error& e) {
    err = e.kind();
  }
  ASSERT_EQ(write(go[1], &c, 1), 1);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(err, std::nullopt) << "the forked child kept the file locked";
  EXPECT_EQ(again->read().get("a"), "1");
  // One process per file: a second open in the same process, or a read-only one, is busy.
  for (bool ro : {false, true}) {
    try {
      kv::database::open(path, {kv::sync_mode::none, ro, std::nullopt});
      ADD_FAILURE() << "second open succeeded";
    } catch (const kv::error& e) {
      EXPECT_EQ(e.kind(), kv::error_kind::busy);
    }
  }
  for (int fd : {go[0], go[1], ready[0], ready[1]}) close(fd);
  again->close();
  std::remove(path.c_str());
}

// Space over many single-key commits: without readers the file stops growing once freed space
// is reused; a snapshot pinned meanwhile keeps what it sees readable and unchanged and pins at
// most one tree's worth; once it is released the file stops growing again. stat()'s figures
// add up with validate()'s accounting at every step. SIMDEX_KV_SPACE_COMMITS=100000 for the
// long run (default 6000), which prints the sizes.
// A snapshot's stat() reads the space figures of its own commit: read after a commit that
// shrank the tree, the freed nodes (still this snapshot's) counted as nodes and as free space,
// and the two outgrew the file (a reader thread of the stress test saw 722,560 > 665,920).
TEST(KvSpace, OldSnapshotStatAddsUp) {
  kv::database db = kv::database::memory();
  {
    kv::write_tx w = db.write();
    for (int i = 0; i < 20000; ++i) w.put("key" + std::to_string(i), std::string(24, 'v'));
    w.commit();
  }
  kv::snapshot old = db.read();
  {
    kv::write_tx w = db.write();
    w.remove_range({}, std::nullopt);
    w.commit();
  }
  const kv::stats st = old.stat();
  EXPECT_EQ(st.keys, 20000u);
  EXPECT_GE(st.file_bytes, st.node_bytes + st.free_bytes)
      << "nodes " << st.node_bytes << ", free " << st.free_bytes;
  old.validate();
  const kv::stats now = db.stat();
  EXPECT_GE(now.file_bytes, now.node_bytes + now.free_bytes);
}

TEST(KvSpace, GrowthBoundedOverManyCommits) {
  const std::uint64_t commits = env_u64("SIMDEX_KV_SPACE_COMMITS", 6000);
  const std::string path = kvt::tmp_path("growth");
  kv::database db = kv::database::open(path);
  constexpr std::uint64_t kKeys = 20000;
  {
    kv::write_tx tx = db.write();
    for (std::uint64_t i = 0; i < kKeys; ++i) tx.put(kvt::numbered("key", i * 7919), "value-00000");
    tx.commit();
  }
  std::mt19937_64 r(5);
  std::uint64_t n = 0;
  auto churn = [&](std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i, ++n) {
      kv::write_tx tx = db.write();
      // Values of one size: the live tree keeps its size, so growth is space not reused.
      tx.put(kvt::numbered("key", (r() % kKeys) * 7919),
             kvt::numbered("value-", 10000 + n % 90000));
      tx.commit();
    }
  };
  // stat(): node bytes and free bytes fit in the file; what is neither is the free-space record
  // itself, which validate() accounts for (it fails on any unit neither used nor free).
  auto check_figures = [&] {
    const kv::stats st = db.stat();
    EXPECT_GE(st.file_bytes, st.node_bytes + st.free_bytes);
    db.validate();
    return st;
  };
  auto file_size = [&] { return check_figures().file_bytes; };
  churn(commits / 10);
  const std::uint64_t settled = file_size();
  churn(commits / 2);
  const std::uint64_t unpinned = file_size();
  EXPECT_LE(unpinned, settled + settled / 10) << "grew without readers";
  std::uint64_t pinned_peak = 0;
  {
    kv::snapshot pin = db.read();
    const std::uint64_t at_pin = file_size();
    std::map<std::string, std::string> seen;
    {
      kv::cursor c = pin.make_cursor();
      for (bool ok = c.first(); ok; ok = c.next()) seen.emplace(c.key(), c.value());
    }
    churn(commits / 2);
    pinned_peak = file_size();
    // One tree's worth at most (the versions it sees), plus the live tree's.
    EXPECT_LE(pinned_peak, 2 * at_pin + at_pin / 5) << "a snapshot pinned more than it sees";
    ASSERT_NO_FATAL_FAILURE(kvt::expect_same(pin, seen));
  }
  churn(commits / 10);  // the pinned versions are reused first
  const std::uint64_t released = file_size();
  churn(commits / 2);
  const std::uint64_t later = file_size();
  EXPECT_LE(later, std::max(released, pinned_peak) + released / 10) << "grew after release";
  struct stat fst;
  ASSERT_EQ(::stat(path.c_str(), &fst), 0);
  const auto on_disk = static_cast<std::uint64_t>(fst.st_size);
  // The file itself: the used part plus at most one growth step (an eighth, at least 1 MiB,
  // rounded up to 2 MiB).
  EXPECT_LE(on_disk, later + later / 8 + (std::uint64_t{5} << 20));
  if (std::getenv("SIMDEX_KV_SPACE_COMMITS")) {
    auto u = [](std::uint64_t x) { return static_cast<unsigned long long>(x); };
    std::printf(
        "%llu commits; used bytes: settled %llu, unpinned %llu, pinned peak %llu, "
        "released %llu, end %llu; file %llu bytes\n",
        u(n), u(settled), u(unpinned), u(pinned_peak), u(released), u(later), u(on_disk));
  }
  db.close();
  std::remove(path.c_str());
}

// The reader table counts snapshots per commit: several snapshots of one commit, and of
// commits around it, ended in shuffled order (release(), destruction, a move-assignment over
// one), leave the space of what any of them sees unused until the last of them ends, however
// many commits that rewrite every key run in between; a cursor outliving its snapshot and its
// database frees nothing twice (ASan); compact() sees every snapshot end.
TEST(KvSpace, SnapshotsOfOneCommitEndInAnyOrder) {
  kv::database db = kv::database::memory();
  std::uint64_t round = 0;
  tree_model model;
  auto rewrite = [&] {  // every key gets a new value: every node of the last commit is freed
    ++round;
    kv::write_tx w = db.write();
    for (std::uint64_t i = 0; i < 600; ++i) {
      const std::string k = kvt::numbered("key", i * 7919);
      const std::string v = value_of(round, i);
      w.put(k, v);
      model[k] = v;
    }
    w.commit();
  };
  std::mt19937_64 r(11);
  for (int trial = 0; trial < 6; ++trial) {
    SCOPED_TRACE(trial);
    struct held {
      kv::snapshot s;
      tree_ptr m;
    };
    std::vector<held> snaps;
    for (int commit = 0; commit < 3; ++commit) {
      rewrite();
      auto m = std::make_shared<const tree_model>(model);
      // Most of them of the middle commit: its entry's count goes up and down the most.
      for (int i = 0; i < (commit == 1 ? 8 : 2); ++i) snaps.push_back({db.read(), m});
    }
    std::shuffle(snaps.begin(), snaps.end(), r);
    std::optional<kv::cursor> orphan;  // outlives its snapshot (refuses) and the database
    while (!snaps.empty()) {
      for (const held& h : snaps) ASSERT_NO_FATAL_FAILURE(kvt::expect_same(h.s, *h.m));
      EXPECT_THROW(db.compact(), kv::error);  // busy: snapshots are open
      if (!orphan && r() % 3 == 0) orphan = snaps.back().s.make_cursor();
      switch (r() % 3) {
        case 0:
          snaps.back().s.release();
          break;
        case 1:
          if (snaps.size() > 1) {  // the one assigned over ends, the moved one lives on
            snaps.front().s = std::move(snaps.back().s);
            snaps.front().m = snaps.back().m;
          }
          break;
        default:
          break;  // destroyed by pop_back
      }
      snaps.pop_back();
      rewrite();
      rewrite();
    }
    if (orphan) {
      EXPECT_THROW(orphan->first(), kv::error);
    }
    db.compact();  // no snapshot is left open
    db.validate();
  }
  kv::snapshot last = db.read();
  kv::cursor orphan = last.make_cursor();
  last = kv::snapshot();  // released by the assignment
  db.close();             // the last handle: the database is gone, the cursor holds its clock
  EXPECT_THROW(orphan.next(), kv::error);
}

// compact() beside threads that take snapshots of the same database object: it is refused with
// busy while one is open, and while it runs their read() waits for it. It replaced the handle
// they read through (a data race on it), and a snapshot taken between its check and the swap
// read the closed file's map.
TEST(KvConcurrency, CompactBesideReaderThreads) {
  for (bool file : {true, false}) {
    SCOPED_TRACE(file ? "file" : "memory");
    const std::string path = kvt::tmp_path("compact_race");
    kv::database db = file ? kv::database::open(path) : kv::database::memory();
    std::map<std::string, std::string> model;
    {
      kv::write_tx tx = db.write();
      for (int i = 0; i < 3000; ++i) {
        tx.put(kvt::numbered("k", i), kvt::numbered("value", i));
        model[kvt::numbered("k", i)] = kvt::numbered("value", i);
      }
      tx.commit();
      kv::write_tx t1 = db.write("t1");
      t1.put("a", "b");
      t1.commit();
    }
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> reads{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; ++t) {
      readers.emplace_back([&, t] {
        std::mt19937_64 r(t);
        while (!stop.load()) {
          kv::snapshot s = db.read(t ? "t1" : "");
          if (t) {
            ASSERT_EQ(s.get("a"), "b");
          } else {
            ASSERT_EQ(s.size(), model.size());
            for (int i = 0; i < 20; ++i) {
              const std::string k = kvt::numbered("k", r() % 3000);
              ASSERT_EQ(s.get(k), model[k]);
            }
          }
          reads.fetch_add(1);
        }
      });
    }
    int compacted = 0, busy = 0;
    for (int i = 0; i < 4000 && compacted < 6; ++i) {
      try {
        db.compact();
        ++compacted;
      } catch (const kv::error& e) {
        ASSERT_EQ(e.kind(), kv::error_kind::busy);
        ++busy;
      }
      std::this_thread::yield();
    }
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_GT(compacted, 0);
    db.validate();
    ASSERT_NO_FATAL_FAILURE(kvt::expect_same(db.read(), model));
    {
      kv::write_tx tx = db.write();  // the compacted file takes commits
      tx.put("after", "1");
      tx.commit();
    }
    db.close();
    if (file) {
      kv::database again = kv::database::open(path);
      EXPECT_EQ(again.read().get("after"), "1");
      EXPECT_EQ(again.read("t1").get("a"), "b");
      again.close();
      std::remove(path.c_str());
    }
  }
}
