// Reading a tree: point lookups, ranks, cursors and get_many.
#include <xxhash.h>

#include "node.h"

namespace simdex::kv::detail {

std::uint8_t key_hash(std::string_view key) {
  return static_cast<std::uint8_t>(XXH3_64bits(key.data(), key.size()) >> 56);
}

std::string_view value_at(const db_impl& db, const std::uint8_t* e) {
  const std::uint16_t kl = rd16(e), vi = rd16(e + 2);
  if (vi != kOutOfLine) return {reinterpret_cast<const char*>(e + 4 + kl), vi};
  const auto* b = reinterpret_cast<const blob_hdr*>(db.at(rd32(e + 4 + kl)));
  return {reinterpret_cast<const char*>(b) + 24, static_cast<std::size_t>(b->len)};
}

const std::uint8_t* tree_get(const db_impl& db, std::uint32_t ref, std::string_view key,
                             std::uint64_t& vlen) {
  if (!ref) return nullptr;
  const u8* k = reinterpret_cast<const u8*>(key.data());
  const std::size_t kn = key.size();
  std::size_t d = 0;
  for (;;) {
    node_hdr* h = db.hdr(ref);
    if (h->type == kInner) {
      inner_view v{static_cast<inner_hdr*>(h)};
      const std::size_t pl = v.h->plen;
      if (pl) {
        if (kn - d < pl || std::memcmp(k + d, v.prefix(), pl) != 0) return nullptr;
        d += pl;
      }
      ref = v.child(route(db, v, sym_at(k, kn, d)));
    } else {
      leaf_view L{static_cast<leaf_hdr*>(h)};
      // The offsets past the first 16 sit on lines 2-3: request them while the hashes are read.
      // Once the header is here, request the rest of the leaf too, so a hit's entry is on its
      // way before its offset is read: hits +15 %, misses -5 % (the lines they did not need).
      __builtin_prefetch(L.base() + 2 * kUnit);
      __builtin_prefetch(L.base() + 3 * kUnit);
      prefetch_node(L.h, L.h->units);
      const int j = leaf_find(L, k + d, kn - d, key_hash(key));
      if (j < 0) return nullptr;
      const std::string_view sv = value_at(db, L.entry(static_cast<std::size_t>(j)));
      vlen = sv.size();
      return reinterpret_cast<const u8*>(sv.data());
    }
  }
}

std::uint64_t tree_rank(const db_impl& db, std::uint32_t ref, std::uint64_t total,
                        std::string_view key) {
  const u8* k = reinterpret_cast<const u8*>(key.data());
  const std::size_t kn = key.size();
  std::size_t d = 0;
  std::uint64_t below = 0;
  while (ref) {
    node_hdr* h = db.hdr(ref);
    if (h->type == kInner) {
      inner_view v{static_cast<inner_hdr*>(h)};
      const std::size_t pl = v.h->plen;
      const std::size_t m = std::min(pl, kn - d);
      const int c = m ? std::memcmp(k + d, v.prefix(), m) : 0;
      if (c < 0 || (c == 0 && m < pl)) return below;
      if (c > 0) return below + total;
      d += pl;
      const unsigned idx = route(db, v, sym_at(k, kn, d));
      for (unsigned i = 0; i < idx; ++i) below += v.count(i);
      total = v.count(idx);
      ref = v.child(idx);
    } else {
      bool found;
      return below + leaf_lower(leaf_view{static_cast<leaf_hdr*>(h)}, k + d, kn - d, found);
    }
  }
  return below;
}

}  // namespace simdex::kv::detail

namespace simdex::kv {

using namespace detail;

struct cursor::state {
  // Not owned: a cursor reads only while its view is unchanged (check()), and the view holds
  // the database; owning it kept a closed database's file open and locked for the cursor.
  db_impl* db = nullptr;
  std::uint32_t root = 0;
  std::shared_ptr<const view_clock> clock;  // the view's, and its state when made
  std::uint64_t made = 0, made_level = 0;
  std::size_t made_depth = 0;
  // Every move and read first: the nodes of a released snapshot or of a transaction that has
  // written since may be freed and reused, and a transaction with a sub-transaction open is
  // the sub-transaction's to read.
  void check() const {
    if (!clock || (clock->version == made && clock->level == made_level)) {
      if (db) db->check_process();  // the view is alive, so its database is
      return;
    }
    if (clock->depth > made_depth)
      throw error(error_kind::invalid_argument,
                  "cursor: its transaction has a sub-transaction open, and a parent cannot be "
                  "read until its sub-transaction commits or aborts");
    throw error(error_kind::invalid_argument,
                "cursor: its snapshot was released, or its transaction wrote, committed or "
                "aborted, since the cursor was made; make a new cursor");
  }
  struct frame {
    std::uint32_t ref, idx, depth;
  };
  std::vector<frame> st;
  std::string key;
  bool valid = false;
  leaf_view leaf{nullptr};    // the leaf of st.back() while valid
  const u8* entry = nullptr;  // and the entry the cursor is on
  const u8* next = nullptr;   // the leaf a scan reaches next, fetched a line per step

