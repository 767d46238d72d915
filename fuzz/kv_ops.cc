// libFuzzer target: the input is a sequence of operations on a memory kv database (upsert,
// put, insert, update, remove, remove_range, bulk_load, get, cursor steps, count, commit,
// abort, nested transactions, runs of keys under one prefix and thinning a range one remove at
// a time, so that short inputs reach leaf splits and the merges of sparse leaves), replayed
// against std::map; any difference, any validate() complaint
// or any sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ops_input.h"
#include "simdex/kv.h"

namespace {

using fuzz::check;

struct reader : fuzz::input {
  // Short keys over a tiny alphabet (many shared prefixes), sometimes long ones.
  std::string key() {
    const std::uint8_t len = u8();
    if (len >= 250) return std::string(200 + (len - 250) * 100, static_cast<char>('a' + (len & 3)));
    std::string k(len % 12, '\0');
    static constexpr char alphabet[] = {'\0', '\x01', 'a', 'b', '\xfe', '\xff'};
    for (auto& c : k) c = alphabet[u8() % 6];
    return k;
  }
  std::string value() {
    const std::uint8_t len = u8();
    return std::string(len < 200 ? len % 70 : (len - 199) * 40, static_cast<char>(len));
  }
};

using model = std::map<std::string, std::string>;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simdex;
  reader in{data, size};
  kv::database db = kv::database::memory();
  model committed;
  kv::write_tx tx = db.write();
  model m = committed;
  std::optional<kv::write_tx> sub;
  model sm;
  while (in.n) {
    kv::write_tx& w = sub ? *sub : tx;
    model& mm = sub ? sm : m;
    const std::uint8_t op = in.u8() % 16;
    switch (op) {
      case 0:
      case 1: {
        const std::string k = in.key(), v = in.value();
        check(w.upsert(k, v) == !mm.count(k));
        mm[k] = v;
        break;
      }
      case 2: {
        const std::string k = in.key(), v = in.value();
        const bool fresh = !mm.count(k);
        check(w.insert(k, v) == fresh);
        if (fresh) mm[k] = v;
        break;
      }
      case 3: {
        const std::string k = in.key(), v = in.value();
        const bool had = mm.count(k);
        check(w.update(k, v) == had);
        if (had) mm[k] = v;
        break;
      }
      case 4: {
        const std::string k = in.key();
        check(w.remove(k) == (mm.erase(k) == 1));
        break;
      }
      case 5: {
        std::string lo = in.key(), hi = in.key();
        if (hi < lo) std::swap(lo, hi);
        auto a = mm.lower_bound(lo), b = mm.lower_bound(hi);
        check(w.remove_range(lo, hi) == static_cast<std::uint64_t>(std::distance(a, b)));
        mm.erase(a, b);
        break;
      }
      case 6: {
        const std::string k = in.key();
        auto got = w.get(k);
        auto it = mm.find(k);
        check(got.has_value() == (it != mm.end()));
        if (got) check(*got == it->second);
        check(w.count(k) == static_cast<std::uint64_t>(std::distance(mm.lower_bound(k), mm.end())));
        break;
      }
      case 7: {
        const std::string k = in.key();
        kv::cursor c = w.make_cursor();
        auto it = mm.lower_bound(k);
        check(c.lower_bound(k) == (it != mm.end()));
        for (int s = in.u8() % 8; s > 0 && it != mm.end(); --s) {
          check(c.key() == it->first && c.value() == it->second);
          ++it;
          check(c.next() == (it != mm.end()));
        }
        break;
      }
      case 8:
        if (!sub) {
          sub.emplace(tx.sub());
          sm = m;
        }
        break;
      case 9:
        if (sub) {
          if (in.u8() & 1) {
            sub->commit();
            m = sm;
          } else {
            sub->abort();
          }
          sub.reset();
        }
        break;
      case 10:
      case 11:
        if (sub) {
          sub->commit();
          m = sm;
          sub.reset();
        }
        if (op == 10) {
          tx.commit();
          committed = m;
        } else {
          tx.abort();
          m = committed;
        }
        db.validate();
        tx = db.write();
        break;
      case 12: {  // put: buffered, applied by the next operation
        const std::string k = in.key(), v = in.value();
        w.put(k, v);
        mm[k] = v;
        break;
      }
      case 13:  // bulk_load: sorted, distinct keys; built in one pass into an empty tree
        if (mm.empty()) {
          model batch;
          for (std::uint32_t i = in.u8(); i > 0; --i) batch[in.key()] = in.value();
          std::vector<std::pair<std::string_view, std::string_view>> pairs(batch.begin(),
                                                                           batch.end());
          w.bulk_load(pairs);
          mm = batch;
        }
        break;
      case 14: {  // up to 256 keys under one prefix: fills leaves in a few bytes of input
        const std::string base = in.key(), v = in.value();
        for (std::uint32_t i = 0, n = 1u + in.u8(); i < n && base.size() < kv::kMaxKey; ++i) {
          const std::string k = base + static_cast<char>(i);
          check(w.upsert(k, v) == !mm.count(k));
          mm[k] = v;
        }
        break;
      }
      case 15: {  // keeps every step-th key of [lo, hi) and removes the rest one by one
        std::string lo = in.key(), hi = in.key();
        if (hi < lo) std::swap(lo, hi);
        const unsigned step = 2u + in.u8() % 15u;
        std::vector<std::string> gone;
        unsigned i = 0;
        for (auto it = mm.lower_bound(lo); it != mm.end() && it->first < hi; ++it, ++i)
          if (i % step != 0) gone.push_back(it->first);
        for (const std::string& k : gone) {
          check(w.remove(k));
          mm.erase(k);
        }
        break;
      }
    }
  }
  if (sub) sub.reset();  // aborts
  tx.validate();
  check(tx.size() == m.size());
  kv::cursor c = tx.make_cursor();
  auto it = m.begin();
  for (bool ok = c.first(); ok; ok = c.next(), ++it) check(it != m.end() && c.key() == it->first);
  check(it == m.end());
  tx.abort();
  db.validate();
  return 0;
}
