// Mutation drivers: insert and erase (one key, or sorted runs), room for a full page, mending
// an underfull one, and the bottom-up build.
// Part of impl (generic.h); included only through it.
#pragma once

#include <utility>

#include "generic.h"

namespace simdex::btree_detail {

template <class Policy, std::size_t VS>
void impl<Policy, VS>::add_counts(const T& t, const path& P, std::int64_t delta) noexcept {
  for (unsigned d = 0; d < t.height; ++d)
    IL::count(P.node[d])[P.idx[d]] += static_cast<std::uint64_t>(delta);
}

// Full page p (child P.idx[d] of P.node[d]) evens its keys out with its right or left
// neighbour when that one has real room; true when it did.
template <class Policy, std::size_t VS>
bool impl<Policy, VS>::shift_to_sibling(path& P, int d, std::byte* p, bool right) noexcept {
  std::byte* parent = P.node[d];
  unsigned i = P.idx[d];
  if (right ? i + 1 >= IL::n(parent) : i == 0) return false;
  unsigned j = right ? i : i - 1;  // the pair is children j and j + 1
  std::byte* q = untag(IL::child(parent)[right ? i + 1 : i - 1]);
  unsigned qn = hdr(q)->n;
  // A move must make real room: one that frees only a few slots rewrites two pages for a
  // handful of inserts, and the next one comes soon. At 8-byte keys the bar is a sixth of a
  // page (38+ keys move): a third fewer instructions per random insert, for about 3.5% more
  // bytes per key. 4-byte keys keep a sixteenth, which holds their memory use.
  constexpr unsigned kSlack = sizeof(S) == 8 ? kCap / 6 : kCap / 16;
  if (qn + kSlack > kCap) return false;
  unsigned m = (kCap - qn) / 2;  // keys that move to q
  std::byte* l = right ? p : q;
  std::byte* r = right ? q : p;
  alignas(64) S ks[2 * kCap + kPad];
  alignas(64) std::byte vs[VS > 0 ? (2 * kCap + kPad) * VS : 1];
  unsigned a = gather(l, ks, vs);
  unsigned b = gather(r, ks + a, vs + a * VS);
  unsigned nl = right ? a - m : a + m;  // keys the left page keeps
  pack(l, ks, vs, nl);
  pack(r, ks + nl, vs + nl * VS, a + b - nl);
  set_sep(l, r, ks[nl]);
  IL::keys(parent)[j] = ks[nl];
  IL::summarize(parent);
  std::uint64_t gain = std::uint64_t{nl} - a;  // modulo 2^64: a loss when keys go right
  IL::count(parent)[j] += gain;
  IL::count(parent)[j + 1] -= gain;
  return true;
}

// Page p (full) must make room for k: append split, shift to a sibling, or split in two.
// Each split takes one page and, through inner_insert, at most one inner node a level plus a
// new root: those are reserved before anything changes, so running out of memory throws with
// the tree as it was.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::make_room(T& t, path& P, std::byte* p, S k) {
  H* h = hdr(p);
  int d = static_cast<int>(t.height) - 1;  // parent level
  unsigned lastb = h->nb - 1u;
  S maxk = keys(p, lastb)[cnt(p)[lastb] - 1];
  if (h->next == nullptr && k > maxk) {
    t.mem.reserve(1, t.height + 1u);
    // Append: move only the largest key to a new right page; the left stays full.
    std::byte* r = new_leaf(t);
    alignas(16) std::byte v[VS > 0 ? VS : 1];
    if constexpr (VS > 0) std::memcpy(v, val(p, lastb, cnt(p)[lastb] - 1u), VS);
    leaf_erase_at(p, lastb, cnt(p)[lastb] - 1u);
    leaf_insert_at(r, 0, 0, maxk, VS > 0 ? v : nullptr);
    link_after(t, p, r);
    set_hi(r, h);
    set_sep(p, r, maxk);
    inner_insert(t, P, d, maxk, reinterpret_cast<std::uintptr_t>(r) | kLeafTag, 1);
    return;
  }
  if (d >= 0 && (shift_to_sibling(P, d, p, true) || shift_to_sibling(P, d, p, false))) return;
  t.mem.reserve(1, t.height + 1u);
  alignas(64) S ks[2 * kCap + kPad];
  alignas(64) std::byte vs[VS > 0 ? (2 * kCap + kPad) * VS : 1];
  // Both neighbours are (nearly) full too: split this page and its right sibling into
  // three pages two-thirds full (B*-tree style), which keeps the average fill high.
  if (d >= 0 && P.idx[d] + 1 < IL::n(P.node[d])) {
    std::byte* parent = P.node[d];
    unsigned i = P.idx[d];
    std::byte* r = untag(IL::child(parent)[i + 1]);
    unsigned a = gather(p, ks, vs);
    a += gather(r, ks + a, vs + a * VS);
    unsigned n1 = a / 3, n2 = a / 3, n3 = a - n1 - n2;
    std::byte* q = new_leaf_for_pack(t);
    pack(p, ks, vs, n1);
    pack(q, ks + n1, vs + n1 * VS, n2);
    pack(r, ks + n1 + n2, vs + (n1 + n2) * VS, n3);
    link_after(t, p, q);
    set_sep(p, q, ks[n1]);
    set_sep(q, r, ks[n1 + n2]);
    IL::keys(parent)[i] = ks[n1 + n2];
    IL::summarize(parent);
    IL::count(parent)[i] = n1 + n2;  // inner_insert takes q's n2 back off
    IL::count(parent)[i + 1] = n3;
    inner_insert(t, P, d, ks[n1], reinterpret_cast<std::uintptr_t>(q) | kLeafTag, n2);
    return;
  }
  // Split in two halves.
  std::byte* r = new_leaf_for_pack(t);
  unsigned a = gather(p, ks, vs);
  unsigned half = a / 2;
  pack(p, ks, vs, half);
  pack(r, ks + half, vs + half * VS, a - half);
  link_after(t, p, r);
  set_hi(r, h);
  set_sep(p, r, ks[half]);
  inner_insert(t, P, d, ks[half], reinterpret_cast<std::uintptr_t>(r) | kLeafTag, a - half);
}

