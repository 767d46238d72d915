// libFuzzer target: the input is a sequence of operations on a btree_set<uint32_t> and a
// btree_map<int64_t, uint64_t>, replayed against std::set / std::map; any difference,
// any structure-validator complaint or any sanitizer report is a finding. Two operations grow
// the set past the membership filter's minimum and ask large batches, so the filter is built,
// updated by every later write, worn out and rebuilt within one input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "ops_input.h"
#include "simdex/btree.h"
#include "simdex/btree/membership.h"

using fuzz::check;

namespace {
std::uint64_t mix(std::uint64_t x) {  // splitmix64's finalizer: keys from a seed and an index
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
// Keys a grow inserts: dense enough to share pages with the one-byte-spread keys above.
std::uint32_t grown(std::uint64_t seed, std::uint64_t i) {
  return static_cast<std::uint32_t>(mix(seed * 0x100000001b3ull + i)) & 0x3fffffffu;
}
constexpr std::uint64_t kGrow = simdex::btree_detail::membership::kMinKeys + 4096;
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::input r{data, size};
  // First byte: ISA level (falls back to the default when that level is not usable here)
  // and the key spread: small spreads make dense keys and deep churn in a few pages.
  std::uint32_t cfg = r.u8();
  simdex::isa level = static_cast<simdex::isa>(cfg % 5);
  simdex::btree_options opt;
  if (simdex::isa_usable(level) &&
      (level == simdex::isa::scalar || level == simdex::isa::avx2 || level == simdex::isa::avx512))
    opt.level = level;
  std::uint32_t shift = (cfg >> 3) % 20;
  simdex::btree_set<std::uint32_t> s(opt);
  simdex::btree_map<std::int64_t, std::uint64_t> m(opt);
  std::set<std::uint32_t> rs;
  std::map<std::int64_t, std::uint64_t> rm;
  std::uint64_t tick = 0;
  std::uint64_t grow_seed = 0;
  std::uint32_t recent[256] = {};  // keys inserted lately, asked for again by batch lookups
  std::uint32_t nrecent = 0;
  auto inserted = [&](std::uint32_t x) { recent[nrecent++ % 256] = x; };
  while (r.more()) {
    std::uint32_t op = r.u8();
    std::uint32_t k = r.u16() << shift;
    std::int64_t mk = static_cast<std::int64_t>(k) - (1 << 15);
    ++tick;
    switch (op % 14) {
      case 0:
      case 1:
        check(s.insert(k) == rs.insert(k).second);
        inserted(k);
        break;
      case 2:
        check(s.erase(k) == (rs.erase(k) == 1));
        break;
      case 3: {
        auto a = s.lower_bound(k);
        auto b = rs.lower_bound(k);
        check((a == s.end()) == (b == rs.end()));
        if (b != rs.end()) check(*a == *b);
        break;
      }
      case 4: {
        // A run of consecutive keys (exercises append splits and block carries).
        std::uint32_t len = r.u8() * 8;
        std::vector<std::uint32_t> ks;
        for (std::uint32_t i = 0; i < len; ++i) ks.push_back(k + i);
        std::size_t added = s.insert_batch(ks);
        std::size_t want = 0;
        for (auto x : ks) want += rs.insert(x).second;
        check(added == want);
        for (std::size_t i = 0; i < ks.size(); i += 1 + ks.size() / 64) inserted(ks[i]);
        break;
      }
      case 5: {
        auto b = rs.lower_bound(k);
        std::uint32_t len = r.u8() * 4;
        auto e = b;
        for (std::uint32_t i = 0; i < len && e != rs.end(); ++i) ++e;
        auto first = b == rs.end() ? s.end() : s.find(*b);
        auto last = e == rs.end() ? s.end() : s.find(*e);
        auto next = s.erase(first, last);
        rs.erase(b, e);
        check((next == s.end()) == (e == rs.end()));
        if (e != rs.end()) check(*next == *e);
        break;
      }
      case 6:
        check(s.rank(k) == static_cast<std::size_t>(std::distance(rs.begin(), rs.lower_bound(k))));
        break;
      case 7: {
        std::uint64_t v = tick;
        bool fresh = rm.find(mk) == rm.end();
        check(m.insert_or_assign(mk, v) == fresh);
        rm[mk] = v;
        break;
      }
      case 8:
        check(m.erase(mk) == (rm.erase(mk) == 1));
        break;
      case 9: {
        auto g = m.get(mk);
        auto it = rm.find(mk);
        check(g.has_value() == (it != rm.end()));
        if (g) check(*g == it->second);
        break;
      }
      case 10: {
        std::vector<std::uint32_t> ks;
        for (std::uint32_t i = 0, len = r.u8(); i < len; ++i) ks.push_back(r.u16() << shift);
        std::size_t gone = s.erase_batch(ks);
        std::size_t want = 0;
        for (auto x : ks) want += rs.erase(x);
        check(gone == want);
        break;
      }
      case 11: {  // upper_bound in the set and the map (the leaf's window, then one count)
        auto a = s.upper_bound(k);
        auto b = rs.upper_bound(k);
        check((a == s.end()) == (b == rs.end()));
        if (b != rs.end()) check(*a == *b);
        auto ma = m.upper_bound(mk);
        auto mb = rm.upper_bound(mk);
        check((ma == m.end()) == (mb == rm.end()));
        if (mb != rm.end()) check(ma.key() == mb->first && ma.value() == mb->second);
        break;
      }
      case 12: {  // grow past the filter's minimum (once the set is below it)
        if (s.size() >= kGrow) break;
        grow_seed = k + 1;
        std::vector<std::uint32_t> ks(kGrow);
        for (std::uint64_t i = 0; i < kGrow; ++i) ks[i] = grown(grow_seed, i);
        std::size_t want = 0;
        for (auto x : ks) want += rs.insert(x).second;
        check(s.insert_batch(ks) == want);
        break;
      }
      case 13: {  // a large batch lookup: recent keys, and a quarter to all grown keys or none
        std::uint32_t len = 4096 + r.u8() * 64, present = r.u8() % 5, salt = k;
        std::vector<std::uint32_t> ks(len);
        for (std::uint32_t i = 0; i < len; ++i) {
          std::uint64_t h = mix(salt * 0x9e3779b97f4a7c15ull + i);
          if (h % 16 == 0 && nrecent > 0)
            ks[i] = recent[(h >> 8) % std::min<std::uint32_t>(nrecent, 256)];
          else
            ks[i] = (h >> 4) % 4 < present ? grown(grow_seed, (h >> 8) % kGrow)
                                           : static_cast<std::uint32_t>(h >> 32);
        }
        std::unique_ptr<bool[]> got(new bool[len]);
        s.contains_batch(ks, got.get());
        for (std::uint32_t i = 0; i < len; ++i) check(got[i] == (rs.count(ks[i]) == 1));
        break;
      }
      default: {
        auto p = s.predecessor(k);
        auto b = rs.lower_bound(k);
        check((p == s.end()) == (b == rs.begin()));
        if (b != rs.begin()) check(*p == *std::prev(b));
        break;
      }
    }
    if (tick % 512 == 0) check(s.validate().empty() && m.validate().empty());
  }
  check(s.validate().empty() && m.validate().empty());
  check(s.size() == rs.size() && m.size() == rm.size());
  auto it = s.begin();
  for (auto x : rs) check(*it++ == x);
  check(it == s.end());
  auto mi = m.begin();
  for (auto& [k, v] : rm) {
    check(mi.key() == k && mi.value() == v);
    ++mi;
  }
  return 0;
}
