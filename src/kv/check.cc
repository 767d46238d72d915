// Statistics and the structural validator of a tree.
#include "node.h"

namespace simdex::kv::detail {

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

}  // namespace simdex::kv::detail
