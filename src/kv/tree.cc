// The tree: lookups, ranks, cursors, copy-on-write updates and the validator.
#include <xxhash.h>

#include <algorithm>
#include <bit>

#include "internal.h"

namespace simdex::kv::detail {

std::uint8_t key_hash(std::string_view key) {
  return static_cast<std::uint8_t>(XXH3_64bits(key.data(), key.size()) >> 56);
}

namespace {

using u8 = std::uint8_t;

// The byte a node routes on, or -1 where the key ends there (such keys sort first).
inline int sym_at(const u8* k, std::size_t kn, std::size_t pos) { return pos < kn ? k[pos] : -1; }

// Child of `v` for routing byte `sym`: child i covers [div[i-1], div[i]), so the answer is the
// number of dividers <= sym: lower_bound_padded counts those < sym, then one compare.
inline unsigned route(const db_impl& db, inner_view v, int sym) {
  const unsigned n = v.h->n;
  if (sym < 0 || n == 1) return 0;
  const u8* d = v.div();
  const std::size_t i = db.k->lower_bound_padded(d, n - 1, static_cast<u8>(sym));
  return static_cast<unsigned>(i + (i < n - 1 && d[i] == static_cast<u8>(sym)));
}

inline int cmp(const u8* a, std::size_t an, const u8* b, std::size_t bn) {
  // Most keys differ in their first 8 bytes: one big-endian word compare, no libc call.
  if (an >= 8 && bn >= 8) {
    std::uint64_t x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
  }
  const std::size_t m = std::min(an, bn);
  const int c = m ? std::memcmp(a, b, m) : 0;
  if (c) return c;
  return an < bn ? -1 : (an > bn ? 1 : 0);
}

// Requests every line of a node at once: a binary search then waits for one round of misses
// instead of one per probe.
inline void prefetch_node(const void* node, std::uint32_t units) {
  const char* p = static_cast<const char*>(node);
  for (std::uint32_t i = 0; i < units; ++i) __builtin_prefetch(p + i * kUnit);
}

// Requests the first four lines of a node: an inner node's header and dividers, a leaf's
// header, hashes and offsets (all a point lookup reads before its entry). Whole leaves for
// point lookups cost more than they saved; a search fetches the rest once it has the header.
inline void prefetch_head(const u8* node) { prefetch_node(node, 4); }

// First entry whose suffix is >= s.
std::size_t leaf_lower(leaf_view L, const u8* s, std::size_t sn, bool& found) {
  prefetch_node(L.h, L.h->units);
  std::size_t lo = 0, hi = L.h->n;
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    const u8* e = L.entry(mid);
    if (cmp(e + 4, rd16(e), s, sn) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  found = lo < L.h->n && cmp(L.key(lo), L.klen(lo), s, sn) == 0;
  return lo;
}

// Point lookup through the 1-byte hashes, 8 at a time (SWAR exact zero-byte test), so most
// misses compare no key at all. With no key (s null), the first hash match.
int leaf_find(leaf_view L, const u8* s, std::size_t sn, u8 h) {
  const std::size_t n = L.h->n;
  const u8* hs = L.hash();
  const std::uint64_t pat = 0x0101010101010101ull * h;
  constexpr std::uint64_t lo7 = 0x7F7F7F7F7F7F7F7Full;
  for (std::size_t i = 0; i < n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, hs + i, 8);
    w ^= pat;
    std::uint64_t z = ~(((w & lo7) + lo7) | w | lo7);
    while (z) {
      const std::size_t j = i + static_cast<std::size_t>(std::countr_zero(z)) / 8;
      if (j >= n) break;
      if (!s) return static_cast<int>(j);
      const u8* e = L.entry(j);
      if (rd16(e) == sn && std::memcmp(e + 4, s, sn) == 0) return static_cast<int>(j);
      z &= z - 1;
    }
  }
  return -1;
}

// Group walk: the keys of a group move down the tree in lockstep, and every line a key needs
// next is prefetched before any key of the group reads one, so the group's cache misses overlap
// instead of queueing. An inner level takes two passes: route on the node (header and dividers,
// prefetched before) and prefetch the child's slot, then read the slot and prefetch the child.
// at_leaf(i, leaf, depth) runs once a pass while key i is at its leaf, until it returns true; a
// key whose path leaves the tree (a compressed prefix differs) stops there. `for_write`: the
// count a write updates is fetched with the child reference.
constexpr std::size_t kGroup = 16;
template <class KeyAt, class AtLeaf>
void walk_group(const db_impl& db, std::uint32_t root, std::size_t m, bool for_write,
                KeyAt key_at, AtLeaf at_leaf) {
  if (!root || m == 0) return;
  std::uint32_t ref[kGroup], slot[kGroup];
  std::size_t depth[kGroup], live[kGroup];
  bool routed[kGroup];
  std::size_t nl = 0;
  for (std::size_t i = 0; i < m; ++i) {
    ref[i] = root;
    depth[i] = 0;
    routed[i] = false;
    live[nl++] = i;
  }
  __builtin_prefetch(db.at(root));
  __builtin_prefetch(db.at(root) + 64);
  while (nl) {
    std::size_t w = 0;
    for (std::size_t x = 0; x < nl; ++x) {
      const std::size_t i = live[x];
      node_hdr* h = db.hdr(ref[i]);
      if (h->type != kInner) {
        if (!at_leaf(i, leaf_view{static_cast<leaf_hdr*>(h)}, depth[i])) live[w++] = i;
        continue;
      }
      inner_view v{static_cast<inner_hdr*>(h)};
      if (routed[i]) {
        routed[i] = false;
        ref[i] = v.child(slot[i]);
        prefetch_head(db.at(ref[i]));
      } else {
        const std::string_view key = key_at(i);
        const u8* k = reinterpret_cast<const u8*>(key.data());
        const std::size_t kn = key.size();
        const std::size_t pl = v.h->plen;
        std::size_t d = depth[i];
        if (pl && (kn - d < pl || std::memcmp(k + d, v.prefix(), pl) != 0)) continue;
        d += pl;
        slot[i] = route(db, v, sym_at(k, kn, d));
        depth[i] = d;
        routed[i] = true;
        __builtin_prefetch(v.child_at(slot[i]));
        if (for_write) __builtin_prefetch(v.count_at(slot[i]));
      }
      live[w++] = i;
    }
    nl = w;
  }
}

std::uint64_t inner_total(inner_view v) {
  std::uint64_t s = 0;
  for (unsigned i = 0; i < v.h->n; ++i) s += v.count(i);
  return s;
}

}  // namespace

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
      __builtin_prefetch(L.base() + 2 * kUnit);
      __builtin_prefetch(L.base() + 3 * kUnit);
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

// ---- writes -------------------------------------------------------------------------------------

namespace {

struct ent {
  const u8* key;
  std::uint32_t klen;  // suffix length at the depth the entries were gathered
  const u8* val;
  std::uint32_t vlen;
  std::uint32_t blob;  // value node reference, or 0 for an inline value
  u8 hash;
};
inline int ent_sym(const ent& e, std::size_t off) { return off < e.klen ? e.key[off] : -1; }
inline std::size_t ent_bytes(const ent& e, std::size_t off) {
  return entry_bytes(e.klen - off, e.blob != 0, e.vlen);
}

// A child to be placed in an inner node.
struct piece {
  std::uint32_t ref;
  std::uint64_t cnt;
  int sym;  // routing byte of its first key (the divider in front of it)
};
// The same, packed: inner nodes are rebuilt from arrays of up to 257 of these on the stack of a
// recursion as deep as the longest key.
struct slot {
  std::uint64_t cnt;
  std::uint32_t ref;
  std::int16_t sym;
};
inline slot mk_slot(int sym, std::uint32_t ref, std::uint64_t cnt) {
  return {cnt, ref, static_cast<std::int16_t>(sym)};
}

enum class rc { same, replaced, removed, split };

struct wctx {
  txn_state& t;
  db_impl& db;
  wmode mode;
  const u8* k;
  std::size_t kn;
  std::string_view val;
  u8 h;
  bool existed = false;
  std::int64_t delta = 0;
  std::vector<piece> pieces;
};

ent gather(leaf_view L, std::size_t i) {
  const u8* e = L.entry(i);
  ent x;
  x.klen = rd16(e);
  x.key = e + 4;
  const std::uint16_t vi = rd16(e + 2);
  x.hash = L.hash()[i];
  if (vi == kOutOfLine) {
    x.blob = rd32(e + 4 + x.klen);
    x.val = nullptr;
    x.vlen = 0;
  } else {
    x.blob = 0;
    x.val = e + 4 + x.klen;
    x.vlen = vi;
  }
  return x;
}

std::uint32_t build_leaf(txn_state& t, const ent* es, std::size_t cnt, std::size_t off,
                         std::size_t slack) {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < cnt; ++i) bytes += ent_bytes(es[i], off);
  const std::size_t size = std::min(kLeafMaxBytes, kLeafHeap + bytes + slack);
  std::uint32_t ref;
  u8* p = t.make(units_for(size), kLeaf, ref);
  leaf_view L{reinterpret_cast<leaf_hdr*>(p)};
  const std::size_t end = std::size_t{L.h->units} * kUnit;
  L.h->n = static_cast<std::uint16_t>(cnt);
  L.h->heap = static_cast<std::uint16_t>(end - bytes);
  L.h->dead = 0;
  std::size_t pos = end - bytes;
  for (std::size_t i = 0; i < cnt; ++i) {
    const ent& e = es[i];
    const std::size_t kl = e.klen - off;
    u8* q = p + pos;
    L.offs()[i] = static_cast<std::uint16_t>(pos);
    L.hash()[i] = e.hash;
    wr16(q, static_cast<std::uint16_t>(kl));
    std::memcpy(q + 4, e.key + off, kl);
    if (e.blob) {
      wr16(q + 2, kOutOfLine);
      wr32(q + 4 + kl, e.blob);
    } else {
      wr16(q + 2, static_cast<std::uint16_t>(e.vlen));
      if (e.vlen) std::memcpy(q + 4 + kl, e.val, e.vlen);
    }
    pos += ent_bytes(e, off);
  }
  return ref;
}

std::uint32_t write_inner(txn_state& t, const u8* prefix, std::size_t plen, const slot* s,
                          std::size_t n, std::uint32_t reuse) {
  u8* p;
  std::uint32_t ref = reuse;
  if (reuse) {
    p = t.db->at(reuse);
  } else {
    const std::size_t cap = std::min<std::size_t>(264, align8(n + n / 4 + 1));
    p = t.make(units_for(inner_bytes(plen, cap)), kInner, ref);
    auto* h = reinterpret_cast<inner_hdr*>(p);
    h->plen = static_cast<std::uint16_t>(plen);
    h->cap = static_cast<std::uint16_t>(cap);
    h->pad0 = 0;
    h->pad1 = 0;
    if (plen) std::memmove(h + 1, prefix, plen);
  }
  inner_view v{reinterpret_cast<inner_hdr*>(p)};
  v.h->n = static_cast<std::uint16_t>(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (i) v.div()[i - 1] = static_cast<u8>(s[i].sym);
    v.set(i, s[i].ref, s[i].cnt);
  }
  return ref;
}

[[gnu::noinline]] std::uint32_t build_inner(txn_state& t, const u8* prefix, std::size_t plen,
                                            const piece* ps, std::size_t n) {
  slot s[kMaxFanout + 8];
  for (std::size_t i = 0; i < n; ++i) s[i] = mk_slot(ps[i].sym, ps[i].ref, ps[i].cnt);
  return write_inner(t, prefix, plen, s, n, 0);
}

bool fits_leaf(const ent* es, std::size_t cnt, std::size_t off) {
  if (cnt > kLeafSlots) return false;
  std::size_t bytes = kLeafHeap;
  for (std::size_t i = 0; i < cnt; ++i) bytes += ent_bytes(es[i], off);
  return bytes <= kLeafMaxBytes;
}

// Turns sorted entries into nodes covering the same keys: leaves split at boundaries of the
// routing byte (at `off`), and an inner node where all keys share that byte. bias_right packs
// the left side full (sequential appends), else halves are balanced by bytes.
void make_nodes(txn_state& t, const ent* es, std::size_t cnt, std::size_t off, bool bias_right,
                std::size_t slack, std::vector<piece>& out) {
  if (fits_leaf(es, cnt, off)) {
    out.push_back({build_leaf(t, es, cnt, off, slack), cnt, ent_sym(es[0], off)});
    return;
  }
  const int s0 = ent_sym(es[0], off), s1 = ent_sym(es[cnt - 1], off);
  if (s0 == s1) {
    // All keys share the routing byte: an inner node over their longest common prefix.
    const ent& a = es[0];
    const ent& b = es[cnt - 1];
    std::size_t l = 1;
    while (off + l < a.klen && off + l < b.klen && a.key[off + l] == b.key[off + l]) ++l;
    std::vector<piece> sub;
    make_nodes(t, es, cnt, off + l, bias_right, slack, sub);
    out.push_back({build_inner(t, a.key + off, l, sub.data(), sub.size()), cnt, s0});
    return;
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < cnt; ++i) total += ent_bytes(es[i], off);
  std::size_t best = 0, acc = 0;
  std::size_t best_score = SIZE_MAX;
  for (std::size_t b = 1; b < cnt; ++b) {
    acc += ent_bytes(es[b - 1], off);
    if (ent_sym(es[b - 1], off) == ent_sym(es[b], off)) continue;
    std::size_t score;
    if (bias_right) {
      const bool left_fits = b <= kLeafSlots && kLeafHeap + acc <= kLeafMaxBytes;
      score = left_fits ? cnt - b : SIZE_MAX / 2 + b;
    } else {
      score = acc > total / 2 ? acc - total / 2 : total / 2 - acc;
    }
    if (score < best_score) {
      best_score = score;
      best = b;
    }
  }
  make_nodes(t, es, best, off, bias_right, slack, out);
  make_nodes(t, es + best, cnt - best, off, bias_right, slack, out);
}

std::uint32_t make_blob(txn_state& t, std::string_view v) {
  std::uint32_t ref;
  u8* p = t.make(units_for(24 + v.size()), kBlob, ref);
  reinterpret_cast<blob_hdr*>(p)->len = v.size();
  if (!v.empty()) std::memcpy(p + 24, v.data(), v.size());
  return ref;
}

ent new_entry(wctx& c, std::size_t d) {
  ent e;
  e.key = c.k + d;
  e.klen = static_cast<std::uint32_t>(c.kn - d);
  e.hash = c.h;
  if (c.val.size() > kInlineValue) {
    e.blob = make_blob(c.t, c.val);
    e.val = nullptr;
    e.vlen = 0;
  } else {
    e.blob = 0;
    e.val = reinterpret_cast<const u8*>(c.val.data());
    e.vlen = static_cast<std::uint32_t>(c.val.size());
  }
  return e;
}

std::uint32_t single_leaf(wctx& c, std::size_t d) {
  ent e = new_entry(c, d);
  return build_leaf(c.t, &e, 1, 0, 0);
}

// Replaces child idx of inner node `ref` by `ps` (none: removes it). Returns the node's new
// reference (itself when edited in place), 0 when no child is left. Not inlined: its slot array
// would sit in every frame of the recursive write.
[[gnu::noinline]] std::uint32_t inner_edit(wctx& c, std::uint32_t ref, unsigned idx, const piece* ps,
                         std::size_t np) {
  inner_view v{reinterpret_cast<inner_hdr*>(c.db.at(ref))};
  const unsigned n = v.h->n;
  const bool mut = v.h->txn >= c.t.base();
  if (np == 1 && mut) {
    v.set(idx, ps[0].ref, ps[0].cnt);
    return ref;
  }
  slot s[kMaxFanout + 8];
  std::size_t m = 0;
  for (unsigned i = 0; i < n; ++i) {
    const int sym = i ? v.div()[i - 1] : -1;
    if (i != idx) {
      s[m++] = mk_slot(sym, v.child(i), v.count(i));
      continue;
    }
    for (std::size_t j = 0; j < np; ++j)
      s[m++] = mk_slot(j ? ps[j].sym : sym, ps[j].ref, ps[j].cnt);
  }
  if (m == 0) {
    c.t.release(ref);
    return 0;
  }
  if (mut && m <= v.h->cap) return write_inner(c.t, nullptr, 0, s, m, ref);
  const std::uint32_t nr = write_inner(c.t, v.prefix(), v.h->plen, s, m, 0);
  c.t.release(ref);
  return nr;
}

rc wr(wctx& c, std::uint32_t ref, std::size_t d, std::uint32_t& out);

rc finish_inner(wctx& c, std::uint32_t ref, unsigned idx, const piece* ps, std::size_t np,
                std::uint32_t& out) {
  out = inner_edit(c, ref, idx, ps, np);
  return out ? rc::replaced : rc::removed;
}

// The key leaves the compressed path of inner node `ref` after i bytes: a new node over the
// common part, routing on the first differing byte, above this node (rebuilt with the rest of
// its prefix). Kept out of wr_inner so the recursion's frames stay small.
[[gnu::noinline]] rc leave_prefix(wctx& c, std::uint32_t ref, std::size_t d, std::size_t i,
                                  std::uint32_t& out) {
  inner_view v{reinterpret_cast<inner_hdr*>(c.db.at(ref))};
  const std::size_t pl = v.h->plen;
  const std::uint32_t leaf = single_leaf(c, d + i);
  slot s[kMaxFanout + 8];
  const unsigned n = v.h->n;
  for (unsigned j = 0; j < n; ++j)
    s[j] = mk_slot(j ? v.div()[j - 1] : -1, v.child(j), v.count(j));
  const std::uint32_t rest = write_inner(c.t, v.prefix() + i, pl - i, s, n, 0);
  const std::uint64_t cnt = inner_total(v);
  const int ks = sym_at(c.k, c.kn, d + i), os = v.prefix()[i];
  piece ps[2];
  if (ks < os) {
    ps[0] = {leaf, 1, ks};
    ps[1] = {rest, cnt, os};
  } else {
    ps[0] = {rest, cnt, os};
    ps[1] = {leaf, 1, ks};
  }
  // Read the prefix before the old node is released (its space may be reused at once).
  std::string head(reinterpret_cast<const char*>(v.prefix()), i);
  c.t.release(ref);
  out = build_inner(c.t, reinterpret_cast<const u8*>(head.data()), i, ps, 2);
  c.delta = 1;
  return rc::replaced;
}

rc wr_inner(wctx& c, std::uint32_t ref, std::size_t d, std::uint32_t& out) {
  inner_view v{reinterpret_cast<inner_hdr*>(c.db.at(ref))};
  const std::size_t pl = v.h->plen;
  const bool adds = c.mode == wmode::upsert || c.mode == wmode::insert;
  std::size_t i = 0;
  while (i < pl && d + i < c.kn && c.k[d + i] == v.prefix()[i]) ++i;
  if (i < pl) return adds ? leave_prefix(c, ref, d, i, out) : rc::same;
  const std::size_t p = d + pl;
  const int s = sym_at(c.k, c.kn, p);
  const unsigned idx = route(c.db, v, s);
  const std::uint32_t ch = v.child(idx);
  const node_hdr* chh = c.db.hdr(ch);
  if (chh->type == kInner) {
    inner_view cv{reinterpret_cast<inner_hdr*>(c.db.at(ch))};
    if (cv.h->plen && cv.prefix()[0] != s) {
      // The key's routing byte falls in the child's range but not on its path: give it a
      // leaf of its own here rather than a new node below.
      if (!adds) return rc::same;
      const std::uint32_t leaf = single_leaf(c, p);
      const int os = cv.prefix()[0];
      piece ps[2];
      if (s < os) {
        ps[0] = {leaf, 1, s};
        ps[1] = {ch, v.count(idx), os};
      } else {
        ps[0] = {ch, v.count(idx), os};
        ps[1] = {leaf, 1, s};
      }
      c.delta = 1;
      return finish_inner(c, ref, idx, ps, 2, out);
    }
  }
  std::uint32_t nref = 0;
  const rc r = wr(c, ch, p, nref);
  switch (r) {
    case rc::same:
      return rc::same;
    case rc::replaced: {
      piece pc{nref,
               static_cast<std::uint64_t>(static_cast<std::int64_t>(v.count(idx)) + c.delta), 0};
      return finish_inner(c, ref, idx, &pc, 1, out);
    }
    case rc::removed:
      return finish_inner(c, ref, idx, nullptr, 0, out);
    case rc::split: {
      std::vector<piece> ps = std::move(c.pieces);
      c.pieces.clear();
      return finish_inner(c, ref, idx, ps.data(), ps.size(), out);
    }
  }
  return rc::same;
}

// Entries of the rebuilt leaf -> one leaf, or pieces for the parent.
rc emit(wctx& c, std::vector<ent>& es, std::size_t slack, bool bias_right, std::uint32_t& out) {
  if (fits_leaf(es.data(), es.size(), 0)) {
    out = build_leaf(c.t, es.data(), es.size(), 0, slack);
    return rc::replaced;
  }
  c.pieces.clear();
  make_nodes(c.t, es.data(), es.size(), 0, bias_right, slack, c.pieces);
  if (c.pieces.size() == 1) {
    out = c.pieces[0].ref;
    c.pieces.clear();
    return rc::replaced;
  }
  return rc::split;
}

// Room left in a rebuilt leaf for later inserts: a leaf this transaction already owns is likely
// written again; a copy of a committed leaf only when the transaction is large (a transaction of
// a few writes would carry the slack into the file for nothing).
constexpr std::uint64_t kLargeTxn = 256;
inline std::size_t slack_for(const wctx& c, bool mut, std::size_t size) {
  return mut || c.t.writes >= kLargeTxn ? size / 4 : 0;
}

rc wr_leaf(wctx& c, std::uint32_t ref, std::size_t d, std::uint32_t& out) {
  leaf_view L{reinterpret_cast<leaf_hdr*>(c.db.at(ref))};
  const u8* s = c.k + d;
  const std::size_t sn = c.kn - d;
  bool found;
  const std::size_t pos = leaf_lower(L, s, sn, found);
  const std::size_t n = L.h->n;
  const bool mut = L.h->txn >= c.t.base();
  const std::size_t size = std::size_t{L.h->units} * kUnit;
  if (c.mode == wmode::remove) {
    if (!found) return rc::same;
    c.existed = true;
    c.delta = -1;
    const ent old = gather(L, pos);
    if (n == 1) {
      c.t.release(ref);
      if (old.blob) c.t.release(old.blob);
      return rc::removed;
    }
    if (mut) {
      L.h->dead = static_cast<std::uint16_t>(L.h->dead + ent_bytes(old, 0));
      std::memmove(L.hash() + pos, L.hash() + pos + 1, n - pos - 1);
      std::memmove(L.offs() + pos, L.offs() + pos + 1, 2 * (n - pos - 1));
      L.h->n = static_cast<std::uint16_t>(n - 1);
      if (old.blob) c.t.release(old.blob);
      out = ref;
      return rc::replaced;
    }
    std::vector<ent> es;
    es.reserve(n);
    for (std::size_t i = 0; i < n; ++i)
      if (i != pos) es.push_back(gather(L, i));
    out = build_leaf(c.t, es.data(), es.size(), 0, 0);
    c.t.release(ref);
    if (old.blob) c.t.release(old.blob);
    return rc::replaced;
  }
  if (found) {
    c.existed = true;
    if (c.mode == wmode::insert) return rc::same;
    const ent old = gather(L, pos);
    const bool inl = c.val.size() <= kInlineValue;
    if (mut && inl && !old.blob && old.vlen == c.val.size()) {
      if (!c.val.empty()) std::memmove(const_cast<u8*>(old.val), c.val.data(), c.val.size());
      return rc::same;
    }
    const ent ne = new_entry(c, d);
    const std::size_t nb = ent_bytes(ne, 0);
    if (mut && L.h->heap >= kLeafHeap + nb) {
      const std::size_t at = L.h->heap - nb;
      u8* q = L.base() + at;
      wr16(q, static_cast<std::uint16_t>(sn));
      std::memcpy(q + 4, s, sn);
      if (ne.blob) {
        wr16(q + 2, kOutOfLine);
        wr32(q + 4 + sn, ne.blob);
      } else {
        wr16(q + 2, static_cast<std::uint16_t>(ne.vlen));
        if (ne.vlen) std::memcpy(q + 4 + sn, ne.val, ne.vlen);
      }
      L.h->heap = static_cast<std::uint16_t>(at);
      L.h->dead = static_cast<std::uint16_t>(L.h->dead + ent_bytes(old, 0));
      L.offs()[pos] = static_cast<std::uint16_t>(at);
      if (old.blob) c.t.release(old.blob);
      return rc::same;
    }
    std::vector<ent> es;
    es.reserve(n);
    for (std::size_t i = 0; i < n; ++i) es.push_back(i == pos ? ne : gather(L, i));
    const rc r = emit(c, es, slack_for(c, mut, size), false, out);
    c.t.release(ref);
    if (old.blob) c.t.release(old.blob);
    return r;
  }
  if (c.mode == wmode::update) return rc::same;
  c.delta = 1;
  const ent ne = new_entry(c, d);
  const std::size_t nb = ent_bytes(ne, 0);
  if (mut && n < kLeafSlots && L.h->heap >= kLeafHeap + nb) {
    const std::size_t at = L.h->heap - nb;
    u8* q = L.base() + at;
    wr16(q, static_cast<std::uint16_t>(sn));
    std::memcpy(q + 4, s, sn);
    if (ne.blob) {
      wr16(q + 2, kOutOfLine);
      wr32(q + 4 + sn, ne.blob);
    } else {
      wr16(q + 2, static_cast<std::uint16_t>(ne.vlen));
      if (ne.vlen) std::memcpy(q + 4 + sn, ne.val, ne.vlen);
    }
    L.h->heap = static_cast<std::uint16_t>(at);
    std::memmove(L.hash() + pos + 1, L.hash() + pos, n - pos);
    std::memmove(L.offs() + pos + 1, L.offs() + pos, 2 * (n - pos));
    L.hash()[pos] = c.h;
    L.offs()[pos] = static_cast<std::uint16_t>(at);
    L.h->n = static_cast<std::uint16_t>(n + 1);
    out = ref;
    return rc::replaced;
  }
  std::vector<ent> es;
  es.reserve(n + 1);
  for (std::size_t i = 0; i < pos; ++i) es.push_back(gather(L, i));
  es.push_back(ne);
  for (std::size_t i = pos; i < n; ++i) es.push_back(gather(L, i));
  const rc r = emit(c, es, slack_for(c, mut, size), pos == n && n > 0, out);
  c.t.release(ref);
  return r;
}

rc wr(wctx& c, std::uint32_t ref, std::size_t d, std::uint32_t& out) {
  if (c.db.hdr(ref)->type == kInner) return wr_inner(c, ref, d, out);
  return wr_leaf(c, ref, d, out);
}


// ---- bulk building ------------------------------------------------------------------------------

// Sorted, distinct entries (suffixes from `off`) -> nodes, in one pass: consecutive runs of the
// routing byte are packed into full leaves, and a run too large for one leaf becomes an inner
// node over the run's common prefix, built the same way one level down.
void build_sorted(txn_state& t, const ent* es, std::size_t cnt, std::size_t off,
                  std::vector<piece>& out) {
  std::size_t start = 0, bytes = kLeafHeap;  // the leaf being packed: es[start, i)
  auto flush_leaf = [&](std::size_t end) {
    if (end > start) out.push_back({build_leaf(t, es + start, end - start, off, 0),
                                    end - start, ent_sym(es[start], off)});
    start = end;
    bytes = kLeafHeap;
  };
  for (std::size_t i = 0; i < cnt;) {
    const int sym = ent_sym(es[i], off);
    std::size_t j = i, run_bytes = 0;
    while (j < cnt && ent_sym(es[j], off) == sym && j - i <= kLeafSlots &&
           run_bytes <= kLeafMaxBytes)
      run_bytes += ent_bytes(es[j++], off);
    const bool run_fits = (j == cnt || ent_sym(es[j], off) != sym) && j - i <= kLeafSlots &&
                          kLeafHeap + run_bytes <= kLeafMaxBytes;
    if (run_fits) {
      if (j - start > kLeafSlots || bytes + run_bytes > kLeafMaxBytes) flush_leaf(i);
      bytes += run_bytes;
      i = j;
      continue;
    }
    flush_leaf(i);
    while (j < cnt && ent_sym(es[j], off) == sym) ++j;  // the whole run
    const ent& a = es[i];
    const ent& b = es[j - 1];
    std::size_t l = 1;  // sym >= 0: a run of one byte value over more than a leaf holds
    while (off + l < a.klen && off + l < b.klen && a.key[off + l] == b.key[off + l]) ++l;
    std::vector<piece> sub;
    build_sorted(t, es + i, j - i, off + l, sub);
    out.push_back({build_inner(t, a.key + off, l, sub.data(), sub.size()), j - i, sym});
    i = j;
    start = j;
  }
  flush_leaf(cnt);
}

// ---- range removal ------------------------------------------------------------------------------

struct range_ctx {
  txn_state& t;
  db_impl& db;
  const u8 *lo, *hi;  // hi null: no upper bound
  std::size_t lon, hin;
  std::uint64_t removed = 0;
};

// Releases a whole subtree: every node, and every value node of its leaves.
void drop(txn_state& t, std::uint32_t ref) {
  const node_hdr* h = t.db->hdr(ref);
  if (h->type == kInner) {
    inner_view v{reinterpret_cast<inner_hdr*>(t.db->at(ref))};
    for (unsigned i = 0; i < v.h->n; ++i) drop(t, v.child(i));
  } else {
    leaf_view L{reinterpret_cast<leaf_hdr*>(t.db->at(ref))};
    for (std::size_t i = 0; i < L.h->n; ++i)
      if (const ent e = gather(L, i); e.blob) t.release(e.blob);
  }
  t.release(ref);
}

// Compares a bound's bytes [d, d + n) with `bytes`: -1 when the bound sorts before every key
// that continues with them, 1 after, 0 when it runs on into them (the bound stays active).
int bound_vs(const u8* b, std::size_t bn, std::size_t d, const u8* bytes, std::size_t n) {
  const std::size_t m = bn > d ? std::min(n, bn - d) : 0;
  const int c = m ? std::memcmp(b + d, bytes, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  return m < n ? -1 : 0;
}

// Removes the keys in [lo, hi) under node `ref` at depth d. lo_on / hi_on: the bound still
// shares the path to here (otherwise every key here is above lo / below hi). Like wr(): the
// node's new reference in `out`, or removed.
rc rm_range(range_ctx& r, std::uint32_t ref, std::size_t d, bool lo_on, bool hi_on,
            std::uint32_t& out) {
  node_hdr* h = r.db.hdr(ref);
  auto drop_all = [&] {
    r.removed += h->type == kInner ? inner_total(inner_view{static_cast<inner_hdr*>(h)})
                                   : static_cast<leaf_hdr*>(h)->n;
    drop(r.t, ref);
    return rc::removed;
  };
  if (!lo_on && !hi_on) return drop_all();
  if (h->type == kLeaf) {
    leaf_view L{static_cast<leaf_hdr*>(h)};
    std::vector<ent> keep;
    const std::size_t n = L.h->n;
    keep.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const ent e = gather(L, i);
      const bool above_lo = !lo_on || cmp(e.key, e.klen, r.lo + std::min(d, r.lon),
                                          r.lon - std::min(d, r.lon)) >= 0;
      const bool below_hi = !hi_on || cmp(e.key, e.klen, r.hi + std::min(d, r.hin),
                                          r.hin - std::min(d, r.hin)) < 0;
      if (above_lo && below_hi) {
        if (e.blob) r.t.release(e.blob);
      } else {
        keep.push_back(e);
      }
    }
    if (keep.size() == n) return rc::same;
    r.removed += n - keep.size();
    if (keep.empty()) {
      r.t.release(ref);
      return rc::removed;
    }
    out = build_leaf(r.t, keep.data(), keep.size(), 0, 0);
    r.t.release(ref);
    return rc::replaced;
  }
  inner_view v{static_cast<inner_hdr*>(h)};
  const std::size_t pl = v.h->plen;
  if (lo_on) {
    const int c = bound_vs(r.lo, r.lon, d, v.prefix(), pl);
    if (c > 0) return rc::same;  // every key here is below lo
    lo_on = c == 0;
  }
  if (hi_on) {
    const int c = bound_vs(r.hi, r.hin, d, v.prefix(), pl);
    if (c < 0) return rc::same;  // every key here is at or above hi
    hi_on = c == 0;
  }
  if (!lo_on && !hi_on) return drop_all();
  const std::size_t p = d + pl;
  const unsigned n = v.h->n;
  const unsigned a = lo_on ? route(r.db, v, sym_at(r.lo, r.lon, p)) : 0;
  const unsigned b = hi_on ? route(r.db, v, sym_at(r.hi, r.hin, p)) : n - 1;
  slot s[kMaxFanout + 8];
  std::size_t m = 0;
  bool changed = false;
  for (unsigned i = 0; i < n; ++i) {
    const int sym = i ? v.div()[i - 1] : -1;
    if (i < a || i > b) {
      s[m++] = mk_slot(sym, v.child(i), v.count(i));
      continue;
    }
    if (i != a && i != b) {
      r.removed += v.count(i);
      drop(r.t, v.child(i));
      changed = true;
      continue;
    }
    const std::uint64_t before = r.removed;
    std::uint32_t nref = v.child(i);
    const rc res = rm_range(r, nref, p, lo_on && i == a, hi_on && i == b, nref);
    changed |= res != rc::same;
    if (res == rc::removed) continue;
    s[m++] = mk_slot(sym, nref, v.count(i) - (r.removed - before));
  }
  if (!changed) return rc::same;
  if (m == 0) {
    r.t.release(ref);
    return rc::removed;
  }
  // The first child's divider is implicit: whatever comes first now covers from the start.
  if (v.h->txn >= r.t.base() && m <= v.h->cap) {
    out = write_inner(r.t, nullptr, 0, s, m, ref);
    return rc::replaced;
  }
  out = write_inner(r.t, v.prefix(), pl, s, m, 0);
  r.t.release(ref);
  return rc::replaced;
}

}  // namespace

