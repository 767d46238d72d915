// Inner-node edits: allocating nodes, adding and removing children, splits and merges, and
// appending children level by level for a bulk build.
// Part of impl (generic.h); included only through it.
#pragma once

#include "generic.h"

namespace simdex::btree_detail {

template <class Policy, std::size_t VS>
std::byte* impl<Policy, VS>::new_inner(T& t) {
  std::byte* in = t.mem.alloc_inner();
  std::memset(in, 0, kInnerBytes);
  S* ks = IL::keys(in);
  for (unsigned i = 0; i + 1 < kF; ++i) ks[i] = kMax;
  IL::summarize(in);
  ++t.inners;
  return in;
}

template <class Policy, std::size_t VS>
std::uint64_t impl<Policy, VS>::inner_total(const std::byte* in) noexcept {
  std::uint64_t s = 0;
  for (unsigned i = 0; i < IL::n(in); ++i) s += IL::count(in)[i];
  return s;
}

// The child at P.idx[d] of P.node[d] gave `moved` keys to a new right sibling c, whose
// first key is sep: link c in after it, splitting nodes upwards as needed.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::inner_insert(T& t, path& P, int d, S sep, std::uintptr_t c,
                                    std::uint64_t moved) {
  if (d < 0) {
    std::byte* r = new_inner(t);
    IL::n(r) = 2;
    IL::keys(r)[0] = sep;
    IL::summarize(r);
    IL::child(r)[0] = t.root;
    IL::child(r)[1] = c;
    IL::count(r)[0] = t.size - moved;
    IL::count(r)[1] = moved;
    t.root = reinterpret_cast<std::uintptr_t>(r);
    ++t.height;
    return;
  }
  std::byte* in = P.node[d];
  unsigned i = P.idx[d];
  unsigned n = IL::n(in);
  IL::count(in)[i] -= moved;
  if (n < kF) {
    insert_slot(in, i + 1, sep, c, moved);
    return;
  }
  // Split: appends (new child at the end) leave the left node full, as sequential keys want.
  unsigned hsplit = (i + 1 == n) ? n - 1 : n / 2;
  std::byte* r = new_inner(t);
  S up = IL::keys(in)[hsplit - 1];
  unsigned rn = n - hsplit;
  std::memcpy(IL::keys(r), IL::keys(in) + hsplit, (rn - 1) * sizeof(S));
  std::memcpy(IL::child(r), IL::child(in) + hsplit, rn * sizeof(std::uintptr_t));
  std::memcpy(IL::count(r), IL::count(in) + hsplit, rn * sizeof(std::uint64_t));
  for (unsigned j = hsplit - 1; j + 1 < kF; ++j) IL::keys(in)[j] = kMax;
  IL::n(in) = hsplit;
  IL::n(r) = rn;
  IL::summarize(in);
  IL::summarize(r);
  if (i < hsplit)
    insert_slot(in, i + 1, sep, c, moved);
  else
    insert_slot(r, i + 1 - hsplit, sep, c, moved);
  inner_insert(t, P, d - 1, up, reinterpret_cast<std::uintptr_t>(r), inner_total(r));
}

// Puts child c (first key sep) at position j >= 1 of a node with room.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::insert_slot(std::byte* in, unsigned j, S sep, std::uintptr_t c,
                                   std::uint64_t count) noexcept {
  unsigned n = IL::n(in);
  std::memmove(IL::keys(in) + j, IL::keys(in) + j - 1, (n - j) * sizeof(S));
  std::memmove(IL::child(in) + j + 1, IL::child(in) + j, (n - j) * sizeof(std::uintptr_t));
  std::memmove(IL::count(in) + j + 1, IL::count(in) + j, (n - j) * sizeof(std::uint64_t));
  IL::keys(in)[j - 1] = sep;
  IL::child(in)[j] = c;
  IL::count(in)[j] = count;
  IL::n(in) = n + 1;
  IL::summarize(in);
}

