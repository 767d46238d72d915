// Leaf-page edits: allocating and filling pages, a key in or out of a page,
// fences and the leaf chain.
// Part of impl (generic.h); included only through it.
#pragma once

#include <type_traits>

#include "generic.h"

namespace simdex::btree_detail {

template <class Policy, std::size_t VS>
void impl<Policy, VS>::copy_val(std::byte* dst, const void* src) noexcept {
  if constexpr (VS > 0) {
    if (src != nullptr)
      std::memcpy(dst, src, VS);
    else
      std::memset(dst, 0, VS);
  }
}

template <class Policy, std::size_t VS>
std::byte* impl<Policy, VS>::new_leaf(T& t) {
  std::byte* p = t.mem.alloc_page();
  init_empty_leaf(p);
  ++t.leaves;
  return p;
}

// For a page that pack() fills completely right away: only the header needs clearing.
template <class Policy, std::size_t VS>
std::byte* impl<Policy, VS>::new_leaf_for_pack(T& t) {
  std::byte* p = t.mem.alloc_page();
  std::memset(p, 0, kLine);
  ++t.leaves;
  return p;
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::init_empty_leaf(std::byte* p) noexcept {
  std::memset(p, 0, LL::kKeysOff);
  S* ix = idx(p);
  for (unsigned b = 0; b < B; ++b) ix[b] = kMax;
  S* ks = keys(p, 0);
  for (unsigned i = 0; i < kCap; ++i) ks[i] = kMax;
}

// Gathers the keys (and values) of page p into ks / vs; returns the count.
template <class Policy, std::size_t VS>
unsigned impl<Policy, VS>::gather(std::byte* p, S* ks, std::byte* vs) noexcept {
  // Whole blocks are copied (fixed-size copies are a few vector moves, where a copy of c keys
  // is a library call); the next block overwrites the lanes past the count.
  unsigned n = 0;
  for (unsigned b = 0; b < hdr(p)->nb; ++b) {
    std::memcpy(ks + n, keys(p, b), kBlockKeys * sizeof(S));
    if constexpr (VS > 0) std::memcpy(vs + n * VS, LL::vals(p, b), kBlockKeys * VS);
    n += cnt(p)[b];
  }
  return n;
}

// Lays n sorted keys out over min(n, B) blocks, evenly, so later inserts find room nearby.
// Header links and fences are left alone.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::pack(std::byte* p, const S* ks, const std::byte* vs, unsigned n) noexcept {
  unsigned nb = n < B ? n : B;
  if (n == kCap) nb = B;
  S* ix = idx(p);
  std::uint8_t* ct = cnt(p);
  unsigned at = 0;
  for (unsigned b = 0; b < B; ++b) {
    unsigned c = b < nb ? n / nb + (b < n % nb ? 1u : 0u) : 0u;
    ct[b] = static_cast<std::uint8_t>(c);
    S* kb = keys(p, b);
    // Whole blocks again (ks and vs have kPad lanes to spare); lanes past c become kMax.
    Policy::fill16(kb, ks + at, c, kMax);
    if constexpr (VS > 0) std::memcpy(LL::vals(p, b), vs + at * VS, kBlockKeys * VS);
    ix[b] = c ? ks[at] : kMax;
    at += c;
  }
  hdr(p)->n = static_cast<std::uint16_t>(n);
  hdr(p)->nb = static_cast<std::uint8_t>(nb);
}

// pack(merge(old, fk)) without the merged run: each block takes its share of old's keys in one
// whole-block copy, then each new key opens its final lane in its block. The merged run's
// run-by-run copy and pack's second pass over it cost more than these opens (about one key in
// ten is new when a batch merges into a page).
template <class Policy, std::size_t VS>
void impl<Policy, VS>::merge_pack(std::byte* p, const S* old, unsigned a, const S* fk,
                                  const std::uint32_t* fr, unsigned f) noexcept {
  unsigned z = a + f;
  unsigned nb = z < B ? z : B;
  // pack's layout: the first r blocks hold q + 1 keys, the rest of the nb blocks q.
  unsigned q = z / nb, r = z % nb, big = r * (q + 1);
  // A key's block divides by q + 1 or q (at most 17), as a multiply: a division a key was a
  // tenth of the merge's time. (d * ceil(2^20 / w)) >> 20 is d / w for every d < 2048.
  static_assert(kCap < 2048 && kCap / B <= 16);
  std::uint32_t mf = ((1u << 20) + q) / (q + 1), mb = ((1u << 20) + q - 1) / q;
  std::uint8_t fb[kCap], fl[kCap];  // each new key's block and lane
  // One past the last new key of each block that has one (plain stores: a count per block
  // was a read-modify-write that waited on the last key's, mostly the same block's).
  std::uint16_t upto[B] = {};
  for (unsigned i = 0; i < f; ++i) {
    unsigned at = fr[i] + i;  // its place in the merged run
    bool front = at < big;
    unsigned d = front ? at : at - big, w = front ? q + 1 : q;
    unsigned j = (d * (front ? mf : mb)) >> 20;
    unsigned b = (front ? 0 : r) + j;
    fb[i] = static_cast<std::uint8_t>(b);
    fl[i] = static_cast<std::uint8_t>(d - j * w);
    upto[b] = static_cast<std::uint16_t>(i + 1);
  }
  S* ix = idx(p);
  std::uint8_t* ct = cnt(p);
  unsigned o = 0, done = 0;  // old and new keys laid out so far
  for (unsigned b = 0; b < B; ++b) {
    unsigned c = b < nb ? q + (b < r ? 1u : 0u) : 0u;
    unsigned u = upto[b] > done ? upto[b] : done;
    unsigned keep = c - (u - done);
    done = u;
    Policy::fill16(keys(p, b), old + o, keep, kMax);  // old has kPad lanes past a
    ix[b] = keep ? old[o] : kMax;
    ct[b] = static_cast<std::uint8_t>(c);
    o += keep;
  }
  for (unsigned i = 0; i < f; ++i) {  // ascending, so each opens its final lane
    Policy::open16(keys(p, fb[i]), fl[i], fk[i]);
    if (fl[i] == 0) ix[fb[i]] = fk[i];
  }
  hdr(p)->n = static_cast<std::uint16_t>(z);
  hdr(p)->nb = static_cast<std::uint8_t>(nb);
}

// A block's keys shift with the policy's open16 / close16 (on registers at the SIMD levels:
// written as a lane loop, GCC made a computed jump of it inside the batch loops, a mispredict
// an edit). 4- and 8-byte value slots shift like keys of that width (the policy's block_of);
// 16-byte slots move the tail with memmove.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::vals_open(std::byte* vb, unsigned s, unsigned c,
                                 const std::byte* v) noexcept {
  using E = std::conditional_t<VS == 4, std::int32_t, std::int64_t>;
  if constexpr (VS == 4 || VS == 8) {
    E x;
    std::memcpy(&x, v, VS);
    Policy::template block_of<E>::open16(reinterpret_cast<E*>(vb), s, x);
  } else {
    std::memmove(vb + (s + 1) * VS, vb + s * VS, (c - s) * VS);
    std::memcpy(vb + s * VS, v, VS);
  }
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::vals_close(std::byte* vb, unsigned s, unsigned c) noexcept {
  using E = std::conditional_t<VS == 4, std::int32_t, std::int64_t>;
  if constexpr (VS == 4 || VS == 8)
    Policy::template block_of<E>::close16(reinterpret_cast<E*>(vb), s, E{0});
  else
    std::memmove(vb + s * VS, vb + (s + 1) * VS, (c - s - 1) * VS);
}

// Inserts k at (b, s) of a page that is not full. A full block passes its overflow key
// to the nearest block with room (opening a new block at the end if that is nearer).
template <class Policy, std::size_t VS>
void impl<Policy, VS>::leaf_insert_at(std::byte* p, unsigned b, unsigned s, S k,
                                      const void* v) noexcept {
  H* h = hdr(p);
  unsigned nb = h->nb;
  alignas(16) std::byte cv[VS > 0 ? VS : 1];
  alignas(16) std::byte ev[VS > 0 ? VS : 1];
  copy_val(cv, v);
  S ck = k;
  std::uint8_t* ct = cnt(p);
  S* ix = idx(p);
  // Puts the carried key (ck, cv) at slot at of block j, which holds c < 16 keys.
  auto place = [&](unsigned j, unsigned at, unsigned c) {
    S* kj = keys(p, j);
    Policy::open16(kj, at, ck);
    if constexpr (VS > 0) vals_open(LL::vals(p, j), at, c, cv);
    ct[j] = static_cast<std::uint8_t>(c + 1);
    if (at == 0) ix[j] = ck;  // as in leaf_erase_at: only a new first key changes the index
  };
  // Full block j takes the carried key at slot `at` and hands on the key at slot `out` (its
  // first, carrying left, or its last, carrying right); from..to is the range that moves.
  auto pass = [&](unsigned j, unsigned out, unsigned at) {
    S* kj = keys(p, j);
    S ek = kj[out];
    if constexpr (VS > 0) std::memcpy(ev, val(p, j, out), VS);
    if (out == 0) {  // carrying left: the first key leaves and the keys below `at` move down
      Policy::close16(kj, 0, kMax);
      if constexpr (VS > 0) vals_close(LL::vals(p, j), 0, 16);
      at -= 1;
    }
    // Carrying right, the open drops the last key.
    Policy::open16(kj, at, ck);
    if constexpr (VS > 0) {
      vals_open(LL::vals(p, j), at, 15, cv);
      std::memcpy(cv, ev, VS);
    }
    ix[j] = kj[0];
    ck = ek;
  };
  unsigned cb = ct[b];
  if (nb == 0) h->nb = 1;  // the first key of an empty page
  if (cb < 16) {
    place(b, s, cb);
  } else {
    unsigned r = b + 1;
    while (r < nb && ct[r] == 16) ++r;
    bool right_ok = r < nb || nb < B;
    int l = static_cast<int>(b) - 1;
    while (l >= 0 && ct[l] == 16) --l;
    bool go_left = l >= 0 && (!right_ok || b - static_cast<unsigned>(l) < r - b);
    // The carry touches every block between b and the gap: fetch them all at once.
    unsigned from = go_left ? static_cast<unsigned>(l) : b + 1,
             to = go_left ? b : (r < B ? r + 1 : B);
    prefetch_lines(reinterpret_cast<const std::byte*>(keys(p, from)), 0,
                   static_cast<unsigned>((to - from) * 16 * sizeof(S) / kLine));
    if constexpr (VS > 0)
      prefetch_lines(LL::vals(p, from), 0,
                     static_cast<unsigned>(((to - from) * 16 * VS + kLine - 1) / kLine));
    // Carry the smallest key leftwards or the largest rightwards, block by block, to the gap.
    // A full block passes the carry through untouched when it falls outside it (slot 0 going
    // left, slot 16 going right).
    unsigned out = go_left ? 0 : 15, through = go_left ? 0 : 16;
    for (unsigned j = b, at = s;; j = go_left ? j - 1 : j + 1) {
      unsigned c = ct[j];  // 0 for the next unused block, which a rightward carry opens
      if (j == h->nb) ++h->nb;
      if (c < 16) {
        place(j, at, c);
        break;
      }
      if (at != through) pass(j, out, at);
      at = go_left ? ct[j - 1] : 0;
    }
  }
  ++h->n;
}

template <class Policy, std::size_t VS>
bool impl<Policy, VS>::far_gap(std::byte* p, unsigned b) noexcept {
  unsigned nb = hdr(p)->nb;
  for (unsigned d = 1; d <= kNearBlocks; ++d) {
    if (b + d < B && (b + d >= nb || cnt(p)[b + d] < 16)) return false;
    if (b >= d && cnt(p)[b - d] < 16) return false;
  }
  return true;
}

// Spreads the page's keys evenly over its blocks again, so each has room.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::respread(std::byte* p) noexcept {
  alignas(64) S ks[kCap + kPad];
  alignas(64) std::byte vs[VS > 0 ? (kCap + kPad) * VS : 1];
  unsigned n = gather(p, ks, vs);
  pack(p, ks, vs, n);
}