void tree_bulk(txn_state& t, const std::vector<std::pair<std::string_view, std::string_view>>& kv) {
  std::vector<ent> es;
  es.reserve(kv.size());
  for (const auto& [k, v] : kv) {
    ent e;
    e.key = reinterpret_cast<const u8*>(k.data());
    e.klen = static_cast<std::uint32_t>(k.size());
    e.hash = key_hash(k);
    if (v.size() > kInlineValue) {
      e.blob = make_blob(t, v);
      e.val = nullptr;
      e.vlen = 0;
    } else {
      e.blob = 0;
      e.val = reinterpret_cast<const u8*>(v.data());
      e.vlen = static_cast<std::uint32_t>(v.size());
    }
    es.push_back(e);
  }
  std::vector<piece> ps;
  build_sorted(t, es.data(), es.size(), 0, ps);
  t.cur.root = ps.size() == 1 ? ps[0].ref : build_inner(t, nullptr, 0, ps.data(), ps.size());
  t.cur.count = es.size();
}

std::uint64_t tree_remove_range(txn_state& t, std::string_view lo,
                                std::optional<std::string_view> hi) {
  if (!t.cur.root || (hi && *hi <= lo)) return 0;
  range_ctx r{t,
              *t.db,
              reinterpret_cast<const u8*>(lo.data()),
              hi ? reinterpret_cast<const u8*>(hi->data()) : nullptr,
              lo.size(),
              hi ? hi->size() : 0};
  std::uint32_t out = t.cur.root;
  const rc res = rm_range(r, t.cur.root, 0, true, hi.has_value(), out);
  if (res == rc::removed) t.cur.root = 0;
  if (res == rc::replaced) t.cur.root = out;
  t.cur.count -= r.removed;
  return r.removed;
}

