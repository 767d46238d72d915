// libFuzzer target: the input is a sequence of operations on a btree_set<uint32_t> and a
// btree_map<int64_t, uint64_t>, replayed against std::set / std::map; any difference,
// any structure-validator complaint or any sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "ops_input.h"
#include "simdex/btree.h"

using fuzz::check;

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
  while (r.more()) {
    std::uint32_t op = r.u8();
    std::uint32_t k = r.u16() << shift;
    std::int64_t mk = static_cast<std::int64_t>(k) - (1 << 15);
    ++tick;
    switch (op % 12) {
      case 0:
      case 1:
        check(s.insert(k) == rs.insert(k).second);
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
