// The tree algorithms, written once and instantiated per ISA level: Policy is a node-search
// kernel (scalar_policy / avx2_policy / avx512_policy), so every instantiation is a distinct type
// and the linker can never mix code built for different levels. Include only from the
// per-level files (scalar.cc, avx2.cc, avx512.cc). Uses no std templates for the same reason.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

#include "simdex/btree/detail.h"

namespace simdex::btree_detail {

template <class Policy, std::size_t VS>
struct impl {
  using S = typename Policy::key;
  using T = tree<S, VS>;
  using LL = leaf_layout<S, VS>;
  using IL = inner_layout<S>;
  using H = leaf_header<S>;
  static constexpr S kMax = std::numeric_limits<S>::max();
  static constexpr unsigned B = LL::kBlocks;
  static constexpr unsigned kCap = LL::kCap;
  static constexpr unsigned kF = kFanout;
  static constexpr unsigned kMaxDepth = 24;

  struct path {
    std::byte* node[kMaxDepth];
    unsigned idx[kMaxDepth];
  };

  // ---- small helpers ------------------------------------------------------------------
  static H* hdr(std::byte* p) noexcept { return LL::hdr(p); }
  static unsigned count(const std::byte* p, unsigned b) noexcept { return LL::count(p, b); }
  static S* keys(std::byte* p, unsigned b) noexcept { return LL::keys(p, b); }
  static std::byte* val(std::byte* p, unsigned b, unsigned s) noexcept {
    return LL::vals(p, b) + s * VS;
  }
  static void copy_val(std::byte* dst, const void* src) noexcept {
    if constexpr (VS > 0) {
      if (src != nullptr)
        std::memcpy(dst, src, VS);
      else
        std::memset(dst, 0, VS);
    }
  }
  // Prefetches are asm statements: GCC drops a __builtin_prefetch of the leaf's meta lines in
  // descend() (the loads right after the loop make it look redundant), and then the heads
  // line, read only once the header line is back, costs a second wave of misses.
  static void prefetch(const void* a) noexcept {
    asm volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(a)));
  }
  static void prefetch_lines(const std::byte* p, unsigned from, unsigned lines) noexcept {
    for (unsigned i = 0; i < lines; ++i) prefetch(p + (from + i) * kLine);
  }
  // One block's key lines (and value lines).
  static void prefetch_block(std::byte* p, unsigned b) noexcept {
    prefetch_lines(reinterpret_cast<const std::byte*>(keys(p, b)), 0, LL::kKeyBlock / kLine);
    if constexpr (VS > 0) prefetch_lines(LL::vals(p, b), 0, (LL::kValBlock + kLine - 1) / kLine);
  }
  // Unused key lanes [from, 16) of a block hold kMax.
  static void fill_max(S* kb, unsigned from) noexcept {
    for (unsigned i = from; i < kBlockKeys; ++i) kb[i] = kMax;
  }
  // Early prefetch: as soon as a child pointer is read, fetch the lines its search needs.
  static void prefetch_child(std::uintptr_t c) noexcept {
    if (c & kLeafTag)
      prefetch_lines(LL::meta(untag(c)), 0, LL::kMetaLines);
    else if constexpr (IL::kSummary)
      prefetch(untag(c) + IL::kSumOff);
    else
      prefetch_lines(untag(c), 0, IL::kKeysBytes / kLine);
  }
  static unsigned inner_child(const std::byte* in, S k) noexcept {
    unsigned m = IL::n(in) - 1;
    if constexpr (IL::kSummary) {
      // Separators 0..8j-1 are <= k and 8j+7.. are > k (unused slots hold kMax, hence the
      // clamp for k == kMax).
      unsigned j = Policy::count_le(IL::summary(in), IL::kSumKeys, k);
      prefetch(IL::child(in) + 8 * j);  // the answer's pointer line, with its key line
      unsigned c = 8 * j + Policy::count_le(IL::keys(in) + 8 * j, 7, k);
      return c < m ? c : m;
    } else {
      return Policy::count_le(IL::keys(in), m, k);
    }
  }
  // Block of page p whose range holds k (the last block whose first key <= k, or 0).
  static unsigned leaf_block(const std::byte* p, S k) noexcept {
    const H* h = LL::hdr(p);
    unsigned lt, le;
    Policy::count_heads(LL::heads(p), h->nb - 1u, LL::head_of(h, k), lt, le);
    // Blocks up to lt start below k, those after le above it; the ones between share k's head.
    while (lt < le && LL::keys(p, lt + 1)[0] <= k) ++lt;
    return lt;
  }
  static std::byte* new_leaf(T& t) {
    std::byte* p = t.mem.alloc_page();
    init_empty_leaf(p);
    ++t.leaves;
    return p;
  }
  // For a page that pack() fills completely right away: only the header needs clearing.
  static std::byte* new_leaf_for_pack(T& t) {
    std::byte* p = t.mem.alloc_page();
    std::memset(LL::meta(p), 0, sizeof(H));
    ++t.leaves;
    return p;
  }
  static void init_empty_leaf(std::byte* p) noexcept {
    std::memset(LL::meta(p), 0, LL::kKeysOff);
    for (unsigned b = 0; b < B; ++b) fill_max(keys(p, b), 0);
  }
  static std::byte* new_inner(T& t) {
    std::byte* in = t.mem.alloc_inner();
    std::memset(in, 0, kInnerBytes);
    S* ks = IL::keys(in);
    for (unsigned i = 0; i + 1 < kF; ++i) ks[i] = kMax;
    IL::summarize(in);
    ++t.inners;
    return in;
  }
  static std::uint64_t inner_total(const std::byte* in) noexcept {
    std::uint64_t s = 0;
    for (unsigned i = 0; i < IL::n(in); ++i) s += IL::count(in)[i];
    return s;
  }

  // ---- descent ------------------------------------------------------------------------
  static std::byte* descend(const T& t, S k) noexcept {
    std::uintptr_t c = t.root;
    for (unsigned h = t.height; h > 0; --h) {
      const std::byte* in = untag(c);
      c = IL::child(in)[inner_child(in, k)];
      prefetch_child(c);
    }
    return untag(c);
  }
  static std::byte* descend_path(const T& t, S k, path& P) noexcept {
    std::uintptr_t c = t.root;
    for (unsigned d = 0; d < t.height; ++d) {
      std::byte* in = untag(c);
      unsigned i = inner_child(in, k);
      P.node[d] = in;
      P.idx[d] = i;
      c = IL::child(in)[i];
      prefetch_child(c);
    }
    return untag(c);
  }
  static void add_counts(const T& t, const path& P, std::int64_t delta) noexcept {
    for (unsigned d = 0; d < t.height; ++d)
      IL::count(P.node[d])[P.idx[d]] += static_cast<std::uint64_t>(delta);
  }
  // First position >= k in page p, or {p, nb, 0} meaning "past this page".
  static pos leaf_lb(std::byte* p, S k) noexcept {
    unsigned b = leaf_block(p, k);
    unsigned s = Policy::count_lt16(keys(p, b), k);
    if (s < count(p, b)) return {p, b, s};
    return {p, b + 1u, 0};
  }
  static pos normalize(pos r) noexcept {
    if (r.page != nullptr && r.block >= hdr(r.page)->nb) return {hdr(r.page)->next, 0, 0};
    return r;
  }

  // ---- queries ------------------------------------------------------------------------
  static pos find(const T& t, S k) noexcept {
    if (t.root == 0) return {};
    std::byte* p = descend(t, k);
    unsigned b = leaf_block(p, k);
    unsigned s = Policy::count_lt16(keys(p, b), k);
    if (s < count(p, b) && keys(p, b)[s] == k) return {p, b, s};
    return {};
  }
  static pos lower_bound(const T& t, S k) noexcept {
    if (t.root == 0) return {};
    return normalize(leaf_lb(descend(t, k), k));
  }
  static pos upper_bound(const T& t, S k) noexcept {
    if (t.root == 0) return {};
    pos r = normalize(leaf_lb(descend(t, k), k));
    if (r.page != nullptr && keys(r.page, r.block)[r.slot] == k) {
      if (++r.slot >= count(r.page, r.block)) r = normalize({r.page, r.block + 1u, 0});
    }
    return r;
  }
  static std::size_t rank(const T& t, S k) noexcept {
    if (t.root == 0) return 0;
    std::uint64_t r = 0;
    std::uintptr_t c = t.root;
    for (unsigned h = t.height; h > 0; --h) {
      const std::byte* in = untag(c);
      unsigned i = inner_child(in, k);
      for (unsigned j = 0; j < i; ++j) r += IL::count(in)[j];
      c = IL::child(in)[i];
      prefetch_child(c);
    }
    std::byte* p = untag(c);
    pos q = leaf_lb(p, k);
    for (unsigned b = 0; b < q.block; ++b) r += count(p, b);
    return static_cast<std::size_t>(r + q.slot);
  }
  static pos select(const T& t, std::size_t i) noexcept {
    if (i >= t.size) return {};
    std::uint64_t r = i;
    std::uintptr_t c = t.root;
    for (unsigned h = t.height; h > 0; --h) {
      const std::byte* in = untag(c);
      unsigned j = 0;
      while (r >= IL::count(in)[j]) r -= IL::count(in)[j++];
      c = IL::child(in)[j];
    }
    std::byte* p = untag(c);
    unsigned b = 0;
    while (r >= count(p, b)) r -= count(p, b++);
    return {p, b, static_cast<std::uint32_t>(r)};
  }

  // Group prefetching: descend kGroup queries level by level, so their misses overlap.
  static constexpr unsigned kGroup = 32;
  static void lower_bound_batch(const T& t, const S* ks, std::size_t n, pos* out,
                                std::uint64_t* ranks) noexcept {
    if (t.root == 0) {
      for (std::size_t i = 0; i < n; ++i) {
        out[i] = {};
        if (ranks) ranks[i] = 0;
      }
      return;
    }
    std::uintptr_t cur[kGroup];
    std::uint64_t rk[kGroup];
    for (std::size_t base = 0; base < n; base += kGroup) {
      unsigned m = static_cast<unsigned>(n - base < kGroup ? n - base : kGroup);
      const S* q = ks + base;
      for (unsigned i = 0; i < m; ++i) {
        cur[i] = t.root;
        rk[i] = 0;
      }
      for (unsigned h = t.height; h > 0; --h) {
        for (unsigned i = 0; i < m; ++i) {
          const std::byte* in = untag(cur[i]);
          unsigned j = inner_child(in, q[i]);
          if (ranks)
            for (unsigned x = 0; x < j; ++x) rk[i] += IL::count(in)[x];
          cur[i] = IL::child(in)[j];
          prefetch_child(cur[i]);
        }
      }
      unsigned blk[kGroup];
      for (unsigned i = 0; i < m; ++i) {
        std::byte* p = untag(cur[i]);
        blk[i] = leaf_block(p, q[i]);
        prefetch_lines(reinterpret_cast<const std::byte*>(keys(p, blk[i])), 0,
                       sizeof(S) * 16 / kLine);
      }
      for (unsigned i = 0; i < m; ++i) {
        std::byte* p = untag(cur[i]);
        unsigned b = blk[i];
        unsigned s = Policy::count_lt16(keys(p, b), q[i]);
        pos r = s < count(p, b) ? pos{p, b, s} : pos{p, b + 1u, 0};
        if (ranks) {
          std::uint64_t x = rk[i] + r.slot;
          for (unsigned y = 0; y < r.block; ++y) x += count(p, y);
          ranks[base + i] = x;
        }
        out[base + i] = normalize(r);
      }
    }
  }
  static void contains_batch(const T& t, const S* ks, std::size_t n, bool* out) noexcept {
    if (t.root == 0) {
      for (std::size_t i = 0; i < n; ++i) out[i] = false;
      return;
    }
    std::uintptr_t cur[kGroup];
    unsigned blk[kGroup];
    for (std::size_t base = 0; base < n; base += kGroup) {
      unsigned m = static_cast<unsigned>(n - base < kGroup ? n - base : kGroup);
      const S* q = ks + base;
      for (unsigned i = 0; i < m; ++i) cur[i] = t.root;
      for (unsigned h = t.height; h > 0; --h) {
        for (unsigned i = 0; i < m; ++i) {
          const std::byte* in = untag(cur[i]);
          cur[i] = IL::child(in)[inner_child(in, q[i])];
          prefetch_child(cur[i]);
        }
      }
      for (unsigned i = 0; i < m; ++i) {
        std::byte* p = untag(cur[i]);
        blk[i] = leaf_block(p, q[i]);
        prefetch_lines(reinterpret_cast<const std::byte*>(keys(p, blk[i])), 0,
                       sizeof(S) * 16 / kLine);
      }
      for (unsigned i = 0; i < m; ++i) {
        std::byte* p = untag(cur[i]);
        const S* bk = keys(p, blk[i]);
        unsigned s = Policy::count_lt16(bk, q[i]);
        out[base + i] = s < count(p, blk[i]) && bk[s] == q[i];
      }
    }
  }

  // Ascending queries: walk the leaves in order, descending again only when a query leaves
  // the current page's fences. found and ranks may each be null.
  static void lookup_sorted(const T& t, const S* ks, std::size_t n, bool* found,
                            std::uint64_t* ranks) noexcept {
    std::byte* p = nullptr;
    std::uint64_t base = 0;
    for (std::size_t i = 0; i < n; ++i) {
      S k = ks[i];
      if (t.root == 0) {
        if (found) found[i] = false;
        if (ranks) ranks[i] = 0;
        continue;
      }
      if (p == nullptr || !in_fences(p, k)) {
        base = 0;
        std::uintptr_t c = t.root;
        for (unsigned h = t.height; h > 0; --h) {
          const std::byte* in = untag(c);
          unsigned j = inner_child(in, k);
          for (unsigned x = 0; x < j; ++x) base += IL::count(in)[x];
          c = IL::child(in)[j];
        }
        p = untag(c);
        if (i + 1 < n && hdr(p)->next != nullptr)
          prefetch_lines(LL::meta(hdr(p)->next), 0, LL::kMetaLines);
      }
      unsigned b = leaf_block(p, k);
      const S* bk = keys(p, b);
      unsigned s = Policy::count_lt16(bk, k);
      if (found) found[i] = s < count(p, b) && bk[s] == k;
      if (ranks) {
        std::uint64_t r = base + s;
        for (unsigned x = 0; x < b; ++x) r += count(p, x);
        ranks[i] = r;
      }
    }
  }

  // ---- page packing -------------------------------------------------------------------
  // Gathers the keys (and values) of page p into ks / vs; returns the count.
  static unsigned gather(std::byte* p, S* ks, std::byte* vs) noexcept {
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
  static void pack(std::byte* p, const S* ks, const std::byte* vs, unsigned n) noexcept {
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
  static void pack_dense(std::byte* p, const S* ks, const std::byte* vs, unsigned n) noexcept {
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

  // ---- block heads --------------------------------------------------------------------
  // Picks base and shift so that the keys from lo to hi (the page's first and last) spread
  // over the 65536 head values, with an eighth of that span to spare on either side for keys
  // that arrive later. Any choice is correct (heads only need to be monotone); this one makes
  // equal heads, which cost a look at a block's first key, rare.
  static void choose_heads(H* h, S lo, S hi) noexcept {
    using U = typename LL::U;
    U span = static_cast<U>(static_cast<U>(hi) - static_cast<U>(lo));
    U margin = span / 8;
    U below = static_cast<U>(static_cast<U>(lo) - static_cast<U>(std::numeric_limits<S>::min()));
    U above = static_cast<U>(static_cast<U>(kMax) - static_cast<U>(hi));
    S base = static_cast<S>(static_cast<U>(lo) - (margin < below ? margin : below));
    U top = static_cast<U>(static_cast<U>(hi) - static_cast<U>(base) +
                           (margin < above ? margin : above));
    h->base = base;
    // The smallest shift that brings top under 2^16 (a builtin: no std:: code in level files).
    unsigned width = top == 0 ? 0u : 64u - static_cast<unsigned>(__builtin_clzll(top));
    h->shift = static_cast<std::uint8_t>(width <= 16 ? 0 : width - 16);
  }
  // Block b's first key changed: its head follows. True when it now equals a neighbour's.
  static bool set_head(std::byte* p, unsigned b) noexcept {
    if (b == 0) return false;
    const H* h = hdr(p);
    std::uint16_t* hd = LL::heads(p);
    std::uint16_t v = LL::head_of(h, keys(p, b)[0]);
    hd[b - 1] = v;
    return (b >= 2 && hd[b - 2] == v) || (b + 1u < h->nb && hd[b] == v);
  }
  // After heads collided: choose base and shift again from the page's present key range and,
  // when that changes them, rewrite every head.
  [[gnu::noinline]] static void refit_heads(std::byte* p) noexcept {
    H* h = hdr(p);
    S base = h->base;
    std::uint8_t shift = h->shift;
    unsigned last = h->nb - 1u;
    choose_heads(h, keys(p, 0)[0], keys(p, last)[count(p, last) - 1]);
    if (h->base == base && h->shift == shift) return;
    for (unsigned b = 1; b < h->nb; ++b) LL::heads(p)[b - 1] = LL::head_of(h, keys(p, b)[0]);
  }

  // ---- leaf modification --------------------------------------------------------------
  // Inserts k at (b, s) of a page that is not full. A full block passes its overflow key
  // to the nearest block with room (opening a new block at the end if that is nearer).
  static void leaf_insert_at(std::byte* p, unsigned b, unsigned s, S k, const void* v) noexcept {
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
      unsigned at = s;
      if (go_left) {
        // Carry the smallest key leftwards.
        for (unsigned j = b;; --j) {
          unsigned c = count(p, j);
          if (c < 16) {
            place(j, at, c);
            break;
          }
          if (at > 0) pass(j, 0, at);
          at = count(p, j - 1);
        }
      } else {
        // Carry the largest key rightwards.
        for (unsigned j = b;; ++j) {
          unsigned c = count(p, j);  // 0 for the next unused block, which this opens
          if (j == h->nb) ++h->nb;
          if (c < 16) {
            place(j, at, c);
            break;
          }
          if (at < 16) pass(j, 15, at);
          at = 0;
        }
      }
    }
    ++h->n;
    if (clash) refit_heads(p);
  }
  // True when the nearest block with room is more than kNearBlocks away from block b.
  static constexpr unsigned kNearBlocks = 6;
  static bool far_gap(std::byte* p, unsigned b) noexcept {
    unsigned nb = hdr(p)->nb;
    for (unsigned d = 1; d <= kNearBlocks; ++d) {
      if (b + d < B && (b + d >= nb || count(p, b + d) < 16)) return false;
      if (b >= d && count(p, b - d) < 16) return false;
    }
    return true;
  }
  // Spreads the page's keys evenly over its blocks again, so each has room.
  [[gnu::noinline]] static void respread(std::byte* p) noexcept {
    alignas(64) S ks[kCap];
    alignas(64) std::byte vs[VS > 0 ? kCap * VS : 1];
    unsigned n = gather(p, ks, vs);
    pack(p, ks, vs, n);
  }
  // Removes the key at (b, s); an emptied block is closed by sliding the later ones down.
  static void leaf_erase_at(std::byte* p, unsigned b, unsigned s) noexcept {
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

  // ---- structure: inner nodes ---------------------------------------------------------
  // The child at P.idx[d] of P.node[d] gave `moved` keys to a new right sibling c, whose
  // first key is sep: link c in after it, splitting nodes upwards as needed.
  [[gnu::noinline]] static void inner_insert(T& t, path& P, int d, S sep, std::uintptr_t c,
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
  static void insert_slot(std::byte* in, unsigned j, S sep, std::uintptr_t c,
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
  [[gnu::noinline]] static void remove_child(T& t, path& P, int d, unsigned j) {
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
    if (pi + 1 < pn) {
      std::byte* r = untag(IL::child(parent)[pi + 1]);
      if (n + IL::n(r) <= kF * 3 / 4) {
        merge_inner(in, r, IL::keys(parent)[pi]);
        IL::count(parent)[pi] += IL::count(parent)[pi + 1];
        t.mem.free_inner(r);
        --t.inners;
        remove_child(t, P, d - 1, pi + 1);
        return;
      }
    }
    if (pi > 0) {
      std::byte* l = untag(IL::child(parent)[pi - 1]);
      if (n + IL::n(l) <= kF * 3 / 4) {
        merge_inner(l, in, IL::keys(parent)[pi - 1]);
        IL::count(parent)[pi - 1] += IL::count(parent)[pi];
        t.mem.free_inner(in);
        --t.inners;
        remove_child(t, P, d - 1, pi);
      }
    }
  }
  static void merge_inner(std::byte* l, std::byte* r, S sep) noexcept {
    unsigned ln = IL::n(l), rn = IL::n(r);
    IL::keys(l)[ln - 1] = sep;
    std::memcpy(IL::keys(l) + ln, IL::keys(r), (rn - 1) * sizeof(S));
    std::memcpy(IL::child(l) + ln, IL::child(r), rn * sizeof(std::uintptr_t));
    std::memcpy(IL::count(l) + ln, IL::count(r), rn * sizeof(std::uint64_t));
    IL::n(l) = ln + rn;
    IL::summarize(l);
  }

  // ---- structure: leaves --------------------------------------------------------------
  static void set_hi(std::byte* p, const H* from) noexcept {
    hdr(p)->hi = from->hi;
    hdr(p)->flags =
        static_cast<std::uint8_t>((hdr(p)->flags & ~H::kHasHi) | (from->flags & H::kHasHi));
  }
  static void set_lo(std::byte* p, const H* from) noexcept {
    hdr(p)->lo = from->lo;
    hdr(p)->flags =
        static_cast<std::uint8_t>((hdr(p)->flags & ~H::kHasLo) | (from->flags & H::kHasLo));
  }
  static void set_sep(std::byte* left, std::byte* right, S sep) noexcept {
    hdr(left)->hi = sep;
    hdr(left)->flags |= H::kHasHi;
    hdr(right)->lo = sep;
    hdr(right)->flags |= H::kHasLo;
  }
  static S first_key(std::byte* p) noexcept { return keys(p, 0)[0]; }

  // Page p (full) must make room for k: append split, shift to a sibling, or split in two.
  [[gnu::noinline]] static void make_room(T& t, path& P, std::byte* p, S k) {
    H* h = hdr(p);
    int d = static_cast<int>(t.height) - 1;  // parent level
    unsigned lastb = h->nb - 1u;
    S maxk = keys(p, lastb)[count(p, lastb) - 1];
    if (h->next == nullptr && k > maxk) {
      // Append: move only the largest key to a new right page; the left stays full.
      std::byte* r = new_leaf(t);
      alignas(16) std::byte v[VS > 0 ? VS : 1];
      if constexpr (VS > 0) std::memcpy(v, val(p, lastb, count(p, lastb) - 1u), VS);
      leaf_erase_at(p, lastb, count(p, lastb) - 1u);
      leaf_insert_at(r, 0, 0, maxk, VS > 0 ? v : nullptr);
      link_after(t, p, r);
      set_hi(r, h);
      set_sep(p, r, maxk);
      inner_insert(t, P, d, maxk, reinterpret_cast<std::uintptr_t>(r) | kLeafTag, 1);
      return;
    }
    alignas(64) S ks[2 * kCap];
    alignas(64) std::byte vs[VS > 0 ? 2 * kCap * VS : 1];
    if (d >= 0) {
      std::byte* parent = P.node[d];
      unsigned i = P.idx[d];
      unsigned pn = IL::n(parent);
      constexpr unsigned kSlack = kCap / 16;  // a move must make real room
      if (i + 1 < pn) {
        std::byte* r = untag(IL::child(parent)[i + 1]);
        unsigned rn = hdr(r)->n;
        if (rn + kSlack <= kCap) {
          unsigned m = (kCap - rn) / 2;
          unsigned a = gather(p, ks, vs);
          unsigned b = gather(r, ks + a, vs + a * VS);
          pack(p, ks, vs, a - m);
          pack(r, ks + a - m, vs + (a - m) * VS, b + m);
          S sep = ks[a - m];
          set_sep(p, r, sep);
          IL::keys(parent)[i] = sep;
          IL::summarize(parent);
          IL::count(parent)[i] -= m;
          IL::count(parent)[i + 1] += m;
          return;
        }
      }
      if (i > 0) {
        std::byte* l = untag(IL::child(parent)[i - 1]);
        unsigned ln = hdr(l)->n;
        if (ln + kSlack <= kCap) {
          unsigned m = (kCap - ln) / 2;
          unsigned a = gather(l, ks, vs);
          unsigned b = gather(p, ks + a, vs + a * VS);
          pack(l, ks, vs, a + m);
          pack(p, ks + a + m, vs + (a + m) * VS, b - m);
          S sep = ks[a + m];
          set_sep(l, p, sep);
          IL::keys(parent)[i - 1] = sep;
          IL::summarize(parent);
          IL::count(parent)[i - 1] += m;
          IL::count(parent)[i] -= m;
          return;
        }
      }
    }
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
  static void link_after(T& t, std::byte* p, std::byte* r) noexcept {
    hdr(r)->prev = p;
    hdr(r)->next = hdr(p)->next;
    if (hdr(p)->next)
      hdr(hdr(p)->next)->prev = r;
    else
      t.last = r;
    hdr(p)->next = r;
  }
  static void unlink(T& t, std::byte* p) noexcept {
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
  static void free_leaf(T& t, std::byte* p) noexcept {
    t.mem.free_page(p);
    --t.leaves;
  }

  // After an erase left page p (child P.idx[height-1]) small or empty.
  [[gnu::noinline]] static void leaf_underflow(T& t, path& P, std::byte* p) {
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
    alignas(64) S ks[2 * kCap];
    alignas(64) std::byte vs[VS > 0 ? 2 * kCap * VS : 1];
    if (i + 1 < pn) {
      std::byte* r = untag(IL::child(parent)[i + 1]);
      if (h->n + hdr(r)->n <= kCap * 3 / 4) {
        unsigned a = gather(p, ks, vs);
        a += gather(r, ks + a, vs + a * VS);
        pack(p, ks, vs, a);
        set_hi(p, hdr(r));
        IL::count(parent)[i] += IL::count(parent)[i + 1];
        unlink(t, r);
        free_leaf(t, r);
        remove_child(t, P, d, i + 1);
        return;
      }
    }
    if (i > 0) {
      std::byte* l = untag(IL::child(parent)[i - 1]);
      if (h->n + hdr(l)->n <= kCap * 3 / 4) {
        unsigned a = gather(l, ks, vs);
        a += gather(p, ks + a, vs + a * VS);
        pack(l, ks, vs, a);
        set_hi(l, h);
        IL::count(parent)[i - 1] += IL::count(parent)[i];
        unlink(t, p);
        free_leaf(t, p);
        remove_child(t, P, d, i);
      }
    }
  }

  // ---- modification entry points ------------------------------------------------------
  static void first_leaf(T& t, S k, const void* v) {
    std::byte* p = new_leaf(t);
    leaf_insert_at(p, 0, 0, k, v);
    hdr(p)->nb = 1;
    t.root = reinterpret_cast<std::uintptr_t>(p) | kLeafTag;
    t.height = 0;
    t.first = t.last = p;
    t.size = 1;
  }
  static bool insert(T& t, S k, const void* v, bool assign) {
    if (t.root == 0) {
      first_leaf(t, k, v);
      return true;
    }
    path P;
    for (;;) {
      std::byte* p = descend_path(t, k, P);
      unsigned b = leaf_block(p, k);
      unsigned s = Policy::count_lt16(keys(p, b), k);
      if (s < count(p, b) && keys(p, b)[s] == k) {
        if (assign) copy_val(val(p, b, s), v);
        return false;
      }
      if (hdr(p)->n == kCap) {
        make_room(t, P, p, k);
        continue;  // structure changed: descend again
      }
      if (count(p, b) == 16 && far_gap(p, b)) {
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
  static bool erase(T& t, S k) {
    if (t.root == 0) return false;
    path P;
    std::byte* p = descend_path(t, k, P);
    unsigned b = leaf_block(p, k);
    unsigned s = Policy::count_lt16(keys(p, b), k);
    if (!(s < count(p, b) && keys(p, b)[s] == k)) return false;
    leaf_erase_at(p, b, s);
    add_counts(t, P, -1);
    --t.size;
    if (hdr(p)->n < kCap / 4) leaf_underflow(t, P, p);
    return true;
  }
  // Sorted, unique keys: consecutive keys that stay inside the current page's fences skip
  // the descent (the fence keys in the page header say so).
  static bool in_fences(std::byte* p, S k) noexcept {
    const H* h = hdr(p);
    return (!(h->flags & H::kHasLo) || h->lo <= k) && (!(h->flags & H::kHasHi) || k < h->hi);
  }
  static std::size_t insert_sorted(T& t, const S* ks, const std::byte* vs, std::size_t n,
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
    for (; i < n; ++i) {
      S k = ks[i];
      const void* v = vs ? vs + i * VS : nullptr;
      if (p == nullptr || !in_fences(p, k)) {
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
      if (s < count(p, b) && keys(p, b)[s] == k) {
        if (assign) copy_val(val(p, b, s), v);
        continue;
      }
      if (hdr(p)->n == kCap) {
        make_room(t, P, p, k);
        p = nullptr;
        --i;
        continue;
      }
      leaf_insert_at(p, b, s, k, v);
      add_counts(t, P, 1);
      ++t.size;
      ++added;
    }
    return added;
  }
  static constexpr unsigned kMergeMin = 32;        // below this, key-by-key insert is cheaper
  static constexpr unsigned kMergeRun = 4 * kCap;  // keys merged per step (stack buffers)
  // Merges m sorted keys (all inside p's fences) with p's keys; overflow goes to new pages
  // linked after p, each about kCap - B keys so that every block keeps room. Returns how
  // many keys were new.
  static unsigned merge_into(T& t, path& P, std::byte* p, const S* in, const std::byte* iv,
                             unsigned m, bool assign) {
    alignas(64) S old[kCap];
    alignas(64) std::byte oldv[VS > 0 ? kCap * VS : 1];
    alignas(64) S out[kCap + kMergeRun];
    alignas(64) std::byte outv[VS > 0 ? (kCap + kMergeRun) * VS : 1];
    unsigned a = gather(p, old, oldv);
    unsigned x = 0, y = 0, z = 0, added = 0;
    while (x < a || y < m) {
      bool take_old = y == m || (x < a && old[x] <= in[y]);
      if (take_old) {
        bool dup = y < m && old[x] == in[y];
        out[z] = old[x];
        if constexpr (VS > 0) {
          const std::byte* src = dup && assign ? (iv ? iv + y * VS : nullptr) : oldv + x * VS;
          copy_val(outv + z * VS, src);
        }
        ++x;
        y += dup;
      } else {
        out[z] = in[y];
        if constexpr (VS > 0) copy_val(outv + z * VS, iv ? iv + y * VS : nullptr);
        ++y;
        ++added;
      }
      ++z;
    }
    add_counts(t, P, added);
    t.size += added;
    if (z <= kCap) {
      pack(p, out, outv, z);
      return added;
    }
    constexpr unsigned kChunk = kCap - B;
    unsigned pages = (z + kChunk - 1) / kChunk;
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
  static std::size_t erase_sorted(T& t, const S* ks, std::size_t n) {
    std::size_t gone = 0;
    path P;
    std::byte* p = nullptr;
    for (std::size_t i = 0; i < n && t.root != 0; ++i) {
      S k = ks[i];
      if (p == nullptr || !in_fences(p, k)) p = descend_path(t, k, P);
      unsigned b = leaf_block(p, k);
      unsigned s = Policy::count_lt16(keys(p, b), k);
      if (!(s < count(p, b) && keys(p, b)[s] == k)) continue;
      leaf_erase_at(p, b, s);
      add_counts(t, P, -1);
      --t.size;
      ++gone;
      if (hdr(p)->n < kCap / 4) {
        leaf_underflow(t, P, p);
        p = nullptr;
      }
    }
    return gone;
  }

  // Bottom-up build of an empty tree from sorted unique keys: full leaves, full inner nodes.
  static void build_sorted(T& t, const S* ks, const std::byte* vs, std::size_t n) {
    if (n == 0) return;
    std::size_t nleaves = (n + kCap - 1) / kCap;
    std::byte* prev = nullptr;
    std::size_t at = 0;
    // Current level: a chain of nodes built left to right; we build leaves and push each
    // into the rightmost inner node of the level above (growing levels as needed).
    path P;  // P.node[d]: the rightmost node at inner level d counted from the leaves
    unsigned levels = 0;
    for (std::size_t li = 0; li < nleaves; ++li) {
      // Full leaves; the last two share what is left, so the last one is never tiny.
      std::size_t left = n - at;
      unsigned take = left > kCap ? kCap : static_cast<unsigned>(left);
      if (li + 2 == nleaves) take = static_cast<unsigned>(left - left / 2);
      std::byte* p = new_leaf(t);
      pack_dense(p, ks + at, vs ? vs + at * VS : nullptr, take);
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
  // Appends child c (first key k, count) to the rightmost node of inner level d (0 = just
  // above the leaves), opening a new node (and a new level) when it is full.
  static void push_child(T& t, path& P, unsigned& levels, unsigned d, S k, std::uintptr_t c,
                         std::uint64_t count) {
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

  static constexpr kernels<S, VS> table() {
    return {.insert = &insert,
            .erase = &erase,
            .find = &find,
            .lower_bound = &lower_bound,
            .upper_bound = &upper_bound,
            .rank = &rank,
            .select = &select,
            .contains_batch = &contains_batch,
            .lower_bound_batch = &lower_bound_batch,
            .lookup_sorted = &lookup_sorted,
            .insert_sorted = &insert_sorted,
            .erase_sorted = &erase_sorted,
            .build_sorted = &build_sorted,
            .level_name = Policy::kName};
  }
};

template <template <class> class Policy, class S, std::size_t VS>
const kernels<S, VS>* level_kernels() {
  static constexpr kernels<S, VS> table = impl<Policy<S>, VS>::table();
  return &table;
}

}  // namespace simdex::btree_detail
