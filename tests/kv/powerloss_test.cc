// kv: power loss. A deterministic simulator of what the disk holds when the power fails, for the
// store with sync_mode::fsync, and what docs/kv.md promises for sync_mode::none.
//
// Interposition. This executable defines fdatasync, fsync and ftruncate; the store is linked in
// statically and its references (src/kv/store.cc: fdatasync after a commit's nodes and after its
// meta page, and in compact(); fsync of the directory after creating a file; ftruncate to grow a
// file and to trim a compacted one) bind to these definitions at link time. The store makes no
// other call that moves data to the disk (no msync, sync_file_range, O_SYNC/O_DSYNC, sync(2) or
// raw syscall), so it cannot bypass them; every test here also counts the syncs per commit (2
// with fsync, 0 without). Each definition passes through to the real system call (syscall(2)),
// so the other kv tests in this program are unaffected.
//
// Model. While a workload runs, each sync call, before it completes, closes an interval: a power
// loss in it leaves under the database's name either the inode the name had at the last
// directory sync or the one it has now (a rename or link reaches the disk at any time, and
// surely only at the directory's fsync), and in that inode the bytes of its last sync plus any
// subset of the 4 KiB pages changed since, each holding its latest content or an earlier one seen
// in between (the driver reads the file at random moments inside transactions: the kernel may
// write a page back mid-transaction), one of them possibly torn at 512-byte sectors, with the file
// size of its last sync, the smallest since (a trim) or the current one. Per interval the test
// opens the image holding none and all of the changes, every sector mix when one page changed
// (a meta page: all torn forms), and random mixes and tears otherwise. Each must open (read-only),
// validate, and hold exactly one committed state, no older than the last commit acknowledged
// (commit() returned) before the sync call and no newer than the one in flight, with the commit
// number the store gave it; a torn meta page must be reported as docs/kv.md says (named, and its
// commit reported lost when the page's new header is in place; read as the damaged older record,
// the loss unreported, when the old header is); and some images are then written to (a commit
// with sync none), validated and reopened.
//
// Limits: pages change on disk only as whole sectors of contents the test saw (a byte-level tear
// inside a sector is not modelled; the meta checksum covers it); intermediate page contents are
// sampled at the driver's reads, not at every store; files other than the one synced and the
// one under the name are taken as unchanged since their last sync; sizes between the sampled ones
// and data under a trimmed-then-regrown tail are not modelled; the drive is trusted to honour
// flushes and not to lose or misdirect synced writes; one thread; error paths of the sync calls
// (EIO) are not exercised. SIMDEX_KV_POWERLOSS_ROUNDS sets the rounds (default 2),
// SIMDEX_KV_POWERLOSS_STEPS the workload steps per round (default 50: transactions, empty
// commits, reopens, compactions, held snapshots), SIMDEX_KV_POWERLOSS_SEED the first round's seed
// (default 1); a failing image is kept on disk and named in the failure.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "kv/test_util.h"
#include "simdex/kv.h"

using namespace simdex;

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kSector = 512;
constexpr unsigned kSectors = kPage / kSector;

const std::string& zero_page() {
  static const std::string z(kPage, '\0');
  return z;
}
std::uint64_t pages_in(std::uint64_t size) { return (size + kPage - 1) / kPage; }

// A file's bytes, kept sparse: the store's files are 2 MiB or more and mostly zeros.
struct sparse {
  std::uint64_t bytes = 0;                     // the size
  std::map<std::uint64_t, std::string> pages;  // the pages that are not all zeros, whole
  std::uint64_t size() const { return bytes; }
};
using bytes = std::shared_ptr<const sparse>;

std::string_view page_of(const sparse& s, std::uint64_t p) {
  auto it = s.pages.find(p);
  return it == s.pages.end() ? std::string_view(zero_page()) : std::string_view(it->second);
}
// The pages in which two files' bytes differ.
std::vector<std::uint64_t> changed_pages(const sparse& a, const sparse& b) {
  std::vector<std::uint64_t> out;
  auto i = a.pages.begin(), j = b.pages.begin();
  while (i != a.pages.end() || j != b.pages.end()) {
    if (j == b.pages.end() || (i != a.pages.end() && i->first < j->first)) {
      out.push_back(i++->first);
    } else if (i == a.pages.end() || j->first < i->first) {
      out.push_back(j++->first);
    } else {
      if (i->second != j->second) out.push_back(i->first);
      ++i, ++j;
    }
  }
  return out;
}

std::optional<sparse> read_fd(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0) return std::nullopt;
  sparse s;
  s.bytes = static_cast<std::uint64_t>(st.st_size);
  static std::vector<char> buf(std::size_t{1} << 18);  // one thread records at a time
  for (std::uint64_t off = 0; off < s.bytes;) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), s.bytes - off));
    std::size_t got = 0;
    while (got < want) {
      const ssize_t n = pread(fd, buf.data() + got, want - got, static_cast<off_t>(off + got));
      if (n <= 0) return std::nullopt;
      got += static_cast<std::size_t>(n);
    }
    for (std::size_t i = 0; i < want; i += kPage) {
      const std::string_view page(buf.data() + i, std::min(kPage, want - i));
      if (page == std::string_view(zero_page()).substr(0, page.size())) continue;
      std::string& to = s.pages[(off + i) / kPage];
      to = page;
      to.resize(kPage, '\0');
    }
    off += want;
  }
  return s;
}

std::optional<ino_t> inode_of(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_ino;
}

// The bytes of the file under `path`, if it is inode `ino`.
std::optional<sparse> read_path(const std::string& path, ino_t ino) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<sparse> s;
  if (fstat(fd, &st) == 0 && st.st_ino == ino) s = read_fd(fd);
  ::close(fd);
  return s;
}

// ---- the model: every committed state ---------------------------------------------------------

std::uint64_t mix(std::uint64_t h, std::uint64_t x) {
  h ^= x + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h * 0xFF51AFD7ED558CCDull;
}
std::uint64_t hash_sv(std::string_view s) { return std::hash<std::string_view>{}(s); }

using kv_map = std::map<std::string, std::string>;

struct tree_model {
  kv_map kv;
  std::uint64_t hash = 0;
};
std::uint64_t tree_hash(const kv_map& m) {
  std::uint64_t h = 7;
  for (const auto& [k, v] : m) h = mix(mix(h, hash_sv(k)), hash_sv(v));
  return mix(h, m.size());
}
std::shared_ptr<const tree_model> make_tree(kv_map m) {
  auto t = std::make_shared<tree_model>();
  t->hash = tree_hash(m);
  t->kv = std::move(m);
  return t;
}

struct state {
  std::map<std::string, std::shared_ptr<const tree_model>> trees;  // every tree a commit created
  std::uint64_t hash = 0;
  ino_t ino = 0;          // the file it was committed to (0: not known)
  std::uint64_t seq = 0;  // its commit number there
};
std::uint64_t state_hash(const state& s) {
  std::uint64_t h = 1;
  for (const auto& [name, t] : s.trees) h = mix(mix(h, hash_sv(name)), t->hash);
  return h;
}

