// The store around the tree: address-space arena over one file (or anonymous memory), free
// space, meta pages, snapshots, transactions, open/commit/compact.
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <new>
#include <utility>

#include "internal.h"

namespace simdex::kv {

const char* error_kind_name(error_kind kind) noexcept {
  switch (kind) {
#define SIMDEX_KV_ERROR_NAME(name, what) \
  case error_kind::name:                 \
    return #name;
    SIMDEX_KV_ERRORS(SIMDEX_KV_ERROR_NAME)
#undef SIMDEX_KV_ERROR_NAME
  }
  return "unknown";
}

error::error(error_kind kind, std::string detail, int sys_errno, std::string path)
    : std::runtime_error(std::string("kv ") + error_kind_name(kind) + ": " + detail),
      kind_(kind),
      sys_errno_(sys_errno),
      detail_(std::move(detail)),
      path_(std::move(path)) {}

namespace detail {

[[noreturn]] void fail(error_kind kind, std::string detail) {
  throw error(kind, std::move(detail));
}

namespace {
// A failed system call, with errno and the file it was about (empty for none) kept apart as
// well, so callers (Python's OSError) can test them.
[[noreturn]] void fail_errno(const char* call, const std::string& path = {}) {
  const int err = errno;
  std::string detail = call;
  if (!path.empty()) detail += " " + path;
  throw error(error_kind::io, detail + ": " + std::strerror(err), err, path);
}

constexpr std::uint64_t kMagic = 0x31564b5844454d53ull;  // "SMEDXKV1" little-endian
constexpr std::size_t kMetaBytes = 4096;

struct meta_tree {
  char name[40];
  std::uint32_t root;
  std::uint32_t pad;
  std::uint64_t count;
  std::uint64_t pad2;
};
static_assert(sizeof(meta_tree) == 64);

struct meta_page {
  std::uint64_t magic;
  std::uint32_t version;
  std::uint32_t meta_bytes;
  std::uint64_t seq;
  std::uint64_t next_id;
  std::uint64_t hwm;  // units
  std::uint32_t freelist;
  std::uint32_t ntrees;
  std::uint64_t pad[3];
  meta_tree trees[kMaxTrees];
  std::uint64_t checksum;  // XXH3 of everything before it
};
static_assert(sizeof(meta_page) <= kMetaBytes);

std::uint64_t meta_sum(const meta_page& m) {
  return XXH3_64bits(&m, offsetof(meta_page, checksum));
}

// How the file map is advised. With sync mode none it asks for 2 MiB pages (MADV_HUGEPAGE; ext4
// then caches the file in 2 MiB folios, Linux 6.16 on): at 20M keys a random get otherwise pays
// a TLB miss and a page walk on nearly every leaf, and gets ran 30-40 % faster with them. With
// fsync a commit would write whole 2 MiB folios for a few changed nodes, so that mode keeps
// one-page folios and no readahead (MADV_RANDOM).
void advise_map(const db_impl& db, void* p, std::size_t len) {
  madvise(p, len, db.sync == sync_mode::none ? MADV_HUGEPAGE : MADV_RANDOM);
}

// Mappings grow in whole 2 MiB pages from a 2 MiB-aligned base, so every part of the map can
// take one.
inline constexpr std::size_t kHugePage = std::size_t{1} << 21;

std::size_t reserve_bytes() {
  // Units are 32-bit: at most 256 GiB of arena.
  return std::size_t{1} << 38;
}
}  // namespace

// ---- fork() ---------------------------------------------------------------------------------

// A child made by fork() shares the parent's file and map but none of its bookkeeping: the
// parent goes on reusing space its snapshots in the child cannot pin (torn reads), and a commit
// from the child would write through a second allocator into the same file (corruption). So in
// the child every database of the parent is marked `forked` and refuses all calls, and it lets
// go of the file: its copy of the descriptor and the file's map are dropped, since either one
// kept the parent's exclusive flock held for as long as the child lived (the parent could not
// close and reopen its own file, nor could another process open it after the parent exited).
namespace {
std::mutex g_open_mu;           // guards g_open; held across fork() (prepare to parent/child)
std::vector<db_impl*>* g_open;  // every live database of this process
std::once_flag g_atfork_once;

void fork_prepare() { g_open_mu.lock(); }
void fork_parent() { g_open_mu.unlock(); }
void fork_child() {
  // Only async-signal-safe calls here: the parent may have had other threads.
  if (g_open) {
    for (db_impl* db : *g_open) {
      db->forked = true;
      if (db->fd >= 0)
        ::close(std::exchange(db->fd, -1));  // not flock(LOCK_UN): shared with the parent
      if (!db->memory && db->base && db->mapped)
        mmap(db->base, db->mapped, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
    }
  }
  g_open_mu.unlock();
}

void register_open(db_impl* db) {
  std::call_once(g_atfork_once, [] { pthread_atfork(fork_prepare, fork_parent, fork_child); });
  std::lock_guard<std::mutex> g(g_open_mu);
  if (!g_open) g_open = new std::vector<db_impl*>;  // never freed: outlives static destructors
  g_open->push_back(db);
}
}  // namespace

db_impl* database_at(const std::string& path) {
  std::lock_guard<std::mutex> g(g_open_mu);
  if (g_open)
    for (db_impl* db : *g_open)
      if (!db->memory && db->path == path) return db;
  return nullptr;
}

void db_impl::refuse_forked() const {
  throw error(error_kind::busy,
              "this database was opened by process " + std::to_string(owner) +
                  ", and this process (" + std::to_string(getpid()) +
                  ") is a child made by fork(): it cannot use the database or its snapshots, "
                  "transactions and cursors (the parent's commits and space reuse are invisible "
                  "here, so reads could be torn and a write would corrupt the file); open the "
                  "file in the child once the parent has closed it");
}

// ---- the arena
// ------------------------------------------------------------------------------------

db_impl::~db_impl() {
  if (owner) {
    std::lock_guard<std::mutex> g(g_open_mu);
    std::erase(*g_open, this);
  }
  if (base) munmap(base, reserved);
  if (fd >= 0) ::close(fd);
}

void db_impl::ensure_mapped(std::uint64_t units) {
  // Readers may read up to 63 bytes past a node (padded divider search): keep a page of slack.
  const std::size_t need = units * kUnit + 4096;
  if (need <= mapped) return;
  if (need > reserved)
    fail(error_kind::full, "arena of " + std::to_string(reserved) + " bytes is full");
  // Steps of an eighth, at least 1 MiB and at most 64 MiB: few remaps, little unused tail.
  std::size_t grow = std::max<std::size_t>(mapped / 8, std::size_t{1} << 20);
  grow = std::min<std::size_t>(grow, std::size_t{64} << 20);
  std::size_t target = std::max(need, mapped + grow);
  target = (target + kHugePage - 1) & ~(kHugePage - 1);
  target = std::min(target, reserved);
  if (memory) {
    if (mprotect(base + mapped, target - mapped, PROT_READ | PROT_WRITE) != 0)
      fail_errno("mprotect");
    // Memory mode can have 2 MiB pages (where THP is at least "madvise"): far fewer TLB misses
    // for a tree whose every leaf sits on a page of its own.
    madvise(base + mapped, target - mapped, MADV_HUGEPAGE);
  } else {
    if (ftruncate(fd, static_cast<off_t>(target)) != 0) fail_errno("ftruncate", path);
    // Blocks for the new part now: a sparse tail let the first store into a page the file
    // system then had no room for kill the process with SIGBUS (a full disk), where this fails
    // with io instead. File systems without fallocate keep the sparse tail.
    if (fallocate(fd, 0, static_cast<off_t>(mapped), static_cast<off_t>(target - mapped)) != 0 &&
        errno != EOPNOTSUPP) {
      const int err = errno;
      // Back to the old length, so no page past the map can fault (best effort).
      [[maybe_unused]] const int r = ftruncate(fd, static_cast<off_t>(mapped));
      errno = err;
      fail_errno("fallocate", path);
    }
    void* p = mmap(base + mapped, target - mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                   fd, static_cast<off_t>(mapped));
    if (p == MAP_FAILED) fail_errno("mmap", path);
    advise_map(*this, p, target - mapped);
  }
  mapped = target;
}

std::uint32_t db_impl::allocate(std::uint32_t units) {
  const std::uint32_t ref = alloc.take(units, limit_units());
  if (!ref) fail(error_kind::full, "arena full");
  map_or_give_back(ref, units);
  return ref;
}

void db_impl::map_or_give_back(std::uint32_t ref, std::uint32_t units) {
  try {
    if (fault_countdown && --fault_countdown == 0) [[unlikely]] {
      if (fault_bad_alloc) throw std::bad_alloc();
      errno = ENOSPC;
      fail_errno("fallocate (injected)", path);
    }
    ensure_mapped(alloc.hwm);
  } catch (...) {
    // The file could not grow: the extent goes back (and the bump pointer with it), or it
    // stayed neither used nor free and the next commit wrote that into the file.
    alloc.give(ref, units);
    throw;
  }
}

std::uint64_t db_impl::birth_of(std::uint64_t txn) const {
  auto it = std::upper_bound(commit_ids.begin(), commit_ids.end(), std::make_pair(txn, UINT64_MAX));
  return it == commit_ids.begin() ? 0 : std::prev(it)->second;
}

void reader_table::add(std::uint64_t seq) {
  if (v_.empty() || v_.back().seq < seq) {
    v_.push_back({seq, 1});
  } else {
    // At or below the newest entry: the newest commit's, as a rule (a snapshot sees the newest
    // commit); a lower one only if the database's seq went back (compact's swap, which needs no
    // live snapshot), where it is inserted in order.
    auto it = first_at(v_, seq);
    if (it != v_.end() && it->seq == seq)
      ++it->n;
    else
      v_.insert(it, {seq, 1});
  }
  ++live_;
}

void reader_table::remove(std::uint64_t seq) noexcept {
  auto it = v_.end() - 1;
  if (it->seq != seq) it = first_at(v_, seq);
  --it->n;
  --live_;
}

void reader_table::prune() noexcept {
  std::erase_if(v_, [](const entry& e) { return e.n == 0; });
}

bool reader_table::any_in(std::uint64_t lo, std::uint64_t hi) const noexcept {
  auto it = first_at(v_, lo);
  for (; it != v_.end() && it->seq < hi; ++it)
    if (it->n) return true;
  return false;
}

std::uint64_t reader_table::oldest(std::uint64_t none) const noexcept {
  for (const entry& e : v_)
    if (e.n) return e.seq;
  return none;
}

// A node written by commit B and replaced by commit T is visible to snapshots taken at
// sequence numbers in [B, T) only, so it can be reused once no live snapshot lies in that
// interval: a long-lived reader pins the versions it can see, not everything freed after it.
// Snapshots registered later have sequence numbers >= every tag, so only a reader leaving can
// make a pinned extent reusable: pinned ones are rechecked only then.
void db_impl::reclaim_locked() {
  if (readers_left) {
    freed_checked = 0;
    readers_left = false;
    readers.prune();  // what ended: any_in() and oldest() then find live entries at once
  }
  // Memory first: running out of it here changes nothing (running out with logging off left it
  // off, and later commits' free-space records missed changes: a corrupt file).
  std::vector<tagged_extent> keep;
  keep.reserve(freed.size());
  keep.assign(freed.begin(), freed.begin() + static_cast<std::ptrdiff_t>(freed_checked));
  if (alloc.logging) alloc.reserve_log(freed.size() - freed_checked);
  const bool was = alloc.logging;
  alloc.logging = false;
  std::size_t i = freed_checked;
  try {
    for (; i < freed.size(); ++i) {
      const tagged_extent& f = freed[i];
      if (readers.any_in(f.birth, f.tag)) {
        keep.push_back(f);
        continue;
      }
      alloc.give(f.off, f.units);
      freed_units -= f.units;
      if (was) alloc.log.push_back({f.off, f.units, kLogReclaim});
    }
  } catch (...) {
    // Out of memory in a give: the extents given so far leave the list (they stayed on it, and
    // were reused while still listed: given again later), the rest wait for the next time.
    keep.insert(keep.end(), freed.begin() + static_cast<std::ptrdiff_t>(i), freed.end());
    alloc.logging = was;
    freed = std::move(keep);
    freed_checked = 0;
    throw;
  }
  alloc.logging = was;
  freed = std::move(keep);
  freed_checked = freed.size();
  // Births older than the oldest reader all act alike: forget their commits.
  const std::uint64_t oldest = readers.oldest(seq);
  std::size_t drop = 0;
  while (drop + 1 < commit_ids.size() && commit_ids[drop + 1].second <= oldest) ++drop;
  commit_ids.erase(commit_ids.begin(), commit_ids.begin() + static_cast<std::ptrdiff_t>(drop));
}

int db_impl::tree_index(std::string_view name) const {
  for (std::size_t i = 0; i < trees.size(); ++i)
    if (trees[i].name == name) return static_cast<int>(i);
  return -1;
}

std::uint8_t* txn_state::make(std::uint32_t units, std::uint8_t type, std::uint32_t& ref) {
  level& l = levels.back();
  if (in_op) {
    reserve_more(op_made, 1);       // out of memory after the allocation, the node leaked
    keep_release_room(l.made + 1);  // the operation may release it too
  }
  ref = db->allocate(units);
  ++l.made;
  if (in_op) op_made.emplace_back(ref, units);
  auto* h = db->hdr(ref);
  h->type = type;
  h->flags = 0;
  h->n = 0;
  h->units = units;
  h->txn = base();
  return db->at(ref);
}

void txn_state::keep_release_room(std::uint64_t nodes) {
  if (op_released.capacity() < nodes)
    op_released.reserve(std::max<std::uint64_t>(nodes, 2 * op_released.capacity()));
}

void txn_state::release(std::uint32_t ref) {
  const node_hdr* h = db->hdr(ref);
  if (h->txn >= base() && in_op)
    op_released.emplace_back(ref, h->units);  // given back when the operation is over
  else if (h->txn >= base())
    db->alloc.give(ref, h->units);  // written by this level: nobody else can see it
  else
    levels.back().pending.push_back({ref, h->units, h->txn});
}

void reader::release() {
  clock.changed();
  if (!live) return;
  live = false;
  if (db->forked)
    return;  // the parent's reader table: not this process's to change (nor its mutex)
  std::lock_guard<std::mutex> g(db->mu);
  db->readers.remove(tr.seq);
  db->readers_left = true;
}

namespace {

void write_meta(db_impl& db) {
  meta_page m{};
  m.magic = kMagic;
  m.version = kFormatVersion;
  m.meta_bytes = kMetaBytes;
  m.seq = db.seq;
  m.next_id = db.next_id;
  m.hwm = db.alloc.hwm;
  m.freelist = db.freelog.empty() ? 0 : db.freelog.back();
  m.ntrees = static_cast<std::uint32_t>(db.trees.size());
  for (std::size_t i = 0; i < db.trees.size(); ++i) {
    std::memcpy(m.trees[i].name, db.trees[i].name.data(), db.trees[i].name.size());
    m.trees[i].root = db.trees[i].root;
    m.trees[i].count = db.trees[i].count;
  }
  m.checksum = meta_sum(m);
  std::memcpy(db.base + (db.seq % 2) * kMetaBytes, &m, sizeof m);
}

// Delta entries allowed beyond the size of the last full list before the next full list.
constexpr std::uint64_t kFreeLogSlack = 1024;

blob_hdr* start_free_node(db_impl& db, std::uint32_t units, std::uint8_t type, std::uint64_t id,
                          std::uint32_t& ref) {
  ref = db.allocate(units);
  auto* h = reinterpret_cast<blob_hdr*>(db.at(ref));
  h->type = type;
  h->flags = 0;
  h->n = 0;
  h->units = units;
  h->txn = id;
  return h;
}

void put16(std::uint8_t*& p, std::uint32_t off, std::uint32_t units, std::uint64_t tag) {
  std::memcpy(p, &off, 4);
  std::memcpy(p + 4, &units, 4);
  std::memcpy(p + 8, &tag, 8);
  p += 16;
}

// Persists free space for this commit. Usually a delta: the allocator's log since the last
// commit (takes, gives, extents pending for readers, reclaims), chained to the previous node,
// so a commit costs what it changed. Once the deltas hold more entries than the last full list
// (plus kFreeLogSlack), a full list (free extents with tag 0, pending ones with their tag, and
// the high-water mark after its own allocation) restarts the chain and the old chain is freed
// like any replaced node. So the full list's cost is spread over as many commits as it has
// entries (a fixed period made commits after a large transaction rewrite hundreds of thousands
// of extents every few commits), and reopening reads at most about twice the full list.
void write_free_space(db_impl& db, std::uint64_t id, std::uint64_t seq) {
  std::uint32_t ref;
  if (db.freelog.empty() || db.freelog_entries > db.freelist_entries + kFreeLogSlack) {
    for (std::uint32_t r : db.freelog)
      db.hold({r, db.hdr(r)->units, seq, seq});  // no reader sees these
    db.freelog.clear();
    const std::size_t n = db.alloc.extents() + db.freed.size() + 1;
    blob_hdr* h = start_free_node(db, units_for(32 + 16 * n), kFreeList, id, ref);
    std::uint8_t* p = db.at(ref) + 32;
    std::uint64_t cnt = 0;
    db.alloc.each([&](std::uint32_t off, std::uint32_t u) { put16(p, off, u, 0), ++cnt; });
    for (const auto& f : db.freed) put16(p, f.off, f.units, f.tag ? f.tag : 1), ++cnt;
    h->len = cnt;
    db.freelist_entries = cnt;
    db.freelog_entries = 0;
    const std::uint64_t hwm = db.alloc.hwm;
    std::memcpy(db.at(ref) + 24, &hwm, 8);
  } else {
    const std::size_t n = db.alloc.log.size() + 1;
    blob_hdr* h = start_free_node(db, units_for(32 + 16 * n), kFreeLog, id, ref);
    std::uint8_t* p = db.at(ref) + 32;
    for (const log_op& o : db.alloc.log) put16(p, o.off, o.units, o.kind);
    h->len = db.alloc.log.size();
    db.freelog_entries += h->len;
    const std::uint64_t prev = db.freelog.back();
    std::memcpy(db.at(ref) + 24, &prev, 8);
  }
  db.alloc.log.clear();
  db.freelog.push_back(ref);
}

// With db.mu held.
void refuse_if_failed(const db_impl& db) {
  if (!db.failed.empty())
    throw error(error_kind::io, "an earlier commit could not be written to " + db.path + " (" +
                                    db.failed + "); the database takes no more writes: reopen it");
}

void sync_file(db_impl& db) {
  if (fdatasync(db.fd) != 0) fail_errno("fdatasync", db.path);
}

}  // namespace
}  // namespace detail

using namespace detail;

// ---- views
// ----------------------------------------------------------------------------------------

void view::check_open() const {
  if (!db_ || !tr_)
    throw error(error_kind::invalid_argument,
                "view is closed (its snapshot was released, or its transaction ended)");
  db_->check_process();
  if (txn_) {
    // A parent's tree is the one its open sub-transaction is changing (and an ended nested
    // transaction's may be freed): only the innermost open level reads.
    check_level(*txn_, level_, "read");
    check_unbroken(*txn_);
    if (!txn_->buf.empty()) txn_->flush();
  }
}

std::optional<std::string_view> view::get(std::string_view key) const {
  check_open();
  std::uint64_t n = 0;
  const std::uint8_t* p = tree_get(*db_, tr_->root, key, n);
  if (!p) return std::nullopt;
  return std::string_view(reinterpret_cast<const char*>(p), n);
}

std::uint64_t view::count(std::string_view lo, std::optional<std::string_view> hi) const {
  check_open();
  const std::uint64_t a = lo.empty() ? 0 : tree_rank(*db_, tr_->root, tr_->count, lo);
  const std::uint64_t b = hi ? tree_rank(*db_, tr_->root, tr_->count, *hi) : tr_->count;
  return b > a ? b - a : 0;
}

std::uint64_t view::size() const {
  check_open();
  return tr_->count;
}

void db_impl::publish_space_locked() {
  pub_hwm = alloc.hwm;
  pub_free_units = alloc.free_units + freed_units;
  pub_next_id = next_id;
}

// A write transaction reads the live figures (its thread owns them); a snapshot reads what the
// writer published with the commit the snapshot sees (taken with it in database::read), as
// another thread may be writing meanwhile. Every node a snapshot reaches was committed by then,
// so it lies below that mark and has an older id.
view::space view::space_now() const {
  if (txn_) return {db_->alloc.hwm, db_->alloc.free_units + db_->freed_units, db_->next_id};
  return snap_space_;
}

stats view::stat() const {
  check_open();
  stats s;
  s.keys = tr_->count;
  s.seq = tr_->seq;
  tree_stats(*db_, tr_->root, s);
  const space sp = space_now();
  s.file_bytes = sp.hwm * kUnit;
  s.free_bytes = sp.free_units * kUnit;
  return s;
}

void view::validate() const {
  check_open();
  const space sp = space_now();
  std::vector<std::uint64_t> used(sp.hwm / 64 + 1);
  tree_validate(*db_, tr_->root, tr_->count, used, sp.hwm, sp.next_id);
}

// The reader may outlive the snapshot (its cursors hold its clock), so the snapshot ends it.
snapshot::~snapshot() {
  if (reader_) reader_->release();
}
snapshot& snapshot::operator=(snapshot&& o) noexcept {
  if (this != &o) {
    release();
    view::operator=(std::move(o));
    reader_ = std::exchange(o.reader_, nullptr);
  }
  return *this;
}
void snapshot::release() {
  if (reader_) reader_->release();
  reader_ = nullptr;
  clock_.reset();  // the reader, unless a cursor still holds it
  db_.reset();
  tr_ = nullptr;
}

// ---- transactions
// --------------------------------------------------------------------------------

namespace {
// `where` goes before the message ("bulk_load: pair at index 7: "), empty for one write.
void check_kv(std::string_view key, std::optional<std::string_view> value,
              const std::string& where = {}) {
  if (key.size() > kMaxKey)
    throw error(error_kind::key_too_long, where + "key of " + std::to_string(key.size()) +
                                              " bytes is over the " + std::to_string(kMaxKey) +
                                              "-byte limit");
  if (value && value->size() > kMaxValue)
    throw error(error_kind::value_too_long, where + "value of " + std::to_string(value->size()) +
                                                " bytes is over the " + std::to_string(kMaxValue) +
                                                "-byte limit");
}
}  // namespace

write_tx::write_tx(write_tx&& o) noexcept : view(std::move(o)), state_(std::move(o.state_)) {
  o.tr_ = nullptr;
  o.txn_ = nullptr;
}
write_tx& write_tx::operator=(write_tx&& o) noexcept {
  if (this != &o) {
    if (state_ && state_->db->forked) {
      detach();
    } else if (state_) {
      abort_open_subs();
      try {
        abort();
      } catch (...) {
      }
    }
    db_ = std::move(o.db_);
    tr_ = o.tr_;
    txn_ = o.txn_;
    clock_ = std::move(o.clock_);
    state_ = std::move(o.state_);
    level_ = o.level_;
    o.tr_ = nullptr;
    o.txn_ = nullptr;
  }
  return *this;
}
write_tx::~write_tx() {
  // In a child made by fork() the transaction is the parent's: dropped without undoing it
  // (undoing walks nodes the parent may be rewriting).
  if (state_ && state_->db->forked) return;
  if (state_) {
    abort_open_subs();
    try {
      abort();
    } catch (...) {
    }
  }
}

void release_writer(db_impl& db) {
  {
    std::lock_guard<std::mutex> g(db.mu);
    db.publish_space_locked();
    db.writer = false;
    db.writer_thread = {};
  }
  db.cv.notify_all();
}

bool write_tx::active() const noexcept { return state_ && state_->levels.size() > level_; }

// A sub-transaction outliving its parent kept the writer slot forever (the parent's abort
// refused while the sub was open, and only a level-0 end releases the slot): the parent's
// destructor undoes the open levels above it, innermost first, as their aborts would.
void write_tx::abort_open_subs() noexcept {
  while (state_->levels.size() > level_ + 1) state_->undo_level();
}

void detail::check_level(const txn_state& t, std::size_t level, const char* what) {
  if (t.levels.size() == level + 1) return;
  if (t.levels.size() <= level)
    throw error(error_kind::invalid_argument,
                "transaction is no longer active (the transaction it was nested in ended)");
  throw error(error_kind::invalid_argument,
              std::string("transaction ") + what +
                  " while its sub-transaction is open: a parent can be neither read nor written "
                  "until its sub-transaction commits or aborts");
}

txn_state& write_tx::raw() const {
  if (!state_) throw error(error_kind::invalid_argument, "transaction is no longer active");
  state_->db->check_process();
  check_level(*state_, level_, "used");
  return *state_;
}

// A level whose tree operation failed halfway takes nothing but abort (see journaled() in
// write.cc): its tree may be half changed.
void detail::check_unbroken(const txn_state& t) {
  const level& l = t.levels.back();
  if (l.broken)
    throw error(l.broken_kind, "transaction: a write failed halfway (" +
                                   (l.broken_why.empty() ? "out of memory" : l.broken_why) +
                                   "), so it can only be aborted");
}

txn_state& write_tx::st() const {
  txn_state& t = raw();
  check_unbroken(t);
  t.flush();
  return t;
}

void write_tx::put(std::string_view key, std::string_view value) {
  check_kv(key, value);
  txn_state& t = raw();
  check_unbroken(t);
  if (value.size() > kInlineValue) {
    t.flush();
    bool ch;
    tree_write(t, wmode::upsert, key, value, ch);
    return;
  }
  t.buf.push_back({static_cast<std::uint32_t>(t.buf_bytes.size()),
                   static_cast<std::uint32_t>(key.size()),
                   static_cast<std::uint32_t>(value.size())});
  t.buf_bytes.append(key);
  t.buf_bytes.append(value);
  if (t.buf.size() == kPutBatch) t.flush();
}

bool write_tx::upsert(std::string_view key, std::string_view value) {
  check_kv(key, value);
  bool ch;
  return !tree_write(st(), wmode::upsert, key, value, ch);
}
bool write_tx::insert(std::string_view key, std::string_view value) {
  check_kv(key, value);
  bool ch;
  return !tree_write(st(), wmode::insert, key, value, ch);
}
bool write_tx::update(std::string_view key, std::string_view value) {
  check_kv(key, value);
  bool ch;
  return tree_write(st(), wmode::update, key, value, ch);
}
bool write_tx::remove(std::string_view key) {
  txn_state& t = st();
  if (key.size() > kMaxKey) return false;  // never stored, so not present (as get() answers)
  bool ch;
  return tree_write(t, wmode::remove, key, {}, ch);
}

std::uint64_t write_tx::remove_range(std::string_view lo, std::optional<std::string_view> hi) {
  return tree_remove_range(st(), lo, hi);
}

void write_tx::bulk_load(std::span<const std::pair<std::string_view, std::string_view>> sorted) {
  txn_state& t = st();
  // Everything is checked before anything is written: a bad pair leaves the tree as it was.
  // Each error names the pair by its index in the input.
  auto where = [](std::size_t i) { return "bulk_load: pair at index " + std::to_string(i) + ": "; };
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i].first.size() > kMaxKey || sorted[i].second.size() > kMaxValue)
      check_kv(sorted[i].first, sorted[i].second, where(i));
    if (i && !(sorted[i - 1].first < sorted[i].first))
      throw error(error_kind::invalid_argument,
                  where(i) +
                      (sorted[i - 1].first == sorted[i].first
                           ? "keys not distinct: its key repeats the previous pair's"
                           : "keys not sorted: its key sorts before the previous pair's") +
                      " (nothing was written)");
  }
  if (sorted.empty()) return;
  if (!t.cur.root) {
    tree_bulk(t, {sorted.begin(), sorted.end()});
    return;
  }
  if (get(sorted.front().first))
    throw error(error_kind::invalid_argument,
                where(0) + "key already present (nothing was written)");
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    bool ch;
    if (tree_write(t, wmode::insert, sorted[i].first, sorted[i].second, ch))
      throw error(error_kind::invalid_argument,
                  where(i) + "key already present (the pairs before it were added)");
  }
}

