// Node-level helpers the reading and the writing code share: routing in an inner node, key
// comparison, the leaf searches, prefetching, and the group walk behind get_many and buffered
// puts. Layouts are in internal.h.
#pragma once

#include <algorithm>
#include <bit>
#include <cstring>

#include "internal.h"

namespace simdex::kv::detail {

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
  if (m < 8) {
    // Short suffixes (8-byte keys below the root): a byte loop that usually ends at the first
    // byte costs less than the call to memcmp, a twentieth of a small transaction's time.
    for (std::size_t i = 0; i < m; ++i)
      if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  } else if (const int c = std::memcmp(a, b, m)) {
    return c;
  }
  return an < bn ? -1 : (an > bn ? 1 : 0);
}

// Requests every line of a node at once: a binary search then waits for about one round of
// misses instead of one per probe (prefetching only its first probes' entries measured 15 %
// slower for lower_bound).
inline void prefetch_node(const void* node, std::uint32_t units) {
  const char* p = static_cast<const char*>(node);
  for (std::uint32_t i = 0; i < units; ++i) __builtin_prefetch(p + i * kUnit);
}

// Requests the first four lines of a node: an inner node's header and dividers, a leaf's
// header, hashes and offsets (all a point lookup reads before its entry).
inline void prefetch_head(const u8* node) { prefetch_node(node, 4); }

// First entry whose suffix is >= s.
inline std::size_t leaf_lower(leaf_view L, const u8* s, std::size_t sn, bool& found) {
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
inline int leaf_find(leaf_view L, const u8* s, std::size_t sn, u8 h) {
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
inline constexpr std::size_t kGroup = 16;
template <class KeyAt, class AtLeaf>
void walk_group(const db_impl& db, std::uint32_t root, std::size_t m, bool for_write, KeyAt key_at,
                AtLeaf at_leaf) {
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

inline std::uint64_t inner_total(inner_view v) {
  std::uint64_t s = 0;
  for (unsigned i = 0; i < v.h->n; ++i) s += v.count(i);
  return s;
}

}  // namespace simdex::kv::detail
