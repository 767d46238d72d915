// kv: an ordered key-value store in the spirit of psitri: a copy-on-write byte-wise
// radix/B-tree hybrid whose inner nodes route on one key byte through a sorted divider array
// searched with primitives::lower_bound_padded, with sorted leaves of up to 64 keys carrying a
// 1-byte hash per key. Memory-mapped single file (or memory only), two checksummed meta pages,
// O(1) snapshots, one writer at a time, readers never blocked. Design and file format: docs/kv.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "simdex/cpu.h"

namespace simdex::kv {

inline constexpr std::size_t kMaxKey = 1024;                        // bytes
inline constexpr std::uint64_t kMaxValue = std::uint64_t{2} << 30;  // 2 GiB
inline constexpr std::size_t kMaxTrees = 32;                        // named trees per database
inline constexpr std::size_t kMaxTreeName = 39;                     // bytes
inline constexpr std::uint32_t kFormatVersion = 1;

// Every kind of error: X(name, what it means).
#define SIMDEX_KV_ERRORS(X)                                                          \
  X(key_too_long, "key over kMaxKey")                                                \
  X(value_too_long, "value over kMaxValue")                                          \
  X(read_only, "a write through a read-only database")                               \
  X(corrupt, "the structure of a file or node is wrong")                             \
  X(truncated, "the file is shorter than its meta page says")                        \
  X(bad_version, "a format version this build does not read")                        \
  X(bad_checksum, "no meta page with a valid checksum")                              \
  X(io, "a system call failed")                                                      \
  X(busy, "the file is open elsewhere, or snapshots or transactions are still open") \
  X(invalid_argument, "a call that does not fit the state or its arguments")         \
  X(full, "the arena's address space (256 GiB) is exhausted")                        \
  X(not_found, "a named tree that does not exist")

enum class error_kind {
#define SIMDEX_KV_ERROR_ENUM(name, what) name,
  SIMDEX_KV_ERRORS(SIMDEX_KV_ERROR_ENUM)
#undef SIMDEX_KV_ERROR_ENUM
};
const char* error_kind_name(error_kind kind) noexcept;

class error : public std::runtime_error {
 public:
  error(error_kind kind, std::string detail, int sys_errno = 0, std::string path = {});
  error_kind kind() const noexcept { return kind_; }
  const std::string& detail() const noexcept { return detail_; }
  // For io errors: the system call's errno and the file it was about (0 and empty otherwise).
  int sys_errno() const noexcept { return sys_errno_; }
  const std::string& path() const noexcept { return path_; }

 private:
  error_kind kind_;
  int sys_errno_;
  std::string detail_;
  std::string path_;
};

// none: commits reach the page cache only (survive a process crash, not a power loss).
// fsync: a commit returns after its nodes and then its meta page are on stable storage.
enum class sync_mode { none, fsync };

struct options {
  sync_mode sync = sync_mode::none;
  bool read_only = false;  // open an existing file for reads only
  // Primitive kernels at this level (or the best one below it that exists and runs here)
  // instead of the process's dispatch choice: lets one benchmark run put scalar beside SIMD.
  std::optional<simdex::isa> kernels = std::nullopt;
};

struct stats {
  std::uint64_t keys = 0;
  std::uint64_t depth = 0;  // levels, leaf included; 0 for an empty tree
  std::uint64_t inner_nodes = 0, leaf_nodes = 0, value_nodes = 0;
  std::uint64_t node_bytes = 0;  // bytes of reachable nodes
  // The space figures are those of the view's commit (a write transaction: as it stands), so
  // node_bytes + free_bytes <= file_bytes holds for every view, an old snapshot's too.
  std::uint64_t file_bytes = 0;  // used length of the file (or arena)
  std::uint64_t free_bytes = 0;  // free extents inside it, reusable or waiting for readers
  std::uint64_t seq = 0;         // commit sequence number of the view
};

// What opening a file found in its two meta pages (the commit records; docs/kv.md, "File
// format"). Opening uses the newest page that passes its checks (magic, version, checksum); a
// damaged newest page (a torn or corrupted write of the last commit) makes it fall back to the
// previous commit. That recovery is correct but loses the last commit, so it is reported here
// (and by `simdex kv check`, which then fails). All defaults for a memory database, a new file
// and a file whose pages are both sound. Describes the open, not the file now: the next commit
// rewrites the damaged page.
struct recovery_info {
  std::uint64_t seq = 0;  // the commit the database was opened at
  int damaged_page = -1;  // the meta page (0 or 1) that failed its checks; -1: none did
  // The damaged page held a later commit than `seq` (its sequence number reads seq + 1), or may
  // have (the number is unreadable): the open fell back to the previous commit, and the commit
  // of the damaged page is lost. False when the damaged page is the older record (nothing lost).
  bool meta_fallback = false;
  std::uint64_t lost_seq = 0;  // the lost commit's number when legible (seq + 1), else 0
  std::string detail;          // the damage and its consequence in words; empty when none
};

namespace detail {
struct db_impl;
struct reader;
struct txn_state;
struct view_clock;
struct tree_root {
  std::uint32_t root = 0;  // node reference (64-byte units), 0 for an empty tree
  std::uint64_t count = 0;
  std::uint64_t seq = 0;
};
}  // namespace detail

// Position in one view (snapshot or write transaction). key() and value() stay valid until the
// cursor moves; value() views stay valid for the snapshot's lifetime. A cursor works only on
// the view as it was made from: once its snapshot is released, or its transaction writes (a
// buffered put() counts when it is applied: at the 64th, or at the transaction's next other
// call), commits or aborts, every call throws error(invalid_argument), valid() too (a loop on
// valid() must not end as if the keys had run out). While its transaction has a sub-transaction
// open it throws the same (the parent may not be read then); once the sub-transaction ends it works
// again if the tree is as it was: after an abort, or a commit of a sub-transaction that wrote
// nothing.
class cursor {
 public:
  cursor();
  cursor(cursor&&) noexcept;
  cursor& operator=(cursor&&) noexcept;
  ~cursor();