write_tx write_tx::sub() {
  txn_state& t = st();
  level l;
  l.base = ++t.db->next_id;
  l.saved = t.cur;
  l.saved_version = t.clock->version;
  t.levels.push_back(std::move(l));
  t.levels_changed();  // the parent's cursors refuse to read while this level is open
  write_tx w;
  w.db_ = db_;
  w.tr_ = &t.cur;
  w.txn_ = &t;
  w.clock_ = t.clock;
  w.state_ = state_;
  w.level_ = level_ + 1;
  return w;
}

void write_tx::commit() {
  txn_state& t = st();
  db_impl& db = *t.db;
  if (level_ > 0) {
    // The tree stays as the level left it: if it wrote, the clock has changed since the parent's
    // cursors were made (and the nodes given back below are among those it replaced); if not,
    // those cursors read on.
    // Room on the parent's list first: out of memory once the level is gone, the nodes it had
    // replaced were lost (neither used nor free).
    reserve_more(t.levels[t.levels.size() - 2].pending, t.levels.back().pending.size());
    level l = std::move(t.levels.back());
    t.levels.pop_back();
    t.levels_changed();
    t.levels.back().made += l.made;  // its nodes are the parent's now (txn >= the parent's base)
    std::vector<pending_node>& up = t.levels.back().pending;
    std::size_t i = 0;
    try {
      for (; i < l.pending.size(); ++i) {
        const pending_node& p = l.pending[i];
        if (p.txn >= t.base())
          db.alloc.give(p.off, p.units);
        else
          up.push_back(p);
      }
    } catch (...) {
      // Out of memory in a give: the rest wait on the parent's list (the commit is made; the
      // parent's end gives back those of its own level: see undo_level).
      up.insert(up.end(), l.pending.begin() + static_cast<std::ptrdiff_t>(i), l.pending.end());
    }
    detach();
    return;
  }
  // Memory first: out of it once the pending nodes below are handed to the free list, the commit
  // failed unpublished, and an abort then kept them in the tree while they were reused.
  const std::vector<pending_node>& pend = t.levels.back().pending;
  reserve_more(db.freed, pend.size());
  if (db.alloc.logging) db.alloc.reserve_log(pend.size());
  reserve_more(db.commit_ids, 1);
  std::optional<tree_info> added;
  {
    std::lock_guard<std::mutex> g(db.mu);
    if (!t.drop && db.tree_index(t.tree) < 0) {
      added.emplace(tree_info{t.tree, 0, 0});
      reserve_more(db.trees, 1);
    }
  }
  t.clock->changed();
  const std::uint64_t seq = db.seq + 1;
  db.commit_ids.emplace_back(t.levels.back().base, seq);
  for (const pending_node& p : t.levels.back().pending) {
    db.hold({p.off, p.units, seq, db.birth_of(p.txn)});
    if (db.alloc.logging) db.alloc.log.push_back({p.off, p.units, kLogPend});
  }
  {
    std::lock_guard<std::mutex> g(db.mu);
    int i = db.tree_index(t.tree);
    if (t.drop) {  // drop(): the tree (emptied by this transaction) leaves the table
      if (i >= 0) db.trees.erase(db.trees.begin() + i);
    } else {
      if (i < 0) {  // write() checked there is room for it
        db.trees.push_back(std::move(*added));
        i = static_cast<int>(db.trees.size()) - 1;
      }
      db.trees[i].root = t.cur.root;
      db.trees[i].count = t.cur.count;
    }
    db.seq = seq;
    db.publish_space_locked();  // a snapshot of this state reads figures that cover it
  }
  auto end = [&] {
    t.clock->level = 0;  // ended
    t.clock->depth = 0;
    release_writer(db);
    detach();
  };
  if (!db.memory) {
    try {
      write_free_space(db, t.base(), seq);
      if (db.sync == sync_mode::fsync) sync_file(db);
      write_meta(db);
      if (db.sync == sync_mode::fsync) sync_file(db);
    } catch (const std::exception& e) {
      // The trees are published: undoing the level now would free live nodes. The commit stays
      // in memory, and since the file's state is unknown (after a failed fdatasync the kernel
      // may drop the dirty pages), later writes are refused until the database is reopened.
      {
        std::lock_guard<std::mutex> g(db.mu);
        const auto* k = dynamic_cast<const error*>(&e);
        try {
          db.failed = k ? k->detail() : e.what();
        } catch (...) {  // out of memory: end() must still run, or an abort undid a published
          db.failed = "out of memory";  // level (freeing live nodes); short: no allocation
        }
      }
      end();
      throw;
    }
  }
  end();
}