// What an opened database holds (call after validate(): reads trust the nodes).
struct found {
  std::uint64_t hash = 0, seq = 0;
  bool seq_agrees = true;  // every tree's snapshot has the commit number recovery() names
};
found read_db(const kv::database& db) {
  found f;
  f.seq = db.recovery().seq;
  std::vector<std::string> names = db.trees();
  std::sort(names.begin(), names.end());
  f.hash = 1;
  for (const std::string& name : names) {
    kv::snapshot s = db.read(name);
    if (s.seq() != f.seq) f.seq_agrees = false;
    std::uint64_t h = 7, n = 0;
    kv::cursor c = s.make_cursor();
    for (bool ok = c.first(); ok; ok = c.next(), ++n)
      h = mix(mix(h, hash_sv(c.key())), hash_sv(c.value()));
    if (n != s.size()) f.seq_agrees = false;
    f.hash = mix(mix(f.hash, hash_sv(name)), mix(h, n));
  }
  return f;
}

// The first difference between a database and a model state, in words.
std::string first_difference(const kv::database& db, const state& want) {
  std::vector<std::string> names = db.trees();
  std::sort(names.begin(), names.end());
  std::vector<std::string> model_names;
  for (const auto& t : want.trees) model_names.push_back(t.first);
  if (names != model_names) return "the trees differ";
  for (const std::string& name : names) {
    kv::snapshot s = db.read(name);
    const kv_map& m = want.trees.at(name)->kv;
    auto it = m.begin();
    kv::cursor c = s.make_cursor();
    for (bool ok = c.first(); ok; ok = c.next(), ++it) {
      if (it == m.end()) return "tree '" + name + "': extra key '" + std::string(c.key()) + "'";
      if (c.key() != it->first)
        return "tree '" + name + "': key '" + std::string(c.key()) + "' where the model has '" +
               it->first + "'";
      if (c.value() != it->second)
        return "tree '" + name + "': key '" + it->first + "' holds a value of " +
               std::to_string(c.value().size()) + " bytes, the model " +
               std::to_string(it->second.size());
    }
    if (it != m.end()) return "tree '" + name + "': key '" + it->first + "' is missing";
  }
  return "no difference found";
}

// ---- the recorder: the interposed sync calls ----------------------------------------------------

// An inode the database used: its bytes on disk as of its last sync, and what it has held since.
struct file_state {
  bytes durable;                                           // null: never synced (empty on disk)
  std::map<std::uint64_t, std::vector<std::string>> seen;  // page -> contents read since then
  std::uint64_t min_size = 0;                              // the smallest size since then
};

// What a power loss can leave in one inode the name may point to.
struct source {
  std::optional<ino_t> ino;  // none: no file under the name
  bytes base;                // the bytes of its last sync
  // Each page changed since: the contents it may hold instead (the latest last).
  std::map<std::uint64_t, std::vector<std::string>> versions;
  std::vector<std::uint64_t> sizes;  // the sizes it may have: the synced one first, the latest last
};

// A power loss before sync call `event` completed.
struct interval {
  std::uint64_t event = 0;
  std::string call;
  std::size_t lo = 0, hi = 0;  // the committed states (model indices) an image may hold
  std::vector<source> sources;
};

const bytes& no_bytes() {
  static const bytes b = std::make_shared<const sparse>();
  return b;
}

class recorder {
 public:
  explicit recorder(std::string path) : path_(std::move(path)) {
    const std::size_t slash = path_.rfind('/');
    dir_ino_ = inode_of(slash == std::string::npos ? "." : path_.substr(0, slash + 1)).value_or(0);
    // What is there already counts as on disk.
    if (auto ino = inode_of(path_)) {
      durable_name_ = ino;
      if (auto s = read_path(path_, *ino)) {
        file_state& f = file(*ino);
        f.min_size = s->size();
        f.durable = std::make_shared<const sparse>(std::move(*s));
      }
    }
  }

  std::size_t acked = 0, inflight = 0;  // set by the driver around commit() and compact()
  std::vector<interval> pending;        // intervals not yet checked
  std::uint64_t events = 0, file_syncs = 0, dir_syncs = 0;

  int sync(int fd, long nr) {
    struct stat st;
    if (fstat(fd, &st) != 0) return static_cast<int>(syscall(nr, fd));
    interval iv;
    iv.event = ++events;
    iv.lo = acked;
    iv.hi = inflight;
    std::optional<sparse> now;
    ino_t synced = 0;
    const bool dir = S_ISDIR(st.st_mode);
    if (dir) {
      ++dir_syncs;
      iv.call = "fsync of the directory";
    } else {
      ++file_syncs;
      synced = st.st_ino;
      now = read_fd(fd);
      iv.call = std::string(nr == SYS_fdatasync ? "fdatasync" : "fsync") + " of inode " +
                std::to_string(synced);
    }
    const std::optional<ino_t> name = inode_of(path_);
    iv.sources.push_back(make_source(durable_name_, synced, now ? &*now : nullptr));
    if (name != durable_name_)
      iv.sources.push_back(make_source(name, synced, now ? &*now : nullptr));
    pending.push_back(std::move(iv));
    const int rc = static_cast<int>(syscall(nr, fd));
    if (rc == 0) {
      if (dir && st.st_ino == dir_ino_) durable_name_ = inode_of(path_);
      if (!dir && now) {
        file_state& f = file(synced);
        f.min_size = now->size();
        f.durable = std::make_shared<const sparse>(std::move(*now));
        f.seen.clear();
      }
    }
    return rc;
  }

  void truncated(int fd, off_t len) {
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
    file_state& f = file(st.st_ino);
    f.min_size = std::min<std::uint64_t>(f.min_size, static_cast<std::uint64_t>(len));
  }

  // The pages of the file under the name now: writeback may store any of them at any moment.
  void observe() {
    const std::optional<ino_t> ino = inode_of(path_);
    if (!ino) return;
    const std::optional<sparse> now = read_path(path_, *ino);
    if (!now) return;
    file_state& f = file(*ino);
    const sparse& base = f.durable ? *f.durable : *no_bytes();
    for (std::uint64_t p : changed_pages(base, *now)) {
      const std::string_view v = page_of(*now, p);
      std::vector<std::string>& seen = f.seen[p];
      if (seen.empty() || seen.back() != v) seen.emplace_back(v);
    }
    f.min_size = std::min<std::uint64_t>(f.min_size, now->size());
  }

 private:
  file_state& file(ino_t ino) { return files_[ino]; }

  source make_source(std::optional<ino_t> ino, ino_t synced, const sparse* synced_now) {
    source s;
    s.ino = ino;
    s.base = no_bytes();
    if (!ino) {
      s.sizes.push_back(0);
      return s;
    }
    file_state& f = file(*ino);
    s.base = f.durable ? f.durable : no_bytes();
    const sparse& base = *s.base;
    std::optional<sparse> read;
    const sparse* now = nullptr;
    if (synced_now && *ino == synced) {
      now = synced_now;
    } else if (inode_of(path_) == ino) {
      read = read_path(path_, *ino);
      if (read) now = &*read;
    }
    s.versions = f.seen;
    if (now) {
      // The page cache now, last (a page seen changed may since be back at its synced content).
      std::set<std::uint64_t> pages;
      for (std::uint64_t p : changed_pages(base, *now)) pages.insert(p);
      for (const auto& seen : s.versions) pages.insert(seen.first);
      for (std::uint64_t p : pages) {
        const std::string_view v = page_of(*now, p);
        auto it = s.versions.find(p);
        if (it == s.versions.end()) {
          if (v == page_of(base, p)) continue;
          it = s.versions.emplace(p, std::vector<std::string>{}).first;
        }
        if (it->second.empty() || it->second.back() != v) it->second.emplace_back(v);
      }
    }
    s.sizes.push_back(base.size());
    for (std::uint64_t z : {std::min<std::uint64_t>(f.min_size, base.size()),
                            now ? now->size() : std::uint64_t{base.size()}})
      if (std::find(s.sizes.begin(), s.sizes.end(), z) == s.sizes.end()) s.sizes.push_back(z);
    // The latest size last.
    if (now && s.sizes.back() != now->size()) {
      s.sizes.erase(std::find(s.sizes.begin(), s.sizes.end(), now->size()));
      s.sizes.push_back(now->size());
    }
    return s;
  }

