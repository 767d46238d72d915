// Leaf-page edits: allocating and filling pages, the block heads, a key in or out of a page,
// fences and the leaf chain.
// Part of impl (generic.h); included only through it.
#pragma once

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

// Unused key lanes [from, 16) of a block hold kMax.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::fill_max(S* kb, unsigned from) noexcept {
  for (unsigned i = from; i < kBlockKeys; ++i) kb[i] = kMax;
}

// One block's key lines (and value lines).
template <class Policy, std::size_t VS>
void impl<Policy, VS>::prefetch_block(std::byte* p, unsigned b) noexcept {
  prefetch_lines(reinterpret_cast<const std::byte*>(keys(p, b)), 0, LL::kKeyBlock / kLine);
  if constexpr (VS > 0) prefetch_lines(LL::vals(p, b), 0, (LL::kValBlock + kLine - 1) / kLine);
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
  std::memset(LL::meta(p), 0, sizeof(H));
  ++t.leaves;
  return p;
}

template <class Policy, std::size_t VS>
void impl<Policy, VS>::init_empty_leaf(std::byte* p) noexcept {
  std::memset(LL::meta(p), 0, LL::kKeysOff);
  for (unsigned b = 0; b < B; ++b) fill_max(keys(p, b), 0);
}

// Gathers the keys (and values) of page p into ks / vs; returns the count.
template <class Policy, std::size_t VS>
unsigned impl<Policy, VS>::gather(std::byte* p, S* ks, std::byte* vs) noexcept {
  unsigned n = 0;
  for (unsigned b = 0; b < hdr(p)->nb; ++b) {
    unsigned c = count(p, b);
    std::memcpy(ks + n, keys(p, b), c * sizeof(S));
    if constexpr (VS > 0) std::memcpy(vs + n * VS, LL::vals(p, b), c * VS);
    n += c;
  }
  return n;
}

// Lays n sorted keys out over min(n, B) blocks, evenly, so later inserts find room nearby.
// Header links and fences are left alone.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::pack(std::byte* p, const S* ks, const std::byte* vs, unsigned n) noexcept {
  H* h = hdr(p);
  unsigned nb = n < B ? n : B;
  h->n = static_cast<std::uint16_t>(n);
  h->nb = static_cast<std::uint8_t>(nb);
  if (n > 0) choose_heads(h, ks[0], ks[n - 1]);
  unsigned at = 0;
  for (unsigned b = 0; b < B; ++b) {
    unsigned c = b < nb ? n / nb + (b < n % nb ? 1u : 0u) : 0u;
    S* kb = keys(p, b);
    std::memcpy(kb, ks + at, c * sizeof(S));
    fill_max(kb, c);
    if constexpr (VS > 0) std::memcpy(LL::vals(p, b), vs + at * VS, c * VS);
    if (c > 0) LL::set_count(p, b, c);
    if (c > 0 && b > 0) LL::heads(p)[b - 1] = LL::head_of(h, ks[at]);
    at += c;
  }
}

// Fully packed blocks (for bulk build, into a page whose lanes all hold kMax): 16 keys each.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::pack_dense(std::byte* p, const S* ks, const std::byte* vs,
                                  unsigned n) noexcept {
  H* h = hdr(p);
  unsigned nb = (n + 15) / 16;
  h->n = static_cast<std::uint16_t>(n);
  h->nb = static_cast<std::uint8_t>(nb);
  choose_heads(h, ks[0], ks[n - 1]);
  for (unsigned b = 0; b < nb; ++b) {
    unsigned c = b + 1 < nb ? 16 : n - 16 * b;
    std::memcpy(keys(p, b), ks + 16 * b, c * sizeof(S));
    if constexpr (VS > 0) std::memcpy(LL::vals(p, b), vs + 16 * b * VS, c * VS);
    LL::set_count(p, b, c);
    if (b > 0) LL::heads(p)[b - 1] = LL::head_of(h, ks[16 * b]);
  }
}

