// kv: crash safety (a child killed with SIGKILL mid-transaction, many times), one writer with
// concurrent readers (bank-transfer invariant), and space reuse.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <thread>

#include "kv/test_util.h"
#include "simdex/kv.h"

using namespace simdex;
using kvt::tmp_path;

namespace {

std::string u64key(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i, v >>= 8) s[i] = static_cast<char>(v & 0xFF);
  return s;
}
std::uint64_t u64of(std::string_view s) {
  std::uint64_t v = 0;
  for (unsigned char c : s) v = v << 8 | c;
  return v;
}

// Transaction `no` of the crash workload: deterministic, so the parent can replay it.
template <class Put, class Del>
void crash_txn(std::uint64_t no, Put put, Del del) {
  std::mt19937_64 r(no * 0x9E3779B97F4A7C15ull + 1);
  const int ops = 1 + static_cast<int>(r() % 60);
  for (int i = 0; i < ops; ++i) {
    const std::string k = kvt::numbered("k", r() % 3000);
    if (r() % 4 == 0) {
      del(k);
    } else {
      const std::size_t len = r() % 10 == 0 ? 100 + r() % 5000 : r() % 40;
      put(k, std::string(len, static_cast<char>('a' + (no + i) % 26)));
    }
  }
  put("__seq", u64key(no));
}

[[noreturn]] void crash_child(const std::string& path, int fd) {
  try {
    kv::database db = kv::database::open(path, {kv::sync_mode::fsync, false, std::nullopt});
    std::uint64_t no = 0;
    {
      kv::snapshot s = db.read();
      if (auto v = s.get("__seq")) no = u64of(*v);
    }
    for (;;) {
      ++no;
      kv::write_tx tx = db.write();
      crash_txn(
          no, [&](const std::string& k, const std::string& v) { tx.put(k, v); },
          [&](const std::string& k) { tx.remove(k); });
      tx.commit();
      if (write(fd, &no, sizeof no) != sizeof no) _exit(3);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crash child: %s\n", e.what());
    _exit(2);
  }
}

}  // namespace

// Runs SIMDEX_KV_CRASH_ROUNDS kill/reopen rounds (default 8; scripts/test.sh runs 120 once).
TEST(KvCrash, KilledWriterLosesNothingCommitted) {
  const char* env = std::getenv("SIMDEX_KV_CRASH_ROUNDS");
  const int rounds = env ? std::atoi(env) : 8;
  const std::string path = tmp_path("crash");
  std::map<std::string, std::string> model;
  std::uint64_t applied = 0;  // model holds transactions 1..applied
  std::mt19937_64 r(42);
  auto apply_to = [&](std::uint64_t no) {
    while (applied < no) {
      ++applied;
      crash_txn(
          applied, [&](const std::string& k, const std::string& v) { model[k] = v; },
          [&](const std::string& k) { model.erase(k); });
    }
  };
  std::uint64_t reported = 0;
  for (int round = 0; round < rounds; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      crash_child(path, fds[1]);
    }
    close(fds[1]);
    // Let it commit a little (or nothing), then kill it at a random moment.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(r() % 40000);
    while (std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    kill(pid, SIGKILL);
    std::uint64_t no;
    while (read(fds[0], &no, sizeof no) == sizeof no) reported = no;
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "child exited by itself, status " << status;
    kv::database db = kv::database::open(path, {kv::sync_mode::fsync, false, std::nullopt});
    db.validate();
    kv::snapshot s = db.read();
    const std::uint64_t seq = s.get("__seq") ? u64of(*s.get("__seq")) : 0;
    // The last reported commit, or the one in flight when the kill came.
    ASSERT_TRUE(seq == reported || seq == reported + 1)
        << "round " << round << ": store at " << seq << ", child reported " << reported;
    reported = seq;
    apply_to(seq);
    ASSERT_NO_FATAL_FAILURE(kvt::expect_same(s, model)) << "round " << round;
  }
  std::printf("%d kills, %llu transactions committed\n", rounds,
              static_cast<unsigned long long>(reported));
  std::remove(path.c_str());
}

// A snapshot's stat() and validate() beside a committing writer: they read the file's space
// figures (the mark, the free extents, the waiting list) that the writer changes, and a stat()
// while a commit grew the waiting list read freed memory (a crash from Python, 2026-11-28).
TEST(KvConcurrency, StatAndValidateBesideCommits) {
  for (bool file : {false, true}) {
    const std::string path = tmp_path("stat_beside");
    std::remove(path.c_str());
    kv::database db = file ? kv::database::open(path) : kv::database::memory();
    std::atomic<bool> stop{false};
    std::atomic<int> checks{0};
    std::thread reader([&] {
      while (!stop.load()) {
        kv::snapshot s = db.read();
        const kv::stats st = s.stat();
        EXPECT_EQ(st.keys, s.size());
        EXPECT_GE(st.file_bytes, st.node_bytes + st.free_bytes);
        s.validate();
        checks.fetch_add(1);
      }
    });
    std::mt19937_64 r(3);
    for (int t = 0; t < 400 || checks.load() < 20; ++t) {
      kv::write_tx tx = db.write();
      for (int i = 0; i < 40; ++i) {
        const std::string k = std::to_string(r() % 5000);
        if (r() % 3)
          tx.put(k, std::string(r() % 200, 'v'));
        else
          tx.remove(k);
      }
      tx.commit();
    }
    stop = true;
    reader.join();
    db.validate();
    db.close();
    std::remove(path.c_str());
  }
}