bool tree_write(txn_state& t, wmode mode, std::string_view key, std::string_view value,
                bool& changed) {
  wctx c{t,          *t.db, mode,          reinterpret_cast<const u8*>(key.data()),
         key.size(), value, key_hash(key), false,
         0,          {}};
  changed = false;
  ++t.writes;
  if (!t.cur.root) {
    if (mode == wmode::remove || mode == wmode::update) return false;
    t.cur.root = single_leaf(c, 0);
    t.cur.count = 1;
    changed = true;
    return false;
  }
  std::uint32_t out = 0;
  const rc r = wr(c, t.cur.root, 0, out);
  switch (r) {
    case rc::same:
      changed = c.existed && mode != wmode::insert;
      break;
    case rc::replaced:
      t.cur.root = out;
      changed = true;
      break;
    case rc::removed:
      t.cur.root = 0;
      changed = true;
      break;
    case rc::split:
      t.cur.root = build_inner(t, nullptr, 0, c.pieces.data(), c.pieces.size());
      changed = true;
      break;
  }
  t.cur.count = static_cast<std::uint64_t>(static_cast<std::int64_t>(t.cur.count) + c.delta);
  return c.existed;
}

// Applies the buffered puts: their paths are first walked in groups with prefetches (every
// node a write will read or copy, the leaf whole), then the writes run on warm caches. Buffer
// order is kept, so a key put twice ends with its last value.
void txn_state::flush() {
  if (buf.empty()) return;
  std::vector<buffered_put> items;
  std::string bytes;
  items.swap(buf);
  bytes.swap(buf_bytes);
  auto key_at = [&](std::size_t i) { return std::string_view(bytes).substr(items[i].at, items[i].klen); };
  bool whole[kGroup];
  for (std::size_t g = 0; g < items.size(); g += kGroup) {
    const std::size_t m = std::min(kGroup, items.size() - g);
    std::fill(whole, whole + m, false);
    walk_group(
        *db, cur.root, m, true, [&](std::size_t i) { return key_at(g + i); },
        [&](std::size_t i, leaf_view L, std::size_t) {
          if (whole[i]) return true;
          whole[i] = true;  // a write searches the leaf: fetch the rest of it
          prefetch_node(L.h, L.h->units);
          return false;
        });
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    bool ch;
    tree_write(*this, wmode::upsert, key_at(i),
               std::string_view(bytes).substr(items[i].at + items[i].klen, items[i].vlen), ch);
  }
  // Keep the buffers' capacity for the next batch.
  items.clear();
  bytes.clear();
  buf.swap(items);
  buf_bytes.swap(bytes);
}