// Children j and j + 1 of P.node[d], both leaves, become one: the right one's keys join
// the left page and the right page goes.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::merge_leaves(T& t, path& P, int d, unsigned j) {
  std::byte* parent = P.node[d];
  std::byte* l = untag(IL::child(parent)[j]);
  std::byte* r = untag(IL::child(parent)[j + 1]);
  alignas(64) S ks[2 * kCap + kPad];
  alignas(64) std::byte vs[VS > 0 ? (2 * kCap + kPad) * VS : 1];
  unsigned a = gather(l, ks, vs);
  a += gather(r, ks + a, vs + a * VS);
  pack(l, ks, vs, a);
  set_hi(l, hdr(r));
  IL::count(parent)[j] += IL::count(parent)[j + 1];
  unlink(t, r);
  free_leaf(t, r);
  remove_child(t, P, d, j + 1);
}

// After an erase left page p (child P.idx[height-1]) small or empty.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::leaf_underflow(T& t, path& P, std::byte* p) {
  int d = static_cast<int>(t.height) - 1;
  H* h = hdr(p);
  if (h->n == 0) {
    if (d < 0) {  // the tree is now empty
      free_leaf(t, p);
      t.root = 0;
      t.first = t.last = nullptr;
      return;
    }
    // Climb past ancestors that hold only this chain; the first with two children or
    // more drops it. Its range goes to the neighbour under that same node.
    int lvl = d;
    while (lvl >= 0 && IL::n(P.node[lvl]) == 1) --lvl;
    if (lvl < 0) {  // every node above held only this leaf: the tree is empty
      for (int x = d; x >= 0; --x) {
        t.mem.free_inner(P.node[x]);
        --t.inners;
      }
      free_leaf(t, p);
      t.root = 0;
      t.height = 0;
      t.first = t.last = nullptr;
      return;
    }
    if (P.idx[lvl] > 0)
      set_hi(h->prev, h);
    else
      set_lo(h->next, h);
    unlink(t, p);
    free_leaf(t, p);
    for (int x = d; x > lvl; --x) {
      t.mem.free_inner(P.node[x]);
      --t.inners;
    }
    remove_child(t, P, lvl, P.idx[lvl]);
    return;
  }
  if (d < 0 || h->n >= kCap / 4) return;
  std::byte* parent = P.node[d];
  unsigned i = P.idx[d];
  unsigned pn = IL::n(parent);
  if (i + 1 < pn && h->n + hdr(untag(IL::child(parent)[i + 1]))->n <= kCap * 3 / 4)
    merge_leaves(t, P, d, i);
  else if (i > 0 && h->n + hdr(untag(IL::child(parent)[i - 1]))->n <= kCap * 3 / 4)
    merge_leaves(t, P, d, i - 1);
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::first_leaf(T& t, S k, const void* v) {
  std::byte* p = new_leaf(t);
  leaf_insert_at(p, 0, 0, k, v);
  hdr(p)->nb = 1;
  t.root = reinterpret_cast<std::uintptr_t>(p) | kLeafTag;
  t.height = 0;
  t.first = t.last = p;
  t.size = 1;
}