// One writer moves money between accounts; readers check that every snapshot sums to the
// same total and holds every account.
TEST(KvConcurrency, BankTransfersKeepTheSum) {
  for (bool file : {false, true}) {
    const std::string path = tmp_path("bank");
    kv::database db = file ? kv::database::open(path) : kv::database::memory();
    constexpr int kAccounts = 200;
    constexpr std::uint64_t kStart = 1000;
    {
      kv::write_tx tx = db.write();
      for (int i = 0; i < kAccounts; ++i) tx.put(kvt::numbered("acct", i), u64key(kStart));
      tx.commit();
    }
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> reads{0};
    std::atomic<int> bad{0};
    std::vector<std::thread> readers;
    for (int t = 0; t < 3; ++t) {
      readers.emplace_back([&, t] {
        std::mt19937_64 r(t);
        while (!stop.load()) {
          kv::snapshot s = db.read();
          std::uint64_t sum = 0, n = 0;
          kv::cursor c = s.make_cursor();
          for (bool ok = c.first("acct"); ok && c.key().substr(0, 4) == "acct"; ok = c.next()) {
            sum += u64of(c.value());
            ++n;
          }
          if (sum != kStart * kAccounts || n != kAccounts || s.size() != kAccounts) ++bad;
          for (int i = 0; i < 50; ++i)
            if (!s.get(kvt::numbered("acct", r() % kAccounts))) ++bad;
          reads.fetch_add(1);
        }
      });
    }
    std::mt19937_64 r(99);
    for (int i = 0; i < 1500; ++i) {
      kv::write_tx tx = db.write();
      for (int j = 0; j < 5; ++j) {
        const std::string a = kvt::numbered("acct", r() % kAccounts);
        const std::string b = kvt::numbered("acct", r() % kAccounts);
        const std::uint64_t va = u64of(*tx.get(a));
        const std::uint64_t amt = va ? r() % (va + 1) : 0;
        tx.put(a, u64key(va - amt));
        tx.put(b, u64key(u64of(*tx.get(b)) + amt));
      }
      if (r() % 5 == 0) {
        kv::write_tx sub = tx.sub();
        sub.put("acct0", u64key(0));  // would break the invariant: aborted
        sub.abort();
      }
      if (r() % 10 == 0)
        tx.abort();
      else
        tx.commit();
    }
    // On a loaded machine the writer can finish before a reader is scheduled at all.
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
         reads.load() == 0 && std::chrono::steady_clock::now() < until;)
      std::this_thread::yield();
    stop = true;
    for (auto& t : readers) t.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(reads.load(), 0u);
    db.validate();
    if (file) std::remove(path.c_str());
  }
}

// Without readers, a long run of small commits reuses space; a held snapshot pins what it sees
// and nothing more once released.
TEST(KvSpace, FreedSpaceIsReused) {
  const std::string path = tmp_path("space");
  kv::database db = kv::database::open(path);
  {
    kv::write_tx tx = db.write();
    for (int i = 0; i < 20000; ++i) tx.put(u64key(i * 7919ull), "value-" + std::to_string(i));
    tx.commit();
  }
  auto bytes = [&] { return db.stat().file_bytes; };
  std::mt19937_64 r(1);
  auto churn = [&](int n) {
    for (int i = 0; i < n; ++i) {
      kv::write_tx tx = db.write();
      tx.put(u64key((r() % 20000) * 7919ull), std::to_string(r()));
      tx.commit();
    }
  };
  churn(200);
  const std::uint64_t settled = bytes();
  churn(2000);
  EXPECT_LE(bytes(), settled + settled / 10) << "file grew under churn without readers";
  {
    // A held snapshot pins the versions it can see (at most one tree's worth), not every
    // version written and replaced while it lives.
    kv::snapshot pin = db.read();
    const std::uint64_t at_pin = bytes();
    churn(2000);
    EXPECT_EQ(pin.size(), 20000u);
    EXPECT_LE(bytes(), 2 * at_pin + at_pin / 5) << "a snapshot pinned versions it cannot see";
    db.validate();
  }
  churn(2000);
  const std::uint64_t after = bytes();
  churn(2000);
  EXPECT_LE(bytes(), after + after / 10);
  db.validate();
  const std::uint64_t before_compact = bytes();
  db.compact();
  db.validate();
  EXPECT_LE(db.stat().file_bytes, before_compact);
  EXPECT_EQ(db.read().size(), 20000u);
  std::remove(path.c_str());
}