  bool valid() const;
  bool first();
  bool last();
  bool first(std::string_view prefix);     // first key with the prefix
  bool last(std::string_view prefix);      // last key with the prefix
  bool seek(std::string_view key);         // exactly key
  bool lower_bound(std::string_view key);  // first key >= key
  bool upper_bound(std::string_view key);  // first key > key
  bool next();
  bool prev();
  std::string_view key() const;
  std::string_view value() const;

  struct state;

 private:
  friend class view;
  std::unique_ptr<state> s_;
};

// Read operations shared by snapshots and write transactions. On a write transaction with a
// sub-transaction open, every one of them throws error(invalid_argument): the parent's tree is
// the one the sub-transaction is changing, and it is the parent's again only once the
// sub-transaction commits or aborts.
class view {
 public:
  // Zero-copy: the bytes live in the map and stay valid while the snapshot lives (for a write
  // transaction: until its next write).
  std::optional<std::string_view> get(std::string_view key) const;
  bool contains(std::string_view key) const { return get(key).has_value(); }
  // Many lookups in flight: keys are walked level by level in groups with prefetches.
  void get_many(std::span<const std::string_view> keys,
                std::span<std::optional<std::string_view>> out) const;
  // Keys in [lo, hi); no hi (std::nullopt) means no upper bound (an empty hi is a bound: 0 keys).
  std::uint64_t count(std::string_view lo = {}, std::optional<std::string_view> hi = {}) const;
  std::uint64_t size() const;
  cursor make_cursor() const;
  stats stat() const;
  // Walks the tree and checks every invariant; throws error(corrupt) naming the first problem.
  void validate() const;

 protected:
  view() = default;
  void check_open() const;
  struct space {
    std::uint64_t hwm, free_units, next_id;
  };
  space space_now() const;  // the file's space figures as this view may read them
  // A snapshot's: the figures published with the commit it sees. Read later, another commit's
  // figures would count nodes it freed (still this snapshot's) as free too, and a stat() beside
  // commits could say the nodes and the free space outgrow the file.
  space snap_space_{0, 0, 0};
  std::shared_ptr<detail::db_impl> db_;
  const detail::tree_root* tr_ = nullptr;  // owned by the reader or the transaction state
  detail::txn_state* txn_ = nullptr;       // a write transaction's state: reads flush its puts
  std::size_t level_ = 0;                  // a write transaction's nesting level (0: the outermost)
  // Changes when the view's nodes may change (a snapshot released, a transaction's write or
  // end) and while a sub-transaction is open: cursors made from the view refuse to move then.
  std::shared_ptr<const detail::view_clock> clock_;
  friend class database;
};

class snapshot : public view {
 public:
  snapshot() = default;
  snapshot(snapshot&& o) noexcept
      : view(std::move(o)), reader_(std::exchange(o.reader_, nullptr)) {}
  snapshot& operator=(snapshot&&) noexcept;  // releases the snapshot it replaces
  ~snapshot();
  std::uint64_t seq() const noexcept { return tr_ ? tr_->seq : 0; }
  void release();  // ends the snapshot early; its views become invalid