  node_hdr* hdr(std::uint32_t r) const { return db->hdr(r); }
  // Moves to entry i of the current leaf; the key's head (the path) is already in `key`.
  void on_entry(std::uint32_t i, std::uint32_t depth) {
    entry = leaf.entry(i);
    const std::size_t kl = rd16(entry);
    key.resize(depth + kl);
    std::memcpy(key.data() + depth, entry + 4, kl);
  }
  void set_leaf_key() {
    const frame& f = st.back();
    leaf = leaf_view{reinterpret_cast<leaf_hdr*>(db->at(f.ref))};
    on_entry(f.idx, f.depth);
    valid = true;
  }
  // The next or previous entry of the same leaf, if there is one: the common step of a scan.
  bool step_in_leaf(bool fwd) {
    frame& f = st.back();
    if (fwd ? f.idx + 1 >= leaf.h->n : f.idx == 0) return false;
    f.idx = fwd ? f.idx + 1 : f.idx - 1;
    // One line of the next leaf per step: requests spread out like this are all served, where
    // a burst of a whole leaf's lines mostly is not (the core tracks a few dozen misses).
    const std::uint32_t line = fwd ? f.idx : leaf.h->n - 1 - f.idx;
    if (next && line < kStreamLines) __builtin_prefetch(next + line * kUnit);
    on_entry(f.idx, f.depth);
    return true;
  }
  static constexpr std::uint32_t kStreamLines = 32;
  // Pushes the path to the first (or last) key of the subtree at `ref`.
  void descend(std::uint32_t ref, std::size_t d, bool last) {
    for (;;) {
      node_hdr* h = hdr(ref);
      key.resize(d);
      if (h->type == kInner) {
        inner_view v{static_cast<inner_hdr*>(h)};
        const std::uint32_t i = last ? v.h->n - 1u : 0u;
        st.push_back({ref, i, static_cast<std::uint32_t>(d)});
        key.append(reinterpret_cast<const char*>(v.prefix()), v.h->plen);
        d += v.h->plen;
        ref = v.child(i);
      } else {
        const std::uint32_t i = last ? static_cast<leaf_hdr*>(h)->n - 1u : 0u;
        st.push_back({ref, i, static_cast<std::uint32_t>(d)});
        set_leaf_key();
        return;
      }
    }
  }
  bool lb(std::uint32_t ref, std::size_t d, const u8* k, std::size_t kn) {
    node_hdr* h = hdr(ref);
    if (h->type == kInner) {
      inner_view v{static_cast<inner_hdr*>(h)};
      const std::size_t pl = v.h->plen;
      const std::size_t m = std::min(pl, kn - d);
      const int c = m ? std::memcmp(k + d, v.prefix(), m) : 0;
      if (c < 0 || (c == 0 && m < pl)) {
        descend(ref, d, false);
        return true;
      }
      if (c > 0) return false;
      const std::size_t p = d + pl;
      const unsigned first = route(*db, v, sym_at(k, kn, p));
      st.push_back({ref, first, static_cast<std::uint32_t>(d)});
      const std::size_t me = st.size() - 1;
      for (unsigned i = first; i < v.h->n; ++i) {
        st[me].idx = i;
        key.resize(d);
        key.append(reinterpret_cast<const char*>(v.prefix()), pl);
        if (i == first) {
          prefetch_head(db->at(v.child(i)));
          if (lb(v.child(i), p, k, kn)) return true;
        } else {
          descend(v.child(i), p, false);
          return true;
        }
      }
      st.pop_back();
      return false;
    }
    leaf_view L{static_cast<leaf_hdr*>(h)};
    bool found;
    const std::size_t pos = leaf_lower(L, k + d, kn - d, found);
    if (pos == L.h->n) return false;
    st.push_back({ref, static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(d)});
    set_leaf_key();
    return true;
  }
  bool step(bool fwd) {
    if (!valid) return false;
    if (step_in_leaf(fwd)) return true;
    st.pop_back();
    while (!st.empty()) {
      frame& f = st.back();
      inner_view v{reinterpret_cast<inner_hdr*>(db->at(f.ref))};
      if (fwd ? f.idx + 1 < v.h->n : f.idx > 0) {
        f.idx = fwd ? f.idx + 1 : f.idx - 1;
        const std::size_t p = f.depth + v.h->plen;
        key.resize(f.depth);
        key.append(reinterpret_cast<const char*>(v.prefix()), v.h->plen);
        descend(v.child(f.idx), p, !fwd);
        ahead(fwd);
        return true;
      }
      st.pop_back();
    }
    valid = false;
    return false;
  }
  // A scan has just entered a leaf: note the next one in its direction (a sibling under the
  // same parent; across parents the scan waits once) and request its first line.
  void ahead(bool fwd) {
    next = nullptr;
    if (st.size() < 2) return;
    const frame& p = st[st.size() - 2];
    inner_view v{reinterpret_cast<inner_hdr*>(db->at(p.ref))};
    const long j = fwd ? long{p.idx} + 1 : long{p.idx} - 1;
    if (j < 0 || j >= v.h->n) return;
    next = db->at(v.child(static_cast<std::size_t>(j)));
    __builtin_prefetch(next);
  }
  void reset() {
    st.clear();
    key.clear();
    valid = false;
    next = nullptr;
  }
  bool edge(bool last) {  // the first or the last key
    reset();
    if (!root) return false;
    descend(root, 0, last);
    return true;
  }
};

cursor::cursor() = default;
cursor::cursor(cursor&&) noexcept = default;
cursor& cursor::operator=(cursor&&) noexcept = default;
cursor::~cursor() = default;

bool cursor::valid() const {
  if (s_) s_->check();
  return s_ && s_->valid;
}
bool cursor::first() { return s_ && (s_->check(), s_->edge(false)); }
bool cursor::last() { return s_ && (s_->check(), s_->edge(true)); }
bool cursor::lower_bound(std::string_view k) {
  if (!s_) return false;
  s_->check();
  s_->reset();
  if (!s_->root) return false;
  if (!s_->lb(s_->root, 0, reinterpret_cast<const u8*>(k.data()), k.size())) s_->reset();
  return s_->valid;
}
bool cursor::upper_bound(std::string_view k) {
  if (lower_bound(k) && key() == k) return next();
  return valid();
}
bool cursor::seek(std::string_view k) {
  if (lower_bound(k) && key() == k) return true;
  if (s_) s_->reset();
  return false;
}
bool cursor::first(std::string_view prefix) {
  if (lower_bound(prefix) && key().substr(0, prefix.size()) == prefix) return true;
  if (s_) s_->reset();
  return false;
}
bool cursor::last(std::string_view prefix) {
  std::string succ(prefix);
  while (!succ.empty() && static_cast<u8>(succ.back()) == 0xFF) succ.pop_back();
  bool ok;
  if (succ.empty()) {
    ok = last();
  } else {
    succ.back() = static_cast<char>(static_cast<u8>(succ.back()) + 1);
    ok = lower_bound(succ) ? prev() : last();
  }
  if (ok && key().substr(0, prefix.size()) == prefix) return true;
  if (s_) s_->reset();
  return false;
}
bool cursor::next() {
  if (s_) s_->check();
  return s_ && s_->valid && (s_->step_in_leaf(true) || s_->step(true));
}
bool cursor::prev() {
  if (s_) s_->check();
  return s_ && s_->valid && (s_->step_in_leaf(false) || s_->step(false));
}
std::string_view cursor::key() const {
  if (s_) s_->check();
  if (!valid()) throw error(error_kind::invalid_argument, "cursor is not on a key");
  return s_->key;
}
std::string_view cursor::value() const {
  if (s_) s_->check();
  if (!valid()) throw error(error_kind::invalid_argument, "cursor is not on a key");
  return value_at(*s_->db, s_->entry);
}

cursor view::make_cursor() const {
  check_open();
  cursor c;
  c.s_ = std::make_unique<cursor::state>();
  c.s_->db = db_.get();
  c.s_->clock = clock_;
  if (clock_) {
    c.s_->made = clock_->version;
    c.s_->made_level = clock_->level;
    c.s_->made_depth = clock_->depth;
  }
  c.s_->root = tr_->root;
  return c;
}

void view::get_many(std::span<const std::string_view> keys,
                    std::span<std::optional<std::string_view>> out) const {
  check_open();
  if (out.size() < keys.size())
    throw error(error_kind::invalid_argument, "get_many: output span shorter than the keys");
  const db_impl& db = *db_;
  // At its leaf a key takes two passes too: find the first hash match and prefetch its entry,
  // then compare (hash collisions are rare: the rest of the search runs there and then).
  u8 hash[kGroup];
  bool probed[kGroup];
  for (std::size_t g = 0; g < keys.size(); g += kGroup) {
    const std::size_t m = std::min(kGroup, keys.size() - g);
    for (std::size_t i = 0; i < m; ++i) {
      out[g + i].reset();
      hash[i] = key_hash(keys[g + i]);
      probed[i] = false;
    }
    walk_group(
        db, tr_->root, m, false, [&](std::size_t i) { return keys[g + i]; },
        [&](std::size_t i, leaf_view L, std::size_t d) {
          if (!probed[i]) {
            probed[i] = true;
            const int j = leaf_find(L, nullptr, 0, hash[i]);
            if (j < 0) return true;
            __builtin_prefetch(L.entry(static_cast<std::size_t>(j)));
            return false;
          }
          const std::string_view key = keys[g + i];
          const int j =
              leaf_find(L, reinterpret_cast<const u8*>(key.data()) + d, key.size() - d, hash[i]);
          if (j >= 0) out[g + i] = value_at(db, L.entry(static_cast<std::size_t>(j)));
          return true;
        });
  }
}

}  // namespace simdex::kv
