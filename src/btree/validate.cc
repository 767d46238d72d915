// Structure validator: walks the whole tree and checks every invariant the search relies on.
#include <limits>
#include <sstream>

#include "kernels.h"
#include "simdex/btree/detail.h"

namespace simdex::btree_detail {
namespace {

template <class S, std::size_t VS>
struct checker {
  using LL = leaf_layout<S, VS>;
  using IL = inner_layout<S>;
  using H = leaf_header<S>;
  static constexpr S kMax = std::numeric_limits<S>::max();
  const tree<S, VS>& t;
  std::ostringstream err;
  std::byte* prev_leaf = nullptr;
  std::size_t leaves = 0, inners = 0;
  bool have_last = false;
  S last_key{};

  bool fail(const char* what, const void* node) {
    err << what << " (node " << node << ")";
    return false;
  }

  // Returns the subtree's key count through `count`; bounds: lo <= k < hi where present.
  bool walk(std::uintptr_t c, unsigned depth, bool has_lo, S lo, bool has_hi, S hi,
            std::uint64_t& count) {
    std::byte* p = untag(c);
    bool leaf = (c & kLeafTag) != 0;
    if (leaf != (depth == t.height)) return fail("leaf tag disagrees with depth", p);
    if (leaf) return leaf_ok(p, has_lo, lo, has_hi, hi, count);
    ++inners;
    unsigned n = IL::n(p);
    if (n < 1 || n > kFanout) return fail("inner child count out of range", p);
    if (depth == 0 && n < 2) return fail("root inner node with one child", p);
    const S* ks = IL::keys(p);
    for (unsigned i = 0; i + 1 < n; ++i) {
      if (i > 0 && !(ks[i - 1] < ks[i])) return fail("inner separators not ascending", p);
      if (has_lo && ks[i] <= lo) return fail("separator below node range", p);
      if (has_hi && ks[i] >= hi) return fail("separator above node range", p);
    }
    for (unsigned i = n - 1; i + 1 < kFanout; ++i)
      if (ks[i] != kMax) return fail("unused separator slot not max", p);
    if constexpr (IL::kSummary)
      for (unsigned j = 0; j < IL::kSumKeys; ++j)
        if (IL::summary(p)[j] != ks[8 * j + 7]) return fail("inner summary line out of date", p);
    count = 0;
    for (unsigned i = 0; i < n; ++i) {
      std::uint64_t sub = 0;
      bool clo = i > 0 ? true : has_lo;
      S vlo = i > 0 ? ks[i - 1] : lo;
      bool chi = i + 1 < n ? true : has_hi;
      S vhi = i + 1 < n ? ks[i] : hi;
      if (!walk(IL::child(p)[i], depth + 1, clo, vlo, chi, vhi, sub)) return false;
      if (sub != IL::count(p)[i]) return fail("child count does not match subtree", p);
      count += sub;
    }
    return true;
  }

  bool leaf_ok(std::byte* p, bool has_lo, S lo, bool has_hi, S hi, std::uint64_t& count) {
    ++leaves;
    const H* h = LL::hdr(p);
    if (h->prev != prev_leaf) return fail("leaf prev link wrong", p);
    if (prev_leaf == nullptr ? t.first != p : LL::hdr(prev_leaf)->next != p)
      return fail("leaf next link / first wrong", p);
    prev_leaf = p;
    if (bool(h->flags & H::kHasLo) != has_lo || (has_lo && h->lo != lo))
      return fail("low fence wrong", p);
    if (bool(h->flags & H::kHasHi) != has_hi || (has_hi && h->hi != hi))
      return fail("high fence wrong", p);
    unsigned nb = h->nb;
    if (nb < 1 || nb > LL::kBlocks) return fail("leaf block count out of range", p);
    unsigned n = 0;
    for (unsigned b = 0; b < LL::kBlocks; ++b) {
      unsigned c = LL::cnt(p)[b];
      const S* ks = LL::keys(p, b);
      if (b < nb ? (c < 1 || c > kBlockKeys) : c != 0) return fail("block count out of range", p);
      if (LL::idx(p)[b] != (b < nb ? ks[0] : kMax)) return fail("in-page index entry wrong", p);
      for (unsigned s = 0; s < kBlockKeys; ++s) {
        if (s >= c) {
          if (ks[s] != kMax) return fail("unused key lane not max", p);
          continue;
        }
        S k = ks[s];
        if (have_last && !(last_key < k)) return fail("keys not strictly ascending", p);
        if (has_lo && k < lo) return fail("key below low fence", p);
        if (has_hi && !(k < hi)) return fail("key not below high fence", p);
        have_last = true;
        last_key = k;
      }
      n += c;
    }
    if (n != h->n) return fail("leaf key count wrong", p);
    if (n == 0) return fail("empty leaf", p);
    count = n;
    return true;
  }
};

}  // namespace

template <class S, std::size_t VS>
std::string validate(const tree<S, VS>& t) {
  checker<S, VS> c{t, {}};
  if (t.root == 0) {
    if (t.size != 0 || t.first || t.last || t.leaves || t.inners)
      return "empty tree with leftovers";
    return {};
  }
  std::uint64_t total = 0;
  if (!c.walk(t.root, 0, false, S{}, false, S{}, total)) return c.err.str();
  if (c.prev_leaf != t.last) return "last leaf pointer wrong";
  if (leaf_layout<S, VS>::hdr(t.last)->next != nullptr) return "last leaf has a next";
  if (total != t.size) return "size does not match keys";
  if (c.leaves != t.leaves || c.inners != t.inners) return "node counters wrong";
  return {};
}

#define SIMDEX_BTREE_VALIDATE(S, VS) template std::string validate<S, VS>(const tree<S, VS>&);
SIMDEX_BTREE_SHAPES(SIMDEX_BTREE_VALIDATE)
#undef SIMDEX_BTREE_VALIDATE

}  // namespace simdex::btree_detail