void txn_state::release_blobs_of_leaf(std::uint32_t ref, std::uint64_t min_txn) {
  leaf_view L{reinterpret_cast<leaf_hdr*>(db->at(ref))};
  for (std::size_t i = 0; i < L.h->n; ++i) {
    const ent e = gather(L, i);
    if (e.blob && db->hdr(e.blob)->txn >= min_txn) db->alloc.give(e.blob, db->hdr(e.blob)->units);
  }
}

void txn_state::free_new(std::uint32_t ref, std::uint64_t min_txn) {
  if (!ref) return;
  node_hdr* h = db->hdr(ref);
  if (h->txn < min_txn) return;
  if (h->type == kInner) {
    inner_view v{static_cast<inner_hdr*>(h)};
    for (unsigned i = 0; i < v.h->n; ++i) free_new(v.child(i), min_txn);
  } else if (h->type == kLeaf) {
    release_blobs_of_leaf(ref, min_txn);
  }
  db->alloc.give(ref, h->units);
}

// ---- statistics and validation
// --------------------------------------------------------------------

namespace {
void stats_rec(const db_impl& db, std::uint32_t ref, std::uint64_t depth, stats& s) {
  node_hdr* h = db.hdr(ref);
  s.depth = std::max(s.depth, depth);
  s.node_bytes += std::uint64_t{h->units} * kUnit;
  if (h->type == kInner) {
    ++s.inner_nodes;
    inner_view v{static_cast<inner_hdr*>(h)};
    for (unsigned i = 0; i < v.h->n; ++i) stats_rec(db, v.child(i), depth + 1, s);
  } else {
    ++s.leaf_nodes;
    leaf_view L{static_cast<leaf_hdr*>(h)};
    for (std::size_t i = 0; i < L.h->n; ++i) {
      const u8* e = L.entry(i);
      if (rd16(e + 2) == kOutOfLine) {
        ++s.value_nodes;
        s.node_bytes += std::uint64_t{db.hdr(rd32(e + 4 + rd16(e)))->units} * kUnit;
      }
    }
  }
}

struct validator {
  const db_impl& db;
  std::vector<std::uint64_t>& used;
  std::uint64_t hwm, max_txn;
  std::string key, last;
  bool have_last = false;
  struct range {
    std::size_t pos;
    int lo, hi;  // allowed routing byte: [lo, hi), lo == -1 admits keys ending at pos
  };
  std::vector<range> ranges;