template <class Policy, std::size_t VS>
bool impl<Policy, VS>::insert(T& t, S k, const void* v, bool assign) {
  if (t.root == 0) {
    first_leaf(t, k, v);
    return true;
  }
  path P;
  for (;;) {
    std::byte* p = descend_path(t, k, P);
    unsigned b = leaf_block(p, k);
    unsigned s = Policy::count_lt16(keys(p, b), k);
    if (s < cnt(p)[b] && keys(p, b)[s] == k) {
      if (assign) copy_val(val(p, b, s), v);
      return false;
    }
    if (hdr(p)->n == kCap) {
      make_room(t, P, p, k);
      continue;  // structure changed: descend again
    }
    if (cnt(p)[b] == 16 && far_gap(p, b)) {
      // A long carry would touch many lines: spread the keys again if that leaves room
      // in every block, else treat the page as full.
      if (hdr(p)->n <= kCap - B)
        respread(p);
      else
        make_room(t, P, p, k);
      continue;
    }
    // s == cnt[b] < 16 with later blocks: the key still belongs at the end of block b.
    leaf_insert_at(p, b, s, k, v);
    add_counts(t, P, 1);
    ++t.size;
    return true;
  }
}

template <class Policy, std::size_t VS>
bool impl<Policy, VS>::erase(T& t, S k) {
  if (t.root == 0) return false;
  path P;
  std::byte* p = descend_path(t, k, P);
  unsigned b = leaf_block(p, k);
  unsigned s = Policy::count_lt16(keys(p, b), k);
  if (!(s < cnt(p)[b] && keys(p, b)[s] == k)) return false;
  leaf_erase_at(p, b, s);
  add_counts(t, P, -1);
  --t.size;
  if (hdr(p)->n < kCap / 4) leaf_underflow(t, P, p);
  return true;
}

template <class Policy, std::size_t VS>
std::size_t impl<Policy, VS>::insert_sorted(T& t, const S* ks, const std::byte* vs, std::size_t n,
                                            bool assign) {
  std::size_t added = 0;
  std::size_t i = 0;
  if (t.root == 0 && n > 0) {
    first_leaf(t, ks[0], vs);
    added = 1;
    i = 1;
  }
  path P;
  std::byte* p = nullptr;
  // Keys added to page p that the counts along P do not have yet: they go in once per page,
  // not once per key, and always before P changes or a split rewrites counts.
  std::int64_t pending = 0;
  for (; i < n; ++i) {
    S k = ks[i];
    const void* v = vs ? vs + i * VS : nullptr;
    if (p == nullptr || !in_fences(p, k)) {
      if (pending) add_counts(t, P, std::exchange(pending, 0));
      p = descend_path(t, k, P);
      // Many keys for this page: merge them in one pass instead of one by one.
      std::size_t j = i + 1;
      while (j < n && j - i < kMergeRun && in_fences(p, ks[j])) ++j;
      if (j - i >= kMergeMin) {
        added += merge_into(t, P, p, ks + i, vs ? vs + i * VS : nullptr,
                            static_cast<unsigned>(j - i), assign);
        i = j - 1;
        p = nullptr;
        continue;
      }
    }
    unsigned b = leaf_block(p, k);
    unsigned s = Policy::count_lt16(keys(p, b), k);
    if (s < cnt(p)[b] && keys(p, b)[s] == k) {
      if (assign) copy_val(val(p, b, s), v);
      continue;
    }
    if (hdr(p)->n == kCap) {
      if (pending) add_counts(t, P, std::exchange(pending, 0));
      make_room(t, P, p, k);
      p = nullptr;
      --i;
      continue;
    }
    leaf_insert_at(p, b, s, k, v);
    ++pending;
    ++t.size;
    ++added;
  }
  if (pending) add_counts(t, P, std::exchange(pending, 0));
  return added;
}

