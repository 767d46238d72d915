// kv: differential tests against std::map (every op, cursors, counts, transactions, snapshots),
// limits and errors, persistence and reopen, corrupt files.
#include "simdex/kv.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include "kv/test_util.h"
#include "simdex/cpu.h"

using namespace simdex;
using model = std::map<std::string, std::string>;

namespace kvt {

// Sanitizer builds run each op several times slower: a quarter of the operations there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr int kOpsScale = 4;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr int kOpsScale = 4;
#else
constexpr int kOpsScale = 1;
#endif
#else
constexpr int kOpsScale = 1;
#endif

// Keys that stress the radix paths: shared prefixes, keys that are prefixes of others, empty,
// binary bytes (0x00, 0xFF), long keys.
struct keygen {
  std::mt19937_64 rng;
  std::vector<std::string> pool;
  explicit keygen(std::uint64_t seed) : rng(seed) {}
  std::string fresh() {
    switch (rng() % 8) {
      case 0:
        return "";
      case 1: {  // short over a tiny alphabet: many prefixes of one another
        std::string s(rng() % 6, 'a');
        for (auto& c : s) c = static_cast<char>("ab\0\xff"[rng() % 4]);
        return s;
      }
      case 2: {  // big-endian counters
        std::uint64_t v = rng() % 5000;
        std::string s(8, '\0');
        for (int i = 7; i >= 0; --i, v >>= 8) s[i] = static_cast<char>(v & 0xFF);
        return s;
      }
      case 3: {  // long, shared head
        std::string s(100 + rng() % 900, 'x');
        s[s.size() - 1 - rng() % 3] = static_cast<char>('a' + rng() % 26);
        return s;
      }
      default: {  // random binary 1..12
        std::string s(1 + rng() % 12, '\0');
        for (auto& c : s) c = static_cast<char>(rng() % 7 == 0 ? 0xFF : rng());
        return s;
      }
    }
  }
  std::string key() {
    if (!pool.empty() && rng() % 3 == 0) return pool[rng() % pool.size()];
    std::string k = fresh();
    if (k.size() > kv::kMaxKey) k.resize(kv::kMaxKey);
    pool.push_back(k);
    return k;
  }
  std::string value() {
    switch (rng() % 6) {
      case 0:
        return "";
      case 1:
        return std::string(64, static_cast<char>('a' + rng() % 26));
      case 2:
        return std::string(65 + rng() % 3000, static_cast<char>('A' + rng() % 26));
      default:
        return std::to_string(rng());
    }
  }
};

// The first key after every key that starts with pre (end() when none): pre with its last byte
// below 0xFF raised by one and the rest cut, found in O(log n) where a walk would be O(n).
model::const_iterator past_prefix(const model& m, std::string pre) {
  while (!pre.empty() && static_cast<unsigned char>(pre.back()) == 0xFF) pre.pop_back();
  if (pre.empty()) return m.end();
  pre.back() = static_cast<char>(static_cast<unsigned char>(pre.back()) + 1);
  return m.lower_bound(pre);
}

// One key's reads against the model: get, cursor seeks both ways, prefix bounds; with counts
// (O(n) on std::map, so only when asked).
void check_probe(const kv::view& v, const model& m, const std::string& k, bool counts = true) {
  auto got = v.get(k);
  auto it = m.find(k);
  ASSERT_EQ(got.has_value(), it != m.end()) << "key size " << k.size();
  if (got) {
    ASSERT_EQ(*got, it->second);
  }
  kv::cursor c = v.make_cursor();
  auto lb = m.lower_bound(k);
  ASSERT_EQ(c.lower_bound(k), lb != m.end());
  if (lb != m.end()) {
    ASSERT_EQ(c.key(), lb->first);
  }
  auto ub = m.upper_bound(k);
  ASSERT_EQ(c.upper_bound(k), ub != m.end());
  if (ub != m.end()) {
    ASSERT_EQ(c.key(), ub->first);
  }
  if (lb != m.begin()) {  // prev from lower_bound
    ASSERT_TRUE(c.lower_bound(k) || c.last());
    if (lb != m.end()) {
      ASSERT_TRUE(c.prev());
    }
    ASSERT_EQ(c.key(), std::prev(lb)->first);
  }
  if (counts) {
    ASSERT_EQ(v.count(k), static_cast<std::uint64_t>(std::distance(lb, m.end())));
    ASSERT_EQ(v.count({}, k), static_cast<std::uint64_t>(std::distance(m.begin(), lb)));
  }
  // Prefix iteration.
  const std::string pre = k.substr(0, k.size() / 2);
  auto pit = m.lower_bound(pre);
  const bool any = pit != m.end() && pit->first.compare(0, pre.size(), pre) == 0;
  ASSERT_EQ(c.first(pre), any);
  if (any) {
    ASSERT_EQ(c.key(), pit->first);
  }
  if (any) {
    auto last = std::prev(past_prefix(m, pre));
    ASSERT_TRUE(c.last(pre));
    ASSERT_EQ(c.key(), last->first);
  }
}

// The model of the live transaction with an undo journal: aborting a transaction or a
// sub-transaction rolls the map back to a mark instead of restoring a copy, so a long run costs
// O(log n) per operation, not a copy of the whole model per transaction.
struct journaled {
  model m;
  std::vector<std::pair<std::string, std::optional<std::string>>> undo;  // a key's prior state