  std::string path_;
  ino_t dir_ino_ = 0;
  std::map<ino_t, file_state> files_;
  std::optional<ino_t> durable_name_;  // what the name points to on disk
};

std::atomic<recorder*> g_rec{nullptr};
// When positive: the fdatasync call this many calls on fails with EIO (1: the next one).
std::atomic<int> g_fail_fdatasync{0};

int interposed_sync(int fd, long nr) {
  if (recorder* r = g_rec.load(std::memory_order_relaxed)) return r->sync(fd, nr);
  return static_cast<int>(syscall(nr, fd));
}

}  // namespace

// The store's calls bind to these (see the top of the file).
extern "C" int fdatasync(int fd) {
  if (g_fail_fdatasync.load(std::memory_order_relaxed) > 0 && g_fail_fdatasync.fetch_sub(1) == 1) {
    errno = EIO;
    return -1;
  }
  return interposed_sync(fd, SYS_fdatasync);
}
extern "C" int fsync(int fd) { return interposed_sync(fd, SYS_fsync); }
extern "C" int ftruncate(int fd, off_t len) noexcept {
  if (recorder* r = g_rec.load(std::memory_order_relaxed)) r->truncated(fd, len);
  return static_cast<int>(syscall(SYS_ftruncate, fd, len));
}

namespace {

// ---- crash images ------------------------------------------------------------------------------

struct image {
  enum kind_t { none, all, sectors, random } kind = none;
  std::uint64_t size = 0;
  std::map<std::uint64_t, std::string> pages;  // page -> the content replacing the base's
  std::string how;                             // for messages
};

std::string tear(std::string_view old_page, std::string_view new_page, unsigned mask) {
  std::string out(old_page);
  for (unsigned i = 0; i < kSectors; ++i)
    if (mask >> i & 1) out.replace(i * kSector, kSector, new_page.substr(i * kSector, kSector));
  return out;
}
// The sectors in which two pages differ, as a mask.
unsigned differing_sectors(std::string_view a, std::string_view b) {
  unsigned m = 0;
  for (unsigned i = 0; i < kSectors; ++i)
    if (a.substr(i * kSector, kSector) != b.substr(i * kSector, kSector)) m |= 1u << i;
  return m;
}
// A random proper, non-empty part of `mask` (which has two bits or more).
unsigned part_of(unsigned mask, std::mt19937_64& rng) {
  for (;;) {
    const unsigned m = mask & static_cast<unsigned>(rng());
    if (m && m != mask) return m;
  }
}
// The k-th subset of the bits of mask (k's bits spread over mask's).
unsigned spread(unsigned k, unsigned mask) {
  unsigned out = 0;
  for (unsigned i = 0, j = 0; i < kSectors; ++i)
    if (mask >> i & 1) out |= ((k >> j++) & 1u) << i;
  return out;
}

std::vector<image> images_of(const source& s, std::mt19937_64& rng, int random_images) {
  std::vector<image> out;
  image none;
  none.size = s.sizes.front();
  none.how = "none of the unsynced writes, size " + std::to_string(none.size);
  out.push_back(none);
  if (s.versions.empty() && s.sizes.size() == 1) return out;
  image all;
  all.kind = image::all;
  all.size = s.sizes.back();
  for (const auto& [p, vs] : s.versions) all.pages[p] = vs.back();
  all.how = "all of them (" + std::to_string(all.pages.size()) + " pages), size " +
            std::to_string(all.size);
  out.push_back(all);
  const sparse& base = *s.base;
  if (s.versions.size() == 1 && s.versions.begin()->second.size() == 1) {
    // One page changed once (a meta page, say): every mix of its sectors.
    const auto& [p, vs] = *s.versions.begin();
    const unsigned d = differing_sectors(page_of(base, p), vs[0]);
    const int bits = __builtin_popcount(d);
    for (unsigned k = 1; k + 1 < (1u << bits); ++k) {
      image im;
      im.kind = image::sectors;
      im.size = s.sizes.back();
      const unsigned mask = spread(k, d);
      im.pages[p] = tear(page_of(base, p), vs[0], mask);
      char how[96];
      std::snprintf(how, sizeof how, "page %llu torn: new sectors mask 0x%02x of 0x%02x",
                    static_cast<unsigned long long>(p), mask, d);
      im.how = how;
      out.push_back(std::move(im));
    }
    return out;
  }
  for (int i = 0; i < random_images; ++i) {
    image im;
    im.kind = image::random;
    im.size = s.sizes[rng() % s.sizes.size()];
    im.how = "size " + std::to_string(im.size) + ";";
    const bool only_tear = i % 3 == 2;  // a third: one torn page and nothing else
    for (const auto& [p, vs] : s.versions) {
      if (only_tear || rng() % 2 == 0) continue;
      const std::size_t v = rng() % 2 ? vs.size() - 1 : rng() % vs.size();
      im.pages[p] = vs[v];
      im.how += " p" + std::to_string(p) + "=v" + std::to_string(v);
    }
    if (!s.versions.empty() && (only_tear || rng() % 2 == 0)) {
      // Tear one changed page between its synced content and one of its versions.
      auto it = s.versions.begin();
      std::advance(it, static_cast<std::ptrdiff_t>(rng() % s.versions.size()));
      const auto& [p, vs] = *it;
      const std::size_t v = rng() % vs.size();
      const unsigned d = differing_sectors(page_of(base, p), vs[v]);
      if (__builtin_popcount(d) >= 2) {
        const unsigned mask = part_of(d, rng);
        im.pages[p] = tear(page_of(base, p), vs[v], mask);
        char how[96];
        std::snprintf(how, sizeof how, " p%llu=torn(v%zu, mask 0x%02x of 0x%02x)",
                      static_cast<unsigned long long>(p), v, mask, d);
        im.how += how;
      }
    }
    out.push_back(std::move(im));
  }
  return out;
}

bool copy_file(const std::string& from, const std::string& to) {
  const std::optional<ino_t> ino = inode_of(from);
  const std::optional<sparse> b = ino ? read_path(from, *ino) : std::nullopt;
  if (!b) return false;
  const int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  bool ok = ::ftruncate(fd, static_cast<off_t>(b->size())) == 0;
  for (const auto& [p, page] : b->pages)
    ok = ok && pwrite(fd, page.data(), kPage, static_cast<off_t>(p * kPage)) ==
                   static_cast<ssize_t>(kPage);
  ::close(fd);
  return ok;
}

// The file images are opened from. Each image is written over the last one, only the pages that
// differ (no truncation to zero, whose flush on close ext4 would start), so an image costs about
// what it changes.
class scratch_file {
 public:
  explicit scratch_file(std::string path) : path_(std::move(path)) {}
  ~scratch_file() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