// Removes the key at (b, s); an emptied block is closed by sliding the later ones down.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::leaf_erase_at(std::byte* p, unsigned b, unsigned s) noexcept {
  H* h = hdr(p);
  std::uint8_t* ct = cnt(p);
  S* ix = idx(p);
  S* kb = keys(p, b);
  unsigned c = ct[b];
  Policy::close16(kb, s, kMax);
  if constexpr (VS > 0) vals_close(LL::vals(p, b), s, c);
  ct[b] = static_cast<std::uint8_t>(c - 1);
  --h->n;
  if (c - 1 > 0) {
    // Only a block's first key is in the index. A store there that did not change it still
    // stalled the next search of the index (a vector load over a pending narrower store
    // waits for it to reach the cache), which the batch loops do right away.
    if (s == 0) ix[b] = kb[0];
    return;
  }
  unsigned nb = h->nb;
  unsigned tail = nb - b - 1;
  std::memmove(keys(p, b), keys(p, b + 1), tail * 16 * sizeof(S));
  if constexpr (VS > 0) std::memmove(LL::vals(p, b), LL::vals(p, b + 1), tail * 16 * VS);
  std::memmove(ct + b, ct + b + 1, tail);
  std::memmove(ix + b, ix + b + 1, tail * sizeof(S));
  S* lastk = keys(p, nb - 1);
  for (unsigned i = 0; i < 16; ++i) lastk[i] = kMax;
  ct[nb - 1] = 0;
  ix[nb - 1] = kMax;
  h->nb = static_cast<std::uint8_t>(nb - 1);
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::set_hi(std::byte* p, const H* from) noexcept {
  hdr(p)->hi = from->hi;
  hdr(p)->flags =
      static_cast<std::uint8_t>((hdr(p)->flags & ~H::kHasHi) | (from->flags & H::kHasHi));
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::set_lo(std::byte* p, const H* from) noexcept {
  hdr(p)->lo = from->lo;
  hdr(p)->flags =
      static_cast<std::uint8_t>((hdr(p)->flags & ~H::kHasLo) | (from->flags & H::kHasLo));
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::set_sep(std::byte* left, std::byte* right, S sep) noexcept {
  hdr(left)->hi = sep;
  hdr(left)->flags |= H::kHasHi;
  hdr(right)->lo = sep;
  hdr(right)->flags |= H::kHasLo;
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::link_after(T& t, std::byte* p, std::byte* r) noexcept {
  hdr(r)->prev = p;
  hdr(r)->next = hdr(p)->next;
  if (hdr(p)->next)
    hdr(hdr(p)->next)->prev = r;
  else
    t.last = r;
  hdr(p)->next = r;
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::unlink(T& t, std::byte* p) noexcept {
  H* h = hdr(p);
  if (h->prev)
    hdr(h->prev)->next = h->next;
  else
    t.first = h->next;
  if (h->next)
    hdr(h->next)->prev = h->prev;
  else
    t.last = h->prev;
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::free_leaf(T& t, std::byte* p) noexcept {
  t.mem.free_page(p);
  --t.leaves;
}

}  // namespace simdex::btree_detail