namespace {
std::string read_file(const std::string& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}
void write_file(const std::string& p, const std::string& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << bytes;
}
}  // namespace

// A damaged newest meta page (a torn or corrupted write of the last commit record) made the
// open fall back to the previous commit without a word: the last commit vanished silently. The
// fallback is still the recovery, and recovery() now says it happened and what was lost.
TEST(KvRecovery, DamagedNewestMetaIsReported) {
  const std::string path = tmp_path("recovery");
  {
    kv::database db = kv::database::open(path, {kv::sync_mode::fsync, false, std::nullopt});
    for (int i = 1; i <= 3; ++i) {
      kv::write_tx tx = db.write();
      for (int j = 0; j < 300; ++j) tx.put(kvt::numbered("c", i * 1000 + j), "v");
      tx.put("last", std::to_string(i));
      tx.commit();
    }
  }
  std::uint64_t seq = 0;
  {
    kv::database db = kv::database::open(path);
    const kv::recovery_info& r = db.recovery();
    EXPECT_FALSE(r.meta_fallback);
    EXPECT_EQ(r.damaged_page, -1);
    EXPECT_EQ(r.detail, "");
    seq = r.seq;
    EXPECT_EQ(seq, db.read().seq());
  }
  ASSERT_EQ(seq, 3u);
  const std::string good = read_file(path);
  const std::size_t newest = (seq % 2) * 4096, older = 4096 - newest;
  // Writes the good file with `damage` applied, opens it, and checks what recovery() says.
  auto open_damaged = [&](auto damage, bool read_only, bool fallback, int page,
                          std::uint64_t opened, std::uint64_t lost) {
    std::string b = good;
    damage(b);
    write_file(path, b);
    kv::database db = kv::database::open(path, {kv::sync_mode::none, read_only, std::nullopt});
    const kv::recovery_info& r = db.recovery();
    EXPECT_EQ(r.meta_fallback, fallback);
    EXPECT_EQ(r.damaged_page, page);
    EXPECT_EQ(r.seq, opened);
    EXPECT_EQ(r.lost_seq, lost);
    return db;
  };
  const int newest_page = static_cast<int>(seq % 2);
  for (bool read_only : {true, false}) {
    // A bit flipped in the tree table: the checksum no longer matches.
    kv::database db = open_damaged([&](std::string& b) { b[newest + 300] ^= 0x40; }, read_only,
                                   true, newest_page, seq - 1, seq);
    const kv::recovery_info& r = db.recovery();
    EXPECT_NE(r.detail.find("the newest commit record (meta page 1, commit 3) is damaged "
                            "(checksum mismatch); opened the previous commit 2: commit 3 is lost"),
              std::string::npos)
        << r.detail;
    // The previous commit, whole and valid.
    kv::snapshot s = db.read();
    EXPECT_EQ(s.seq(), seq - 1);
    EXPECT_EQ(s.get("last"), "2");
    EXPECT_EQ(s.size(), 601u);
    s.release();
    db.validate();
    if (!read_only) {
      // The next commit rewrites the damaged page; the file is sound again.
      kv::write_tx tx = db.write();
      tx.put("last", "again");
      tx.commit();
      db.close();
      kv::database again = kv::database::open(path);
      EXPECT_FALSE(again.recovery().meta_fallback);
      EXPECT_EQ(again.recovery().damaged_page, -1);
      EXPECT_EQ(again.read().get("last"), "again");
    }
  }
  {
    // The older page damaged: nothing is lost, but the damage is still named.
    kv::database db = open_damaged([&](std::string& b) { b[older + 300] ^= 0x40; }, false, false,
                                   1 - newest_page, seq, 0);
    const kv::recovery_info& r = db.recovery();
    EXPECT_NE(r.detail.find("older commit record"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("nothing is lost"), std::string::npos) << r.detail;
    EXPECT_EQ(db.read().get("last"), "3");
  }
  {
    // The newest page's header unreadable (no magic): it may have held the last commit.
    kv::database db = open_damaged([&](std::string& b) { std::memset(b.data() + newest, 0, 24); },
                                   true, true, newest_page, seq - 1, 0);
    const kv::recovery_info& r = db.recovery();
    EXPECT_NE(r.detail.find("no magic"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("unreadable"), std::string::npos) << r.detail;
    EXPECT_EQ(db.read().get("last"), "2");
  }
  kv::database mem = kv::database::memory();
  EXPECT_FALSE(mem.recovery().meta_fallback);
  EXPECT_EQ(mem.recovery().damaged_page, -1);
  std::remove(path.c_str());
}
