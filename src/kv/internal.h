// kv internals shared by the store (arena, allocator, meta pages, transactions) and the tree
// code (node layouts, lookups, copy-on-write updates). Layouts are documented in docs/kv.md.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "../primitives/kernels.h"
#include "simdex/kv.h"
#include "simdex/primitives.h"

namespace simdex::kv::detail {

// ---- node layouts (all nodes start on a 64-byte unit; references are unit numbers) -------------

inline constexpr std::uint64_t kUnit = 64;
inline constexpr std::uint32_t kFirstUnit = 128;  // units 0..127: the two 4 KiB meta pages
inline constexpr std::size_t kLeafSlots = 64;     // keys per leaf at most
inline constexpr std::size_t kLeafMaxBytes = 4096;
inline constexpr std::size_t kLeafHeap = 32 + kLeafSlots + 2 * kLeafSlots;  // 224
inline constexpr std::size_t kInlineValue = 64;  // longer values go to a value node
inline constexpr std::uint16_t kOutOfLine = 0xFFFF;
inline constexpr std::size_t kPutBatch = 64;  // buffered puts applied together
inline constexpr std::size_t kMaxFanout = 256;

enum node_type : std::uint8_t { kInner = 1, kLeaf = 2, kBlob = 3, kFreeList = 4, kFreeLog = 5 };

struct node_hdr {
  std::uint8_t type;
  std::uint8_t flags;
  std::uint16_t n;      // children (inner) or keys (leaf)
  std::uint32_t units;  // size of this node in 64-byte units
  std::uint64_t txn;    // id of the transaction level that wrote it (copy-on-write test)
};
static_assert(sizeof(node_hdr) == 16);

// Inner: header | prefix (plen, padded to 8) | dividers[cap] | children u32[cap] | counts u64[cap].
// References apart from counts keep the lines a lookup touches few (12-byte slots holding both
// made gets 14 % slower at 3M keys). Child i holds the keys whose byte at the routing position
// (depth + plen) is in
// [div[i-1], div[i]); keys that end at the routing position go to child 0. Children do not
// consume the routing byte: a child's depth is the routing position.
struct inner_hdr : node_hdr {
  std::uint16_t plen;
  std::uint16_t cap;
  std::uint32_t pad0;
  std::uint64_t pad1;
};
static_assert(sizeof(inner_hdr) == 32);

// Leaf: header | hash[64] | offs u16[64] | heap. Entry: u16 klen | u16 vlen or kOutOfLine |
// key suffix (after the leaf's depth) | value bytes, or u32 value-node reference.
struct leaf_hdr : node_hdr {
  std::uint16_t heap;  // lowest used heap byte
  std::uint16_t dead;  // bytes of dead entries in the heap
  std::uint32_t pad0;
  std::uint64_t pad1;
};
static_assert(sizeof(leaf_hdr) == 32);

// Value node: header | u64 length | bytes. Free-list node: header | u64 count | entries.
struct blob_hdr : node_hdr {
  std::uint64_t len;
};

// Room for k more elements, so that adding them cannot run out of memory halfway through a
// change; grown geometrically (an exact reserve per call would copy the vector every time).
template <class V>
void reserve_more(V& v, std::size_t k) {
  if (v.capacity() - v.size() < k) v.reserve(std::max(v.size() + k, 2 * v.capacity()));
}

inline std::size_t align8(std::size_t x) { return (x + 7) & ~std::size_t{7}; }
inline std::uint32_t units_for(std::uint64_t bytes) {
  return static_cast<std::uint32_t>((bytes + kUnit - 1) / kUnit);
}
inline std::size_t inner_bytes(std::size_t plen, std::size_t cap) {
  return 32 + align8(plen) + 13 * cap;
}

inline std::uint16_t rd16(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}
inline std::uint32_t rd32(const std::uint8_t* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline std::uint64_t rd64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void wr16(std::uint8_t* p, std::uint16_t v) { std::memcpy(p, &v, 2); }
inline void wr32(std::uint8_t* p, std::uint32_t v) { std::memcpy(p, &v, 4); }
inline void wr64(std::uint8_t* p, std::uint64_t v) { std::memcpy(p, &v, 8); }

struct inner_view {
  inner_hdr* h;
  std::uint8_t* prefix() const { return reinterpret_cast<std::uint8_t*>(h) + 32; }
  std::uint8_t* div() const { return prefix() + align8(h->plen); }
  std::uint8_t* child_at(std::size_t i) const { return div() + h->cap + 4 * i; }
  std::uint8_t* count_at(std::size_t i) const { return div() + 5 * std::size_t{h->cap} + 8 * i; }
  std::uint32_t child(std::size_t i) const { return rd32(child_at(i)); }
  std::uint64_t count(std::size_t i) const { return rd64(count_at(i)); }
  void set(std::size_t i, std::uint32_t ref, std::uint64_t count) const {
    wr32(child_at(i), ref);
    wr64(count_at(i), count);
  }
};

struct leaf_view {
  leaf_hdr* h;
  std::uint8_t* base() const { return reinterpret_cast<std::uint8_t*>(h); }
  std::uint8_t* hash() const { return base() + 32; }
  std::uint16_t* offs() const { return reinterpret_cast<std::uint16_t*>(base() + 96); }
  const std::uint8_t* entry(std::size_t i) const { return base() + offs()[i]; }
  std::uint16_t klen(std::size_t i) const { return rd16(entry(i)); }
  const std::uint8_t* key(std::size_t i) const { return entry(i) + 4; }
};

// Size of a leaf entry in the heap.
inline std::size_t entry_bytes(std::size_t klen, bool out_of_line, std::size_t vlen) {
  return 4 + klen + (out_of_line ? 4 : vlen);
}

std::uint8_t key_hash(std::string_view key);

// ---- the database -----------------------------------------------------------------------------

struct extent {
  std::uint32_t off, units;
};
struct tagged_extent {
  std::uint32_t off, units;
  std::uint64_t tag;        // sequence number of the commit that freed it
  std::uint64_t birth = 0;  // of the commit that wrote it (0: unknown, assume the oldest)
};

// Free space. The writer's allocator keeps free extents in exact-size bins (a take is a pop,
// the smallest fitting bin found through a bitmask; the rest of a larger extent goes back to its
// bin) and merges neighbours only when nothing fits: a std::map per operation cost a third of
// the insert time at 10M keys. In file mode every change is also logged, so a commit persists
// only what changed since the last one (see write_free_space in store.cc).
enum log_kind : std::uint64_t { kLogTake = 1, kLogGive = 2, kLogPend = 3, kLogReclaim = 4 };
struct log_op {
  std::uint32_t off, units;
  std::uint64_t kind;
};
class allocator {
 public:
  bool logging = false;
  std::vector<log_op> log;
  std::uint64_t hwm = kFirstUnit;  // first unit past the used part (the bump pointer)
  std::uint64_t free_units = 0;    // in extents below hwm

  // Returns 0 when the arena cannot grow to fit (caller throws full). Keeps room (memory) for
  // the give that may undo it, so that a give of an extent taken since forget_room() cannot run
  // out of memory: an abort needs none (it leaked the level's nodes when a give failed).
  std::uint32_t take(std::uint32_t units, std::uint64_t limit_units);
  // Throws (out of memory, nothing changed) only for an extent no take kept room for.
  void give(std::uint32_t off, std::uint32_t units);
  // Capacity for k more log entries besides the room kept for gives.
  void reserve_log(std::size_t k) { reserve_more(log, room_ + k); }
  // At a transaction's start: the room kept for the last one's gives is not needed any more.
  void forget_room() noexcept;
  // Replaces the contents: these free extents (sorted, merged) below `hwm`.
  void assign(const std::map<std::uint32_t, std::uint32_t>& free, std::uint64_t hwm);
  std::size_t extents() const { return extents_; }
  template <class F>
  void each(F f) const {  // f(off, units) for every free extent
    for (std::uint32_t b = 1; b < kBins; ++b)
      for (std::uint32_t off : bins_[b]) f(off, b);
    for (const auto& [units, off] : large_) f(off, units);
    for (const std::uint64_t e : spill_)
      f(static_cast<std::uint32_t>(e >> 32), static_cast<std::uint32_t>(e));
  }

 private:
  static constexpr std::uint32_t kBins = 128;  // exact-size bins for 1..127 units
  std::vector<std::uint32_t> bins_[kBins];
  std::uint64_t nonempty_[kBins / 64] = {};
  std::set<std::pair<std::uint32_t, std::uint32_t>> large_;  // (units, off), >= kBins units
  std::size_t extents_ = 0;
  std::uint64_t changes_ = 0;  // takes and gives since the last merge
  // Extents given when put() ran out of memory (offset << 32 | units), in the room take() kept:
  // free, counted in extents_ and free_units, and reused after the next merge (coalesce).
  std::vector<std::uint64_t> spill_;
  std::size_t room_ = 0;  // gives the room is kept for: spill_ and (logging) log entries
  void put(std::uint32_t off, std::uint32_t units);
  void unspill() noexcept;
  std::uint32_t pop_bin(std::uint32_t b);
  std::uint32_t fitting_bin(std::uint32_t units) const;
  bool take_free(std::uint32_t units, std::uint32_t& off);
  void coalesce();
  // The contents: extents (offset << 32 | units) sorted by offset and merged, below `hwm`.
  void refill(const std::vector<std::uint64_t>& sorted, std::uint64_t hwm);
};

// Free space rebuilt at open from the persisted list and log: extents merged as they come, so
// replaying a logged take finds the extent it came from.
struct extent_map {
  std::uint64_t hwm = kFirstUnit;
  std::map<std::uint32_t, std::uint32_t> by_off;  // off -> units
  void give(std::uint32_t off, std::uint32_t units);
  bool carve(std::uint32_t off, std::uint32_t units);  // false: not free
  bool overlaps(std::uint32_t off, std::uint32_t units) const;
};

// Live snapshots by the commit they see: (seq, snapshots), ascending by seq. A snapshot is taken
// at the newest commit, so registering one is an increment of the last entry (or an append) and
// ending one finds its entry at the back, as a rule: no allocation per snapshot (the multiset
// this replaces allocated and freed a node for each; with the reader's second allocation, for
// its clock, 7 % of the instructions of `with db.read() as s: s.get(k)` from Python). Entries
// whose count fell to zero stay until prune(), in the writer's reclaim before each commit (so
// they do not pile up): ending a snapshot never moves entries, and the next snapshot of the
// same commit reuses its entry. Used with db_impl::mu held.
class reader_table {
 public:
  void add(std::uint64_t seq);              // may throw std::bad_alloc
  void remove(std::uint64_t seq) noexcept;  // one added before and not removed yet
  void prune() noexcept;                    // drops the entries no snapshot holds any more
  bool empty() const noexcept { return live_ == 0; }
  // Whether a live snapshot sees a commit in [lo, hi).
  bool any_in(std::uint64_t lo, std::uint64_t hi) const noexcept;
  // The oldest commit a live snapshot sees; `none` when there is none.
  std::uint64_t oldest(std::uint64_t none) const noexcept;

 private:
  struct entry {
    std::uint64_t seq, n;
  };
  // The first entry of v (this table's, const or not) whose commit is at or after seq.
  template <class V>
  static auto first_at(V& v, std::uint64_t seq) noexcept {
    return std::lower_bound(v.begin(), v.end(), seq,
                            [](const entry& e, std::uint64_t s) { return e.seq < s; });
  }
  std::vector<entry> v_;
  std::uint64_t live_ = 0;  // snapshots registered
};

struct tree_info {
  std::string name;
  std::uint32_t root = 0;
  std::uint64_t count = 0;
};

// compact() swaps a fresh database's state into this one in place (swap_state in store.cc), so
// the `database` handle other threads read through never changes: a field added here must be
// added there too unless it belongs to the handle rather than the file.
struct db_impl {
  std::string path;
  int fd = -1;
  bool memory = true;
  bool read_only = false;
  sync_mode sync = sync_mode::none;
  const primitives::kernels* k = nullptr;

  std::uint8_t* base = nullptr;
  std::size_t reserved = 0;  // bytes of address space reserved
  std::size_t mapped = 0;    // bytes mapped (file length in file mode)

  // Set in a child process by fork() (see fork_child in store.cc): the database, its snapshots
  // and transactions belong to the parent, whose writes and space reuse the child cannot see,
  // so every call refuses (check_process) and ending them touches neither the file nor `mu`.
  bool forked = false;
  pid_t owner = 0;  // the process that opened it
  void check_process() const {
    if (forked) refuse_forked();
  }
  [[noreturn]] void refuse_forked() const;

  std::mutex mu;  // committed state and the reader table
  std::condition_variable cv;
  bool writer = false;
  // Set when a commit published in memory could not be written to the file (a failed sync, say):
  // what the file holds is unknown, so no write is taken until the database is reopened.
  std::string failed;
  std::thread::id writer_thread;  // the thread that opened the write transaction, while one is
  // compact() runs (it holds the writer slot too): other threads' read() waits, since the file
  // and map a snapshot would pin are about to be swapped out (see swap_state).
  bool compacting = false;
  std::uint64_t seq = 0;
  std::vector<tree_info> trees;
  reader_table readers;  // the commits live snapshots see
  // The space figures as the writer last left them (each release of the writer slot, and open):
  // what a snapshot's stat() and validate() read, since the live ones change under a writer.
  std::uint64_t pub_hwm = 0, pub_free_units = 0, pub_next_id = 0;

  // Writer-only state (guarded by `writer`).
  std::uint64_t next_id = 1;
  allocator alloc;
  std::vector<tagged_extent> freed;    // waiting for readers
  std::uint64_t freed_units = 0;       // their units
  void hold(const tagged_extent& e) {  // onto `freed`
    freed.push_back(e);
    freed_units += e.units;
  }
  std::size_t freed_checked = 0;  // freed[0, this) were pinned at the last check
  bool readers_left = false;      // a snapshot ended since then (guarded by mu)
  std::vector<std::pair<std::uint64_t, std::uint64_t>> commit_ids;  // (first txn id, seq)
  std::uint64_t birth_of(std::uint64_t txn) const;
  std::vector<std::uint32_t> freelog;  // persisted free space: a full list, then deltas
  std::uint64_t freelist_entries = 0;  // in the full list
  std::uint64_t freelog_entries = 0;   // in the deltas after it
  recovery_info recovery;              // what opening found in the meta pages

  ~db_impl();
  std::uint8_t* at(std::uint32_t ref) const { return base + std::uint64_t{ref} * kUnit; }
  node_hdr* hdr(std::uint32_t ref) const { return reinterpret_cast<node_hdr*>(at(ref)); }
  void ensure_mapped(std::uint64_t units);
  // ensure_mapped for a fresh allocation [ref, ref + units): on failure the extent is given back.
  void map_or_give_back(std::uint32_t ref, std::uint32_t units);  // map [0, units*64 + slack)
  std::uint64_t limit_units() const { return reserved / kUnit - 64; }
  std::uint32_t allocate(std::uint32_t units);
  // Test hook (tests/kv/alloc_fail_test.cc reaches it through database_at): while nonzero,
  // every allocation (tree nodes and a commit's free-space record) counts it down, and the one
  // that brings it to zero fails after taking its extent, as a file that cannot grow fails it
  // (io, ENOSPC), or with std::bad_alloc when fault_bad_alloc is set. Off, it costs one test
  // of a zero field per allocation. Not swapped by compact(): it belongs to the handle.
  std::uint64_t fault_countdown = 0;
  bool fault_bad_alloc = false;
  void reclaim_locked();        // moves freed extents no reader can see into the allocator
  void publish_space_locked();  // pub_* from the live figures
  int tree_index(std::string_view name) const;
};

// What a cursor compares to tell whether its view still holds the nodes it stands on. A change
// of the tree takes a version number never used before; an aborted sub-transaction restores
// the version its parent had (the parent's nodes are untouched by it). `level` is the base id of
// the innermost open transaction level (0 for a snapshot, and once a transaction ended): a
// cursor reads only while the level it was made on is the innermost one.
struct view_clock {
  std::uint64_t version = 0;
  std::uint64_t last = 0;   // the last version handed out
  std::uint64_t level = 0;  // base id of the innermost open level
  std::size_t depth = 0;    // levels open
  void changed() noexcept { version = ++last; }
};

struct pending_node {
  std::uint32_t off, units;
  std::uint64_t txn;
};
struct level {
  std::uint64_t base;  // nodes with txn >= base were written by this level: mutable in place
  tree_root saved;
  std::uint64_t saved_version = 0;    // the clock's version when the level began
  std::vector<pending_node> pending;  // nodes older than this level it replaced
  // Set when a tree operation failed halfway (see txn_state::in_op): what it was, and the nodes
  // it allocated or released, which the abort gives back with those reachable from the root.
  bool broken = false;
  error_kind broken_kind = error_kind::io;
  std::string broken_why;  // empty: out of memory (copying the message ran out too)
  // The failed operation's journal (txn_state::op_made, op_released), moved here: a copy could
  // run out of memory and lose it. A level breaks once (it then takes only its abort).
  std::vector<std::pair<std::uint32_t, std::uint32_t>> strays_made, strays_released;
  std::uint64_t made = 0;  // nodes this level allocated: bounds what one operation releases
};
struct txn_state {
  db_impl* db = nullptr;
  std::shared_ptr<db_impl> keep;
  std::string tree;
  tree_root cur;
  std::vector<level> levels;
  std::uint64_t writes = 0;  // tree writes so far (a large transaction gives copies slack)
  bool drop = false;         // database::drop(): the commit removes the tree from the table
  // Changed by every change of the tree, by each level's start and end, and by the end of the
  // transaction: a cursor made before refuses to walk nodes the change may have rewritten or
  // freed, and to read a level that is not the innermost.
  std::shared_ptr<view_clock> clock = std::make_shared<view_clock>();
  void levels_changed() noexcept {  // after a level was pushed or popped
    clock->level = levels.empty() ? 0 : levels.back().base;
    clock->depth = levels.size();
  }
  // put() with a small value is buffered; flush() applies the buffer in groups whose paths are
  // walked together with prefetches, so their cache misses overlap. Every other operation on
  // the transaction flushes first.
  struct buffered_put {
    std::uint32_t at, klen, vlen;
  };
  std::string buf_bytes;
  std::vector<buffered_put> buf;
  void flush();
  // The tree operation under way (tree_write, tree_remove_range, tree_bulk) journals the nodes
  // it allocates and the nodes of this level it releases, whose give-back waits for its end. One
  // that fails halfway (an allocation the file could not grow for: a full disk) may have linked
  // some new nodes and not yet unlinked the old ones, so neither can be given back by a walk of
  // the tree alone: its level is then broken (level::broken) and takes nothing but abort.
  bool in_op = false;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> op_made, op_released;  // (ref, units)
  std::uint64_t base() const { return levels.back().base; }
  // Allocates a node stamped with this level's id.
  std::uint8_t* make(std::uint32_t units, std::uint8_t type, std::uint32_t& ref);
  // Room in op_released for every node of this level an operation could release, so that
  // release() cannot run out of memory (and lose an unlinked node) inside one.
  void keep_release_room(std::uint64_t nodes);
  // A node this transaction no longer references.
  void release(std::uint32_t ref);
  // Abort: frees the nodes >= min_txn the tree reaches from ref, but those a broken level's
  // journal lists (`skip`, sorted), which its abort gives itself.
  void free_new(std::uint32_t ref, std::uint64_t min_txn, const level* skip);
  // Undoes the innermost open level (an abort's work): its buffered puts, its new nodes, its
  // tree state.
  void undo_level() noexcept;
};

// A snapshot's registration, made by one allocation (the clock shares it: the snapshot's
// cursors hold the clock through the reader's shared_ptr, aliased). The database is not owned:
// the snapshot that releases it owns it, and cursors, which may keep a reader alive after its
// snapshot ended, must not keep a closed database's file open (cursor::state).
struct reader {
  db_impl* db = nullptr;
  tree_root tr;
  bool live = false;
  // Changed by release(): the snapshot's cursors compare it and refuse to read freed nodes.
  view_clock clock;
  void release();  // by the snapshot, while it holds the database
};

[[noreturn]] void fail(error_kind kind, std::string detail);
// Test hook: the live database of this process opened at `path` (null when none is).
db_impl* database_at(const std::string& path);
// Throws unless `level` is the innermost open level of the transaction: it ended (the
// transaction it was nested in ended), or a sub-transaction of it is open (`what` says what was
// refused: "used" or "read").
void check_level(const txn_state& t, std::size_t level, const char* what);
// Throws the error of the write that failed halfway, if one did (level::broken).
void check_unbroken(const txn_state& t);

// Tree operations (tree.cc).
enum class wmode { upsert, insert, update, remove };
// Applies one write; returns whether the key existed before.
bool tree_write(txn_state& t, wmode mode, std::string_view key, std::string_view value,
                bool& changed);
// Builds an empty tree from sorted, distinct pairs in one pass (full leaves).
void tree_bulk(txn_state& t, const std::vector<std::pair<std::string_view, std::string_view>>& kv);
// Removes the keys in [lo, hi) (no hi: to the end) in one walk: subtrees inside the range are
// released whole, only the leaves at its two edges are rebuilt. Returns how many keys went.
std::uint64_t tree_remove_range(txn_state& t, std::string_view lo,
                                std::optional<std::string_view> hi);
const std::uint8_t* tree_get(const db_impl& db, std::uint32_t root, std::string_view key,
                             std::uint64_t& vlen);
std::uint64_t tree_rank(const db_impl& db, std::uint32_t root, std::uint64_t count,
                        std::string_view key);
void tree_stats(const db_impl& db, std::uint32_t root, stats& s);
// Checks every invariant of the tree; marks used units in `used` (one bit per unit).
void tree_validate(const db_impl& db, std::uint32_t root, std::uint64_t count,
                   std::vector<std::uint64_t>& used, std::uint64_t hwm, std::uint64_t max_txn);
std::string_view value_at(const db_impl& db, const std::uint8_t* entry);

}  // namespace simdex::kv::detail