// Merges m sorted keys (all inside p's fences) with p's keys; overflow goes to new pages
// linked after p, each about kFill keys so that every block keeps room. Returns how
// many keys were new.
template <class Policy, std::size_t VS>
unsigned impl<Policy, VS>::merge_into(T& t, path& P, std::byte* p, const S* in, const std::byte* iv,
                                      unsigned m, bool assign) {
  alignas(64) S old[kCap + kPad];
  alignas(64) std::byte oldv[VS > 0 ? (kCap + kPad) * VS : 1];
  alignas(64) S out[kCap + kMergeRun + kPad];
  alignas(64) std::byte outv[VS > 0 ? (kCap + kMergeRun + kPad) * VS : 1];
  // Where each new key goes among the page's keys, searched in the page itself (index, then
  // block) before anything moves: the searches do not depend on each other, so they overlap,
  // where counting each run from the end of the last was one chain of dependent loads.
  alignas(64) std::uint32_t rank[kMergeRun];
  // A set's new keys alone (those the page lacks) and their ranks, for merge_pack.
  alignas(64) S fk[VS == 0 ? kMergeRun : 1];
  alignas(64) std::uint32_t fr[VS == 0 ? kMergeRun : 1];
  unsigned fresh = 0;
  // The page is gathered first: its blocks stream in whole, so the searches below hit the
  // first-level cache instead of each waiting on its block's lines.
  unsigned a = gather(p, old, oldv);
  for (unsigned i = 0; i < kPad; ++i) old[a + i] = kMax;  // the run copies read whole blocks
  {
    unsigned first[B + 1];  // gathered position of each block's first key
    first[0] = 0;
    for (unsigned b = 0; b < B; ++b) first[b + 1] = first[b] + cnt(p)[b];
    for (unsigned y = 0; y < m; ++y) {
      unsigned b = leaf_block(p, in[y]);
      unsigned s = Policy::count_lt16(keys(p, b), in[y]);
      rank[y] = first[b] + s;
      bool is_new = !(rank[y] < a && old[rank[y]] == in[y]);
      if constexpr (VS == 0) {  // written always, kept when new: no branch on the keys
        fk[fresh] = in[y];
        fr[fresh] = rank[y];
      }
      fresh += is_new;
    }
    // Nothing new and no values to write: the page is left as it lies, so a batch of keys the
    // tree holds moves no key (iterators stay valid, as after a single insert of a present key).
    if (fresh == 0 && (VS == 0 || !assign)) return 0;
  }
  if constexpr (VS == 0) {
    if (a + fresh <= kCap) {  // the page takes them all: lay it out straight from old and fk
      merge_pack(p, old, a, fk, fr, fresh);
      add_counts(t, P, fresh);
      t.size += fresh;
      return fresh;
    }
  }
  // The batch is sparse next to the page (a few new keys among hundreds), so the page's keys
  // move in runs: the run below the next new key is copied in whole 16-key blocks (out has
  // kPad lanes to spare), then the new key is placed.
  unsigned x = 0, y = 0, z = 0, added = 0;
  for (; y < m; ++y) {
    S k = in[y];
    unsigned e = rank[y];
    for (unsigned i = 0; i < e - x; i += kBlockKeys) {
      std::memcpy(out + z + i, old + x + i, kBlockKeys * sizeof(S));
      if constexpr (VS > 0) std::memcpy(outv + (z + i) * VS, oldv + (x + i) * VS, kBlockKeys * VS);
    }
    z += e - x;
    x = e;
    bool dup = x < a && old[x] == k;
    out[z] = k;
    if constexpr (VS > 0) {
      const std::byte* src = dup && !assign ? oldv + x * VS : iv ? iv + y * VS : nullptr;
      copy_val(outv + z * VS, src);
    }
    ++z;
    x += dup;
    added += !dup;
  }
  for (unsigned i = 0; i < a - x; i += kBlockKeys) {
    std::memcpy(out + z + i, old + x + i, kBlockKeys * sizeof(S));
    if constexpr (VS > 0) std::memcpy(outv + (z + i) * VS, oldv + (x + i) * VS, kBlockKeys * VS);
  }
  z += a - x;
  unsigned pages = z <= kCap ? 1 : (z + kFill - 1) / kFill;
  // The new pages, and for each an inner node a level plus a new root (one at most: a root
  // that splits has room for far more than these few pages), are reserved before the counts
  // or any page change, so running out of memory throws with the tree as it was.
  if (pages > 1) t.mem.reserve(pages - 1, (pages - 1) * (t.height + 2u));
  add_counts(t, P, added);
  t.size += added;
  if (pages == 1) {
    pack(p, out, outv, z);
    return added;
  }
  // Chunk c holds [start(c), start(c + 1)).
  auto start = [&](unsigned c) {
    return static_cast<unsigned>(static_cast<std::uint64_t>(z) * c / pages);
  };
  H saved = *hdr(p);
  pack(p, out, outv, start(1));
  // New pages go in right after p, last first, so p's count always covers those not yet
  // split off and inner_insert can take each one's keys from p.
  for (unsigned c = pages - 1; c >= 1; --c) {
    std::byte* q = new_leaf_for_pack(t);
    unsigned lo = start(c), hi = start(c + 1);
    pack(q, out + lo, outv + lo * VS, hi - lo);
    link_after(t, p, q);
    if (c + 1 == pages)
      set_hi(q, &saved);
    else
      set_sep(q, hdr(q)->next, out[hi]);
    hdr(q)->lo = out[lo];
    hdr(q)->flags |= H::kHasLo;
    set_sep(p, q, out[lo]);
    descend_path(t, out[0], P);
    inner_insert(t, P, static_cast<int>(t.height) - 1, out[lo],
                 reinterpret_cast<std::uintptr_t>(q) | kLeafTag, hi - lo);
  }
  return added;
}