  void write(const source& s, const image& im) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << path_;
    // Over an image of the same base and size only the pages either image changed differ.
    std::set<std::uint64_t> todo;
    const bool same = base_ == s.base && bytes_.size() == im.size;
    if (same) {
      todo = std::move(changed_);
      for (const auto& page : im.pages) todo.insert(page.first);
    } else {
      if (bytes_.size() != im.size) {
        ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(im.size)), 0);
        bytes_.bytes = im.size;
        bytes_.pages.erase(bytes_.pages.lower_bound(pages_in(im.size)), bytes_.pages.end());
      }
      for (const auto& page : bytes_.pages) todo.insert(page.first);
      for (const auto& page : s.base->pages) todo.insert(page.first);
      for (const auto& page : im.pages) todo.insert(page.first);
    }
    for (std::uint64_t p : todo) {
      if (p >= pages_in(im.size)) continue;
      auto it = im.pages.find(p);
      const std::string_view want =
          it != im.pages.end() ? std::string_view(it->second) : page_of(*s.base, p);
      if (want == page_of(bytes_, p)) continue;
      ASSERT_EQ(pwrite(fd, want.data(), kPage, static_cast<off_t>(p * kPage)),
                static_cast<ssize_t>(kPage));
      if (want == zero_page())
        bytes_.pages.erase(p);
      else
        bytes_.pages[p] = want;
    }
    ::close(fd);
    base_ = s.base;  // held, so that its address names it
    changed_.clear();
    for (const auto& page : im.pages) changed_.insert(page.first);
  }
  // After the store wrote to the file.
  void reread() {
    const std::optional<ino_t> ino = inode_of(path_);
    const std::optional<sparse> b = ino ? read_path(path_, *ino) : std::nullopt;
    bytes_ = b ? *b : sparse();
    base_.reset();
  }

 private:
  std::string path_;
  sparse bytes_;                     // what the file holds
  bytes base_;                       // the base of the last image written
  std::set<std::uint64_t> changed_;  // the pages where it differs from that base
};

struct tally {
  std::uint64_t intervals = 0, images = 0, none = 0, all = 0, sectors = 0, random = 0;
  std::uint64_t no_database = 0, newer = 0;  // images of no file; images of the commit in flight
  std::uint64_t torn_meta_reported = 0, torn_meta_unreported = 0;
  std::uint64_t written_after = 0;
  // sync none only
  std::uint64_t open_errors = 0, validate_errors = 0, exact = 0, older_state = 0, no_state = 0;
  std::map<std::string, std::uint64_t> error_kinds;
  void add(const image& im) {
    ++images;
    (im.kind == image::none      ? none
     : im.kind == image::all     ? all
     : im.kind == image::sectors ? sectors
                                 : random)++;
  }
};

// Checks images against the committed states.
class checker {
 public:
  checker(std::string scratch, std::uint64_t seed, const std::vector<state>& states)
      : file_(std::move(scratch)), scratch_(file_.path()), rng_(seed), states_(states) {}

  tally t;
  int failures = 0;
  std::string context;  // round and seed, for messages

  // sync_mode::fsync: every image must hold a committed state in [lo, hi].
  void check_fsync(const interval& iv) {
    ++t.intervals;
    for (const source& s : iv.sources) {
      // An unchanged file already checked for these bounds (the old file while compact() syncs
      // the new one) gives the same images again.
      if (s.versions.empty() && s.sizes.size() == 1) {
        const auto key = std::make_tuple(s.base.get(), s.ino.value_or(0), iv.lo, iv.hi);
        if (key == last_unchanged_) continue;
        last_unchanged_ = key;
      }
      for (const image& im : images_of(s, rng_, 6)) {
        t.add(im);
        fsync_image(iv, s, im);
      }
    }
  }

  // sync_mode::none: the page cache of commit lo (`s.base`) with any of the later pages up to
  // commit hi. docs/kv.md: a killed process loses nothing (none and all: exactly those commits);
  // a power loss may lose recent commits "and, without an ordering barrier, could tear more":
  // no promise but the general one, an error or a passing validate, never a crash.
  void check_none(std::size_t lo, std::size_t hi, const source& s) {
    ++t.intervals;
    interval iv;
    iv.lo = lo;
    iv.hi = hi;
    iv.call = "commits " + std::to_string(lo) + ".." + std::to_string(hi);
    for (const image& im : images_of(s, rng_, 8)) {
      t.add(im);
      file_.write(s, im);
      if (im.kind == image::none || im.kind == image::all) {
        expect_exact(iv, s, im, im.kind == image::none ? lo : hi);
        continue;
      }
      std::optional<kv::database> db;
      try {
        db = kv::database::open(scratch_, {kv::sync_mode::none, true, std::nullopt});
      } catch (const kv::error& e) {
        ++t.open_errors;
        ++t.error_kinds[std::string("open: ") + kv::error_kind_name(e.kind())];
        continue;
      }
      try {
        db->validate();
      } catch (const kv::error& e) {
        ++t.validate_errors;
        ++t.error_kinds[std::string("validate: ") + kv::error_kind_name(e.kind())];
        continue;
      }
      const found f = read_db(*db);
      bool in_range = false, any = false;
      for (std::size_t j = 0; j < states_.size(); ++j) {
        if (states_[j].hash != f.hash) continue;
        any = true;
        if (j >= lo && j <= hi) in_range = true;
      }
      (in_range ? t.exact : any ? t.older_state : t.no_state)++;
    }
  }

 private:
  void fail(const interval& iv, const source& s, const image& im, const std::string& what,
            bool keep = true) {
    ++failures;
    std::string kept;
    if (keep && failures <= 5) {
      kept = scratch_ + ".failed-" + std::to_string(failures);
      if (!copy_file(scratch_, kept)) kept = "(not kept)";
    }
    if (failures <= 20)
      ADD_FAILURE() << context << ", sync call " << iv.event << " (" << iv.call << "), inode "
                    << s.ino.value_or(0) << ", committed states " << iv.lo << ".." << iv.hi
                    << ", image: " << im.how << ": " << what
                    << (kept.empty() ? "" : "; image kept as " + kept);
  }

  // Opens the image (already written), validates it and finds its state in [lo, hi].
  std::optional<std::size_t> expect_state(const interval& iv, const source& s, const image& im,
                                          std::optional<kv::database>& db) {
    try {
      db = kv::database::open(scratch_, {kv::sync_mode::none, true, std::nullopt});
      db->validate();
    } catch (const kv::error& e) {
      fail(iv, s, im, std::string("open or validate failed: ") + e.what());
      return std::nullopt;
    }
    const found f = read_db(*db);
    if (!f.seq_agrees) fail(iv, s, im, "a tree's snapshot disagrees with recovery() on its seq");
    for (std::size_t j = iv.lo; j <= iv.hi && j < states_.size(); ++j) {
      const state& st = states_[j];
      if (st.hash == f.hash && (st.ino != *s.ino || st.seq == f.seq)) return j;
    }
    std::string what = "opened commit " + std::to_string(f.seq) + ", which is ";
    std::optional<std::size_t> other;
    for (std::size_t j = 0; j < states_.size(); ++j)
      if (states_[j].hash == f.hash) other = j;
    if (other)
      what += "committed state " + std::to_string(*other) + " (outside the bounds)";
    else
      what += "no committed state";
    if (iv.lo < states_.size())
      what +=
          "; against state " + std::to_string(iv.lo) + ": " + first_difference(*db, states_[iv.lo]);
    fail(iv, s, im, what);
    return std::nullopt;
  }