// Removes child j of P.node[d] (already emptied or merged away), then mends underflow.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::remove_child(T& t, path& P, int d, unsigned j) {
  std::byte* in = P.node[d];
  unsigned n = IL::n(in);
  unsigned kj = j > 0 ? j - 1 : 0;  // separator to drop
  std::memmove(IL::keys(in) + kj, IL::keys(in) + kj + 1, (n - 2 - kj) * sizeof(S));
  IL::keys(in)[n - 2] = kMax;
  std::memmove(IL::child(in) + j, IL::child(in) + j + 1, (n - 1 - j) * sizeof(std::uintptr_t));
  std::memmove(IL::count(in) + j, IL::count(in) + j + 1, (n - 1 - j) * sizeof(std::uint64_t));
  IL::n(in) = --n;
  IL::summarize(in);
  if (d == 0) {
    while (t.height > 0 && IL::n(untag(t.root)) == 1) {  // a one-child root: drop a level
      std::byte* r = untag(t.root);
      t.root = IL::child(r)[0];
      --t.height;
      t.mem.free_inner(r);
      --t.inners;
    }
    return;
  }
  if (n >= kF / 4) return;
  std::byte* parent = P.node[d - 1];
  unsigned pi = P.idx[d - 1];
  unsigned pn = IL::n(parent);
  // Merge with a sibling when both fit in three quarters of a node.
  if (pi + 1 < pn && n + IL::n(untag(IL::child(parent)[pi + 1])) <= kF * 3 / 4)
    merge_children(t, P, d - 1, pi);
  else if (pi > 0 && n + IL::n(untag(IL::child(parent)[pi - 1])) <= kF * 3 / 4)
    merge_children(t, P, d - 1, pi - 1);
}

// Children j and j + 1 of P.node[d], both inner nodes, become one; the right one goes.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::merge_children(T& t, path& P, int d, unsigned j) {
  std::byte* parent = P.node[d];
  std::byte* r = untag(IL::child(parent)[j + 1]);
  merge_inner(untag(IL::child(parent)[j]), r, IL::keys(parent)[j]);
  IL::count(parent)[j] += IL::count(parent)[j + 1];
  t.mem.free_inner(r);
  --t.inners;
  remove_child(t, P, d, j + 1);
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::merge_inner(std::byte* l, std::byte* r, S sep) noexcept {
  unsigned ln = IL::n(l), rn = IL::n(r);
  IL::keys(l)[ln - 1] = sep;
  std::memcpy(IL::keys(l) + ln, IL::keys(r), (rn - 1) * sizeof(S));
  std::memcpy(IL::child(l) + ln, IL::child(r), rn * sizeof(std::uintptr_t));
  std::memcpy(IL::count(l) + ln, IL::count(r), rn * sizeof(std::uint64_t));
  IL::n(l) = ln + rn;
  IL::summarize(l);
}

// Appends child c (first key k, count) to the rightmost node of inner level d (0 = just
// above the leaves), opening a new node (and a new level) when it is full.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::push_child(T& t, path& P, unsigned& levels, unsigned d, S k,
                                  std::uintptr_t c, std::uint64_t count) {
  if (d == levels) {
    P.node[d] = new_inner(t);
    ++levels;
    if (d > 0) {
      // The new level's first node adopts the existing node below as its first child.
      std::byte* below = P.node[d - 1];
      IL::n(P.node[d]) = 1;
      IL::child(P.node[d])[0] = reinterpret_cast<std::uintptr_t>(below);
      IL::count(P.node[d])[0] = inner_total(below);
    }
  }
  std::byte* in = P.node[d];
  unsigned n = IL::n(in);
  if (n == kF) {
    std::byte* fresh = new_inner(t);
    IL::n(fresh) = 1;
    IL::child(fresh)[0] = c;
    IL::count(fresh)[0] = count;
    P.node[d] = fresh;
    if (d + 1 == levels) {
      // Give the level a parent holding the full node, then add the fresh one.
      std::byte* top = new_inner(t);
      IL::n(top) = 1;
      IL::child(top)[0] = reinterpret_cast<std::uintptr_t>(in);
      IL::count(top)[0] = inner_total(in);
      P.node[d + 1] = top;
      ++levels;
    }
    push_child(t, P, levels, d + 1, k, reinterpret_cast<std::uintptr_t>(fresh), count);
    return;
  }
  if (n > 0) IL::keys(in)[n - 1] = k;
  IL::summarize(in);
  IL::child(in)[n] = c;
  IL::count(in)[n] = count;
  IL::n(in) = n + 1;
  for (unsigned x = d + 1; x < levels; ++x) {
    std::byte* up = P.node[x];
    IL::count(up)[IL::n(up) - 1] += count;
  }
}

}  // namespace simdex::btree_detail