// Picks base and shift so that the keys from lo to hi (the page's first and last) spread
// over the 65536 head values, with an eighth of that span to spare on either side for keys
// that arrive later. Any choice is correct (heads only need to be monotone); this one makes
// equal heads, which cost a look at a block's first key, rare.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::choose_heads(H* h, S lo, S hi) noexcept {
  using U = typename LL::U;
  U span = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
  U margin = span / 8;
  U below = static_cast<U>(static_cast<U>(lo) - static_cast<U>(std::numeric_limits<S>::min()));
  U above = static_cast<U>(static_cast<U>(kMax) - static_cast<U>(hi));
  S base = static_cast<S>(static_cast<U>(lo) - (margin < below ? margin : below));
  U top =
      static_cast<U>(static_cast<U>(hi) - static_cast<U>(base) + (margin < above ? margin : above));
  h->base = base;
  // The smallest shift that brings top under 2^16 (a builtin: no std:: code in level files).
  unsigned width = top == 0 ? 0u : 64u - static_cast<unsigned>(__builtin_clzll(top));
  h->shift = static_cast<std::uint8_t>(width <= 16 ? 0 : width - 16);
}

// Block b's first key changed: its head follows. True when it now equals a neighbour's.
template <class Policy, std::size_t VS>
bool impl<Policy, VS>::set_head(std::byte* p, unsigned b) noexcept {
  if (b == 0) return false;
  const H* h = hdr(p);
  std::uint16_t* hd = LL::heads(p);
  std::uint16_t v = LL::head_of(h, keys(p, b)[0]);
  hd[b - 1] = v;
  return (b >= 2 && hd[b - 2] == v) || (b + 1u < h->nb && hd[b] == v);
}

// After heads collided: choose base and shift again from the page's present key range and,
// when that changes them, rewrite every head.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::refit_heads(std::byte* p) noexcept {
  H* h = hdr(p);
  S base = h->base;
  std::uint8_t shift = h->shift;
  unsigned last = h->nb - 1u;
  choose_heads(h, keys(p, 0)[0], keys(p, last)[count(p, last) - 1]);
  if (h->base == base && h->shift == shift) return;
  for (unsigned b = 1; b < h->nb; ++b) LL::heads(p)[b - 1] = LL::head_of(h, keys(p, b)[0]);
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
  bool clash = false;
  // Puts the carried key (ck, cv) at slot at of block j, which holds c < 16 keys.
  auto place = [&](unsigned j, unsigned at, unsigned c) {
    S* kj = keys(p, j);
    std::memmove(kj + at + 1, kj + at, (c - at) * sizeof(S));
    kj[at] = ck;
    if constexpr (VS > 0) {
      std::memmove(val(p, j, at + 1), val(p, j, at), (c - at) * VS);
      std::memcpy(val(p, j, at), cv, VS);
    }
    LL::set_count(p, j, c + 1);
    if (at == 0) clash |= set_head(p, j);
  };
  // Full block j takes the carried key at slot `at` and hands on the key at slot `out` (its
  // first, carrying left, or its last, carrying right); from..to is the range that moves.
  auto pass = [&](unsigned j, unsigned out, unsigned at) {
    S* kj = keys(p, j);
    S ek = kj[out];
    if constexpr (VS > 0) std::memcpy(ev, val(p, j, out), VS);
    if (out == 0) {
      std::memmove(kj, kj + 1, (at - 1) * sizeof(S));
      if constexpr (VS > 0) std::memmove(val(p, j, 0), val(p, j, 1), (at - 1) * VS);
      at -= 1;
    } else {
      std::memmove(kj + at + 1, kj + at, (15 - at) * sizeof(S));
      if constexpr (VS > 0) std::memmove(val(p, j, at + 1), val(p, j, at), (15 - at) * VS);
    }
    kj[at] = ck;
    if constexpr (VS > 0) {
      std::memcpy(val(p, j, at), cv, VS);
      std::memcpy(cv, ev, VS);
    }
    if (at == 0 || out == 0) clash |= set_head(p, j);
    ck = ek;
  };
  unsigned cb = count(p, b);
  if (nb == 0) {  // the first key of an empty page
    h->nb = 1;
    choose_heads(h, k, k);
  }
  if (cb < 16) {
    place(b, s, cb);
  } else {
    unsigned r = b + 1;
    while (r < nb && count(p, r) == 16) ++r;
    bool right_ok = r < nb || nb < B;
    int l = static_cast<int>(b) - 1;
    while (l >= 0 && count(p, static_cast<unsigned>(l)) == 16) --l;
    bool go_left = l >= 0 && (!right_ok || b - static_cast<unsigned>(l) < r - b);
    // The carry touches every block between b and the gap: fetch them all at once.
    unsigned from = go_left ? static_cast<unsigned>(l) : b + 1,
             to = go_left ? b : (r < B ? r + 1 : B);
    for (unsigned j = from; j < to; ++j) prefetch_block(p, j);
    // Carry the smallest key leftwards or the largest rightwards, block by block, to the gap.
    // A full block passes the carry through untouched when it falls outside it (slot 0 going
    // left, slot 16 going right).
    unsigned out = go_left ? 0 : 15, through = go_left ? 0 : 16;
    for (unsigned j = b, at = s;; j = go_left ? j - 1 : j + 1) {
      unsigned c = count(p, j);  // 0 for the next unused block, which a rightward carry opens
      if (j == h->nb) ++h->nb;
      if (c < 16) {
        place(j, at, c);
        break;
      }
      if (at != through) pass(j, out, at);
      at = go_left ? count(p, j - 1) : 0;
    }
  }
  ++h->n;
  if (clash) refit_heads(p);
}