  [[noreturn]] void bad(std::uint32_t ref, const std::string& what) {
    fail(error_kind::corrupt, "node at unit " + std::to_string(ref) + ": " + what);
  }
  const node_hdr* node(std::uint32_t ref, std::uint8_t type) {
    if (ref < kFirstUnit || ref >= hwm) bad(ref, "reference outside the used file");
    const node_hdr* h = db.hdr(ref);
    if (h->type != type)
      bad(ref, "type " + std::to_string(h->type) + ", expected " + std::to_string(type));
    if (h->units == 0 || std::uint64_t{ref} + h->units > hwm)
      bad(ref, "size runs past the used file");
    if (h->txn > max_txn) bad(ref, "transaction id from the future");
    for (std::uint64_t u = ref; u < std::uint64_t{ref} + h->units; ++u) {
      std::uint64_t& w = used[u / 64];
      const std::uint64_t bit = std::uint64_t{1} << (u % 64);
      if (w & bit) bad(ref, "overlaps another node");
      w |= bit;
    }
    return h;
  }
  std::uint64_t walk(std::uint32_t ref, std::size_t d, int depth) {
    if (depth > 4096) bad(ref, "tree deeper than 4096 levels");
    if (ref < kFirstUnit || ref >= hwm) bad(ref, "reference outside the used file");
    const std::uint8_t type = db.hdr(ref)->type;
    if (type == kInner) {
      const auto* h = static_cast<const inner_hdr*>(node(ref, kInner));
      inner_view v{const_cast<inner_hdr*>(h)};
      if (h->n == 0 || h->n > h->cap || h->cap > 264) bad(ref, "bad child count");
      if (inner_bytes(h->plen, h->cap) > std::uint64_t{h->units} * kUnit)
        bad(ref, "arrays past the node");
      if (d + h->plen > kMaxKey) bad(ref, "prefix past the key limit");
      for (unsigned i = 1; i + 1 < h->n; ++i)
        if (v.div()[i] <= v.div()[i - 1]) bad(ref, "dividers not increasing");
      key.resize(d);
      key.append(reinterpret_cast<const char*>(v.prefix()), h->plen);
      const std::size_t p = d + h->plen;
      std::uint64_t total = 0;
      for (unsigned i = 0; i < h->n; ++i) {
        ranges.push_back({p, i ? v.div()[i - 1] : -1, i + 1 < h->n ? v.div()[i] : 256});
        key.resize(p);
        const std::uint64_t got = walk(v.child(i), p, depth + 1);
        ranges.pop_back();
        if (got != v.count(i))
          bad(ref, "child " + std::to_string(i) + " holds " + std::to_string(got) +
                       " keys, count says " + std::to_string(v.count(i)));
        total += got;
      }
      return total;
    }
    if (type == kLeaf) {
      const auto* h = static_cast<const leaf_hdr*>(node(ref, kLeaf));
      leaf_view L{const_cast<leaf_hdr*>(h)};
      const std::size_t size = std::size_t{h->units} * kUnit;
      if (size > kLeafMaxBytes) bad(ref, "leaf over 4096 bytes");
      if (h->n == 0 || h->n > kLeafSlots) bad(ref, "bad key count");
      if (h->heap < kLeafHeap || h->heap > size) bad(ref, "bad heap start");
      for (std::size_t i = 0; i < h->n; ++i) {
        const std::size_t o = L.offs()[i];
        if (o < h->heap || o + 4 > size) bad(ref, "entry offset outside the heap");
        const u8* e = L.base() + o;
        const std::size_t kl = rd16(e), vi = rd16(e + 2);
        const bool ool = vi == kOutOfLine;
        if (vi > kInlineValue && !ool) bad(ref, "inline value too long");
        if (o + entry_bytes(kl, ool, ool ? 0 : vi) > size) bad(ref, "entry past the node");
        if (d + kl > kMaxKey) bad(ref, "key over the limit");
        key.resize(d);
        key.append(reinterpret_cast<const char*>(e + 4), kl);
        if (have_last && !(last < std::string_view(key)))
          bad(ref, "keys out of order at entry " + std::to_string(i));
        last = key;
        have_last = true;
        if (L.hash()[i] != key_hash(key)) bad(ref, "hash mismatch at entry " + std::to_string(i));
        for (const range& r : ranges) {
          const int s = r.pos < key.size() ? static_cast<u8>(key[r.pos]) : -1;
          if (s < r.lo || s >= r.hi || (s == -1 && r.lo != -1))
            bad(ref, "key routed to the wrong child at entry " + std::to_string(i));
        }
        if (ool) {
          const std::uint32_t b = rd32(e + 4 + kl);
          if (b < kFirstUnit || b >= hwm) bad(ref, "value reference outside the file");
          const auto* bh = static_cast<const blob_hdr*>(node(b, kBlob));
          if (24 + bh->len > std::uint64_t{bh->units} * kUnit) bad(b, "value past its node");
        }
      }
      return h->n;
    }
    bad(ref, "unknown node type " + std::to_string(type));
  }
};
}  // namespace