 private:
  friend class database;
  // Its registration; owned through clock_, which shares the reader's allocation.
  detail::reader* reader_ = nullptr;
};

// A write transaction on one tree. The destructor aborts what was not committed, together with
// any sub-transaction of it still open (which then reports !active()). A nested transaction
// from sub() works on the parent's current state; its commit folds into the parent, its abort
// restores the parent's state. While it is open the parent cannot be used at all: every read
// (get, get_many, count, size, stat, validate, make_cursor, and its cursors), every write,
// sub(), commit() and abort() throws error(invalid_argument), until the sub-transaction
// commits or aborts (or is destroyed, which aborts it).
class write_tx : public view {
 public:
  write_tx(write_tx&&) noexcept;
  write_tx& operator=(write_tx&&) noexcept;
  ~write_tx();

  // upsert() without the answer. Small values are buffered and applied in batches whose cache
  // misses overlap; an error applying one (only `full`) surfaces at the next call.
  void put(std::string_view key, std::string_view value);
  bool upsert(std::string_view key, std::string_view value);  // true: key was new
  bool insert(std::string_view key, std::string_view value);  // false (unchanged) if present
  // put, upsert, insert and update throw key_too_long for a key over kMaxKey (and
  // value_too_long for a value over kMaxValue), update too although such a key is never present.
  bool update(std::string_view key, std::string_view value);  // false (unchanged) if absent
  // True: key was present. A key over kMaxKey cannot be present: false, as get() answers
  // nullopt for it (reads and removes answer "absent"; writes that store a value throw).
  bool remove(std::string_view key);
  // Removes the keys in [lo, hi) (no hi: to the end) and returns how many there were, in one
  // walk: subtrees inside the range are released whole.
  std::uint64_t remove_range(std::string_view lo, std::optional<std::string_view> hi);
  // Adds sorted, distinct keys. Into an empty tree it builds full leaves directly, in one pass
  // (it holds a 40-byte descriptor per pair meanwhile); otherwise it inserts them in order and
  // fails with invalid_argument at the first key already present. Unsorted input, and a key or
  // value over its limit, fail before anything is written. Every error names the pair's index.
  void bulk_load(std::span<const std::pair<std::string_view, std::string_view>> sorted);

  write_tx sub();
  void commit();
  void abort();
  // False once committed or aborted, or once the transaction it was nested in ended.
  bool active() const noexcept;

 private:
  friend class database;
  write_tx() = default;
  detail::txn_state& st() const;   // the innermost open level's state, buffered puts applied
  detail::txn_state& raw() const;  // the same without applying them
  void detach() noexcept;
  void abort_open_subs() noexcept;  // the destructor's: sub-transactions still open go first
  std::shared_ptr<detail::txn_state> state_;
};

class database {
 public:
  // A file-backed database (created if missing). The file is memory-mapped; it grows by itself.
  static database open(const std::string& path, options opts = {});
  // Memory only (no file): for tests and caches.
  static database memory(options opts = {});

  database() = default;
  database(database&&) noexcept = default;
  database& operator=(database&&) noexcept = default;
  ~database();

  // Trees are named; "" is the default tree. A tree exists once a committed write created it
  // (a transaction from write(name) that commits creates it, even with no writes).
  // read() of a named tree that does not exist throws error(not_found) naming it and the trees
  // there are (a misspelt name would otherwise read as an empty tree); the default tree ""
  // always reads, empty before its first commit. stat(tree) likewise.
  snapshot read(std::string_view tree = {}) const;
  // Blocks while another thread's write transaction of this database is open; throws
  // error(busy) when this thread's own is (waiting for it would never end).
  write_tx write(std::string_view tree = {});
  // Removes the tree and its keys in one commit (durable as any commit: with sync_mode::fsync
  // on disk when it returns), freeing its slot among the kMaxTrees; its nodes are reused once
  // no snapshot can see them (snapshots taken before read on). Waits for the writer as write()
  // does; throws not_found when there is no such tree, read_only on a read-only database.
  void drop(std::string_view tree);
  std::vector<std::string> trees() const;
  // Rewrites the live trees into a fresh file and swaps it in; needs no open snapshot or
  // transaction (error busy). Memory databases are compacted in place.
  void compact();
  stats stat(std::string_view tree = {}) const;
  void validate() const;  // every tree, plus free space against reachable nodes
  // What the open found in the meta pages: in particular whether it fell back to the previous
  // commit because the newest commit record was damaged (see recovery_info).
  const recovery_info& recovery() const;
  const std::string& path() const;
  bool is_open() const noexcept { return db_ != nullptr; }
  void close();

 private:
  // write(), or (`existing`) a write transaction on a tree that must exist (drop's).
  write_tx begin_write(std::string_view tree, bool existing);
  std::shared_ptr<detail::db_impl> db_;
};

}  // namespace simdex::kv