  void expect_exact(const interval& iv, const source& s, const image& im, std::size_t j) {
    interval one = iv;
    one.lo = one.hi = j;
    std::optional<kv::database> db;
    expect_state(one, s, im, db);
  }

  void fsync_image(const interval& iv, const source& s, const image& im) {
    if (!s.ino || im.size == 0) {
      // No database under the name (or an empty file, which opening replaces by an empty one):
      // right only while nothing is acknowledged.
      ++t.no_database;
      if (iv.lo != 0)
        fail(iv, s, im, "the name may hold no database, but commits were acknowledged", false);
      return;
    }
    file_.write(s, im);
    std::optional<kv::database> db;
    const std::optional<std::size_t> j = expect_state(iv, s, im, db);
    if (!j) return;
    if (*j > iv.lo) ++t.newer;
    // The meta pages: a torn one is named, and said to lose its commit when its header is new.
    const kv::recovery_info rec = db->recovery();
    int torn = -1;
    bool new_header = false;
    for (int slot = 0; slot < 2; ++slot) {
      const std::uint64_t p = static_cast<std::uint64_t>(slot);
      auto v = s.versions.find(p);
      if (v == s.versions.end()) continue;
      auto c = im.pages.find(p);
      const std::string_view page = c == im.pages.end() ? page_of(*s.base, p) : c->second;
      if (page == page_of(*s.base, p) ||
          std::find(v->second.begin(), v->second.end(), page) != v->second.end())
        continue;
      torn = slot;
      for (const std::string& n : v->second)
        if (page.substr(0, kSector) == std::string_view(n).substr(0, kSector)) new_header = true;
    }
    if (torn < 0) {
      if (rec.damaged_page != -1 || rec.meta_fallback)
        fail(iv, s, im, "no meta page is torn, yet recovery() says: " + rec.detail);
    } else if (rec.damaged_page != torn) {
      fail(iv, s, im,
           "meta page " + std::to_string(torn) + " is torn, recovery() names page " +
               std::to_string(rec.damaged_page) + ": " + rec.detail);
    } else if (new_header) {
      ++t.torn_meta_reported;
      if (!rec.meta_fallback || rec.lost_seq != rec.seq + 1)
        fail(iv, s, im,
             "a torn meta page with the new header must report commit " +
                 std::to_string(rec.seq + 1) + " lost: " + rec.detail);
    } else {
      ++t.torn_meta_unreported;
      if (rec.meta_fallback)
        fail(iv, s, im,
             "a torn meta page with the old header reads as the older record: " + rec.detail);
    }
    // Some images are written to after the crash: the next commit must leave a sound file.
    if (torn >= 0 || rng_() % 8 == 0) {
      db.reset();
      write_after(iv, s, im, *j);
    }
  }

  void write_after(const interval& iv, const source& s, const image& im, std::size_t j) {
    ++t.written_after;
    static const std::string key = "\xff after the power loss";
    try {
      {
        kv::database w = kv::database::open(scratch_, {kv::sync_mode::none, false, std::nullopt});
        kv::write_tx tx = w.write();
        tx.put(key, "1");
        tx.commit();
        w.validate();
      }
      kv::database r = kv::database::open(scratch_, {kv::sync_mode::none, true, std::nullopt});
      r.validate();
      if (r.recovery().damaged_page != -1)
        fail(iv, s, im, "after a commit, a meta page is still damaged: " + r.recovery().detail);
      state want = states_[j];
      auto it = want.trees.find("");
      kv_map m = it == want.trees.end() ? kv_map{} : it->second->kv;
      m[key] = "1";
      want.trees[""] = make_tree(std::move(m));
      if (read_db(r).hash != state_hash(want))
        fail(iv, s, im, "a commit after the crash: " + first_difference(r, want));
    } catch (const kv::error& e) {
      fail(iv, s, im, std::string("a commit after the crash failed: ") + e.what());
    }
    file_.reread();
  }

  scratch_file file_;
  const std::string& scratch_;
  std::mt19937_64 rng_;
  const std::vector<state>& states_;
  std::tuple<const sparse*, ino_t, std::size_t, std::size_t> last_unchanged_{};
};

// ---- the workload -------------------------------------------------------------------------------

struct counts {
  std::uint64_t commits = 0, aborts = 0, reopens = 0, compactions = 0, sync_mismatch = 0;
  void add(const counts& o) {
    commits += o.commits, aborts += o.aborts, reopens += o.reopens;
    compactions += o.compactions, sync_mismatch += o.sync_mismatch;
  }
};

class driver {
 public:
  driver(std::string path, kv::sync_mode mode, std::uint64_t seed, recorder& rec,
         std::vector<state>& states)
      : path_(std::move(path)), mode_(mode), rng_(seed), rec_(rec), states_(states) {}

  std::function<void()> observe;   // mid-transaction: the page cache may be written back now
  std::function<void()> on_acked;  // a commit returned
  counts n;

  void open() {
    db_ = kv::database::open(path_, {mode_, false, std::nullopt});
    if (db_.recovery().damaged_page != -1) ADD_FAILURE() << "reopen: " << db_.recovery().detail;
    state& last = states_.back();
    if (!last.ino) {
      last.ino = inode_of(path_).value_or(0);
      last.seq = db_.recovery().seq;
    }
    EXPECT_EQ(read_db(db_).hash, last.hash) << "reopened database differs from the model";
  }
  void close() {
    held_.reset();
    db_.close();
  }

  void step() {
    const int r = static_cast<int>(rng_() % 100);
    const std::uint64_t phase = step_no_++ % 200;
    if (phase == 20 || phase == 28) {
      // About 1.8 MB of values in one commit grows the file past its first 2 MiB (a size change
      // inside a commit); removing them eight steps later frees it all, which soon makes a full
      // free-space list replace the chain of deltas.
      kv::write_tx tx = db_.write("bulk");
      kv_map m = current_tree("bulk");
      if (phase == 20) {
        for (int i = 0; i < 160; ++i) {
          std::string k = kvt::numbered("bulk", rng_() % 100000), v = value("blobs");
          v.resize(6000 + rng_() % 10000, 'b');
          tx.put(k, v);
          m[std::move(k)] = std::move(v);
        }
      } else {
        EXPECT_EQ(tx.remove_range("", std::nullopt), m.size());
        m.clear();
      }
      commit(tx, "bulk", std::move(m));
    } else if (r < 5) {
      close();
      open();
      ++n.reopens;
    } else if (r < 8 && mode_ == kv::sync_mode::fsync) {
      compact();
    } else if (r < 11) {
      kv::write_tx tx = db_.write(tree_name());  // an empty commit (may create the tree)
      commit(tx, tx_tree_, current_tree(tx_tree_));
    } else if (r < 15) {
      if (held_)
        held_.reset();
      else {  // pins the versions it can see (of the default tree if this one is not made yet)
        const std::string name = tree_name();
        const std::vector<std::string> made = db_.trees();
        held_ = db_.read(std::find(made.begin(), made.end(), name) != made.end() ? name : "");
      }
    } else {
      const bool big = rng_() % 12 == 0;
      kv::write_tx tx = db_.write(tree_name());
      const std::string tree = tx_tree_;
      kv_map m = current_tree(tree);
      run_ops(tx, m, tree,
              big ? 100 + static_cast<int>(rng_() % 250) : 1 + static_cast<int>(rng_() % 30), 0);
      if (rng_() % 10 == 0) {
        tx.abort();
        ++n.aborts;
      } else {
        commit(tx, tree, std::move(m));
      }
    }
  }

