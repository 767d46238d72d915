// kv: writes that fail because the file cannot grow (a full disk, simulated with a file-size
// limit: the growth's ftruncate / fallocate then fail with EFBIG as they would with ENOSPC).
// The transaction then takes nothing but abort, and the abort gives back every node the
// failed write had taken (they leaked, the next commit wrote the leak into the file, and
// validate() then called the file corrupt).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <map>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kv/test_util.h"
#include "simdex/kv.h"

using namespace simdex;

namespace {

// Caps the size of files this process writes while on (SIGXFSZ ignored, so the calls fail
// with EFBIG instead of killing the process); off: as before, as if room had been made.
class file_size_cap {
 public:
  explicit file_size_cap(rlim_t bytes) : bytes_(bytes) {
    getrlimit(RLIMIT_FSIZE, &old_);
    old_handler_ = signal(SIGXFSZ, SIG_IGN);
    set(true);
  }
  ~file_size_cap() {
    set(false);
    signal(SIGXFSZ, old_handler_);
  }
  void set(bool on) {
    rlimit r = old_;
    if (on) r.rlim_cur = bytes_;
    setrlimit(RLIMIT_FSIZE, &r);
  }
  file_size_cap(const file_size_cap&) = delete;
  file_size_cap& operator=(const file_size_cap&) = delete;

 private:
  rlim_t bytes_;
  rlimit old_{};
  sighandler_t old_handler_;
};

std::string key_of(std::mt19937_64& r) {
  std::string k = kvt::numbered("k", r() % 30000);
  k.append(r() % 4 == 0 ? 300 : 0, 'x');  // some long keys: deeper paths, fuller leaves
  return k;
}
std::string value_of(std::mt19937_64& r) {
  static const std::size_t sizes[] = {5, 60, 100, 3000};  // inline and in value nodes
  return std::string(sizes[r() % 4], static_cast<char>('a' + r() % 26));
}

}  // namespace

TEST(KvFullDisk, FailedWriteIsAbortedWithoutALeak) {
  const std::string path = kvt::tmp_path("full_disk.kv");
  auto db = kv::database::open(path);
  std::map<std::string, std::string> model;  // what was committed
  std::mt19937_64 r(7);
  int failures = 0;
  {
    file_size_cap cap(6 << 20);
    for (int round = 0; round < 12; ++round) {
      {  // committed data, for the failing transaction to copy (with the cap off: room is made)
        cap.set(false);
        auto w = db.write();
        for (int i = 0; i < 300; ++i) {
          const std::string k = key_of(r), v = value_of(r);
          w.upsert(k, v);
          model[k] = v;
        }
        w.commit();
        cap.set(true);
      }
      auto tx = db.write();
      bool failed = false;
      for (int i = 0; i < 200000 && !failed; ++i) {
        const std::string k = key_of(r), v = value_of(r);
        try {
          switch (r() % 10) {
            case 0:
              tx.remove(k);
              break;
            case 1:  // buffered (small values): applied 64 at a time
              tx.put(k, v);
              break;
            case 2:  // its edges rewritten (a released node stayed linked: freed twice)
              tx.remove_range(k, k + "~");  // k and the keys it begins
              break;
            default:
              tx.upsert(k, v);
          }
        } catch (const kv::error& e) {
          ASSERT_TRUE(e.kind() == kv::error_kind::io || e.kind() == kv::error_kind::full)
              << e.what();
          failed = true;
          ++failures;
        }
      }
      ASSERT_TRUE(failed) << "round " << round << ": the cap never made a write fail";
      if (round >= 8) {
        // Its tree may be half changed: every call but abort refuses, with the write's error,
        // even once there is room again.
        cap.set(false);
        for (auto call :
             {+[](kv::write_tx& t) { t.commit(); }, +[](kv::write_tx& t) { (void)t.get("k1"); },
              +[](kv::write_tx& t) { t.put("k1", "v"); },
              +[](kv::write_tx& t) { (void)t.sub(); }}) {
          try {
            call(tx);
            ADD_FAILURE() << "a call on a transaction whose write failed halfway went through";
          } catch (const kv::error& e) {
            EXPECT_TRUE(e.kind() == kv::error_kind::io || e.kind() == kv::error_kind::full);
            EXPECT_NE(std::string(e.what()).find("can only be aborted"), std::string::npos);
            EXPECT_EQ(std::string(e.what()).find("kv io: kv io"), std::string::npos) << e.what();
          }
        }
        cap.set(true);
      }
      tx.abort();
      ASSERT_NO_THROW(db.validate()) << "round " << round;
      kvt::expect_same(db.read(), model);
      // Room for the next round.
      cap.set(false);
      auto rm = db.write();
      std::size_t n = 0;
      for (auto it = model.begin(); it != model.end();) {
        if (n++ % 2) {
          rm.remove(it->first);
          it = model.erase(it);
        } else {
          ++it;
        }
      }
      rm.commit();
      cap.set(true);
      ASSERT_NO_THROW(db.validate()) << "round " << round;
    }
    {  // A sub-transaction's failed write is its own: the parent goes on once it is aborted.
      auto tx = db.write();
      tx.upsert("parent", "1");
      auto sub = tx.sub();
      EXPECT_THROW(for (int i = 0; i < 200000; ++i) sub.upsert(kvt::numbered("s", i), value_of(r)),
                   kv::error);
      EXPECT_THROW(sub.commit(), kv::error);
      sub.abort();
      EXPECT_EQ(tx.get("parent"), "1");
      cap.set(false);
      tx.commit();
      cap.set(true);
      model["parent"] = "1";
      ASSERT_NO_THROW(db.validate());
      kvt::expect_same(db.read(), model);
    }
    // A bulk load that cannot fit, the same.
    std::vector<std::pair<std::string, std::string>> pairs;
    for (int i = 0; i < 20000; ++i) pairs.emplace_back(kvt::numbered("b", 100000 + i), value_of(r));
    std::vector<std::pair<std::string_view, std::string_view>> views(pairs.begin(), pairs.end());
    auto tx = db.write("bulk");
    EXPECT_THROW(tx.bulk_load(views), kv::error);
    EXPECT_THROW((void)tx.size(), kv::error);
    tx.abort();
    ASSERT_NO_THROW(db.validate());
  }
  EXPECT_EQ(failures, 12);
  db.close();
  auto again = kv::database::open(path);
  ASSERT_NO_THROW(again.validate());
  kvt::expect_same(again.read(), model);
  again.close();
  std::remove(path.c_str());
}