  void note(const std::string& k) {
    auto it = m.find(k);
    undo.emplace_back(k, it == m.end() ? std::nullopt : std::optional<std::string>(it->second));
  }
  void set(const std::string& k, const std::string& v) {
    note(k);
    m[k] = v;
  }
  bool erase(const std::string& k) {
    auto it = m.find(k);
    if (it == m.end()) return false;
    undo.emplace_back(k, std::move(it->second));
    m.erase(it);
    return true;
  }
  void erase(model::iterator a, model::iterator b) {
    for (auto it = a; it != b; ++it) undo.emplace_back(it->first, it->second);
    m.erase(a, b);
  }
  std::size_t mark() const { return undo.size(); }
  void rollback(std::size_t to) {
    for (; undo.size() > to; undo.pop_back()) {
      auto& [k, v] = undo.back();
      if (v)
        m[k] = std::move(*v);
      else
        m.erase(k);
    }
  }
  void settle() { undo.clear(); }  // the transaction committed: nothing left to undo
};

void run_ops(kv::database& db, std::uint64_t seed, int ops, int validate_every) {
  keygen g(seed);
  journaled j;  // after each commit or abort: the committed state
  model& m = j.m;
  std::mt19937_64& r = g.rng;
  kv::snapshot old_snap = db.read();
  model old_model;
  std::size_t max_keys = 0;
  for (int done = 0; done < ops;) {
    kv::write_tx tx = db.write();
    const int n = 1 + static_cast<int>(r() % 400);
    std::optional<kv::write_tx> sub;
    std::size_t sub_mark = 0;
    for (int i = 0; i < n; ++i, ++done) {
      kv::write_tx& w = sub ? *sub : tx;
      const std::string k = g.key();
      // Phases: growing (few removes) then shrinking, so trees get deep and then empty again.
      const bool growing = (done / 8000) % 2 == 0;
      unsigned op = r() % 100;
      if (growing && op >= 55 && op < 75) op = r() % 35;
      if (!growing && op < 55 && r() % 2) op = 55 + r() % 20;
      if (op >= 75 && op < 77 && r() % 10) op = 90;  // range removes: rare
      if (op < 35) {
        const std::string v = g.value();
        const bool fresh = !m.count(k);
        ASSERT_EQ(w.upsert(k, v), fresh);
        j.set(k, v);
      } else if (op < 45) {
        const std::string v = g.value();
        const bool fresh = !m.count(k);
        ASSERT_EQ(w.insert(k, v), fresh);
        if (fresh) j.set(k, v);
      } else if (op < 55) {
        const std::string v = g.value();
        const bool had = m.count(k);
        ASSERT_EQ(w.update(k, v), had);
        if (had) j.set(k, v);
      } else if (op < 75) {
        std::string rk = k;
        if (!growing && r() % 2) {  // shrinking: mostly keys that are present
          auto at = m.lower_bound(k);
          if (at != m.end()) rk = at->first;
        }
        ASSERT_EQ(w.remove(rk), j.erase(rk));
      } else if (op < 77) {
        // Narrow ranges mostly (a wide one now and then), so trees still grow.
        std::string lo = k, hi;
        auto at = m.lower_bound(lo);
        const std::size_t span = r() % 200 == 0 ? 1000 : r() % 40;
        for (std::size_t s = 0; s < span && at != m.end(); ++s) ++at;
        hi = at == m.end() ? std::string(kv::kMaxKey, '\xff') : at->first;
        auto a = m.lower_bound(lo), b = m.lower_bound(hi);
        const auto expect = static_cast<std::uint64_t>(std::distance(a, b));
        ASSERT_EQ(w.remove_range(lo, hi), expect);
        j.erase(a, b);
      } else if (op < 79 && !sub) {
        sub.emplace(tx.sub());
        sub_mark = j.mark();
      } else if (op < 81 && sub) {
        if (r() % 2) {
          sub->commit();
        } else {
          sub->abort();
          j.rollback(sub_mark);
        }
        sub.reset();
      } else {
        // Counts are O(n) on the model: every probe while it is small, then one in n/128.
        const bool counts = m.size() < 2048 || r() % (m.size() / 128) == 0;
        ASSERT_NO_FATAL_FAILURE(check_probe(w, m, k, counts));
      }
    }
    if (sub) {
      sub->commit();
      sub.reset();
    }
    // A whole-store comparison costs O(n): one transaction in four while the store is small,
    // rarer as it grows (a difference persists until the next one, and the last is certain).
    const std::size_t every = std::max<std::size_t>(4, m.size() / 1024);
    if (r() % every == 0) {
      ASSERT_NO_FATAL_FAILURE(expect_same(tx, m));
    }
    max_keys = std::max(max_keys, m.size());
    if (r() % 4 == 0) {
      tx.abort();
      j.rollback(0);
    } else {
      tx.commit();
      j.settle();
    }
    if (r() % (2 * every) == 0) {
      ASSERT_NO_FATAL_FAILURE(expect_same(old_snap, old_model));
      old_snap = db.read();
      old_model = m;
    }
    if (validate_every && (done / validate_every) != ((done - n) / validate_every)) db.validate();
  }
  db.validate();
  std::printf("seed %llu: %d ops, at most %zu keys, %zu at the end\n",
              static_cast<unsigned long long>(seed), ops, max_keys, m.size());
  kv::snapshot s = db.read();
  ASSERT_NO_FATAL_FAILURE(expect_same(s, m));
  ASSERT_NO_FATAL_FAILURE(expect_same(old_snap, old_model));
}

}  // namespace kvt

// SIMDEX_KV_OPS sets the operations per seed (default 400,000: 1.2 million per level, a quarter
// of that under sanitizers). scripts/test.sh runs it at every ISA level, about 15 s each.
TEST(KvDifferential, MixedOpsMemory) {
  const char* env = std::getenv("SIMDEX_KV_OPS");
  const int ops = (env ? std::atoi(env) : 400000) / kvt::kOpsScale;
  std::printf("isa %s\n", isa_name(active_isa()));
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    kv::database db = kv::database::memory();
    ASSERT_NO_FATAL_FAILURE(kvt::run_ops(db, seed, ops, std::clamp(ops / 4, 1, 20000)));
  }
}

TEST(KvDifferential, MixedOpsFileAndReopen) {
  const std::string p = kvt::tmp_path("mixed");
  {
    kv::database db = kv::database::open(p);
    ASSERT_NO_FATAL_FAILURE(kvt::run_ops(db, 7, 15000 / kvt::kOpsScale, 3000 / kvt::kOpsScale));
  }
  model m;
  {
    kv::database db = kv::database::open(p);
    db.validate();
    kv::snapshot s = db.read();
    kv::cursor c = s.make_cursor();
    for (bool ok = c.first(); ok; ok = c.next()) m.emplace(c.key(), c.value());
  }
  {
    kv::database db = kv::database::open(p);
    ASSERT_NO_FATAL_FAILURE(kvt::expect_same(db.read(), m));
    {
      kv::write_tx tx = db.write();
      for (int i = 0; i < 3000; ++i) tx.put(kvt::numbered("k", i), std::string(i % 100, 'v'));
      tx.commit();
    }
    db.validate();
    db.compact();
    db.validate();
  }
  std::remove(p.c_str());
}

TEST(KvDifferential, LargeSequentialAndRandom) {
  kv::database db = kv::database::memory();
  model m;
  std::mt19937_64 r(5);
  {
    kv::write_tx tx = db.write();
    for (std::uint64_t i = 0; i < 60000; ++i) {
      std::string k(8, '\0');
      std::uint64_t v = i;
      for (int b = 7; b >= 0; --b, v >>= 8) k[b] = static_cast<char>(v & 0xFF);
      tx.put(k, "v");
      m[k] = std::string(1, 'v');  // not = "v": GCC 12 misreads that assignment (-Wrestrict)
    }
    for (int i = 0; i < 60000; ++i) {
      std::string k(8, '\0');
      std::uint64_t v = r();
      std::memcpy(k.data(), &v, 8);
      tx.put(k, k);
      m[k] = k;
    }
    tx.commit();
  }
  db.validate();
  kv::snapshot s = db.read();
  ASSERT_NO_FATAL_FAILURE(kvt::expect_same(s, m));
  const auto st = s.stat();
  EXPECT_EQ(st.keys, m.size());
  EXPECT_GE(st.depth, 2u);
  // get_many agrees with get.
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) {
    std::string k(8, '\0');
    std::uint64_t v = i % 2 ? r() : static_cast<std::uint64_t>(i);
    std::memcpy(k.data(), &v, 8);
    keys.push_back(k);
  }
  for (auto it = m.begin(); keys.size() < 6000; std::advance(it, 17)) keys.push_back(it->first);
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::optional<std::string_view>> out(views.size());
  s.get_many(views, out);
  for (std::size_t i = 0; i < views.size(); ++i) ASSERT_EQ(out[i], s.get(views[i])) << i;
  // Remove everything in random order; the tree ends empty.
  {
    kv::write_tx tx = db.write();
    std::vector<std::string> all;
    for (auto& [k, v] : m) all.push_back(k);
    std::shuffle(all.begin(), all.end(), r);
    for (std::size_t i = 0; i < all.size(); ++i) {
      ASSERT_TRUE(tx.remove(all[i]));
      if (i % 20000 == 0) tx.validate();
    }
    EXPECT_EQ(tx.size(), 0u);
    tx.commit();
  }
  db.validate();
  EXPECT_EQ(db.read().size(), 0u);
  EXPECT_EQ(s.size(), m.size());  // the old snapshot is untouched
  ASSERT_NO_FATAL_FAILURE(kvt::expect_same(s, m));
}