 private:
  const std::string& tree_name() {
    static const char* const names[] = {"", "alpha", "blobs", "t3", "t4", "t5"};
    const std::size_t n = 3 + (rng_() % 8 == 0 ? rng_() % 4 : 0);
    tx_tree_ = names[rng_() % std::min<std::size_t>(n, 6)];
    return tx_tree_;
  }
  kv_map current_tree(const std::string& tree) const {
    const auto& trees = states_.back().trees;
    auto it = trees.find(tree);
    return it == trees.end() ? kv_map{} : it->second->kv;
  }

  std::string key(const std::string& tree) {
    const std::uint64_t n = rng_();
    switch (n % 7) {
      case 0:
      case 1:
      case 2: {
        char b[16];
        std::snprintf(b, sizeof b, "k%04u",
                      static_cast<unsigned>(n >> 8) % (tree == "blobs" ? 40 : 500));
        return b;
      }
      case 3:
        return "user/profile/" + std::to_string((n >> 8) % 200) + "/name";
      case 4: {
        std::string s;
        const std::size_t len = 1 + (n >> 8) % 20;
        for (std::size_t i = 0; i < len; ++i) s += static_cast<char>('a' + rng_() % 4);
        return s;
      }
      case 5:
        return std::string(60 + (n >> 8) % 200, 'p') + std::to_string((n >> 16) % 30);
      default:
        return (n >> 8) % 50 == 0 ? std::string() : "z" + std::to_string((n >> 8) % 100);
    }
  }
  std::string value(const std::string& tree) {
    const std::uint64_t n = rng_() % 100;
    std::size_t len;
    if (tree == "blobs" ? n < 20 : n < 60)
      len = rng_() % 41;  // inline
    else if (tree == "blobs" ? n < 40 : n < 85)
      len = 41 + rng_() % 200;  // around the 64-byte inline limit
    else if (tree == "blobs" ? n < 90 : n < 98)
      len = 200 + rng_() % 3000;
    else
      len = 3000 + rng_() % 13000;  // value nodes over several pages
    std::string v(len, '\0');
    for (std::size_t i = 0; i < len; i += 8) {
      const std::uint64_t x = rng_();
      std::memcpy(v.data() + i, &x, std::min<std::size_t>(8, len - i));
    }
    return v;
  }
  // A key the tree holds (or any key, when it is empty).
  std::string existing(const kv_map& m, const std::string& tree) {
    if (m.empty()) return key(tree);
    auto it = m.begin();
    std::advance(it, static_cast<std::ptrdiff_t>(rng_() % m.size()));
    return it->first;
  }

  void run_ops(kv::write_tx& tx, kv_map& m, const std::string& tree, int ops, int depth) {
    for (int i = 0; i < ops; ++i) {
      const int r = static_cast<int>(rng_() % 100);
      if (r < 40) {
        std::string k = key(tree), v = value(tree);
        tx.put(k, v);
        m[std::move(k)] = std::move(v);
      } else if (r < 47) {
        std::string k = rng_() % 2 ? existing(m, tree) : key(tree), v = value(tree);
        EXPECT_EQ(tx.upsert(k, v), !m.count(k));
        m[std::move(k)] = std::move(v);
      } else if (r < 51) {
        std::string k = key(tree), v = value(tree);
        const bool absent = !m.count(k);
        EXPECT_EQ(tx.insert(k, v), absent);
        if (absent) m[std::move(k)] = std::move(v);
      } else if (r < 55) {
        std::string k = rng_() % 2 ? existing(m, tree) : key(tree), v = value(tree);
        const bool present = m.count(k) != 0;
        EXPECT_EQ(tx.update(k, v), present);
        if (present) m[std::move(k)] = std::move(v);
      } else if (r < 70) {
        const std::string k = rng_() % 4 ? existing(m, tree) : key(tree);
        EXPECT_EQ(tx.remove(k), m.erase(k) == 1);
      } else if (r < 74) {
        // A range from a key to one a few keys on (or to the end).
        const std::string lo = existing(m, tree);
        auto a = m.lower_bound(lo), b = a;
        const std::size_t span = rng_() % 20;
        for (std::size_t s = 0; s < span && b != m.end(); ++s) ++b;
        std::optional<std::string> hi;
        if (b != m.end() || rng_() % 4) hi = b == m.end() ? lo + "\x01" : b->first;
        if (hi && *hi < lo) hi = lo;
        auto e = hi ? m.lower_bound(*hi) : m.end();
        const std::uint64_t want =
            hi && *hi <= lo ? 0 : static_cast<std::uint64_t>(std::distance(a, e));
        EXPECT_EQ(tx.remove_range(lo, hi), want);
        if (want) m.erase(a, e);
      } else if (r < 79 && depth < 2) {
        kv_map saved = m;
        kv::write_tx sub = tx.sub();
        run_ops(sub, m, tree, 1 + static_cast<int>(rng_() % 12), depth + 1);
        if (rng_() % 3 == 0) {
          sub.abort();
          m = std::move(saved);
        } else {
          sub.commit();
        }
      } else if (r < 82 && m.empty()) {
        std::set<std::string> keys;
        const std::size_t n = 20 + rng_() % 200;
        while (keys.size() < n) keys.insert(key(tree));
        std::vector<std::string> vals;
        for (std::size_t i = 0; i < n; ++i) vals.push_back(value(tree));
        std::vector<std::pair<std::string_view, std::string_view>> pairs;
        std::size_t i = 0;
        for (const std::string& k : keys) pairs.emplace_back(k, vals[i++]);
        tx.bulk_load(pairs);
        i = 0;
        for (const std::string& k : keys) m[k] = vals[i++];
      } else if (r < 88) {
        const std::string k = rng_() % 2 ? existing(m, tree) : key(tree);
        const auto got = tx.get(k);
        auto it = m.find(k);
        EXPECT_EQ(got.has_value(), it != m.end()) << k;
        if (got && it != m.end()) {
          EXPECT_EQ(*got, it->second) << k;
        }
      } else {
        std::string k = existing(m, tree), v = value(tree);
        tx.put(k, v);
        m[std::move(k)] = std::move(v);
      }
      if (observe && rng_() % 8 == 0) observe();
    }
  }

  void commit(kv::write_tx& tx, const std::string& tree, kv_map m) {
    state next;
    next.trees = states_.back().trees;
    next.trees[tree] = make_tree(std::move(m));
    next.hash = state_hash(next);
    states_.push_back(std::move(next));
    rec_.inflight = states_.size() - 1;
    const std::uint64_t before = rec_.file_syncs;
    tx.commit();
    rec_.acked = rec_.inflight;
    ++n.commits;
    // Two syncs a commit with fsync (nodes, then the meta page), none without: also the proof
    // that the store's sync calls reach the interposed ones.
    const std::uint64_t want = mode_ == kv::sync_mode::fsync ? 2 : 0;
    if (rec_.file_syncs - before != want) ++n.sync_mismatch;
    state& st = states_.back();
    st.ino = inode_of(path_).value_or(0);
    st.seq = db_.read().seq();
    if (on_acked) on_acked();
  }

