// The btree's membership filter: large batch lookups answer as std::set does through every
// kind of write while the filter is built, kept, worn out and rebuilt, at every ISA level; it
// moves with the tree, clear and build drop it, batch_filter = false never builds it, and
// threads racing to build it agree.
#include "simdex/btree/membership.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "btree/btree_levels.h"
#include "simdex/btree.h"

namespace {

using simdex::isa;
using simdex::btree_detail::membership;

using simdex::testing::btree_levels;

constexpr std::size_t kBase = membership::kMinKeys + 4096;
constexpr std::size_t kBatch = 8192;  // over use_sweep's 4096 and a thirty-second of the tree

// Keys are 2 * i (present at the start) and 2 * i + 1 (absent until inserted); for floats,
// i - 1000 and i - 999.5, with -0.0 among the absent ones (0.0 is present).
template <class K>
K key_of(std::uint64_t i, bool odd) {
  if constexpr (std::is_floating_point_v<K>) {
    if (i == 0 && odd) return K(-0.0);
    return static_cast<K>(static_cast<double>(i) - 1000.0 + (odd ? 0.5 : 0.0));
  } else {
    return static_cast<K>(2 * i + (odd ? 1 : 0));
  }
}

template <class T>
struct harness {
  using K = typename T::key_type;
  static constexpr bool is_map = requires(T t, K k) { t.insert_or_assign(k, k); };

  using codec = simdex::btree_detail::codec<K>;
  T t;
  std::set<typename codec::stored> ref;  // stored form: -0.0 and 0.0 are two keys
  std::mt19937_64 r{42};