TEST(KvErrors, LimitsAndMisuse) {
  kv::database db = kv::database::memory();
  kv::write_tx tx = db.write();
  try {
    tx.put(std::string(kv::kMaxKey + 1, 'k'), "v");
    FAIL();
  } catch (const kv::error& e) {
    EXPECT_EQ(e.kind(), kv::error_kind::key_too_long);
  }
  tx.put(std::string(kv::kMaxKey, 'k'), std::string(100000, 'v'));
  tx.put("", "");
  EXPECT_EQ(tx.get("")->size(), 0u);
  {
    kv::write_tx sub = tx.sub();
    EXPECT_THROW(tx.put("a", "b"), kv::error);  // parent used while the sub is open
    sub.put("a", "b");
    sub.abort();
  }
  EXPECT_FALSE(tx.get("a"));
  tx.commit();
  EXPECT_THROW(tx.put("a", "b"), kv::error);
  EXPECT_THROW(db.write("").put(std::string(kv::kMaxKey + 5, 'z'), ""), kv::error);
  kv::snapshot s = db.read();
  EXPECT_THROW(db.compact(), kv::error);  // a snapshot is open
  EXPECT_EQ(s.get(std::string(kv::kMaxKey, 'k'))->size(), 100000u);
  try {  // a read-only memory database would be empty for good: refused, not made writable
    kv::database::memory({kv::sync_mode::none, true, std::nullopt});
    FAIL();
  } catch (const kv::error& e) {
    EXPECT_EQ(e.kind(), kv::error_kind::invalid_argument);
  }
  const std::string missing = kvt::tmp_path("no_such_dir") + "/x/db.kv";
  try {  // a failed system call keeps its errno and the user's path (not a temporary name)
    kv::database::open(missing);
    FAIL();
  } catch (const kv::error& e) {
    EXPECT_EQ(e.kind(), kv::error_kind::io);
    EXPECT_EQ(e.sys_errno(), ENOENT);
    EXPECT_EQ(e.path(), missing);
    EXPECT_EQ(e.detail(), "create " + missing + ": " + std::strerror(ENOENT));
  }
  const std::string fifo = kvt::tmp_path("fifo");
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  for (bool ro : {true, false}) {  // opening it for reading waited for a writer: a hang
    try {
      kv::database::open(fifo, {kv::sync_mode::none, ro, std::nullopt});
      FAIL();
    } catch (const kv::error& e) {
      EXPECT_EQ(e.kind(), kv::error_kind::invalid_argument) << e.what();
    }
  }
  std::remove(fifo.c_str());
}

// A cursor outliving its view's nodes: a released snapshot's nodes are freed and reused by
// later commits, a transaction's by its own writes. It refuses to move or read (it walked freed
// nodes and returned other transactions' keys), and valid() refuses too, so a loop on it cannot
// end as if the keys had run out.
TEST(KvCursor, RefusesOnceItsViewChanged) {
  kv::database db = kv::database::memory();
  {
    kv::write_tx tx = db.write();
    for (int i = 0; i < 2000; ++i) tx.put(std::to_string(100000 + i), "v");
    tx.commit();
  }
  kv::snapshot s = db.read();
  kv::cursor c = s.make_cursor();
  ASSERT_TRUE(c.first());
  ASSERT_TRUE(c.next());
  s.release();
  for (int r = 0; r < 5; ++r) {
    kv::write_tx tx = db.write();
    tx.remove_range("", std::nullopt);
    for (int i = 0; i < 2000; ++i)
      tx.put("other" + std::to_string(i * 7 + r), std::string(40, 'x'));
    tx.commit();
  }
  EXPECT_THROW(c.valid(), kv::error);
  EXPECT_THROW(c.next(), kv::error);
  EXPECT_THROW(c.key(), kv::error);
  EXPECT_THROW(c.first(), kv::error);
  EXPECT_THROW(c.lower_bound("1"), kv::error);

  kv::write_tx tx = db.write();
  kv::cursor w = tx.make_cursor();
  ASSERT_TRUE(w.first());
  tx.put("zz", "1");  // buffered: the tree has not changed yet
  EXPECT_TRUE(w.next());
  EXPECT_TRUE(tx.get("zz"));  // applies the buffer: the tree changed
  EXPECT_THROW(w.next(), kv::error);
  kv::cursor w2 = tx.make_cursor();  // a new cursor sees the new tree
  ASSERT_TRUE(w2.last());
  EXPECT_EQ(w2.key(), "zz");
  tx.remove("zz");
  EXPECT_THROW(w2.prev(), kv::error);
  kv::cursor w3 = tx.make_cursor();
  ASSERT_TRUE(w3.first());
  tx.commit();
  EXPECT_THROW(w3.value(), kv::error);
  kv::snapshot live = db.read();
  kv::cursor ok = live.make_cursor();
  std::size_t n = 0;
  for (ok.first(); ok.valid(); ok.next()) ++n;  // an unchanged view walks as before
  EXPECT_EQ(n, live.size());
}

// A transaction moved into another write_tx by assignment kept the overwritten one's cursor
// clock: its cursors never noticed its writes and walked nodes they had freed.
TEST(KvCursor, MoveAssignedTransactionsCursorsSeeItsWrites) {
  kv::database db = kv::database::memory();
  kv::write_tx w = db.write();
  w.put("a", "1");
  w.commit();
  w = db.write();
  for (int i = 0; i < 300; ++i) w.put(kvt::numbered("k", i), "v");
  kv::cursor c = w.make_cursor();
  ASSERT_TRUE(c.first());
  w.remove_range("", std::nullopt);
  EXPECT_THROW(c.next(), kv::error);
  kv::write_tx sub = w.sub();
  w = std::move(sub);  // aborts the old w with its sub first; w is now the (inactive) sub
  EXPECT_FALSE(w.active());
  EXPECT_THROW(w.get("a"), kv::error);
  EXPECT_EQ(db.read().get("a"), "1");
}