template <class Policy, std::size_t VS>
bool impl<Policy, VS>::far_gap(std::byte* p, unsigned b) noexcept {
  unsigned nb = hdr(p)->nb;
  for (unsigned d = 1; d <= kNearBlocks; ++d) {
    if (b + d < B && (b + d >= nb || count(p, b + d) < 16)) return false;
    if (b >= d && count(p, b - d) < 16) return false;
  }
  return true;
}

// Spreads the page's keys evenly over its blocks again, so each has room.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::respread(std::byte* p) noexcept {
  alignas(64) S ks[kCap];
  alignas(64) std::byte vs[VS > 0 ? kCap * VS : 1];
  unsigned n = gather(p, ks, vs);
  pack(p, ks, vs, n);
}

// Removes the key at (b, s); an emptied block is closed by sliding the later ones down.
template <class Policy, std::size_t VS>
void impl<Policy, VS>::leaf_erase_at(std::byte* p, unsigned b, unsigned s) noexcept {
  H* h = hdr(p);
  S* kb = keys(p, b);
  unsigned c = count(p, b);
  std::memmove(kb + s, kb + s + 1, (c - s - 1) * sizeof(S));
  kb[c - 1] = kMax;
  if constexpr (VS > 0) std::memmove(val(p, b, s), val(p, b, s + 1), (c - s - 1) * VS);
  --h->n;
  if (c > 1) {
    LL::set_count(p, b, c - 1);
    if (s == 0) set_head(p, b);
    return;
  }
  unsigned nb = h->nb;
  for (unsigned j = b; j + 1 < nb; ++j) {
    std::memcpy(keys(p, j), keys(p, j + 1), 16 * sizeof(S));
    if constexpr (VS > 0) std::memcpy(LL::vals(p, j), LL::vals(p, j + 1), 16 * VS);
    LL::set_count(p, j, count(p, j + 1));
  }
  // Block j + 1 becomes block j: heads move down one (block 0 keeps none).
  std::uint16_t* hd = LL::heads(p);
  for (unsigned j = b > 0 ? b : 1; j + 1 < nb; ++j) hd[j - 1] = hd[j];
  fill_max(keys(p, nb - 1), 0);
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