void txn_state::undo_level() noexcept {
  buf.clear();  // buffered puts were never applied
  buf_bytes.clear();
  // Needs no memory: every node given back here was taken in this transaction, and the
  // allocator kept room for its give (allocator::take). Before, out of memory in a give left
  // the rest of the level's nodes neither used nor free, and the next commit wrote that down.
  try {
    level& l = levels.back();
    for (const pending_node& p : l.pending)  // of this level only after a give ran out of memory
      if (p.txn >= base()) db->alloc.give(p.off, p.units);
    if (!l.broken) {
      free_new(cur.root, base(), nullptr);
    } else {
      // A failed operation's nodes may be linked or not, its released ones too: what the root
      // reaches and what the journal holds, each given back once. Sorted in place (a merged
      // copy needed memory).
      auto& made = l.strays_made;
      auto& released = l.strays_released;
      for (auto* v : {&made, &released}) {
        std::sort(v->begin(), v->end());
        v->erase(std::unique(v->begin(), v->end()), v->end());
      }
      free_new(cur.root, base(), &l);
      for (const auto& node : made) db->alloc.give(node.first, node.second);
      for (const auto& node : released)
        if (!std::binary_search(made.begin(), made.end(), node))
          db->alloc.give(node.first, node.second);
    }
  } catch (...) {  // a give with no room kept (a defect): its nodes leak, the state unwinds
  }
  cur = levels.back().saved;
  // Only nodes of this level were freed; the parent's are as they were when it began, so its
  // cursors from then read on. This level's own cursors refuse: its id is never innermost again.
  clock->version = levels.back().saved_version;
  levels.pop_back();
  levels_changed();
}