// While a sub-transaction is open the parent's tree is the one the sub-transaction is changing:
// reads through the parent returned the sub-transaction's uncommitted writes (and would have
// kept them had it aborted a moment later). Every read of the parent, its cursors included, is
// refused with invalid_argument until the sub-transaction ends, as its writes already were;
// cursors made on the parent before read on afterwards when the tree is as it was.
TEST(KvNested, ParentIsNotReadableWhileASubIsOpen) {
  kv::database db = kv::database::memory();
  kv::write_tx tx = db.write();
  for (int i = 0; i < 500; ++i) tx.put(kvt::numbered("k", 1000 + i), "v");
  kv::cursor c = tx.make_cursor();
  ASSERT_TRUE(c.first());
  ASSERT_TRUE(c.next());
  const std::string at = std::string(c.key());
  auto refused = [](auto&& call, const char* reason) {
    try {
      call();
      ADD_FAILURE() << "not refused (" << reason << ")";
    } catch (const kv::error& e) {
      EXPECT_EQ(e.kind(), kv::error_kind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(reason), std::string::npos) << e.what();
    }
  };
  {
    kv::write_tx sub = tx.sub();
    sub.put("new", "uncommitted");
    EXPECT_EQ(sub.get("new"), "uncommitted");  // the sub-transaction reads its own writes
    const char* open = "sub-transaction is open";
    refused([&] { (void)tx.get("new"); }, open);
    refused([&] { (void)tx.get("k1000"); }, open);
    refused([&] { (void)tx.contains("k1000"); }, open);
    refused(
        [&] {
          const std::string_view keys[] = {"k1000", "new"};
          std::optional<std::string_view> out[2];
          tx.get_many(keys, out);
        },
        open);
    refused([&] { (void)tx.count(); }, open);
    refused([&] { (void)tx.count("k1", "k2"); }, open);
    refused([&] { (void)tx.size(); }, open);
    refused([&] { (void)tx.stat(); }, open);
    refused([&] { tx.validate(); }, open);
    refused([&] { (void)tx.make_cursor(); }, open);
    // Writes and the transaction's own end were refused already, and still are.
    refused([&] { tx.put("p", "1"); }, open);
    refused([&] { (void)tx.upsert("p", "1"); }, open);
    refused([&] { (void)tx.insert("p", "1"); }, open);
    refused([&] { (void)tx.update("k1000", "1"); }, open);
    refused([&] { (void)tx.remove("k1000"); }, open);
    refused([&] { (void)tx.remove_range("k", std::nullopt); }, open);
    refused(
        [&] {
          const std::pair<std::string_view, std::string_view> one[] = {{"zz", "1"}};
          tx.bulk_load(one);
        },
        open);
    refused([&] { (void)tx.sub(); }, open);
    refused([&] { tx.commit(); }, open);
    refused([&] { tx.abort(); }, open);
    EXPECT_TRUE(tx.active());
    // The parent's cursor refuses to move or read, valid() too.
    const char* cur = "has a sub-transaction open";
    refused([&] { (void)c.valid(); }, cur);
    refused([&] { (void)c.key(); }, cur);
    refused([&] { (void)c.value(); }, cur);
    refused([&] { (void)c.next(); }, cur);
    refused([&] { (void)c.prev(); }, cur);
    refused([&] { (void)c.first(); }, cur);
    refused([&] { (void)c.lower_bound("k1"); }, cur);
    kv::cursor in_sub = sub.make_cursor();
    ASSERT_TRUE(in_sub.seek("new"));
    sub.abort();
    // The sub-transaction's cursor saw nodes the abort freed: it refuses for good.
    refused([&] { (void)in_sub.valid(); }, "make a new cursor");
  }
  // After the abort the tree is the parent's again, unchanged: its cursor reads on.
  EXPECT_FALSE(tx.get("new"));
  EXPECT_EQ(tx.size(), 500u);
  ASSERT_TRUE(c.valid());
  EXPECT_EQ(c.key(), at);
  ASSERT_TRUE(c.next());
  EXPECT_EQ(c.key(), "k1002");
  {
    kv::write_tx idle = tx.sub();  // commits without writing: nothing changed
    refused([&] { (void)c.next(); }, "has a sub-transaction open");
    EXPECT_EQ(idle.get("k1000"), "v");
    idle.commit();
  }
  ASSERT_TRUE(c.next());
  EXPECT_EQ(c.key(), "k1003");
  // Two levels: only the innermost reads.
  {
    kv::write_tx s1 = tx.sub();
    s1.put("s1", "1");
    {
      kv::write_tx s2 = s1.sub();
      s2.put("s2", "1");
      refused([&] { (void)s1.get("s2"); }, "sub-transaction is open");
      refused([&] { (void)tx.get("s1"); }, "sub-transaction is open");
      EXPECT_EQ(s2.get("s1"), "1");
      s2.commit();
    }
    EXPECT_EQ(s1.get("s2"), "1");
    refused([&] { (void)tx.count(); }, "sub-transaction is open");
    s1.commit();
  }
  // A sub-transaction that wrote and committed changed the tree under the cursor.
  refused([&] { (void)c.next(); }, "make a new cursor");
  EXPECT_EQ(tx.get("s1"), "1");
  EXPECT_EQ(tx.get("s2"), "1");
  EXPECT_EQ(tx.count(), 502u);
  kv::cursor fresh = tx.make_cursor();
  ASSERT_TRUE(fresh.last());
  EXPECT_EQ(fresh.key(), "s2");
  tx.validate();
  tx.commit();
  EXPECT_EQ(db.read().size(), 502u);
  db.validate();
}

TEST(KvTrees, NamedTreesAreIndependent) {
  const std::string p = kvt::tmp_path("trees");
  {
    kv::database db = kv::database::open(p, {kv::sync_mode::fsync, false, std::nullopt});
    for (int t = 0; t < 3; ++t) {
      kv::write_tx tx = db.write(kvt::numbered("t", t));
      for (int i = 0; i <= t * 100; ++i) tx.put(std::to_string(i), std::to_string(t));
      tx.commit();
    }
  }
  kv::database db = kv::database::open(p);
  EXPECT_EQ(db.trees().size(), 3u);
  for (int t = 0; t < 3; ++t) EXPECT_EQ(db.read(kvt::numbered("t", t)).size(), t * 100u + 1);
  EXPECT_EQ(*db.read("t2").get("7"), "2");
  db.validate();
  std::remove(p.c_str());
}