 public:
  // One commit of one key into the default tree.
  void put_one(const std::string& key) {
    kv::write_tx tx = db_.write();
    kv_map m = current_tree("");
    tx.put(key, "v");
    m[key] = "v";
    commit(tx, "", std::move(m));
  }

  void compact() {
    held_.reset();
    states_.push_back(states_.back());  // the same contents in a new file, numbered anew
    states_.back().ino = 0;
    rec_.inflight = states_.size() - 1;
    db_.compact();
    rec_.acked = rec_.inflight;
    ++n.compactions;
    state& st = states_.back();
    st.ino = inode_of(path_).value_or(0);
    st.seq = db_.read().seq();
    EXPECT_EQ(read_db(db_).hash, st.hash) << "compacted database differs from the model";
  }

 private:
  std::string path_;
  kv::sync_mode mode_;
  std::mt19937_64 rng_;
  recorder& rec_;
  std::vector<state>& states_;
  kv::database db_;
  std::optional<kv::snapshot> held_;
  std::string tx_tree_;
  std::uint64_t step_no_ = 0;
};

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

void print_tally(const char* what, const tally& t, double seconds, const counts& d) {
  std::printf(
      "[ power loss ] %s: %llu commits, %llu aborts, %llu reopens, %llu compactions; %llu "
      "intervals, %llu images (none %llu, all %llu, sector mixes %llu, random %llu) in %.2f s\n",
      what, static_cast<unsigned long long>(d.commits), static_cast<unsigned long long>(d.aborts),
      static_cast<unsigned long long>(d.reopens), static_cast<unsigned long long>(d.compactions),
      static_cast<unsigned long long>(t.intervals), static_cast<unsigned long long>(t.images),
      static_cast<unsigned long long>(t.none), static_cast<unsigned long long>(t.all),
      static_cast<unsigned long long>(t.sectors), static_cast<unsigned long long>(t.random),
      seconds);
}

void add_tally(tally& a, const tally& b) {
  a.intervals += b.intervals, a.images += b.images, a.none += b.none, a.all += b.all;
  a.sectors += b.sectors, a.random += b.random, a.no_database += b.no_database;
  a.newer += b.newer, a.torn_meta_reported += b.torn_meta_reported;
  a.torn_meta_unreported += b.torn_meta_unreported, a.written_after += b.written_after;
  a.open_errors += b.open_errors, a.validate_errors += b.validate_errors, a.exact += b.exact;
  a.older_state += b.older_state, a.no_state += b.no_state;
  for (const auto& [k, n] : b.error_kinds) a.error_kinds[k] += n;
}

// The states list a run starts from: the empty database.
std::vector<state> initial_states() {
  std::vector<state> states(1);
  states[0].hash = state_hash(states[0]);
  return states;
}

// A test's rounds (SIMDEX_KV_POWERLOSS_ROUNDS, seeds from SIMDEX_KV_POWERLOSS_SEED) and what
// they added up to.
struct sweep {
  const int rounds = env_int("SIMDEX_KV_POWERLOSS_ROUNDS", 2);
  const int first = env_int("SIMDEX_KV_POWERLOSS_SEED", 1);
  const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  tally total;
  counts sum;
  int failures = 0;
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
};

}  // namespace

// sync_mode::fsync: every image a power loss can leave opens, validates and holds exactly one
// committed state, none older than an acknowledged commit.
TEST(KvPowerLoss, FsyncKeepsEveryAcknowledgedCommit) {
  sweep w;
  const int rounds = w.rounds, first = w.first;
  tally& total = w.total;
  counts& sum = w.sum;
  int& failures = w.failures;
  std::uint64_t events = 0;
  for (int round = 0; round < rounds && failures == 0; ++round) {
    const std::uint64_t seed = static_cast<std::uint64_t>(first + round);
    const std::string path = kvt::tmp_path("powerloss_" + std::to_string(seed));
    std::remove((path + ".compact").c_str());
    if (seed % 2 == 0) {
      // An empty file under the name: opening replaces it (renamed over it).
      const int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      ASSERT_GE(fd, 0);
      ::close(fd);
    }
    std::vector<state> states = initial_states();
    recorder rec(path);
    checker chk(kvt::tmp_path("powerloss_image"), seed * 7919, states);
    chk.context = "round seed " + std::to_string(seed);
    driver d(path, kv::sync_mode::fsync, seed, rec, states);
    d.observe = [&] { rec.observe(); };
    auto check_pending = [&] {
      g_rec.store(nullptr);
      for (const interval& iv : rec.pending) chk.check_fsync(iv);
      rec.pending.clear();
      g_rec.store(&rec);
    };
    g_rec.store(&rec);
    d.open();
    check_pending();
    const int steps = env_int("SIMDEX_KV_POWERLOSS_STEPS", 50);
    for (int s = 0; s < steps && chk.failures == 0; ++s) {
      d.step();
      check_pending();
    }
    g_rec.store(nullptr);
    d.close();
    EXPECT_EQ(d.n.sync_mismatch, 0u) << "commits that did not make exactly two interposed syncs";
    EXPECT_GT(rec.file_syncs, 2 * d.n.commits) << "the interposed fdatasync saw too few calls";
    failures += chk.failures;
    events += rec.events;
    add_tally(total, chk.t);
    sum.add(d.n);
    std::remove(path.c_str());
    std::remove((path + ".compact").c_str());
  }
  const double secs = w.seconds();
  print_tally("fsync", total, secs, sum);
  std::printf(
      "[ power loss ] fsync: %d rounds, %llu sync calls; images holding the commit in flight "
      "%llu, no database (before the first open returned) %llu, torn meta pages reported lost "
      "%llu, torn with the old header (not reported, as documented) %llu, written to after the "
      "crash %llu\n",
      rounds, static_cast<unsigned long long>(events), static_cast<unsigned long long>(total.newer),
      static_cast<unsigned long long>(total.no_database),
      static_cast<unsigned long long>(total.torn_meta_reported),
      static_cast<unsigned long long>(total.torn_meta_unreported),
      static_cast<unsigned long long>(total.written_after));
  EXPECT_EQ(failures, 0);
  EXPECT_GT(total.torn_meta_reported, 0u);
  EXPECT_GT(total.torn_meta_unreported, 0u);
}