void write_tx::abort() {
  if (state_ && state_->db->forked) {  // see ~write_tx
    detach();
    return;
  }
  txn_state& t = raw();
  db_impl& db = *t.db;
  t.undo_level();
  if (level_ == 0) release_writer(db);
  detach();
}

// A finished transaction no longer keeps the database open.
void write_tx::detach() noexcept {
  state_.reset();
  tr_ = nullptr;
  txn_ = nullptr;
  db_.reset();
}

// ---- the database -------------------------------------------------------------------------------

namespace {
std::shared_ptr<db_impl> new_impl(bool memory, const options& o) {
  auto db = std::make_shared<db_impl>();
  db->memory = memory;
  const auto& tables = primitives::kernel_tables();
  db->k = dispatch::pick(tables).table;
  if (o.kernels) {
    for (int l = static_cast<int>(*o.kernels); l >= 0; --l) {
      if (const auto* t = dispatch::exact(tables, static_cast<isa>(l))) {
        db->k = t;
        break;
      }
    }
  }
  std::size_t want = reserve_bytes();
  void* p = MAP_FAILED;
  while (want >= (std::size_t{1} << 30)) {
    p = mmap(nullptr, want + kHugePage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
             0);
    if (p != MAP_FAILED) break;
    want /= 2;
  }
  if (p == MAP_FAILED) fail_errno("reserving address space");
  // Trim the reservation to a 2 MiB-aligned start (see kHugePage).
  auto* raw = static_cast<std::uint8_t*>(p);
  const std::size_t head =
      (kHugePage - reinterpret_cast<std::uintptr_t>(raw) % kHugePage) % kHugePage;
  if (head) munmap(raw, head);
  munmap(raw + head + want, kHugePage - head);
  db->base = raw + head;
  db->reserved = want;
  db->owner = getpid();
  register_open(db.get());
  return db;
}

const std::uint8_t* free_node(db_impl& db, std::uint32_t ref, std::uint64_t hwm, std::uint64_t& len,
                              std::uint8_t& type) {
  if (ref < kFirstUnit || ref >= hwm)
    fail(error_kind::corrupt, "free-space reference outside the file");
  const auto* h = reinterpret_cast<const blob_hdr*>(db.at(ref));
  if ((h->type != kFreeList && h->type != kFreeLog) || h->units == 0 ||
      ref + std::uint64_t{h->units} > hwm)
    fail(error_kind::corrupt, "free-space node at unit " + std::to_string(ref) + " is damaged");
  if (h->len > (std::uint64_t{h->units} * kUnit - 32) / 16)
    fail(error_kind::corrupt, "free-space node longer than itself");
  len = h->len;
  type = h->type;
  return db.at(ref);
}

// Rebuilds free space: the last full list, then every delta after it in commit order.
void load_free_space(db_impl& db, std::uint32_t last, std::uint64_t meta_hwm) {
  std::vector<std::uint32_t> chain;
  std::uint64_t len;
  std::uint8_t type;
  std::uint64_t newer = UINT64_MAX;  // commit ids fall along the chain: it cannot loop
  for (std::uint32_t ref = last;;) {
    chain.push_back(ref);
    const std::uint8_t* p = free_node(db, ref, meta_hwm, len, type);
    const std::uint64_t id = reinterpret_cast<const node_hdr*>(p)->txn;
    if (id >= newer) fail(error_kind::corrupt, "free-space chain out of commit order");
    newer = id;
    if (type == kFreeList) {
      db.freelist_entries = len;
      break;
    }
    db.freelog_entries += len;
    std::uint64_t prev;
    std::memcpy(&prev, p + 24, 8);
    if (prev > UINT32_MAX) fail(error_kind::corrupt, "free-space chain link out of range");
    ref = static_cast<std::uint32_t>(prev);
  }
  std::reverse(chain.begin(), chain.end());
  auto bad = [](const std::string& what) { fail(error_kind::corrupt, "free space: " + what); };
  std::map<std::uint32_t, std::uint32_t> pending;  // freed for readers, reusable after reopen
  extent_map a;
  for (std::size_t c = 0; c < chain.size(); ++c) {
    const std::uint8_t* p = free_node(db, chain[c], meta_hwm, len, type);
    if (c == 0) {
      std::uint64_t hwm;
      std::memcpy(&hwm, p + 24, 8);
      // The mark may since have dropped (space given back at the tail); the replay ends on it.
      if (hwm < kFirstUnit || hwm > db.limit_units())
        bad("full list's high-water mark out of range");
      a.hwm = hwm;
    }
    p += 32;
    for (std::uint64_t i = 0; i < len; ++i, p += 16) {
      std::uint32_t off, u;
      std::uint64_t kind;
      std::memcpy(&off, p, 4);
      std::memcpy(&u, p + 4, 4);
      std::memcpy(&kind, p + 8, 8);
      // Log entries may lie past the final mark (space taken, then given back at the tail).
      if (off < kFirstUnit || u == 0 ||
          off + std::uint64_t{u} > (c == 0 ? a.hwm : db.limit_units()))
        bad("extent outside the file");
      if (c == 0) {
        if (kind == 0) {
          if (off + std::uint64_t{u} > a.hwm) bad("free extent past the high-water mark");
          if (a.overlaps(off, u) || pending.count(off)) bad("extents overlap");
          a.give(off, u);
        } else if (!pending.emplace(off, u).second) {
          bad("pending extent listed twice");
        }
        continue;
      }
      switch (kind) {
        case kLogTake:
          if (!a.carve(off, u)) bad("a logged allocation is not free");
          break;
        case kLogGive:
          a.give(off, u);
          break;
        case kLogPend:
          if (!pending.emplace(off, u).second) bad("pending extent listed twice");
          break;
        case kLogReclaim: {
          auto it = pending.find(off);
          if (it == pending.end() || it->second != u) bad("reclaim of an extent not pending");
          pending.erase(it);
          a.give(off, u);
          break;
        }
        default:
          bad("unknown log entry");
      }
    }
  }
  // The writer merges free extents lazily, so its mark may lie above the replayed one (the units
  // between are free); never below.
  if (a.hwm > meta_hwm)
    bad("replayed high-water mark " + std::to_string(a.hwm) + " is above the meta page's " +
        std::to_string(meta_hwm) + " (chain " + std::to_string(chain.size()) + ")");
  // Pending space is neither free nor above the mark in a file the writer left behind.
  for (const auto& [off, u] : pending)
    if (off + std::uint64_t{u} > a.hwm) bad("pending extent past the high-water mark");
  db.alloc.assign(a.by_off, a.hwm);
  // No reader exists yet: the first write transaction reclaims these, through the log, so the
  // next replay sees them given back.
  for (const auto& [off, u] : pending) db.hold({off, u, 0, 0});
  db.freelog = std::move(chain);
}

// One meta page passes its checks and the other (why[i] non-empty) does not: was the damaged one
// the newer commit record? Commit S writes page S % 2, so the damaged page held commit seq + 1
// (the last commit, lost: the open fell back to seq) or seq - 1 (the older record: nothing lost,
// the next commit rewrites it). Its sequence number tells which when it is legible; otherwise
// the worse case is reported.
recovery_info note_damaged_meta(const std::uint8_t* base, const std::string why[2],
                                std::uint64_t seq) {
  recovery_info r;
  r.seq = seq;
  const int d = why[0].empty() ? (why[1].empty() ? -1 : 1) : 0;
  if (d < 0) return r;
  r.damaged_page = d;
  const auto* p = reinterpret_cast<const meta_page*>(base + d * kMetaBytes);
  const std::string page = "meta page " + std::to_string(d);
  const std::string n = std::to_string(seq);
  if (p->magic == kMagic && p->seq <= seq) {
    r.detail = "the older commit record (" + page + ", commit " + std::to_string(p->seq) +
               ") is damaged (" + why[d] + "); opened the newest commit " + n +
               ": nothing is lost, and the next commit rewrites that page";
    return r;
  }
  r.meta_fallback = true;
  if (p->magic == kMagic && p->seq == seq + 1) {
    r.lost_seq = p->seq;
    const std::string lost = std::to_string(p->seq);
    r.detail = "the newest commit record (" + page + ", commit " + lost + ") is damaged (" +
               why[d] + "); opened the previous commit " + n + ": commit " + lost + " is lost";
  } else {
    r.detail = "the commit record in " + page + " is damaged (" + why[d] +
               ") and its commit number is unreadable; opened commit " + n +
               " from the other page: if the damaged page held the newest commit (" +
               std::to_string(seq + 1) + "), that commit is lost";
  }
  return r;
}

// One writing process per file, and no reading process beside it: snapshots and space reuse are
// tracked inside the writing process only. Advisory (flock), released when the process dies.
void lock_file(const db_impl& db, bool read_only) {
  if (::flock(db.fd, (read_only ? LOCK_SH : LOCK_EX) | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK)
    fail(error_kind::busy,
         db.path + (read_only ? " is open for writing (in this or another process)"
                              : " is already open (in this or another process)"));
  fail_errno("flock", db.path);
}

// The folder part of a path with its trailing '/' ("" for a bare name).
std::string folder_of(const std::string& path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

// Makes a name just linked or renamed in path's directory survive a power loss: until the
// directory is synced, the disk may still hold the old entry (POSIX; fdatasync of the file does
// not cover its name). Best effort, as a directory that cannot be opened read-only is left as it
// is.
void sync_dir_of(const std::string& path) {
  const std::string folder = folder_of(path);
  const int dfd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

// A file this process made and removes unless it comes to be kept: a failure part-way (a full
// disk) must not leave a half-written database beside the real one.
struct scratch_file {
  std::string path;
  scratch_file() = default;
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  void remove() noexcept {
    if (!path.empty()) ::unlink(path.c_str());
    path.clear();
  }
  ~scratch_file() { remove(); }
};

// A new database appears under its name only complete: its two meta pages are written and synced
// under a temporary name first, then linked into place (or renamed over an empty file), so a
// process killed while creating leaves either no database or a valid empty one.
int create_file(db_impl& db, const std::string& path, bool replace_empty) {
  // One name per call, not per process: two threads creating the same database unlinked each
  // other's temporary file under a per-process name, and both opened one (one of them an
  // orphan whose commits were lost). A leftover of a crashed process under the same name
  // (same pid and count) is removed first.
  static std::atomic<std::uint64_t> calls{0};
  const std::string tmp =
      path + ".new-" + std::to_string(getpid()) + "-" + std::to_string(calls.fetch_add(1));
  ::unlink(tmp.c_str());
  db.fd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (db.fd < 0) fail_errno("create", path);
  scratch_file scrap;
  scrap.path = tmp;
  db.path = tmp;
  db.alloc.hwm = kFirstUnit;
  db.mapped = 0;
  db.ensure_mapped(kFirstUnit);
  db.seq = 0;
  write_meta(db);
  std::memcpy(db.base + kMetaBytes, db.base, kMetaBytes);  // both pages valid, the same state
  sync_file(db);
  lock_file(db, false);
  const int rc =
      replace_empty ? ::rename(tmp.c_str(), path.c_str()) : ::link(tmp.c_str(), path.c_str());
  const int err = errno;
  if (replace_empty && rc == 0) scrap.path.clear();  // the file has its name now
  scrap.remove();  // the temporary name goes before the folder's sync below
  db.path = path;
  if (rc != 0) {
    if (err == EEXIST) return EEXIST;  // another process created it first: open that one
    errno = err;
    fail_errno("create", path);
  }
  sync_dir_of(path);  // the new name must survive a crash too
  db.alloc.logging = true;
  return 0;
}

// The file a name leads to, symbolic links followed (a dangling one names the file to create):
// a database is created, replaced when empty, and compacted where the link points. Creating it
// beside the link and linking it to the link's name failed with EEXIST, which open_file took
// for another process's creation and retried for ever.
std::string resolve_links(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::string to(4096, '\0');  // PATH_MAX
    const ssize_t n = ::readlink(path.c_str(), to.data(), to.size());
    if (n < 0) fail_errno("readlink", path);
    to.resize(static_cast<std::size_t>(n));
    if (!to.empty() && to[0] != '/') to = folder_of(path) + to;
    path = std::move(to);
  }
  errno = ELOOP;
  fail_errno("open", path);
}

void open_file(db_impl& db, const std::string& name, const options& o) {
  const std::string path = o.read_only ? name : resolve_links(name);
  db.path = path;
  db.sync = o.sync;
  db.read_only = o.read_only;
  for (int tries = 0;; ++tries) {
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer (a hang, before the
    // check below refuses it); a regular file's reads ignore the flag.
    db.fd = ::open(path.c_str(), (o.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC | O_NONBLOCK);
    if (db.fd < 0 && errno == ENOENT && !o.read_only) {
      if (create_file(db, path, false) == EEXIST) {
        ::close(std::exchange(db.fd, -1));
        // Another process created it first: open that one, unless the name keeps vanishing.
        if (tries == 100) fail(error_kind::io, path + " keeps appearing and disappearing");
        continue;
      }
      return;
    }
    break;
  }
  if (db.fd < 0) fail_errno("open", path);
  struct stat st;
  if (fstat(db.fd, &st) != 0) fail_errno("fstat", path);
  if (!S_ISREG(st.st_mode)) fail(error_kind::invalid_argument, path + " is not a regular file");
  lock_file(db, o.read_only);
  std::size_t size = static_cast<std::size_t>(st.st_size);
  if (size == 0) {
    // An empty file (made by hand): replaced by a valid empty database.
    if (o.read_only) fail(error_kind::truncated, path + " is empty");
    ::close(std::exchange(db.fd, -1));
    create_file(db, path, true);
    return;
  }
  if (size < 2 * kMetaBytes)
    fail(error_kind::truncated,
         path + " holds " + std::to_string(size) + " bytes, less than its two meta pages");
  if (size > db.reserved) fail(error_kind::full, path + " is larger than the arena");
  const std::size_t map_len = size & ~std::size_t{4095};
  const int prot = o.read_only ? PROT_READ : (PROT_READ | PROT_WRITE);
  if (mmap(db.base, map_len, prot, MAP_SHARED | MAP_FIXED, db.fd, 0) == MAP_FAILED)
    fail_errno("mmap", path);
  advise_map(db, db.base, map_len);
  db.mapped = map_len;
  const meta_page* best = nullptr;
  bool any_magic = false, any_version = false;
  std::string why[2];  // what is wrong with each page, empty when it passes its checks
  for (int i = 0; i < 2; ++i) {
    const auto* m = reinterpret_cast<const meta_page*>(db.base + i * kMetaBytes);
    if (m->magic != kMagic) {
      why[i] = "no magic";
      continue;
    }
    any_magic = true;
    if (m->version != kFormatVersion) {
      why[i] = "format version " + std::to_string(m->version);
      continue;
    }
    any_version = true;
    if (m->checksum != meta_sum(*m)) {
      why[i] = "checksum mismatch";
      continue;
    }
    if (!best || m->seq > best->seq) best = m;
  }
  if (!any_magic) fail(error_kind::corrupt, path + " is not a simdex kv file (no magic)");
  if (!any_version)
    fail(error_kind::bad_version,
         path + ": format version is not " + std::to_string(kFormatVersion));
  if (!best) fail(error_kind::bad_checksum, path + ": neither meta page has a valid checksum");
  const meta_page m = *best;
  db.recovery = note_damaged_meta(db.base, why, m.seq);
  // A mark past what a 32-bit reference can name is damage, not a short file (and would wrap
  // the byte count below).
  constexpr std::uint64_t kMaxUnits = std::uint64_t{1} << 32;
  if (m.hwm < kFirstUnit || m.hwm > kMaxUnits)
    fail(error_kind::corrupt, path + ": the meta page's high-water mark (" + std::to_string(m.hwm) +
                                  " units) is outside [" + std::to_string(kFirstUnit) + ", 2^32]");
  if (m.hwm * kUnit > size)
    fail(error_kind::truncated, path + " holds " + std::to_string(size) +
                                    " bytes, its meta page needs " + std::to_string(m.hwm * kUnit));
  if (m.ntrees > kMaxTrees) fail(error_kind::corrupt, "meta page lists too many trees");
  // The last page may need the slack mapping too.
  db.alloc.hwm = m.hwm;
  if (m.hwm * kUnit + 4096 > db.mapped) {
    if (o.read_only) {
      // Read-only: map the partial page plus an anonymous tail so the padded reads stay mapped.
      const std::size_t len = ((m.hwm * kUnit + 4096 + 4095) & ~std::size_t{4095}) - db.mapped;
      if (mmap(db.base + db.mapped, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
               0) == MAP_FAILED)
        fail_errno("mmap");
      if (size > map_len && mmap(db.base + map_len, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, db.fd,
                                 static_cast<off_t>(map_len)) == MAP_FAILED)
        fail_errno("mmap", path);
      db.mapped += len;
    } else {
      db.ensure_mapped(m.hwm);
    }
  }
  db.seq = m.seq;
  db.next_id = m.next_id;
  for (std::uint32_t i = 0; i < m.ntrees; ++i) {
    const meta_tree& t = m.trees[i];
    const std::size_t nl = strnlen(t.name, sizeof t.name);
    if (nl > kMaxTreeName) fail(error_kind::corrupt, "tree name not terminated");
    if (t.root && (t.root < kFirstUnit || t.root >= m.hwm))
      fail(error_kind::corrupt, "tree root outside the file");
    db.trees.push_back({std::string(t.name, nl), t.root, t.count});
  }
  if (m.freelist) load_free_space(db, m.freelist, m.hwm);
  db.alloc.logging = !o.read_only;
}
}  // namespace

database database::open(const std::string& path, options opts) {
  if (path.find('\0') != std::string::npos)  // the system would cut it there
    throw error(error_kind::invalid_argument, "path holds a NUL byte");
  if (path.empty()) throw error(error_kind::invalid_argument, "path is empty");
  database d;
  auto db = new_impl(false, opts);
  open_file(*db, path, opts);
  db->publish_space_locked();  // no other thread has it yet
  d.db_ = std::move(db);
  return d;
}

database database::memory(options opts) {
  // It would start empty and stay so: surely a mistake (a path left out), not a wish.
  if (opts.read_only)
    fail(error_kind::invalid_argument, "a memory database cannot be read-only (no path given)");
  database d;
  auto db = new_impl(true, opts);
  db->alloc.hwm = kFirstUnit;
  db->ensure_mapped(kFirstUnit);
  db->publish_space_locked();  // no other thread has it yet
  d.db_ = std::move(db);
  return d;
}

database::~database() = default;

void database::close() { db_.reset(); }

const std::string& database::path() const {
  static const std::string none;
  return db_ ? db_->path : none;
}

namespace {
db_impl& need(const std::shared_ptr<db_impl>& db) {
  if (!db) throw error(error_kind::invalid_argument, "database is closed");
  db->check_process();
  return *db;
}
void check_tree_name(std::string_view tree) {
  if (tree.size() > kMaxTreeName || tree.find('\0') != std::string_view::npos)
    throw error(error_kind::invalid_argument,
                "tree name must be at most " + std::to_string(kMaxTreeName) + " bytes, no NUL");
}
// A named tree that does not exist, and the ones that do (called with db.mu held).
[[noreturn]] void no_such_tree(const db_impl& db, std::string_view tree) {
  std::string have;
  for (const auto& t : db.trees) {
    if (t.name.empty()) continue;  // the default tree always reads; listing it says nothing
    have += (have.empty() ? "'" : ", '") + t.name + "'";
  }
  throw error(
      error_kind::not_found,
      "no tree named '" + std::string(tree) + "' in the database (" +
          (have.empty() ? std::string("it has no named trees") : "its named trees: " + have) +
          "); a write transaction on a new name creates the tree when it commits");
}
}  // namespace

const recovery_info& database::recovery() const { return need(db_).recovery; }

snapshot database::read(std::string_view tree) const {
  db_impl& db = need(db_);
  check_tree_name(tree);
  snapshot s;
  auto r = std::make_shared<reader>();
  r->db = &db;
  {
    std::unique_lock<std::mutex> g(db.mu);
    // compact() (on another thread) is about to swap the file out from under a new snapshot;
    // its own reads go on.
    db.cv.wait(g, [&] { return !db.compacting || db.writer_thread == std::this_thread::get_id(); });
    const int i = db.tree_index(tree);
    if (i >= 0) {
      r->tr.root = db.trees[i].root;
      r->tr.count = db.trees[i].count;
    } else if (!tree.empty()) {
      no_such_tree(db, tree);
    }
    r->tr.seq = db.seq;
    s.snap_space_ = {db.pub_hwm, db.pub_free_units, db.pub_next_id};  // published with db.seq
    db.readers.add(db.seq);
    r->live = true;
  }
  s.db_ = db_;
  s.tr_ = &r->tr;
  s.reader_ = r.get();
  s.clock_ = std::shared_ptr<const view_clock>(std::move(r), &s.reader_->clock);
  return s;
}

write_tx database::write(std::string_view tree) { return begin_write(tree, false); }

void database::drop(std::string_view tree) {
  write_tx w = begin_write(tree, true);
  txn_state& t = w.st();
  // The tree's nodes go the way of any removal's (held for the snapshots that see them), and
  // the commit leaves the tree out of the table.
  tree_remove_range(t, {}, std::nullopt);
  t.drop = true;
  w.commit();
}

write_tx database::begin_write(std::string_view tree, bool existing) {
  db_impl& db = need(db_);
  check_tree_name(tree);
  if (db.read_only) throw error(error_kind::read_only, "database was opened read-only");
  auto t = std::make_shared<txn_state>();
  t->db = &db;
  t->keep = db_;
  t->tree = std::string(tree);
  t->levels.reserve(1);  // nothing below may run out of memory once the writer slot is taken
  {
    std::unique_lock<std::mutex> g(db.mu);
    // Waiting for itself would never end (and, from Python, not even on Ctrl-C).
    if (db.writer && db.writer_thread == std::this_thread::get_id())
      throw error(error_kind::busy,
                  "this thread already has a write transaction open on the database; commit or "
                  "abort it first (or nest one with sub())");
    db.cv.wait(g, [&] { return !db.writer; });
    refuse_if_failed(db);
    const int i = db.tree_index(tree);
    if (i < 0 && existing) no_such_tree(db, tree);
    if (i < 0 && db.trees.size() >= kMaxTrees)
      throw error(error_kind::invalid_argument,
                  "database holds the most trees it can (" + std::to_string(kMaxTrees) + ")");
    db.alloc.forget_room();  // the last transaction's gives are over (reclaim's are no undo)
    db.reclaim_locked();     // before the slot is taken: out of memory, it stays free
    db.writer = true;
    db.writer_thread = std::this_thread::get_id();
    if (i >= 0) {
      t->cur.root = db.trees[i].root;
      t->cur.count = db.trees[i].count;
    }
    t->cur.seq = db.seq;
  }
  level l;
  l.base = ++db.next_id;
  l.saved = t->cur;
  t->levels.push_back(std::move(l));
  t->levels_changed();
  write_tx w;
  w.db_ = db_;
  w.tr_ = &t->cur;
  w.txn_ = t.get();
  w.clock_ = t->clock;
  w.state_ = std::move(t);
  w.level_ = 0;
  return w;
}

std::vector<std::string> database::trees() const {
  db_impl& db = need(db_);
  std::lock_guard<std::mutex> g(db.mu);
  std::vector<std::string> out;
  for (const auto& t : db.trees) out.push_back(t.name);
  return out;
}

stats database::stat(std::string_view tree) const {
  snapshot s = read(tree);
  return s.stat();
}

void database::validate() const {
  db_impl& db = need(db_);
  std::unique_lock<std::mutex> g(db.mu);
  if (db.writer && db.writer_thread == std::this_thread::get_id())
    throw error(error_kind::busy,
                "this thread has a write transaction open on the database; commit or abort it "
                "before validating the database");
  db.cv.wait(g, [&] { return !db.writer; });
  db.writer = true;  // hold writes off while free space is compared
  g.unlock();
  struct unhold {
    db_impl& db;
    ~unhold() { release_writer(db); }
  } u{db};
  std::vector<std::uint64_t> used(db.alloc.hwm / 64 + 1);
  for (const auto& t : db.trees) tree_validate(db, t.root, t.count, used, db.alloc.hwm, db.next_id);
  auto mark = [&](std::uint32_t off, std::uint32_t units, const char* what) {
    // A damaged file can list free space past the mark; say so rather than index past `used`.
    if (off < kFirstUnit || std::uint64_t{off} + units > db.alloc.hwm)
      fail(error_kind::corrupt, std::string(what) + " at unit " + std::to_string(off) + " (" +
                                    std::to_string(units) + " units) lies outside the used space");
    for (std::uint64_t x = off; x < std::uint64_t{off} + units; ++x) {
      std::uint64_t& w = used[x / 64];
      const std::uint64_t bit = std::uint64_t{1} << (x % 64);
      if (w & bit)
        fail(error_kind::corrupt,
             std::string(what) + " at unit " + std::to_string(off) + " overlaps a live node");
      w |= bit;
    }
  };
  db.alloc.each([&](std::uint32_t off, std::uint32_t units) { mark(off, units, "free extent"); });
  for (const auto& f : db.freed) mark(f.off, f.units, "freed extent");
  for (std::uint32_t r : db.freelog) mark(r, db.hdr(r)->units, "free-space node");
  // Every unit below the mark is a node, free, or waiting for readers: nothing leaks.
  std::uint64_t lost = 0, first_lost = 0;
  for (std::uint64_t x = kFirstUnit; x < db.alloc.hwm; ++x)
    if (!(used[x / 64] >> (x % 64) & 1) && lost++ == 0) first_lost = x;
  if (lost)
    fail(error_kind::corrupt, std::to_string(lost) +
                                  " units neither used nor free, first at unit " +
                                  std::to_string(first_lost));
}

namespace {
// compact(): the fresh database's state into `to` (and `to`'s into `from`, which then closes the
// old file), everything but what belongs to the handle: the path other threads may read, the
// lock and the writer slot compact holds, the process it belongs to, the kernels it was opened
// with. With to.mu held.
void swap_state(db_impl& to, db_impl& from) {
  using std::swap;
  swap(to.fd, from.fd);
  swap(to.memory, from.memory);
  swap(to.read_only, from.read_only);
  swap(to.sync, from.sync);
  swap(to.base, from.base);
  swap(to.reserved, from.reserved);
  swap(to.mapped, from.mapped);
  swap(to.failed, from.failed);
  swap(to.seq, from.seq);
  swap(to.trees, from.trees);
  swap(to.readers, from.readers);
  swap(to.pub_hwm, from.pub_hwm);
  swap(to.pub_free_units, from.pub_free_units);
  swap(to.pub_next_id, from.pub_next_id);
  swap(to.next_id, from.next_id);
  swap(to.alloc, from.alloc);
  swap(to.freed, from.freed);
  swap(to.freed_units, from.freed_units);
  swap(to.freed_checked, from.freed_checked);
  swap(to.readers_left, from.readers_left);
  swap(to.commit_ids, from.commit_ids);
  swap(to.freelog, from.freelog);
  swap(to.freelist_entries, from.freelist_entries);
  swap(to.freelog_entries, from.freelog_entries);
  swap(to.recovery, from.recovery);
}
}  // namespace

// The handle (db_) never changes: other threads' read(), write(), stat() and trees() on this
// database go on through it, waiting while the rewrite runs (read() on `compacting`, write() on
// the writer slot compact holds). Replacing db_ here (the way it was done) raced their copies
// of it, and a snapshot registered between the check and the swap read the old, closed map.
void database::compact() {
  db_impl& db = need(db_);
  if (db.read_only) throw error(error_kind::read_only, "database was opened read-only");
  {
    std::lock_guard<std::mutex> g(db.mu);
    refuse_if_failed(db);
    // Checked with the reader table's lock: no snapshot can slip in after it (read() waits on
    // `compacting`), where a count of the handle's references could not tell.
    if (db.writer || !db.readers.empty())
      throw error(error_kind::busy, "compact needs no open snapshot or transaction");
    db.writer = true;
    db.writer_thread = std::this_thread::get_id();
    db.compacting = true;
  }
  struct done {
    db_impl& db;
    ~done() {
      {
        std::lock_guard<std::mutex> g(db.mu);
        db.compacting = false;
      }
      release_writer(db);
    }
  } d{db};
  database fresh;
  std::string tmp;
  scratch_file scrap;  // a compact that fails removes its new file
  if (db.memory) {
    fresh = memory(options{db.sync, false, std::nullopt});
  } else {
    tmp = db.path + ".compact";
    ::unlink(tmp.c_str());
    scrap.path = tmp;
    fresh = open(tmp, options{db.sync, false, std::nullopt});
    // The new file replaces the old one under its name, so it takes the old one's owner and
    // mode before any data goes in: created as 0644, a 0600 file came back readable by everyone.
    // Owner as far as this process may set it (as cp -p); the mode always.
    struct stat st;
    if (::fstat(db.fd, &st) != 0) fail_errno("fstat", db.path);
    if (::fchown(fresh.db_->fd, st.st_uid, st.st_gid) != 0 && errno != EPERM)
      fail_errno("fchown", tmp);
    if (::fchmod(fresh.db_->fd, st.st_mode & 07777) != 0) fail_errno("fchmod", tmp);
  }
  for (const auto& t : db.trees) {  // the writer slot keeps the table as it is
    snapshot s = read(t.name);
    write_tx w = fresh.write(t.name);
    cursor c = s.make_cursor();
    for (bool ok = c.first(); ok; ok = c.next()) {
      bool ch;
      tree_write(w.st(), wmode::upsert, c.key(), c.value(), ch);
    }
    w.commit();
  }
  if (!db.memory) {
    if (fdatasync(fresh.db_->fd) != 0) fail_errno("fdatasync", tmp);
    // Renamed while still open and locked, and adopted as it is: closing and reopening it left
    // a moment in which another process could open the file first, and compact then failed
    // with the database closed.
    if (::rename(tmp.c_str(), db.path.c_str()) != 0) fail_errno("rename", tmp);
    scrap.path.clear();
    // Before the new file takes commits: without it a power loss could leave the old file
    // under the name, and with it lose every commit made since (found by the power-loss test).
    sync_dir_of(db.path);
  }
  {
    std::lock_guard<std::mutex> g(db.mu);
    swap_state(db, *fresh.db_);
  }
  fresh.close();  // now the old file and map
}

}  // namespace simdex::kv