// A read of a named tree that does not exist read as an empty tree, so a misspelt name passed
// silently; it is not_found now, naming the tree and the ones there are. The default tree
// always reads (empty before its first commit), and a commit creates a tree, even an empty one.
TEST(KvTrees, MissingTreeIsNotFound) {
  kv::database db = kv::database::memory();
  EXPECT_EQ(db.read().size(), 0u);
  EXPECT_EQ(db.stat().keys, 0u);
  auto not_found = [&](auto&& call, const std::string& says) {
    try {
      call();
      ADD_FAILURE() << "no error";
    } catch (const kv::error& e) {
      EXPECT_EQ(e.kind(), kv::error_kind::not_found);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  not_found([&] { db.read("users"); }, "no tree named 'users' in the database (it has no named");
  {
    kv::write_tx tx = db.write("users");
    tx.put("a", "1");
    not_found([&] { db.read("users"); }, "'users'");  // not committed yet
    tx.commit();
  }
  db.write("empty").commit();
  db.write("").commit();
  EXPECT_EQ(db.read("users").size(), 1u);
  EXPECT_EQ(db.read("empty").size(), 0u);
  not_found([&] { db.read("user"); },
            "no tree named 'user' in the database (its named trees: "
            "'users', 'empty')");
  not_found([&] { db.stat("user"); }, "'user'");
  not_found([&] { db.drop("user"); }, "'user'");
  // The writer was not taken by the refused drop.
  kv::write_tx tx = db.write("users");
  tx.abort();
}

// drop() removes a tree and its keys in one commit: the name reads as missing, its slot among
// the 32 is free, the file validates, the space comes back, and all of it survives reopen and
// compact. A snapshot taken before reads on.
TEST(KvTrees, DropRemovesTheTreeDurably) {
  const std::string p = kvt::tmp_path("drop");
  {
    kv::database db = kv::database::open(p, {kv::sync_mode::fsync, false, std::nullopt});
    for (int t = 0; t < 4; ++t) {
      kv::write_tx tx = db.write(kvt::numbered("t", t));
      for (int i = 0; i < 3000 * (t + 1); ++i)
        tx.put(kvt::numbered("k", i), std::string(t * 30, 'v'));
      tx.commit();
    }
    kv::snapshot before = db.read("t2");
    const std::uint64_t used = db.stat("t0").file_bytes - db.stat("t0").free_bytes;
    db.drop("t2");
    EXPECT_EQ(db.trees(), (std::vector<std::string>{"t0", "t1", "t3"}));
    EXPECT_THROW(db.read("t2"), kv::error);
    EXPECT_EQ(before.size(), 9000u);  // the snapshot still sees it
    EXPECT_EQ(*before.get("k8999"), std::string(60, 'v'));
    before.validate();
    db.validate();
    before.release();
    db.drop("t3");
    db.validate();
    {
      kv::write_tx w = db.write("t0");  // reclaims what no snapshot sees any more
      w.commit();
    }
    const kv::stats s = db.stat("t0");
    EXPECT_LT(s.file_bytes - s.free_bytes, used);
    // A dropped name can be written again, and comes back empty.
    kv::write_tx w = db.write("t3");
    EXPECT_EQ(w.size(), 0u);
    w.put("new", "1");
    w.commit();
  }
  {
    kv::database db = kv::database::open(p);
    db.validate();
    EXPECT_EQ(db.trees(), (std::vector<std::string>{"t0", "t1", "t3"}));
    EXPECT_EQ(db.read("t3").size(), 1u);
    EXPECT_EQ(db.read("t1").size(), 6000u);
    EXPECT_THROW(db.read("t2"), kv::error);
    db.drop("t3");
    db.compact();
    db.validate();
    EXPECT_EQ(db.trees(), (std::vector<std::string>{"t0", "t1"}));
  }
  {
    kv::database db = kv::database::open(p, {kv::sync_mode::none, true, std::nullopt});
    db.validate();
    EXPECT_EQ(db.trees(), (std::vector<std::string>{"t0", "t1"}));
    EXPECT_EQ(db.read("t0").size(), 3000u);
    try {
      db.drop("t0");
      FAIL();
    } catch (const kv::error& e) {
      EXPECT_EQ(e.kind(), kv::error_kind::read_only);
    }
  }
  // Dropping frees a slot among the 32, and the default tree can be dropped too.
  kv::database db = kv::database::memory();
  for (std::size_t t = 0; t < kv::kMaxTrees; ++t) db.write(kvt::numbered("n", t)).commit();
  EXPECT_THROW(db.write("one more"), kv::error);
  db.drop("n5");
  db.drop("n6");
  db.write("one more").commit();
  db.write("").commit();
  EXPECT_THROW(db.write("n5"), kv::error);  // full again ("" counts)
  db.drop("");
  EXPECT_EQ(db.read("").size(), 0u);
  db.validate();
  std::remove(p.c_str());
}

// A key over the limit cannot be stored, so it is not present: reads answer absent and remove
// answers false (it threw key_too_long); writes that store a value still throw.
TEST(KvErrors, OverlongKeyIsAbsentForReadsAndRemoves) {
  kv::database db = kv::database::memory();
  kv::write_tx tx = db.write();
  const std::string longer(kv::kMaxKey + 1, 'k'), huge(70000, 'k'), max(kv::kMaxKey, 'k');
  tx.put(max, "v");
  tx.put("a", "1");
  for (const std::string& k : {longer, huge}) {
    EXPECT_FALSE(tx.get(k));
    EXPECT_FALSE(tx.contains(k));
    EXPECT_FALSE(tx.remove(k));
    kv::cursor c = tx.make_cursor();
    EXPECT_FALSE(c.seek(k));
    ASSERT_FALSE(c.lower_bound(k));  // every stored key sorts before it
    EXPECT_EQ(tx.count(k), 0u);
    EXPECT_EQ(tx.count("", k), 2u);
    for (auto&& write : {+[](kv::write_tx&t, const std::string&key) { t.put(key, "v"); },
                         +[](kv::write_tx&t, const std::string&key) { t.insert(key, "v"); },
                         +[](kv::write_tx&t, const std::string&key) { t.upsert(key, "v"); },
                         +[](kv::write_tx&t, const std::string&key) { t.update(key, "v"); }}) {
      try {
        write(tx, k);
        ADD_FAILURE() << "a write of an overlong key";
      } catch (const kv::error& e) {
        EXPECT_EQ(e.kind(), kv::error_kind::key_too_long);
      }
    }
  }
  EXPECT_EQ(tx.remove_range(longer, std::nullopt), 0u);
  EXPECT_TRUE(tx.remove(max));
  tx.commit();
  kv::snapshot s = db.read();
  EXPECT_FALSE(s.get(huge));
  const std::string_view keys[] = {"a", longer, huge};
  std::optional<std::string_view> out[3];
  s.get_many(keys, out);
  EXPECT_TRUE(out[0] && !out[1] && !out[2]);
  kv::write_tx ended = db.write();
  ended.commit();
  EXPECT_THROW(ended.remove(longer), kv::error);  // an ended transaction still refuses
}

// bulk_load's errors name the pair they are about, by its index in the input.
TEST(KvBulk, ErrorsNameThePair) {
  kv::database db = kv::database::memory();
  kv::write_tx tx = db.write();
  const std::string longer(kv::kMaxKey + 1, 'k');
  auto fails = [&](std::vector<std::pair<std::string_view, std::string_view>> in,
                   kv::error_kind kind, const std::string& says) {
    try {
      tx.bulk_load(in);
      ADD_FAILURE() << "no error for " << says;
    } catch (const kv::error& e) {
      EXPECT_EQ(e.kind(), kind);
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  fails({{"a", ""}, {"b", ""}, {longer, ""}}, kv::error_kind::key_too_long,
        "bulk_load: pair at index 2: key of 1025 bytes");
  fails({{"a", ""}, {"c", ""}, {"b", ""}}, kv::error_kind::invalid_argument,
        "bulk_load: pair at index 2: keys not sorted");
  fails({{"a", ""}, {"a", ""}}, kv::error_kind::invalid_argument,
        "bulk_load: pair at index 1: keys not distinct");
  EXPECT_EQ(tx.size(), 0u);  // nothing was written
  tx.put("c", "");
  fails({{"c", ""}}, kv::error_kind::invalid_argument, "pair at index 0: key already present");
  fails({{"a", ""}, {"b", ""}, {"c", ""}, {"d", ""}}, kv::error_kind::invalid_argument,
        "pair at index 2: key already present (the pairs before it were added)");
}

TEST(KvFile, BadFilesGiveClearErrors) {
  const std::string p = kvt::tmp_path("bad");
  auto write_bytes = [&](const std::string& bytes) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << bytes;
  };
  auto kind_of = [&]() -> std::optional<kv::error_kind> {
    try {
      kv::database db = kv::database::open(p);
      db.validate();
    } catch (const kv::error& e) {
      return e.kind();
    }
    return std::nullopt;
  };
  write_bytes("short");
  EXPECT_EQ(kind_of(), kv::error_kind::truncated);
  write_bytes(std::string(16384, 'x'));
  EXPECT_EQ(kind_of(), kv::error_kind::corrupt);
  {
    std::remove(p.c_str());
    kv::database db = kv::database::open(p);
    kv::write_tx tx = db.write();
    for (int i = 0; i < 2000; ++i) tx.put(std::to_string(i), "value");
    tx.commit();
  }
  std::string good;
  {
    std::ifstream f(p, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::string b = good;
  b[8] = 9;  // version field of both pages
  b[4096 + 8] = 9;
  write_bytes(b);
  EXPECT_EQ(kind_of(), kv::error_kind::bad_version);
  b = good;
  b[20] ^= 1;  // inside both checksummed pages
  b[4096 + 20] ^= 1;
  write_bytes(b);
  EXPECT_EQ(kind_of(), kv::error_kind::bad_checksum);
  write_bytes(good.substr(0, 9000));
  EXPECT_EQ(kind_of(), kv::error_kind::truncated);
  // A high-water mark no 32-bit reference can reach, in meta pages whose checksums are right:
  // corrupt, where 2^58 units once wrapped the size check to zero and opened the file.
  auto with_hwm = [&](std::uint64_t hwm) {
    std::string e = good;
    constexpr std::size_t kHwm = 32, kSum = 72 + kv::kMaxTrees * 64;  // meta_page's layout
    for (std::size_t page : {std::size_t{0}, std::size_t{4096}}) {
      std::uint64_t sum;
      std::memcpy(&sum, e.data() + page + kSum, 8);
      EXPECT_EQ(sum, XXH3_64bits(e.data() + page, kSum)) << "meta_page's layout moved";
      std::memcpy(e.data() + page + kHwm, &hwm, 8);
      sum = XXH3_64bits(e.data() + page, kSum);
      std::memcpy(e.data() + page + kSum, &sum, 8);
    }
    return e;
  };
  for (std::uint64_t hwm : {std::uint64_t{1} << 58, (std::uint64_t{1} << 58) + 128,
                            (std::uint64_t{1} << 32) + 1, ~std::uint64_t{0}, std::uint64_t{1}}) {
    write_bytes(with_hwm(hwm));
    EXPECT_EQ(kind_of(), kv::error_kind::corrupt) << hwm;
  }
  write_bytes(with_hwm(good.size() / 64 + 1));  // one unit past the end: a short file
  EXPECT_EQ(kind_of(), kv::error_kind::truncated);
  // Damage inside the nodes: open succeeds, validate names the problem (or all is fine if the
  // byte was slack); never a crash.
  std::mt19937_64 r(3);
  for (int i = 0; i < 200; ++i) {
    b = good;
    const std::size_t at = 8192 + r() % (good.size() - 8192);
    b[at] = static_cast<char>(r());
    write_bytes(b);
    auto k = kind_of();
    if (k) {
      EXPECT_TRUE(*k == kv::error_kind::corrupt || *k == kv::error_kind::truncated)
          << static_cast<int>(*k);
    }
  }
  write_bytes(good);
  EXPECT_EQ(kind_of(), std::nullopt);
  std::remove(p.c_str());
}

// A file has one writing process (flock): a second open for writing or reading is refused with
// busy while it is held, and works once it is closed. An empty file opens as an empty database.
TEST(KvFile, OneWriterPerFileAndEmptyFiles) {
  const std::string p = kvt::tmp_path("lock");
  { std::ofstream f(p, std::ios::binary | std::ios::trunc); }
  auto kind_of_open = [&](bool read_only) -> std::optional<kv::error_kind> {
    try {
      kv::database::open(p, {kv::sync_mode::none, read_only, std::nullopt});
    } catch (const kv::error& e) {
      return e.kind();
    }
    return std::nullopt;
  };
  {
    kv::database db = kv::database::open(p);
    EXPECT_EQ(db.read().size(), 0u);
    EXPECT_EQ(kind_of_open(false), kv::error_kind::busy);
    EXPECT_EQ(kind_of_open(true), kv::error_kind::busy);
    kv::write_tx tx = db.write();
    tx.put("k", "v");
    tx.commit();
  }
  EXPECT_EQ(kind_of_open(true), std::nullopt);
  kv::database ro = kv::database::open(p, {kv::sync_mode::none, true, std::nullopt});
  EXPECT_EQ(ro.read().get("k"), "v");
  EXPECT_EQ(kind_of_open(true), std::nullopt);  // readers share
  EXPECT_EQ(kind_of_open(false), kv::error_kind::busy);
  ro.close();
  std::remove(p.c_str());
}

// compact() renames a new file over the old one: it keeps the old file's mode (a 0600 file came
// back 0644, readable by everyone) and its data.
TEST(KvFile, CompactKeepsTheFilesMode) {
  const std::string p = kvt::tmp_path("compact-mode");
  std::remove(p.c_str());
  for (mode_t mode : {mode_t{0600}, mode_t{0640}, mode_t{0604}}) {
    {
      kv::database db = kv::database::open(p);
      kv::write_tx tx = db.write();
      tx.put("k", "v");
      tx.commit();
    }
    ASSERT_EQ(::chmod(p.c_str(), mode), 0);
    {
      kv::database db = kv::database::open(p);
      db.compact();
      EXPECT_EQ(db.read().get("k"), "v");
    }
    struct stat st;
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, mode);
  }
  std::remove(p.c_str());
}

// bulk_load into an empty tree builds full leaves in one pass; the result equals the model and
// validates. Into a non-empty tree it inserts; unsorted or duplicate input fails untouched.
// Two threads creating one new database: one gets it, the other busy. Under a temporary name
// per process both got one (each unlinked the other's temporary file), and the commits of the
// one left with an unlinked file were lost.
TEST(KvFile, ThreadsCreatingOneFileRace) {
  for (int trial = 0; trial < 100; ++trial) {
    const std::string p = kvt::tmp_path("race");
    std::remove(p.c_str());
    std::optional<kv::database> got[2];
    std::optional<kv::error_kind> err[2];
    std::atomic<int> ready{0};
    auto go = [&](int i) {
      ready.fetch_add(1);
      while (ready.load() < 2) {
      }
      try {
        got[i] = kv::database::open(p);
      } catch (const kv::error& e) {
        err[i] = e.kind();
      }
    };
    std::thread a(go, 0), b(go, 1);
    a.join();
    b.join();
    ASSERT_EQ(got[0].has_value() + got[1].has_value(), 1) << "trial " << trial;
    const int w = got[0] ? 0 : 1;
    EXPECT_EQ(err[1 - w], kv::error_kind::busy);
    {
      kv::write_tx tx = got[w]->write();
      tx.put("who", std::to_string(w));
      tx.commit();
    }
    got[w]->close();
    kv::database again = kv::database::open(p);
    EXPECT_EQ(again.read().get("who"), std::to_string(w));
    again.close();
    std::remove(p.c_str());
  }
}

// A second write transaction (or validate) from the thread holding one waited for itself
// forever; it is refused at once, and other threads still wait their turn.
TEST(KvErrors, SecondWriterInOneThreadIsRefused) {
  kv::database db = kv::database::memory();
  kv::write_tx tx = db.write();
  tx.put("a", "1");
  try {
    db.write();
    FAIL() << "a second write transaction in the same thread";
  } catch (const kv::error& e) {
    EXPECT_EQ(e.kind(), kv::error_kind::busy);
  }
  EXPECT_THROW(db.validate(), kv::error);
  std::atomic<bool> done{false};
  std::thread other([&] {
    kv::write_tx t2 = db.write();  // waits for tx
    t2.put("b", "2");
    t2.commit();
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(done.load());
  tx.commit();
  other.join();
  EXPECT_TRUE(done.load());
  db.validate();
  kv::write_tx again = db.write();  // the thread's earlier transaction has ended
  EXPECT_EQ(again.get("b"), "2");
}

// A sub-transaction that outlived its parent: the parent's destructor refused to abort while
// the sub was open, and the writer slot stayed taken for good (every later write() busy).
TEST(KvErrors, SubTransactionOutlivingItsParent) {
  kv::database db = kv::database::memory();
  std::optional<kv::write_tx> sub;
  {
    kv::write_tx w = db.write();
    w.put("parent", "1");
    sub.emplace(w.sub());
    sub->put("child", "1");
    kv::write_tx inner = sub->sub();  // two levels open above w
    inner.put("grandchild", "1");
    sub.emplace(std::move(inner));
  }
  EXPECT_FALSE(sub->active());
  EXPECT_THROW(sub->put("x", "y"), kv::error);
  // Its reads too: the tree it saw is the aborted parent's, whose nodes the next writer reuses.
  EXPECT_THROW(sub->get("parent"), kv::error);
  EXPECT_THROW(sub->make_cursor(), kv::error);
  EXPECT_THROW(sub->commit(), kv::error);
  {
    kv::write_tx w2 = db.write();  // the slot is free
    w2.put("after", "1");
    w2.commit();
  }
  sub.reset();
  kv::snapshot s = db.read();
  EXPECT_EQ(s.size(), 1u);
  EXPECT_TRUE(s.contains("after"));
  db.validate();
}

TEST(KvBulk, BuildsFromSortedInput) {
  for (int shape = 0; shape < 3; ++shape) {
    kv::database db = kv::database::memory();
    kvt::keygen g(40 + static_cast<std::uint64_t>(shape));
    model m;
    for (int i = 0; i < 30000; ++i) {
      std::string k;
      if (shape == 0) {  // big-endian counters: dense, one leaf per byte run
        k.assign(8, '\0');
        for (int b = 7, v = i; b >= 0; --b, v >>= 8) k[b] = static_cast<char>(v & 0xFF);
      } else {
        k = shape == 1 ? g.key() : g.fresh();  // mixed shapes, long keys, prefixes of others
      }
      m[k] = g.value();
    }
    std::vector<std::pair<std::string_view, std::string_view>> in(m.begin(), m.end());
    {
      kv::write_tx tx = db.write();
      tx.bulk_load(in);
      tx.validate();
      tx.commit();
    }
    db.validate();
    kv::snapshot s = db.read();
    ASSERT_NO_FATAL_FAILURE(kvt::expect_same(s, m));
    if (shape == 0) {
      // Full leaves: about as many leaves as 64-key groups.
      EXPECT_LE(s.stat().leaf_nodes, m.size() / 60 + 300);
    }
    // Appending to a non-empty tree inserts; a key already present is an error.
    kv::write_tx tx = db.write();
    const std::string big(20, '\xff'), bigger(21, '\xff');
    const std::pair<std::string_view, std::string_view> more[] = {{big, "x"}, {bigger, "y"}};
    tx.bulk_load(more);
    EXPECT_EQ(tx.size(), m.size() + 2);
    const std::pair<std::string_view, std::string_view> dup[] = {{big, "z"}};
    EXPECT_THROW(tx.bulk_load(dup), kv::error);
    const std::pair<std::string_view, std::string_view> unsorted[] = {{"b", "1"}, {"a", "2"}};
    try {
      tx.bulk_load(unsorted);
      FAIL();
    } catch (const kv::error& e) {
      EXPECT_EQ(e.kind(), kv::error_kind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("index 1"), std::string::npos) << e.what();
    }
    EXPECT_EQ(tx.get("a").has_value(), m.count("a") == 1);  // nothing of it was written
    tx.validate();
  }
}

// remove_range over a large tree: whole subtrees go at once, the edges are trimmed, counts stay
// exact, and a snapshot taken before still sees everything.
TEST(KvRange, RemovesWideRanges) {
  kv::database db = kv::database::memory();
  model m;
  std::mt19937_64 r(8);
  {
    kv::write_tx tx = db.write();
    for (int i = 0; i < 100000; ++i) {
      std::string k(8, '\0');
      const std::uint64_t v = r();
      std::memcpy(k.data(), &v, 8);
      const std::string val = i % 50 == 0 ? std::string(200, 'b') : std::to_string(i);
      tx.put(k, val);
      m[k] = val;
    }
    tx.commit();
  }
  kv::snapshot before = db.read();
  const model all = m;
  for (int round = 0; round < 40; ++round) {
    std::string lo(1 + r() % 3, '\0'), hi(1 + r() % 3, '\0');
    for (auto& c : lo) c = static_cast<char>(r());
    for (auto& c : hi) c = static_cast<char>(r());
    if (hi < lo) std::swap(lo, hi);
    kv::write_tx tx = db.write();
    const bool open_end = round % 10 == 9;
    auto a = m.lower_bound(lo), b = open_end ? m.end() : m.lower_bound(hi);
    const auto expect = static_cast<std::uint64_t>(std::distance(a, b));
    ASSERT_EQ(tx.remove_range(lo, open_end ? std::nullopt : std::optional<std::string_view>(hi)),
              expect)
        << "round " << round;
    m.erase(a, b);
    EXPECT_EQ(tx.count(), m.size());
    tx.validate();
    if (round % 3 == 0) {
      tx.abort();
      m = model();
      kv::snapshot s = db.read();
      kv::cursor c = s.make_cursor();
      for (bool ok = c.first(); ok; ok = c.next()) m.emplace(c.key(), c.value());
    } else {
      tx.commit();
    }
  }
  db.validate();
  ASSERT_NO_FATAL_FAILURE(kvt::expect_same(db.read(), m));
  ASSERT_NO_FATAL_FAILURE(kvt::expect_same(before, all));
}

// The thinning tests' shared run: 60,000 keys (random 8-byte ones in memory; varied shapes in
// a file: shared prefixes, prefixes of one another, long keys, values out of line), then `steps`
// removal steps (plan() prepares them from the model and says how many; step(tx, after, i) does
// step i in the transaction and the model) in rounds of a sixth or a seventh, in transactions
// that commit or abort, every view validated and compared. At the end the leaves must be under a
// quarter of those before (without merges each keeps about 5% of its keys), and the file must
// reopen to the same contents.
template <class Plan, class Step>
void thin_out(const char* name, int seed, unsigned rounds, Plan plan, Step step) {
  const std::string path = kvt::tmp_path(name);
  for (int shape = 0; shape < 2; ++shape) {
    SCOPED_TRACE(shape ? "varied keys" : "random 8-byte keys");
    std::optional<kv::database> file;
    if (shape) file.emplace(kv::database::open(path));
    kv::database db = shape ? std::move(*file) : kv::database::memory();
    model m;
    std::mt19937_64 r(seed + shape);
    kvt::keygen g(seed);
    {
      kv::write_tx tx = db.write();
      for (int i = 0; i < 60000; ++i) {
        std::string k(8, '\0');
        const std::uint64_t x = r();
        std::memcpy(k.data(), &x, 8);
        if (shape) k = g.key();
        const std::string val = i % 40 == 0 ? std::string(300, 'v') : std::to_string(i);
        tx.put(k, val);
        m[k] = val;
      }
      tx.commit();
    }
    const std::uint64_t full_leaves = db.read().stat().leaf_nodes;
    const std::size_t steps = plan(m, r);
    std::size_t at = 0;
    for (int round = 0; at < steps; ++round) {
      kv::write_tx tx = db.write();
      model after = m;
      const std::size_t stop = std::min(steps, at + steps / rounds + 1);
      for (std::size_t i = at; i < stop; ++i) {
        step(tx, after, i);
        if (::testing::Test::HasFatalFailure()) return;
      }
      tx.validate();
      ASSERT_NO_FATAL_FAILURE(kvt::expect_same(tx, after));
      if (round % 3 == 1) {
        tx.abort();  // the merges are undone with the rest
      } else {
        tx.commit();
        m = std::move(after);
        at = stop;
      }
      db.validate();
      ASSERT_NO_FATAL_FAILURE(kvt::expect_same(db.read(), m));
    }
    const kv::stats st = db.read().stat();
    EXPECT_EQ(st.keys, m.size());
    EXPECT_LT(st.leaf_nodes * 4, full_leaves) << st.leaf_nodes << " leaves of " << full_leaves;
    if (shape == 0) {
      EXPECT_LE(st.leaf_nodes, m.size() / 8 + 50) << m.size() << " keys";
    } else {
      db = kv::database::memory();  // closes the file
      kv::database again = kv::database::open(path);
      again.validate();
      ASSERT_NO_FATAL_FAILURE(kvt::expect_same(again.read(), m));
    }
  }
  std::remove(path.c_str());
}

// Deletes that thin the tree out leave no trail of near-empty leaves: a leaf down to an eighth
// merges with a neighbouring leaf (when the two fit in three quarters of one), and an inner node
// left with one leaf becomes that leaf. 95% of the keys removed one by one, in random order.
TEST(KvRemove, SparseLeavesMerge) {
  std::vector<std::string> keys;
  thin_out(
      "sparse", 21, 7,
      [&](const model& m, std::mt19937_64& r) {
        keys.clear();
        for (const auto& kvp : m) keys.push_back(kvp.first);
        std::shuffle(keys.begin(), keys.end(), r);
        return keys.size() - keys.size() / 20;
      },
      [&](kv::write_tx& tx, model& after, std::size_t i) {
        ASSERT_TRUE(tx.remove(keys[i]));
        after.erase(keys[i]);
      });
}

// Range removals thin leaves too: the leaves a range ends inside merge and collapse as single
// removals do. 5% of the keys stay, scattered: every range between two kept keys is removed,
// in random order.
TEST(KvRemove, RangesMergeTheLeavesTheyCut) {
  std::vector<std::string> kept;
  std::vector<std::size_t> order;
  thin_out(
      "sparse_ranges", 31, 6,
      [&](const model& m, std::mt19937_64& r) {
        kept.clear();
        std::size_t i = 0;
        for (const auto& kvp : m)
          if (i++ % 20 == 0) kept.push_back(kvp.first);
        order.resize(kept.size());  // range j: (kept[j], kept[j + 1]); the last is open above
        for (std::size_t j = 0; j < order.size(); ++j) order[j] = j;
        std::shuffle(order.begin(), order.end(), r);
        return order.size();
      },
      [&](kv::write_tx& tx, model& after, std::size_t o) {
        const std::size_t j = order[o];
        const std::string lo = kept[j] + std::string(1, '\0');
        const bool last = j + 1 == kept.size();
        auto a = after.lower_bound(lo), b = last ? after.end() : after.lower_bound(kept[j + 1]);
        const auto expect = static_cast<std::uint64_t>(std::distance(a, b));
        ASSERT_EQ(
            tx.remove_range(lo, last ? std::nullopt : std::optional<std::string_view>(kept[j + 1])),
            expect);
        after.erase(a, b);
      });
}

// Values up to the limit: 64 MiB by default, 1 GiB with SIMDEX_KV_BIG_VALUES=1 (needs about
// 2 GiB of memory and a minute); one over the limit is refused without being read.
TEST(KvLimits, LargeValues) {
  const bool big = std::getenv("SIMDEX_KV_BIG_VALUES") != nullptr;
  const std::size_t size = big ? (std::size_t{1} << 30) : (std::size_t{64} << 20);
  std::string v(size, '\0');
  for (std::size_t i = 0; i < size; i += 4096) v[i] = static_cast<char>(i >> 12);
  const std::string p = kvt::tmp_path("large");
  {
    kv::database db = kv::database::open(p);
    kv::write_tx tx = db.write();
    tx.put("big", v);
    tx.put("small", "s");
    tx.commit();
  }
  {
    kv::database db = kv::database::open(p);
    db.validate();
    kv::snapshot s = db.read();
    const auto got = s.get("big");
    ASSERT_TRUE(got);
    EXPECT_EQ(got->size(), size);
    EXPECT_TRUE(*got == v);
    kv::write_tx tx = db.write();
    EXPECT_TRUE(tx.remove("big"));
    tx.commit();
  }
  std::remove(p.c_str());
  // A view longer than the limit over a reservation that is never touched.
  const std::size_t over = kv::kMaxValue + 1;
  void* res = mmap(nullptr, over, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(res, MAP_FAILED);
  kv::database db = kv::database::memory();
  kv::write_tx tx = db.write();
  try {
    tx.put("k", std::string_view(static_cast<const char*>(res), over));
    FAIL();
  } catch (const kv::error& e) {
    EXPECT_EQ(e.kind(), kv::error_kind::value_too_long);
  }
  munmap(res, over);
}

// A read-only database refuses write transactions with read_only.
TEST(KvErrors, WriteOnReadOnly) {
  const std::string p = kvt::tmp_path("ro");
  {
    kv::database db = kv::database::open(p);
    kv::write_tx tx = db.write();
    tx.put("k", "v");
    tx.commit();
  }
  kv::database db = kv::database::open(p, {kv::sync_mode::none, true, std::nullopt});
  try {
    db.write();
    FAIL();
  } catch (const kv::error& e) {
    EXPECT_EQ(e.kind(), kv::error_kind::read_only);
  }
  EXPECT_EQ(db.read().get("k"), "v");
  EXPECT_THROW(db.compact(), kv::error);
  db.close();
  std::remove(p.c_str());
}