  explicit harness(isa l, bool on = true)
      : t({.pages = simdex::page_size::small, .level = l, .batch_filter = on}) {
    std::vector<K> ks;
    for (std::uint64_t i = 0; i < kBase; ++i) ks.push_back(key_of<K>(i, false));
    std::shuffle(ks.begin(), ks.end(), r);
    build(ks);
  }
  void build(const std::vector<K>& ks) {
    if constexpr (is_map)
      t.build(ks, ks);
    else
      t.build(ks);
    ref.clear();
    for (K k : ks) ref.insert(codec::encode(k));
  }
  bool has(K k) const { return ref.count(codec::encode(k)) != 0; }
  void forget(K k) { ref.erase(codec::encode(k)); }
  K any_key(double present_share) {
    std::uint64_t i = r() % (kBase + 1024);
    return key_of<K>(i, std::uniform_real_distribution<double>(0, 1)(r) >= present_share);
  }
  // A large batch, mostly absent keys unless present_share says otherwise, checked key by key.
  void check(double present_share, const char* when) {
    std::vector<K> q(kBatch);
    for (auto& k : q) k = any_key(present_share);
    std::unique_ptr<bool[]> out(new bool[q.size()]);
    t.contains_batch(q, out.get());
    for (std::size_t i = 0; i < q.size(); ++i)
      ASSERT_EQ(out[i], has(q[i])) << when << ": key " << q[i] << " at " << i;
  }
  void insert(K k) {
    if constexpr (is_map)
      t.insert_or_assign(k, k);
    else
      t.insert(k);
    ref.insert(codec::encode(k));
  }
  void insert_batch(const std::vector<K>& ks) {
    if constexpr (is_map)
      t.insert_batch(ks, ks);
    else
      t.insert_batch(ks);
    for (K k : ks) ref.insert(codec::encode(k));
  }
  void erase(K k) {
    t.erase(k);
    forget(k);
  }
};

template <class T>
void check_follows_writes(isa l) {
  using K = typename T::key_type;
  harness<T> h(l);
  ASSERT_EQ(h.t.filter_bytes(), 0u);
  h.check(0.5, "half present, no filter");
  ASSERT_EQ(h.t.filter_bytes(), 0u) << "built for a batch that found half its keys";
  h.check(0.0, "absent keys, no filter yet");
  ASSERT_GT(h.t.filter_bytes(), 0u) << "not built after a batch of absent keys";
  EXPECT_GE(h.t.memory_usage(), h.t.filter_bytes() + h.t.leaf_pages() * 4096);
  h.check(0.05, "through the filter");
  h.check(0.9, "mostly present: past the filter");

  // Single inserts of keys the batches ask for: each must reach the filter.
  for (std::uint64_t i = 0; i < 300; ++i) h.insert(key_of<K>(h.r() % kBase, true));
  h.insert(key_of<K>(0, true));  // -0.0 for floats, beside 0.0
  h.check(0.05, "after single inserts");
  // Batch inserts.
  std::vector<K> batch;
  for (int i = 0; i < 5000; ++i) batch.push_back(key_of<K>(h.r() % kBase, true));
  h.insert_batch(batch);
  h.check(0.05, "after a batch insert");
  // Erases of every kind leave bits behind, which the tree answers.
  for (int i = 0; i < 200; ++i) h.erase(key_of<K>(h.r() % kBase, h.r() & 1));
  std::vector<K> gone;
  for (int i = 0; i < 3000; ++i) gone.push_back(key_of<K>(h.r() % kBase, i & 1));
  h.t.erase_batch(gone);
  for (K k : gone) h.forget(k);
  auto it = h.t.lower_bound(key_of<K>(kBase / 2, false));
  K at = it.key();
  h.t.erase(it);
  h.forget(at);
  auto first = h.t.lower_bound(key_of<K>(kBase / 3, false));
  auto last = h.t.lower_bound(key_of<K>(kBase / 3 + 50, false));
  std::vector<K> range;
  for (auto i = first; i != last; ++i) range.push_back(i.key());
  h.t.erase(first, last);
  for (K k : range) h.forget(k);
  ASSERT_GT(h.t.filter_bytes(), 0u);
  h.check(0.05, "after erases");
  ASSERT_EQ(h.t.validate(), "");

  // Erasing more than half of what it was built for wears it out; the next batch of absent
  // keys builds a new one over the keys left.
  std::vector<K> half;
  for (auto s : h.ref) half.push_back(harness<T>::codec::decode(s));
  half.resize(half.size() * 6 / 10);
  h.t.erase_batch(half);
  for (K k : half) h.forget(k);
  EXPECT_EQ(h.t.filter_bytes(), 0u) << "a worn filter was kept";
  h.check(0.0, "after the drop");
  // Keys past the batches' range bring the tree back over kMinKeys; then a batch builds again.
  std::vector<K> far;
  for (std::uint64_t i = 0; i < kBase * 3 / 4; ++i) far.push_back(key_of<K>(2 * kBase + i, false));
  h.insert_batch(far);
  ASSERT_GE(h.t.size(), membership::kMinKeys);
  h.check(0.0, "before the rebuild");
  ASSERT_GT(h.t.filter_bytes(), 0u);
  h.check(0.05, "through the rebuilt filter");
  // Inserting more keys than it was built for wears it out too.
  std::vector<K> more;
  for (std::uint64_t i = 0; i < h.t.size() + 100; ++i)
    more.push_back(key_of<K>(4 * kBase + i, false));
  h.insert_batch(more);
  EXPECT_EQ(h.t.filter_bytes(), 0u) << "an overfull filter was kept";
  h.check(0.05, "after the second drop");
  ASSERT_EQ(h.t.validate(), "");
}

TEST(BtreeFilter, FollowsEveryWrite) {
  for (isa l : btree_levels<std::uint64_t, void>())
    check_follows_writes<simdex::btree_set<std::uint64_t>>(l);
  for (isa l : btree_levels<std::int32_t, void>())
    check_follows_writes<simdex::btree_set<std::int32_t>>(l);
  for (isa l : btree_levels<double, void>()) check_follows_writes<simdex::btree_set<double>>(l);
  for (isa l : btree_levels<std::uint32_t, std::uint32_t>())
    check_follows_writes<simdex::btree_map<std::uint32_t, std::uint32_t>>(l);
  for (isa l : btree_levels<float, float>())
    check_follows_writes<simdex::btree_map<float, float>>(l);
}

TEST(BtreeFilter, OffSmallAndHits) {
  using T = simdex::btree_set<std::uint64_t>;
  harness<T> off(isa::scalar, false);
  off.check(0.0, "off");
  off.check(0.0, "off");
  EXPECT_EQ(off.t.filter_bytes(), 0u);
  // A tree under kMinKeys keys never builds one.
  T small;
  std::vector<std::uint64_t> ks(membership::kMinKeys - 1);
  for (std::size_t i = 0; i < ks.size(); ++i) ks[i] = 2 * i;
  small.build(ks);
  std::vector<std::uint64_t> q(kBatch);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = 2 * i + 1;
  std::unique_ptr<bool[]> out(new bool[q.size()]);
  small.contains_batch(q, out.get());
  small.contains_batch(q, out.get());
  EXPECT_EQ(small.filter_bytes(), 0u);
  EXPECT_EQ(std::count(out.get(), out.get() + q.size(), true), 0);
  // Batches below the sweep's size never build one either.
  harness<T> h(isa::scalar);
  std::vector<std::uint64_t> few(1000, 1);
  std::unique_ptr<bool[]> o(new bool[few.size()]);
  h.t.contains_batch(few, o.get());
  EXPECT_EQ(h.t.filter_bytes(), 0u);
}

TEST(BtreeFilter, MovesClearsAndBuilds) {
  using T = simdex::btree_set<std::uint64_t>;
  harness<T> h(isa::scalar);
  h.check(0.0, "build it");
  std::size_t bytes = h.t.filter_bytes();
  ASSERT_GT(bytes, 0u);
  T moved(std::move(h.t));
  EXPECT_EQ(moved.filter_bytes(), bytes);
  EXPECT_EQ(h.t.filter_bytes(), 0u);
  h.t = std::move(moved);
  EXPECT_EQ(h.t.filter_bytes(), bytes);
  EXPECT_EQ(moved.filter_bytes(), 0u);
  h.check(0.05, "after the moves");
  // build replaces the keys: the filter of the old ones must go.
  std::vector<std::uint64_t> odd;
  for (std::uint64_t i = 0; i < kBase; ++i) odd.push_back(key_of<std::uint64_t>(i, true));
  h.build(odd);
  EXPECT_EQ(h.t.filter_bytes(), 0u);
  h.check(0.5, "after build");
  h.t.clear();
  h.ref.clear();
  EXPECT_EQ(h.t.filter_bytes(), 0u);
}

// Batch lookups are const: threads may run them at once, and may race to build the filter.
TEST(BtreeFilter, ThreadsRaceToBuildIt) {
  using T = simdex::btree_set<std::uint64_t>;
  harness<T> h(isa::scalar);
  std::vector<std::uint64_t> q(kBatch);
  for (std::size_t i = 0; i < q.size(); ++i) q[i] = key_of<std::uint64_t>(i * 7 % kBase, i % 16);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int w = 0; w < 4; ++w)
    threads.emplace_back([&, w] {
      std::unique_ptr<bool[]> out(new bool[q.size()]);
      for (int round = 0; round < 3; ++round) {
        h.t.contains_batch(q, out.get());
        for (std::size_t i = 0; i < q.size(); ++i) wrong[w] += out[i] != h.has(q[i]);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong, std::vector<int>(4, 0));
  EXPECT_GT(h.t.filter_bytes(), 0u);
}

}  // namespace
