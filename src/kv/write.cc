// Writing a tree: copy-on-write updates, leaf splits, buffered puts, bulk building, range
// removal, and freeing what an aborted level wrote.
#include "node.h"

namespace simdex::kv::detail {

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

// Writes entry e (its key suffix from `off`) at q in a leaf's heap.
void write_entry(u8* q, const ent& e, std::size_t off) {
  const std::size_t kl = e.klen - off;
  wr16(q, static_cast<std::uint16_t>(kl));
  std::memcpy(q + 4, e.key + off, kl);
  if (e.blob) {
    wr16(q + 2, kOutOfLine);
    wr32(q + 4 + kl, e.blob);
  } else {
    wr16(q + 2, static_cast<std::uint16_t>(e.vlen));
    if (e.vlen) std::memcpy(q + 4 + kl, e.val, e.vlen);
  }
}

// Writes e at the low end of L's heap (the caller checked there is room); returns its offset.
std::uint16_t heap_push(leaf_view L, const ent& e) {
  const auto at = static_cast<std::uint16_t>(L.h->heap - ent_bytes(e, 0));
  write_entry(L.base() + at, e, 0);
  L.h->heap = at;
  return at;
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
    L.offs()[i] = static_cast<std::uint16_t>(pos);
    L.hash()[i] = es[i].hash;
    write_entry(p + pos, es[i], off);
    pos += ent_bytes(es[i], off);
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

// Inner node `ref` (view v) with children s[0, m) instead: in place when this level wrote it and
// they fit, else a new node with its prefix (the old one released). Returns the node's reference.
std::uint32_t rewrite_inner(txn_state& t, inner_view v, std::uint32_t ref, const slot* s,
                            std::size_t m) {
  if (v.h->txn >= t.base() && m <= v.h->cap) return write_inner(t, nullptr, 0, s, m, ref);
  const std::uint32_t nr = write_inner(t, v.prefix(), v.h->plen, s, m, 0);
  t.release(ref);
  return nr;
}

// A committed inner node with child idx replaced: one copy of the node's bytes (its capacity
// kept) instead of a rebuild slot by slot. A transaction of a few writes copies every inner node
// on each write's path, and the rebuild's loop over up to 256 slots was a quarter of the time of
// commit-every-100 inserts.
std::uint32_t clone_inner(txn_state& t, inner_view v, std::uint32_t ref, unsigned idx,
                          const piece& p) {
  const std::uint32_t units = v.h->units;
  std::uint32_t nr;
  u8* q = t.make(units, kInner, nr);
  const auto* from = reinterpret_cast<const u8*>(v.h);
  std::memcpy(q + sizeof(node_hdr), from + sizeof(node_hdr), units * kUnit - sizeof(node_hdr));
  inner_view nv{reinterpret_cast<inner_hdr*>(q)};
  nv.h->n = v.h->n;
  nv.set(idx, p.ref, p.cnt);
  t.release(ref);
  return nr;
}

// Replaces child idx of inner node `ref` by `ps` (none: removes it). Returns the node's new
// reference (itself when edited in place), 0 when no child is left. Not inlined: its slot array
// would sit in every frame of the recursive write.
[[gnu::noinline]] std::uint32_t inner_edit(wctx& c, std::uint32_t ref, unsigned idx,
                                           const piece* ps, std::size_t np) {
  inner_view v{reinterpret_cast<inner_hdr*>(c.db.at(ref))};
  const unsigned n = v.h->n;
  const bool mut = v.h->txn >= c.t.base();
  if (np == 1 && mut) {
    v.set(idx, ps[0].ref, ps[0].cnt);
    return ref;
  }
  if (np == 1) return clone_inner(c.t, v, ref, idx, ps[0]);
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
  return rewrite_inner(c.t, v, ref, s, m);
}

rc wr(wctx& c, std::uint32_t ref, std::size_t d, std::uint32_t& out);

rc finish_inner(wctx& c, std::uint32_t ref, unsigned idx, const piece* ps, std::size_t np,
                std::uint32_t& out) {
  out = inner_edit(c, ref, idx, ps, np);
  return out ? rc::replaced : rc::removed;
}

// Bytes a leaf's live entries would take in a rebuilt leaf, with its fixed part: what is
// between the heap's low end and the node's end, less the dead entries.
inline std::size_t leaf_live_bytes(leaf_view L) {
  return kLeafHeap + std::size_t{L.h->units} * kUnit - L.h->heap - L.h->dead;
}

// A removal left child idx of inner node `ref` as leaf `nref` holding ncnt keys. A leaf that has
// fallen to an eighth of a leaf (in keys or bytes) becomes one with a neighbouring leaf when the
// two fit in three quarters of one (the gap between the thresholds keeps a remove and an insert
// at the boundary from merging and splitting in turn), so deletes do not leave the file full of
// near-empty leaves. An eighth, not a quarter: removing half of a tree's keys at random leaves
// many leaves under a quarter, and merging them all made those removes markedly slower. Both leaves
// hold suffixes from the same depth and cover neighbouring ranges of the routing byte, so the
// merged leaf is one after the other, and the divider between them goes. False when no neighbour
// qualifies (nothing changed).
[[gnu::noinline]] bool merge_sparse_leaf(txn_state& t, std::uint32_t ref, unsigned idx,
                                         std::uint32_t nref, std::uint64_t ncnt,
                                         std::uint32_t& out) {
  db_impl& db = *t.db;
  inner_view v{reinterpret_cast<inner_hdr*>(db.at(ref))};
  leaf_view L{reinterpret_cast<leaf_hdr*>(db.at(nref))};
  const std::size_t n = L.h->n, bytes = leaf_live_bytes(L);
  if (n > kLeafSlots / 8 && bytes > kLeafMaxBytes / 8) return false;
  const unsigned vn = v.h->n;
  for (const unsigned j : {idx + 1, idx - 1}) {  // idx - 1 wraps past vn when idx is 0
    if (j >= vn || db.hdr(v.child(j))->type != kLeaf) continue;
    const std::uint32_t sib = v.child(j);
    leaf_view S{reinterpret_cast<leaf_hdr*>(db.at(sib))};
    const std::size_t sn = S.h->n;
    if (n + sn > kLeafSlots * 3 / 4 ||
        bytes + leaf_live_bytes(S) - kLeafHeap > kLeafMaxBytes * 3 / 4)
      continue;
    const unsigned lo = j < idx ? j : idx;
    const leaf_view first = j < idx ? S : L, second = j < idx ? L : S;
    std::vector<ent> es;
    es.reserve(n + sn);
    for (std::size_t i = 0; i < first.h->n; ++i) es.push_back(gather(first, i));
    for (std::size_t i = 0; i < second.h->n; ++i) es.push_back(gather(second, i));
    // Built before either leaf is released: the entries point into them, and released space
    // may be reused at once.
    const std::uint32_t merged = build_leaf(t, es.data(), es.size(), 0, 0);
    slot s[kMaxFanout + 8];
    std::size_t m = 0;
    for (unsigned i = 0; i < vn; ++i) {
      if (i == lo + 1) continue;
      const int sym = i ? v.div()[i - 1] : -1;
      if (i == lo)
        s[m++] = mk_slot(sym, merged, ncnt + v.count(j));
      else
        s[m++] = mk_slot(sym, v.child(i), v.count(i));
    }
    t.release(nref);
    t.release(sib);
    out = rewrite_inner(t, v, ref, s, m);
    return true;
  }
  return false;
}

// After a removal: inner node `ref` left with one child, a leaf, becomes that leaf, its keys
// taking the node's prefix back, when they fit in three quarters of a leaf (so the leaf can
// merge with its new neighbours in turn). Returns the reference now in ref's place.
[[gnu::noinline]] std::uint32_t collapse_inner(txn_state& t, std::uint32_t ref) {
  db_impl& db = *t.db;
  inner_view v{reinterpret_cast<inner_hdr*>(db.at(ref))};
  if (v.h->n != 1 || db.hdr(v.child(0))->type != kLeaf) return ref;
  const std::uint32_t ch = v.child(0);
  leaf_view L{reinterpret_cast<leaf_hdr*>(db.at(ch))};
  const std::size_t n = L.h->n, pl = v.h->plen;
  if (leaf_live_bytes(L) + n * pl > kLeafMaxBytes * 3 / 4) return ref;
  std::vector<std::string> keys(n);
  std::vector<ent> es(n);
  for (std::size_t i = 0; i < n; ++i) {
    es[i] = gather(L, i);
    keys[i].assign(reinterpret_cast<const char*>(v.prefix()), pl);
    keys[i].append(reinterpret_cast<const char*>(es[i].key), es[i].klen);
    es[i].key = reinterpret_cast<const u8*>(keys[i].data());
    es[i].klen = static_cast<std::uint32_t>(keys[i].size());
  }
  const std::uint32_t leaf = build_leaf(t, es.data(), n, 0, 0);
  t.release(ch);
  t.release(ref);
  return leaf;
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
  for (unsigned j = 0; j < n; ++j) s[j] = mk_slot(j ? v.div()[j - 1] : -1, v.child(j), v.count(j));
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
      piece pc{nref, static_cast<std::uint64_t>(static_cast<std::int64_t>(v.count(idx)) + c.delta),
               0};
      if (c.mode != wmode::remove) return finish_inner(c, ref, idx, &pc, 1, out);
      if (c.db.hdr(nref)->type != kLeaf || !merge_sparse_leaf(c.t, ref, idx, nref, pc.cnt, out))
        finish_inner(c, ref, idx, &pc, 1, out);
      out = collapse_inner(c.t, out);
      return rc::replaced;
    }
    case rc::removed:
      if (finish_inner(c, ref, idx, nullptr, 0, out) == rc::removed) return rc::removed;
      out = collapse_inner(c.t, out);
      return rc::replaced;
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

// A copy of committed leaf L that this level may edit in place, with `room` heap bytes free:
// its heap copied whole (L has no dead entries) and the offsets moved with it, instead of every
// entry gathered and written again. A transaction of a few writes copies the leaf of every write,
// and the rebuild was a fifth of the time of commit-every-100 inserts.
std::uint32_t clone_leaf(txn_state& t, leaf_view L, std::size_t room) {
  const std::size_t n = L.h->n, old_end = std::size_t{L.h->units} * kUnit;
  const std::size_t heap = old_end - L.h->heap;
  std::uint32_t ref;
  u8* p = t.make(units_for(kLeafHeap + heap + room), kLeaf, ref);
  leaf_view N{reinterpret_cast<leaf_hdr*>(p)};
  const std::size_t end = std::size_t{N.h->units} * kUnit;
  std::memcpy(p + end - heap, L.base() + L.h->heap, heap);
  const auto shift = static_cast<std::uint16_t>(end - old_end);  // mod 2^16: may move down
  for (std::size_t i = 0; i < n; ++i) N.offs()[i] = static_cast<std::uint16_t>(L.offs()[i] + shift);
  std::memcpy(N.hash(), L.hash(), n);
  N.h->n = static_cast<std::uint16_t>(n);
  N.h->heap = static_cast<std::uint16_t>(end - heap);
  N.h->dead = 0;
  return ref;
}

rc wr_leaf(wctx& c, std::uint32_t ref, std::size_t d, std::uint32_t& out) {
  leaf_view L{reinterpret_cast<leaf_hdr*>(c.db.at(ref))};
  const u8* s = c.k + d;
  const std::size_t sn = c.kn - d;
  bool found;
  const std::size_t pos = leaf_lower(L, s, sn, found);
  const std::size_t n = L.h->n;
  bool mut = L.h->txn >= c.t.base();
  const std::size_t size = std::size_t{L.h->units} * kUnit;
  // A committed leaf whose copy, with `room` free bytes, still fits in a leaf is copied and then
  // edited in place like one this level wrote; the parent then takes the copy.
  bool copied = false;
  auto own = [&](std::size_t room) {
    if (mut || L.h->dead || leaf_live_bytes(L) + room > kLeafMaxBytes) return;
    const std::uint32_t nr = clone_leaf(c.t, L, room);
    c.t.release(ref);
    ref = nr;
    L = leaf_view{reinterpret_cast<leaf_hdr*>(c.db.at(nr))};
    mut = copied = true;
  };
  auto edited = [&] {
    if (!copied) return rc::same;
    out = ref;
    return rc::replaced;
  };
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
    own(0);
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
  const bool inl = c.val.size() <= kInlineValue;
  const std::size_t nb = entry_bytes(sn, !inl, c.val.size());  // the new entry's
  const std::size_t slack = slack_for(c, false, size);         // room a copy keeps
  if (found) {
    c.existed = true;
    if (c.mode == wmode::insert) return rc::same;
    const ent was = gather(L, pos);
    const bool same_size = inl && !was.blob && was.vlen == c.val.size();
    own(same_size ? 0 : nb + slack);
    const ent old = gather(L, pos);  // in the copy, if one was made
    if (mut && same_size) {
      if (!c.val.empty()) std::memmove(const_cast<u8*>(old.val), c.val.data(), c.val.size());
      return edited();
    }
    const ent ne = new_entry(c, d);
    if (mut && L.h->heap >= kLeafHeap + nb) {
      L.offs()[pos] = heap_push(L, ne);
      L.h->dead = static_cast<std::uint16_t>(L.h->dead + ent_bytes(old, 0));
      if (old.blob) c.t.release(old.blob);
      return edited();
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
  if (n < kLeafSlots) own(nb + slack);
  if (mut && n < kLeafSlots && L.h->heap >= kLeafHeap + nb) {
    std::memmove(L.hash() + pos + 1, L.hash() + pos, n - pos);
    std::memmove(L.offs() + pos + 1, L.offs() + pos, 2 * (n - pos));
    L.hash()[pos] = c.h;
    L.offs()[pos] = heap_push(L, ne);
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
    if (end > start)
      out.push_back(
          {build_leaf(t, es + start, end - start, off, 0), end - start, ent_sym(es[start], off)});
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
      const bool above_lo =
          !lo_on || cmp(e.key, e.klen, r.lo + std::min(d, r.lon), r.lon - std::min(d, r.lon)) >= 0;
      const bool below_hi =
          !hi_on || cmp(e.key, e.klen, r.hi + std::min(d, r.hin), r.hin - std::min(d, r.hin)) < 0;
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
  std::uint32_t cut[2];  // the end children the range cut into, when they were rewritten
  unsigned ncut = 0;
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
    if (res == rc::replaced) cut[ncut++] = nref;
    s[m++] = mk_slot(sym, nref, v.count(i) - (r.removed - before));
  }
  if (!changed) return rc::same;
  if (m == 0) {
    r.t.release(ref);
    return rc::removed;
  }
  // The first child's divider is implicit: whatever comes first now covers from the start.
  out = rewrite_inner(r.t, v, ref, s, m);
  // A range that ends inside a leaf can leave it (or a node collapsed into a leaf) nearly empty:
  // merge and collapse as a single removal does. The first merge may take the other end along.
  for (unsigned e = 0; e < ncut; ++e) {
    inner_view w{reinterpret_cast<inner_hdr*>(r.db.at(out))};
    unsigned i = 0;
    while (i < w.h->n && w.child(i) != cut[e]) ++i;  // gone: merged with the other end
    if (i < w.h->n && r.db.hdr(cut[e])->type == kLeaf)
      merge_sparse_leaf(r.t, out, i, cut[e], w.count(i), out);
  }
  out = collapse_inner(r.t, out);
  return rc::replaced;
}

void bulk_build(txn_state& t,
                const std::vector<std::pair<std::string_view, std::string_view>>& kv) {
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

std::uint64_t remove_range_op(txn_state& t, std::string_view lo,
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

bool write_op(txn_state& t, wmode mode, std::string_view key, std::string_view value,
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

// Runs one tree operation with its journal (txn_state::in_op). A node of this level that the
// operation replaced goes back only when the operation is over, since until then the tree may
// still link it. If the operation fails halfway (an allocation the file could not grow for),
// the tree may hold some of its new nodes and still some old ones, with counts half updated:
// the level is marked broken, keeping the journal, and takes nothing but its abort, which gives
// back what the root reaches and what the journal holds, each once. Before, the abort walked
// the tree alone: the new nodes not linked yet leaked (and the next commit wrote the leak into
// the file), and a released node still linked was given back twice, then reused under live
// data (a crash followed).
template <class Op>
auto journaled(txn_state& t, Op op) {
  t.clock->changed();
  t.op_made.clear();
  t.op_released.clear();
  t.keep_release_room(t.levels.back().made);  // out of memory here, nothing changed
  auto broke = [&t](error_kind kind, const char* why) noexcept {
    t.in_op = false;
    level& l = t.levels.back();
    l.broken = true;
    l.broken_kind = kind;
    // Moved: the bookkeeping of a failure must not need memory (copies of the journal ran out
    // of it, and its nodes leaked).
    l.strays_made = std::move(t.op_made);
    l.strays_released = std::move(t.op_released);
    try {
      l.broken_why = why;
    } catch (...) {  // out of memory: broken_why stays empty, which says so
    }
  };
  t.in_op = true;
  try {
    auto r = op();
    t.in_op = false;
    std::size_t given = 0;
    try {
      for (; given < t.op_released.size(); ++given)
        t.db->alloc.give(t.op_released[given].first, t.op_released[given].second);
    } catch (...) {
      // Out of memory in a give: those given leave the journal, or the abort gave them again.
      // The operation was complete, so the nodes it made are in the tree or among the released.
      t.op_released.erase(t.op_released.begin(),
                          t.op_released.begin() + static_cast<std::ptrdiff_t>(given));
      t.op_made.clear();
      throw;
    }
    return r;
  } catch (const error& e) {
    broke(e.kind(), e.detail().c_str());
    throw;
  } catch (const std::exception& e) {  // out of memory
    broke(error_kind::io, e.what());
    throw;
  } catch (...) {
    broke(error_kind::io, "an unknown error");
    throw;
  }
}

}  // namespace

bool tree_write(txn_state& t, wmode mode, std::string_view key, std::string_view value,
                bool& changed) {
  return journaled(t, [&] { return write_op(t, mode, key, value, changed); });
}

std::uint64_t tree_remove_range(txn_state& t, std::string_view lo,
                                std::optional<std::string_view> hi) {
  return journaled(t, [&] { return remove_range_op(t, lo, hi); });
}

void tree_bulk(txn_state& t, const std::vector<std::pair<std::string_view, std::string_view>>& kv) {
  journaled(t, [&] {
    bulk_build(t, kv);
    return true;
  });
}

// Applies the buffered puts: their paths are first walked in groups with prefetches (every
// node a write will read or copy, the leaf whole), then the writes run on warm caches. Buffer
// order is kept, so a key put twice ends with its last value.
void txn_state::flush() {
  if (buf.empty()) return;  // each tree_write below changes the clock
  std::vector<buffered_put> items;
  std::string bytes;
  items.swap(buf);
  bytes.swap(buf_bytes);
  auto key_at = [&](std::size_t i) {
    return std::string_view(bytes).substr(items[i].at, items[i].klen);
  };
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
    for (std::size_t i = g; i < g + m; ++i) {
      bool ch;
      tree_write(*this, wmode::upsert, key_at(i),
                 std::string_view(bytes).substr(items[i].at + items[i].klen, items[i].vlen), ch);
    }
  }
  // Keep the buffers' capacity for the next batch.
  items.clear();
  bytes.clear();
  buf.swap(items);
  buf_bytes.swap(bytes);
}

void txn_state::free_new(std::uint32_t ref, std::uint64_t min_txn, const level* skip) {
  auto give = [&](std::uint32_t r) {
    const std::pair<std::uint32_t, std::uint32_t> node{r, db->hdr(r)->units};
    if (skip &&
        (std::binary_search(skip->strays_made.begin(), skip->strays_made.end(), node) ||
         std::binary_search(skip->strays_released.begin(), skip->strays_released.end(), node)))
      return;  // the journal's: given by the abort itself
    db->alloc.give(node.first, node.second);
  };
  if (!ref) return;
  node_hdr* h = db->hdr(ref);
  if (h->txn < min_txn) return;
  if (h->type == kInner) {
    inner_view v{static_cast<inner_hdr*>(h)};
    for (unsigned i = 0; i < v.h->n; ++i) free_new(v.child(i), min_txn, skip);
  } else if (h->type == kLeaf) {
    leaf_view L{reinterpret_cast<leaf_hdr*>(db->at(ref))};
    for (std::size_t i = 0; i < L.h->n; ++i) {
      const ent e = gather(L, i);
      if (e.blob && db->hdr(e.blob)->txn >= min_txn) give(e.blob);
    }
  }
  give(ref);
}

}  // namespace simdex::kv::detail