void tree_stats(const db_impl& db, std::uint32_t root, stats& s) {
  if (root) stats_rec(db, root, 1, s);
}

void tree_validate(const db_impl& db, std::uint32_t root, std::uint64_t count,
                   std::vector<std::uint64_t>& used, std::uint64_t hwm, std::uint64_t max_txn) {
  if (!root) {
    if (count) fail(error_kind::corrupt, "empty tree with a key count of " + std::to_string(count));
    return;
  }
  validator v{db, used, hwm, max_txn, {}, {}, false, {}};
  const std::uint64_t got = v.walk(root, 0, 0);
  if (got != count)
    fail(error_kind::corrupt,
         "tree holds " + std::to_string(got) + " keys, its root says " + std::to_string(count));
}

// ---- cursors ------------------------------------------------------------------------------------

}  // namespace simdex::kv::detail

namespace simdex::kv {

using namespace detail;

struct cursor::state {
  std::shared_ptr<db_impl> db;
  std::uint32_t root = 0;
  struct frame {
    std::uint32_t ref, idx, depth;
  };
  std::vector<frame> st;
  std::string key;
  bool valid = false;

  node_hdr* hdr(std::uint32_t r) const { return db->hdr(r); }
  void set_leaf_key() {
    const frame& f = st.back();
    leaf_view L{reinterpret_cast<leaf_hdr*>(db->at(f.ref))};
    key.resize(f.depth);
    key.append(reinterpret_cast<const char*>(L.key(f.idx)), L.klen(f.idx));
    valid = true;
  }
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
    {
      frame& f = st.back();
      const unsigned n = reinterpret_cast<leaf_hdr*>(db->at(f.ref))->n;
      if (fwd ? f.idx + 1 < n : f.idx > 0) {
        f.idx = fwd ? f.idx + 1 : f.idx - 1;
        set_leaf_key();
        return true;
      }
    }
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
  // A walk has just entered a leaf: fetch it whole, the next leaf in the walk's direction whole
  // (its head came in one leaf ago), and the head of the one after, so a scan waits for memory
  // about once per parent rather than on every leaf and entry.
  void ahead(bool fwd) {
    const frame& leaf = st.back();
    prefetch_node(db->at(leaf.ref), db->hdr(leaf.ref)->units);
    if (st.size() < 2) return;
    const frame& p = st[st.size() - 2];
    inner_view v{reinterpret_cast<inner_hdr*>(db->at(p.ref))};
    const long n = v.h->n, j1 = fwd ? long{p.idx} + 1 : long{p.idx} - 1,
               j2 = fwd ? j1 + 1 : j1 - 1;
    if (j1 < 0 || j1 >= n) return;
    const node_hdr* h = db->hdr(v.child(static_cast<std::size_t>(j1)));
    prefetch_node(h, h->type == kLeaf ? h->units : 4);
    if (j2 >= 0 && j2 < n) prefetch_head(db->at(v.child(static_cast<std::size_t>(j2))));
  }
  void reset() {
    st.clear();
    key.clear();
    valid = false;
  }
};

cursor::cursor() = default;
cursor::cursor(cursor&&) noexcept = default;
cursor& cursor::operator=(cursor&&) noexcept = default;
cursor::~cursor() = default;

bool cursor::valid() const noexcept { return s_ && s_->valid; }
bool cursor::first() {
  if (!s_) return false;
  s_->reset();
  if (!s_->root) return false;
  s_->descend(s_->root, 0, false);
  return true;
}
bool cursor::last() {
  if (!s_) return false;
  s_->reset();
  if (!s_->root) return false;
  s_->descend(s_->root, 0, true);
  return true;
}
bool cursor::lower_bound(std::string_view k) {
  if (!s_) return false;
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
bool cursor::next() { return s_ && s_->step(true); }
bool cursor::prev() { return s_ && s_->step(false); }
std::string_view cursor::key() const {
  if (!valid()) throw error(error_kind::invalid_argument, "cursor is not on a key");
  return s_->key;
}
std::string_view cursor::value() const {
  if (!valid()) throw error(error_kind::invalid_argument, "cursor is not on a key");
  const auto& f = s_->st.back();
  leaf_view L{reinterpret_cast<leaf_hdr*>(s_->db->at(f.ref))};
  return value_at(*s_->db, L.entry(f.idx));
}

cursor view::make_cursor() const {
  check_open();
  cursor c;
  c.s_ = std::make_unique<cursor::state>();
  c.s_->db = db_;
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
          const int j = leaf_find(L, reinterpret_cast<const u8*>(key.data()) + d, key.size() - d,
                                  hash[i]);
          if (j >= 0) out[g + i] = value_at(db, L.entry(static_cast<std::size_t>(j)));
          return true;
        });
  }
}

}  // namespace simdex::kv