// sync_mode::none, as docs/kv.md describes it: the page cache of any commit (what a killed
// process leaves) opens to exactly that commit; a power loss that writes back some of the pages
// of later commits may lose them or worse ("could tear more"), so those images only have to open
// with an error or validate, never crash or hang. What they gave is printed.
TEST(KvPowerLoss, SyncNoneOpensOrFailsCleanly) {
  sweep w;
  const int rounds = w.rounds, first = w.first;
  tally& total = w.total;
  counts& sum = w.sum;
  int& failures = w.failures;
  for (int round = 0; round < rounds && failures == 0; ++round) {
    const std::uint64_t seed = static_cast<std::uint64_t>(first + round) + 1000;
    const std::string path = kvt::tmp_path("powerloss_none_" + std::to_string(seed));
    std::vector<state> states = initial_states();
    recorder rec(path);
    checker chk(kvt::tmp_path("powerloss_none_image"), seed * 7919, states);
    chk.context = "sync none, round seed " + std::to_string(seed);
    driver d(path, kv::sync_mode::none, seed, rec, states);
    // The file's bytes: at each acknowledged commit, and read mid-transaction since the last.
    struct capture {
      bytes data;
      std::size_t state;  // the commit acknowledged when read
      bool at_ack;
    };
    std::deque<capture> caps;
    std::mt19937_64 pick(seed);
    auto take = [&](bool at_ack) {
      auto ino = inode_of(path);
      if (!ino) return;
      if (auto s = read_path(path, *ino))
        caps.push_back({std::make_shared<const sparse>(std::move(*s)), rec.acked, at_ack});
    };
    d.observe = [&] { take(false); };
    d.on_acked = [&] {
      take(true);
      const std::size_t hi = rec.acked;
      // The page cache of a commit up to three back, with pages written since.
      const std::size_t lo = hi - 1 - std::min<std::size_t>(hi - 1, pick() % 3);
      auto from = std::find_if(caps.begin(), caps.end(),
                               [&](const capture& c) { return c.at_ack && c.state == lo; });
      if (from != caps.end()) {
        source s;
        s.ino = inode_of(path);
        s.base = from->data;
        s.sizes.push_back(s.base->size());
        for (auto c = std::next(from); c != caps.end(); ++c) {
          const sparse& now = *c->data;
          for (std::uint64_t p : changed_pages(*s.base, now)) {
            const std::string_view v = page_of(now, p);
            std::vector<std::string>& vs = s.versions[p];
            if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.emplace_back(v);
          }
          if (s.sizes.back() != now.size()) s.sizes.push_back(now.size());
        }
        // The latest content of every changed page last, for the "all" image (it may be
        // the base's again).
        const sparse& last = *caps.back().data;
        for (auto& [p, vs] : s.versions) {
          auto it = std::find(vs.begin(), vs.end(), page_of(last, p));
          if (it != vs.end())
            std::rotate(it, it + 1, vs.end());
          else
            vs.emplace_back(page_of(last, p));
        }
        g_rec.store(nullptr);
        chk.check_none(lo, hi, s);
        g_rec.store(&rec);
      }
      // Keep the captures from three commits back on.
      while (!caps.empty() && caps.front().state + 3 < hi) caps.pop_front();
    };
    g_rec.store(&rec);
    d.open();
    take(true);
    const int steps = env_int("SIMDEX_KV_POWERLOSS_STEPS", 50);
    for (int s = 0; s < steps && chk.failures == 0; ++s) d.step();
    g_rec.store(nullptr);
    d.close();
    EXPECT_EQ(d.n.sync_mismatch, 0u) << "a commit with sync none made an interposed sync";
    failures += chk.failures;
    add_tally(total, chk.t);
    sum.add(d.n);
    std::remove(path.c_str());
  }
  const double secs = w.seconds();
  print_tally("sync none", total, secs, sum);
  std::printf(
      "[ power loss ] sync none, mixed images: %llu open errors, %llu validate errors, %llu "
      "a commit in range, %llu an older commit, %llu no committed state (validated)\n",
      static_cast<unsigned long long>(total.open_errors),
      static_cast<unsigned long long>(total.validate_errors),
      static_cast<unsigned long long>(total.exact),
      static_cast<unsigned long long>(total.older_state),
      static_cast<unsigned long long>(total.no_state));
  for (const auto& [k, n] : total.error_kinds)
    std::printf("[ power loss ]   %s: %llu\n", k.c_str(), static_cast<unsigned long long>(n));
  EXPECT_EQ(failures, 0);
}

// Regression (found by the test above): compact() renamed the new file over the old one without
// syncing the directory, so after a power loss the name could still hold the old file, and every
// commit acknowledged since the compaction (with fsync) was lost. One commit, a compaction, two
// commits: the images of the last commits' sync calls include the old file under the name.
TEST(KvPowerLoss, CommitsAfterCompactSurvive) {
  const std::string path = kvt::tmp_path("powerloss_compact");
  std::remove((path + ".compact").c_str());
  std::vector<state> states = initial_states();
  recorder rec(path);
  checker chk(kvt::tmp_path("powerloss_compact_image"), 1, states);
  chk.context = "commit, compact, commit, commit";
  driver d(path, kv::sync_mode::fsync, 1, rec, states);
  g_rec.store(&rec);
  d.open();
  d.put_one("a");
  d.compact();
  d.put_one("b");
  d.put_one("c");
  g_rec.store(nullptr);
  d.close();
  for (const interval& iv : rec.pending) chk.check_fsync(iv);
  EXPECT_EQ(chk.failures, 0);
  EXPECT_GT(chk.t.images, 10u);
  std::remove(path.c_str());
}

// A commit whose fdatasync fails (EIO) threw after it had published the new trees in memory; the
// transaction's destructor then aborted the level, freeing the nodes of the tree that was now the
// database's, so validate() found free space over live nodes and the next commit overwrote them,
// in the file too. The commit now stays in memory and the database refuses writes until reopened.
TEST(KvPowerLoss, FailedSyncLeavesTheStoreSound) {
  for (int which : {1, 2}) {  // the sync after the nodes; the one after the meta page
    SCOPED_TRACE(which == 1 ? "nodes' fdatasync fails" : "meta page's fdatasync fails");
    const std::string path = kvt::tmp_path("powerloss_eio");
    {
      kv::database db = kv::database::open(path, {kv::sync_mode::fsync, false, std::nullopt});
      {
        kv::write_tx tx = db.write();
        for (int i = 0; i < 200; ++i) tx.put(kvt::numbered("a", i), std::string(100, 'a'));
        tx.commit();
      }
      try {
        kv::write_tx tx = db.write();
        for (int i = 0; i < 200; ++i) tx.put(kvt::numbered("b", i), std::string(100, 'b'));
        g_fail_fdatasync.store(which);
        tx.commit();
        ADD_FAILURE() << "the commit did not report the failed sync";
      } catch (const kv::error& e) {
        EXPECT_EQ(e.kind(), kv::error_kind::io) << e.what();
      }
      g_fail_fdatasync.store(0);
      try {
        db.validate();
      } catch (const kv::error& e) {
        ADD_FAILURE() << "after the failed commit: " << e.what();
      }
      // The failed commit stays in memory; the file's state is unknown, so writes are refused
      // (with io, naming the first failure) until the database is reopened.
      EXPECT_EQ(db.read().size(), 400u);
      for (int attempt = 0; attempt < 2; ++attempt) {
        try {
          kv::write_tx tx = db.write();
          ADD_FAILURE() << "a write was taken after the failed commit";
        } catch (const kv::error& e) {
          EXPECT_EQ(e.kind(), kv::error_kind::io) << e.what();
          EXPECT_NE(std::string(e.what()).find("reopen"), std::string::npos) << e.what();
        }
      }
      try {
        db.compact();
        ADD_FAILURE() << "compact ran after the failed commit";
      } catch (const kv::error& e) {
        EXPECT_EQ(e.kind(), kv::error_kind::io) << e.what();
      }
    }
    try {
      kv::database db = kv::database::open(path, {kv::sync_mode::none, true, std::nullopt});
      db.validate();
      const std::uint64_t n = db.read().size();
      EXPECT_TRUE(n == 200 || n == 400) << n;
    } catch (const kv::error& e) {
      ADD_FAILURE() << "reopened: " << e.what();
    }
    std::remove(path.c_str());
  }
}