template <class Policy, std::size_t VS>
std::size_t impl<Policy, VS>::erase_sorted(T& t, const S* ks, std::size_t n) {
  std::size_t gone = 0;
  path P;
  std::byte* p = nullptr;
  std::int64_t pending = 0;  // as in insert_sorted: the counts go in once per page
  for (std::size_t i = 0; i < n && t.root != 0; ++i) {
    S k = ks[i];
    if (p == nullptr || !in_fences(p, k)) {
      if (pending) add_counts(t, P, std::exchange(pending, 0));
      p = descend_path(t, k, P);
    }
    unsigned b = leaf_block(p, k);
    unsigned s = Policy::count_lt16(keys(p, b), k);
    if (!(s < cnt(p)[b] && keys(p, b)[s] == k)) continue;
    leaf_erase_at(p, b, s);
    --pending;
    --t.size;
    ++gone;
    if (hdr(p)->n < kCap / 4) {
      add_counts(t, P, std::exchange(pending, 0));
      leaf_underflow(t, P, p);
      p = nullptr;
    }
  }
  if (pending) add_counts(t, P, pending);
  return gone;
}

// Bottom-up build of an empty tree from sorted unique keys: leaves of kFill keys, full inner
// nodes.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::build_sorted(T& t, const S* ks, const std::byte* vs, std::size_t n) {
  // The tree was empty: out of memory partway, it is empty again (nodes built so far go with
  // the arena's regions).
  try {
    build_nodes(t, ks, vs, n);
  } catch (...) {
    destroy(t);
    throw;
  }
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::build_nodes(T& t, const S* ks, const std::byte* vs, std::size_t n) {
  if (n == 0) return;
  std::size_t nleaves = (n + kFill - 1) / kFill;
  std::byte* prev = nullptr;
  std::size_t at = 0;
  // Current level: a chain of nodes built left to right; we build leaves and push each
  // into the rightmost inner node of the level above (growing levels as needed).
  path P;  // P.node[d]: the rightmost node at inner level d counted from the leaves
  unsigned levels = 0;
  for (std::size_t li = 0; li < nleaves; ++li) {
    // kFill keys a leaf; the last two share what is left, so the last one is never tiny.
    std::size_t left = n - at;
    unsigned take = left > kFill ? kFill : static_cast<unsigned>(left);
    if (li + 2 == nleaves) take = static_cast<unsigned>(left - left / 2);
    std::byte* p = new_leaf_for_pack(t);
    if (left >= take + kPad) {
      pack(p, ks + at, vs ? vs + at * VS : nullptr, take);
    } else {  // pack reads whole blocks: the input's last keys go through a padded copy
      alignas(64) S tk[kCap + kPad];
      alignas(64) std::byte tv[VS > 0 ? (kCap + kPad) * VS : 1];
      std::memcpy(tk, ks + at, take * sizeof(S));
      if constexpr (VS > 0) {
        if (vs)
          std::memcpy(tv, vs + at * VS, take * VS);
        else
          std::memset(tv, 0, take * VS);
      }
      pack(p, tk, tv, take);
    }
    hdr(p)->prev = prev;
    if (prev) {
      hdr(prev)->next = p;
      set_sep(prev, p, ks[at]);
    } else {
      t.first = p;
    }
    prev = p;
    push_child(t, P, levels, 0, ks[at], reinterpret_cast<std::uintptr_t>(p) | kLeafTag, take);
    at += take;
  }
  t.last = prev;
  t.size = n;
  // The root: the topmost level's single node (or the only leaf).
  if (levels == 0) {
    t.root = reinterpret_cast<std::uintptr_t>(t.first) | kLeafTag;
    t.height = 0;
    return;
  }
  // Topmost level may hold one node with one child: collapse those.
  std::uintptr_t root = reinterpret_cast<std::uintptr_t>(P.node[levels - 1]);
  unsigned h = levels;
  while (h > 0 && IL::n(untag(root)) == 1) {
    std::byte* in = untag(root);
    root = IL::child(in)[0];
    t.mem.free_inner(in);
    --t.inners;
    --h;
  }
  t.root = root;
  t.height = h;
}

}  // namespace simdex::btree_detail
