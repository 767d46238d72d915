// Differential tests of simdex::btree_set / btree_map against std::set / std::map, at every
// ISA level this machine runs (each level's instantiation directly, in one process), with
// the structure validator after every phase.
#include "simdex/btree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <new>
#include <random>
#include <ranges>
#include <set>
#include <type_traits>
#include <utility>
#include <vector>

#include "btree/btree_levels.h"

namespace {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIMDEX_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIMDEX_TEST_ASAN 1
#endif
#ifdef SIMDEX_TEST_ASAN
constexpr std::size_t kScale = 10;
#else
constexpr std::size_t kScale = 1;
#endif

using simdex::isa;

using simdex::testing::btree_levels;

// Keys from a domain of `domain` values spread over the type's range, plus the extremes.
template <class K>
K make_key(std::uint64_t r, std::uint64_t domain) {
  using lim = std::numeric_limits<K>;
  std::uint64_t pick = r % 1000;
  std::uint64_t i = (r >> 10) % domain;
  if constexpr (std::is_floating_point_v<K>) {
    switch (pick) {
      case 0:
        return lim::infinity();
      case 1:
        return -lim::infinity();
      case 2:
        return K(0.0);
      case 3:
        return K(-0.0);
      case 4:
        return lim::max();
      case 5:
        return lim::lowest();
      case 6:
        return lim::denorm_min();
      case 7:
        return -lim::denorm_min();
      default:
        return K((static_cast<double>(i) - static_cast<double>(domain) / 2) * 0.37);
    }
  } else {
    switch (pick) {
      case 0:
        return lim::max();
      case 1:
        return lim::min();
      case 2:
        return K(lim::max() - 1);
      case 3:
        return K(lim::min() + 1);
      case 4:
        return K(0);
      default: {
        // Spread the domain across the whole range (both signs for signed types).
        using U = std::make_unsigned_t<K>;
        U stride = static_cast<U>(lim::max() / static_cast<K>(domain > 1 ? domain : 1));
        if constexpr (std::is_signed_v<K>)
          return static_cast<K>(static_cast<K>(i) * static_cast<K>(stride / 2 + 1) -
                                lim::max() / 2);
        else
          return static_cast<K>(static_cast<U>(i) * stride);
      }
    }
  }
}

template <class K>
bool same_key(K a, K b) {
  if constexpr (std::is_floating_point_v<K>)
    return std::memcmp(&a, &b, sizeof(K)) == 0;
  else
    return a == b;
}

// std::set ordering that matches IEEE totalOrder (so -0.0 < +0.0).
template <class K>
struct total_less {
  bool operator()(K a, K b) const {
    using C = simdex::btree_detail::codec<K>;
    return C::encode(a) < C::encode(b);
  }
};

template <class K, class V>
struct value_of {
  static V make(std::uint64_t r) {
    V v{};
    std::memcpy(&v, &r, sizeof(V) < 8 ? sizeof(V) : 8);
    return v;
  }
};

template <class Tree>
void expect_valid(const Tree& t, const char* phase) {
  std::string why = t.validate();
  ASSERT_EQ(why, "") << "phase " << phase;
}

// One full differential run of a set at one level.
template <class K>
void run_set(isa level, std::uint64_t seed, std::size_t ops, std::uint64_t domain) {
  SCOPED_TRACE(std::string("level ") + simdex::isa_name(level) + " domain " +
               std::to_string(domain));
  simdex::btree_set<K> t(
      {.pages = seed & 1 ? simdex::page_size::huge : simdex::page_size::small, .level = level});
  ASSERT_STREQ(t.isa(), level == isa::avx512 ? "avx512" : level == isa::avx2 ? "avx2" : "scalar");
  std::set<K, total_less<K>> ref;
  std::mt19937_64 rng(seed);
  auto check_iter = [&](const char* phase) {
    expect_valid(t, phase);
    ASSERT_EQ(t.size(), ref.size()) << phase;
    auto it = t.begin();
    for (K k : ref) {
      ASSERT_TRUE(it != t.end()) << phase;
      ASSERT_TRUE(same_key(*it, k)) << phase;
      ++it;
    }
    ASSERT_TRUE(it == t.end()) << phase;
    // Backwards from end().
    auto rit = t.end();
    for (auto r = ref.rbegin(); r != ref.rend(); ++r) {
      --rit;
      ASSERT_TRUE(same_key(*rit, *r)) << phase;
    }
  };
  // The tree's iterator a and the reference's b point at the same key, or both at the end.
  auto same_place = [&](auto a, auto b) {
    ASSERT_EQ(a == t.end(), b == ref.end());
    if (b != ref.end()) {
      ASSERT_TRUE(same_key(*a, *b));
    }
  };
  auto one_op = [&](std::uint64_t r, int insert_weight) {
    K k = make_key<K>(rng(), domain);
    int op = static_cast<int>(r % 100);
    if (op < insert_weight) {
      ASSERT_EQ(t.insert(k), ref.insert(k).second);
    } else if (op < 70) {
      ASSERT_EQ(t.erase(k), ref.erase(k) == 1);
    } else if (op < 80) {
      ASSERT_EQ(t.contains(k), ref.count(k) == 1);
    } else if (op < 86) {
      same_place(t.lower_bound(k), ref.lower_bound(k));
    } else if (op < 90) {
      same_place(t.upper_bound(k), ref.upper_bound(k));
    } else if (op < 94) {
      auto a = t.predecessor(k);
      auto b = ref.lower_bound(k);
      bool none = b == ref.begin();
      ASSERT_EQ(a == t.end(), none);
      if (!none) {
        ASSERT_TRUE(same_key(*a, *std::prev(b)));
      }
    } else if (op < 97) {
      if (ref.size() > 3000) return;  // std::distance is linear: rank is checked in bulk below
      std::size_t rk = t.rank(k);
      ASSERT_EQ(rk, static_cast<std::size_t>(std::distance(ref.begin(), ref.lower_bound(k))));
    } else if (op < 99) {
      auto f = t.find(k);
      ASSERT_EQ(f == t.end(), ref.count(k) == 0);
      if (f != t.end()) {
        ASSERT_TRUE(same_key(*f, k));
      }
    } else if (!ref.empty()) {
      // erase(iterator) returns the next position.
      auto b = ref.lower_bound(k);
      if (b == ref.end()) b = ref.begin();
      auto a = t.find(*b);
      ASSERT_TRUE(a != t.end());
      auto next = t.erase(a);
      auto rnext = ref.erase(b);
      ASSERT_EQ(next == t.end(), rnext == ref.end());
      if (rnext != ref.end()) {
        ASSERT_TRUE(same_key(*next, *rnext));
      }
    }
  };
  // Grow, churn, shrink.
  for (std::size_t i = 0; i < ops / 2; ++i) ASSERT_NO_FATAL_FAILURE(one_op(rng(), 60));
  ASSERT_NO_FATAL_FAILURE(check_iter("grow"));
  for (std::size_t i = 0; i < ops / 4; ++i) ASSERT_NO_FATAL_FAILURE(one_op(rng(), 35));
  ASSERT_NO_FATAL_FAILURE(check_iter("churn"));
  for (std::size_t i = 0; i < ops / 4; ++i) ASSERT_NO_FATAL_FAILURE(one_op(rng(), 15));
  ASSERT_NO_FATAL_FAILURE(check_iter("shrink"));
  // nth / rank over everything.
  {
    std::size_t i = 0;
    for (K k : ref) {
      auto it = t.nth(i);
      ASSERT_TRUE(same_key(*it, k));
      ASSERT_EQ(t.rank(k), i);
      ++i;
    }
    ASSERT_TRUE(t.nth(ref.size()) == t.end());
  }
  // Batches.
  std::vector<K> batch(2000 + domain % 3000);
  for (K& k : batch) k = make_key<K>(rng(), domain);
  std::size_t added = t.insert_batch(batch);
  std::size_t expect_added = 0;
  for (K k : batch) expect_added += ref.insert(k).second;
  ASSERT_EQ(added, expect_added);
  ASSERT_NO_FATAL_FAILURE(check_iter("insert_batch"));
  for (K& k : batch) k = make_key<K>(rng(), domain);
  // Twice: below 4096 queries the batch descends interleaved, above it is sorted and swept.
  for (std::size_t bsize : {batch.size(), std::size_t{6000}}) {
    batch.resize(bsize);
    for (K& k : batch) k = make_key<K>(rng(), domain);
    std::unique_ptr<bool[]> found(new bool[batch.size()]);
    t.contains_batch(batch, found.get());
    std::vector<std::uint64_t> ranks(batch.size());
    t.rank_batch(batch, ranks.data());
    std::vector<typename simdex::btree_set<K>::iterator> lbs(batch.size());
    t.lower_bound_batch(batch, lbs.data());
    std::vector<K> sorted(ref.begin(), ref.end());
    for (std::size_t i = 0; i < batch.size(); ++i) {
      ASSERT_EQ(found[i], ref.count(batch[i]) == 1);
      auto b = ref.lower_bound(batch[i]);
      ASSERT_EQ(ranks[i], static_cast<std::uint64_t>(std::lower_bound(sorted.begin(), sorted.end(),
                                                                      batch[i], total_less<K>()) -
                                                     sorted.begin()));
      ASSERT_EQ(lbs[i] == t.end(), b == ref.end());
      if (b != ref.end()) {
        ASSERT_TRUE(same_key(*lbs[i], *b));
      }
    }
  }
  std::size_t gone = t.erase_batch(batch);
  std::size_t expect_gone = 0;
  for (K k : batch) expect_gone += ref.erase(k);
  ASSERT_EQ(gone, expect_gone);
  ASSERT_NO_FATAL_FAILURE(check_iter("erase_batch"));
  // Range erase in the middle, then the tail.
  if (ref.size() > 10) {
    auto rf = std::next(ref.begin(), static_cast<long>(ref.size() / 4));
    auto rl = std::next(rf, static_cast<long>(ref.size() / 3));
    auto first = t.find(*rf), last = t.find(*rl);
    auto next = t.erase(first, last);
    K stop = *rl;
    ref.erase(rf, rl);
    ASSERT_TRUE(same_key(*next, stop));
    ASSERT_NO_FATAL_FAILURE(check_iter("range erase"));
    auto tail = t.find(*std::next(ref.begin(), static_cast<long>(ref.size() / 2)));
    ref.erase(std::next(ref.begin(), static_cast<long>(ref.size() / 2)), ref.end());
    ASSERT_TRUE(t.erase(tail, t.end()) == t.end());
    ASSERT_NO_FATAL_FAILURE(check_iter("tail erase"));
  }
  // Drain to empty, then reuse.
  std::vector<K> rest(ref.begin(), ref.end());
  std::shuffle(rest.begin(), rest.end(), rng);
  for (K k : rest) ASSERT_TRUE(t.erase(k));
  ref.clear();
  ASSERT_NO_FATAL_FAILURE(check_iter("drained"));
  ASSERT_TRUE(t.begin() == t.end());
  for (std::size_t i = 0; i < 500; ++i) ASSERT_NO_FATAL_FAILURE(one_op(rng(), 70));
  ASSERT_NO_FATAL_FAILURE(check_iter("reuse"));
}

template <class K>
class BtreeSet : public ::testing::Test {};
using KeyTypes =
    ::testing::Types<std::uint32_t, std::int32_t, std::uint64_t, std::int64_t, float, double>;
TYPED_TEST_SUITE(BtreeSet, KeyTypes);

TYPED_TEST(BtreeSet, DifferentialSmallDomain) {
  // Small domains keep the tree a few pages wide: many splits, merges, empty pages.
  std::uint64_t seed = 1;
  for (isa l : btree_levels<TypeParam, void>())
    for (std::uint64_t domain : {300u, 5000u})
      run_set<TypeParam>(l, seed++, 60000 / kScale, domain);
}

TYPED_TEST(BtreeSet, DifferentialLargeDomain) {
  std::uint64_t seed = 100;
  for (isa l : btree_levels<TypeParam, void>())
    run_set<TypeParam>(l, seed++, 160000 / kScale, 1u << 30);
}

TYPED_TEST(BtreeSet, SequentialAndBuild) {
  using K = TypeParam;
  for (isa l : btree_levels<K, void>()) {
    SCOPED_TRACE(simdex::isa_name(l));
    std::size_t n = 150000 / kScale;
    std::vector<K> keys;
    for (std::size_t i = 0; i < n; ++i) keys.push_back(static_cast<K>(i * 3));
    simdex::btree_set<K> up({.level = l}), down({.level = l}), built({.level = l}),
        unsorted({.level = l});
    for (K k : keys) ASSERT_TRUE(up.insert(k));
    for (auto it = keys.rbegin(); it != keys.rend(); ++it) ASSERT_TRUE(down.insert(*it));
    built.build_sorted(keys);
    std::vector<K> shuffled = keys;
    shuffled.insert(shuffled.end(), keys.begin(), keys.begin() + 100);  // duplicates dropped
    std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937_64(7));
    unsorted.build(shuffled);
    for (auto* t : {&up, &down, &built, &unsorted}) {
      expect_valid(*t, "sequential");
      ASSERT_EQ(t->size(), n);
      std::size_t i = 0;
      for (K k : *t) ASSERT_TRUE(same_key(k, keys[i++]));
    }
    // Appends fill pages: close to 4 KiB per 928 (4-byte) / 464 (8-byte) keys.
    double per_key = double(up.leaf_pages() * 4096) / double(n);
    EXPECT_LT(per_key, sizeof(K) * 1.25) << "append splits should leave full pages";
    std::vector<K> bad = {K(1), K(3), K(2)};
    EXPECT_THROW(built.build_sorted(bad), std::invalid_argument);
    // Random inserts then erase everything in random order, validating along the way.
    simdex::btree_set<K> r({.level = l});
    std::mt19937_64 rng(3);
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (std::size_t i = 0; i < shuffled.size(); ++i) {
      r.insert(shuffled[i]);
      if (i % 50000 == 0) expect_valid(r, "random insert");
    }
    expect_valid(r, "random insert");
    ASSERT_EQ(r.size(), n);
    std::shuffle(keys.begin(), keys.end(), rng);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(r.erase(keys[i]));
      if (i % 50000 == 0) expect_valid(r, "random erase");
    }
    expect_valid(r, "random erase");
    ASSERT_TRUE(r.empty());
  }
}

// contains (its own kernel: equality mask, guessed blocks) for every key and both its
// neighbours, in a tree of many leaves, after erases that leave blocks' first keys above their
// index keys, and at the type's extremes.
TYPED_TEST(BtreeSet, ContainsAroundEveryKey) {
  using K = TypeParam;
  using lim = std::numeric_limits<K>;
  auto near = [](K k, int d) {
    if constexpr (std::is_floating_point_v<K>)
      return std::nextafter(k, d < 0 ? -lim::infinity() : lim::infinity());
    else  // wraps at the extremes (in unsigned arithmetic: no signed overflow)
      return static_cast<K>(static_cast<std::make_unsigned_t<K>>(k) +
                            static_cast<std::make_unsigned_t<K>>(d));
  };
  for (isa l : btree_levels<K, void>()) {
    SCOPED_TRACE(simdex::isa_name(l));
    simdex::btree_set<K> t({.level = l});
    std::set<K> ref;
    std::mt19937_64 rng(21);
    for (std::size_t i = 0; i < 80000 / kScale; ++i) {
      std::uint64_t r = rng();
      K k;
      if constexpr (std::is_floating_point_v<K>)
        k = static_cast<K>(static_cast<double>(static_cast<std::int64_t>(r)) * 1e-3);
      else
        k = static_cast<K>(r);
      t.insert(k);
      ref.insert(k);
    }
    for (K k : {lim::max(), lim::lowest(), K(0)}) {
      t.insert(k);
      ref.insert(k);
    }
    std::vector<K> all(ref.begin(), ref.end());
    for (std::size_t i = 0; i < all.size(); i += 3) {
      t.erase(all[i]);
      ref.erase(all[i]);
    }
    expect_valid(t, "contains");
    for (K k : all)
      for (int d : {-1, 0, 1}) {
        K q = near(k, d);
        ASSERT_EQ(t.contains(q), ref.count(q) == 1) << q;
      }
  }
}

// A lookup searches the leaf's index in a window around the block its parent's separators
// guess, and the whole index when the window does not settle it. Keys bunched at the bottom of
// each leaf's range make the guess wrong for most of a leaf (the fallback), random keys make it
// right (the window); every key, its neighbours and the extremes are asked of contains, find,
// lower_bound, upper_bound and rank, against std::set, in sets and in a map (whose pages have fewer
// blocks).
template <class K, class V>
void lookups_across_window(isa l) {
  using lim = std::numeric_limits<K>;
  using U = std::make_unsigned_t<K>;
  SCOPED_TRACE(simdex::isa_name(l));
  std::conditional_t<std::is_void_v<V>, simdex::btree_set<K>, simdex::btree_map<K, int>> t(
      {.level = l});
  std::set<K> ref;
  std::mt19937_64 rng(5);
  auto add = [&](K k) {
    if constexpr (std::is_void_v<V>)
      t.insert(k);
    else
      t.insert(k, 1);
    ref.insert(k);
  };
  // Runs of 1000 consecutive keys, each at the bottom of a range of 2^(bits - 8).
  const unsigned shift = sizeof(K) * 8 - 8;
  for (U g = 0; g < 60; ++g)
    for (U i = 0; i < 1000 / kScale; ++i) add(static_cast<K>((g << shift) + i));
  for (int i = 0; i < 10000 / static_cast<int>(kScale); ++i) add(static_cast<K>(rng()));
  for (K k : {lim::max(), static_cast<K>(lim::max() - 1), lim::min()}) add(k);
  expect_valid(t, "window");
  std::vector<K> all(ref.begin(), ref.end());
  auto check = [&](K q) {
    auto r = ref.lower_bound(q);
    ASSERT_EQ(t.contains(q), r != ref.end() && *r == q) << q;
    ASSERT_EQ(t.find(q) != t.end(), r != ref.end() && *r == q) << q;
    auto lb = t.lower_bound(q);
    ASSERT_EQ(lb == t.end(), r == ref.end()) << q;
    if (r != ref.end()) {
      ASSERT_EQ(lb.key(), *r) << q;
    }
    auto u = ref.upper_bound(q);
    auto ub = t.upper_bound(q);
    ASSERT_EQ(ub == t.end(), u == ref.end()) << q;
    if (u != ref.end()) {
      ASSERT_EQ(ub.key(), *u) << q;
    }
    ASSERT_EQ(t.rank(q),
              static_cast<std::size_t>(std::lower_bound(all.begin(), all.end(), q) - all.begin()))
        << q;
  };
  for (K k : all)
    for (U d : {U(0), U(1), static_cast<U>(~U(0))}) check(static_cast<K>(static_cast<U>(k) + d));
  // The largest key alone in the last leaf's first blocks: unused index entries hold it too,
  // so a query for it is never settled by the window (it would count the unused blocks).
  for (U n : {U(3000), U(3011), U(3037), U(3101)}) {
    t.clear();
    ref.clear();
    for (U i = 0; i < n; ++i) add(static_cast<K>(i));
    add(lim::max());
    all.assign(ref.begin(), ref.end());
    for (K q :
         {lim::max(), static_cast<K>(lim::max() - 1), static_cast<K>(n - 1), static_cast<K>(n)})
      check(q);
  }
}

TEST(BtreeSearch, LookupsAcrossTheGuessWindow) {
  for (isa l : btree_levels<std::uint64_t, void>()) lookups_across_window<std::uint64_t, void>(l);
  for (isa l : btree_levels<std::int64_t, void>()) lookups_across_window<std::int64_t, void>(l);
  for (isa l : btree_levels<std::uint32_t, void>()) lookups_across_window<std::uint32_t, void>(l);
  for (isa l : btree_levels<std::int32_t, void>()) lookups_across_window<std::int32_t, void>(l);
  for (isa l : btree_levels<std::uint64_t, int>()) lookups_across_window<std::uint64_t, int>(l);
  for (isa l : btree_levels<std::uint32_t, int>()) lookups_across_window<std::uint32_t, int>(l);
}

// Deep trees: enough keys for three inner levels' worth of splits on 8-byte keys.
TEST(BtreeDeep, ManyKeys) {
  std::size_t n = 3000000 / kScale;
  simdex::btree_set<std::uint64_t> t;
  std::mt19937_64 rng(11);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = rng();
  t.insert_batch(keys);
  expect_valid(t, "deep batch");
  EXPECT_GE(t.height(), 3u);
  std::unique_ptr<bool[]> found(new bool[n]);
  t.contains_batch(keys, found.get());
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(found[i]);
  std::vector<std::uint64_t> half(keys.begin(), keys.begin() + static_cast<long>(n / 2));
  t.erase_batch(half);
  expect_valid(t, "deep erase");
  std::set<std::uint64_t> ref(keys.begin() + static_cast<long>(n / 2), keys.end());
  ASSERT_EQ(t.size(), ref.size());
  auto it = t.begin();
  for (auto k : ref) ASSERT_EQ(*it++, k);
}

// Batches of 4096 keys or more are grouped by key range (a counting pass over the top bits of
// key - min) before sorting or sweeping; skewed batches put most keys in one group.
TEST(BtreeBatch, GroupByRange) {
  std::mt19937_64 rng(21);
  for (int shape = 0; shape < 4; ++shape) {
    std::vector<std::int64_t> keys(20000);
    for (auto& k : keys) {
      std::uint64_t r = rng();
      k = shape == 0   ? static_cast<std::int64_t>(r)               // whole range
          : shape == 1 ? static_cast<std::int64_t>(r % 1000) - 500  // repeats
          : shape == 2 ? (r % 100 == 0 ? std::numeric_limits<std::int64_t>::max()
                                       : static_cast<std::int64_t>(r % 5000))  // one far key
                       : std::int64_t{7};                                      // all equal
    }
    std::vector<std::int64_t> out(keys.size());
    std::vector<std::uint32_t> at(keys.size());
    auto start = simdex::btree_detail::group_by_range<std::int64_t>(keys.data(), keys.size(), 10,
                                                                    out.data(), at.data());
    ASSERT_EQ(start.size(), 1025u);
    ASSERT_EQ(start.front(), 0u);
    ASSERT_EQ(start.back(), keys.size());
    std::vector<bool> seen(keys.size());
    std::int64_t below = std::numeric_limits<std::int64_t>::min();  // max of earlier groups
    for (std::size_t b = 0; b + 1 < start.size(); ++b) {
      ASSERT_LE(start[b], start[b + 1]);
      std::int64_t top = below;
      for (std::uint32_t i = start[b]; i < start[b + 1]; ++i) {
        ASSERT_EQ(out[i], keys[at[i]]);
        ASSERT_FALSE(seen[at[i]]);
        seen[at[i]] = true;
        if (i > start[b]) {
          ASSERT_LT(at[i - 1], at[i]) << "input order inside a group";
        }
        ASSERT_LE(below, out[i]) << "groups in key order";
        top = std::max(top, out[i]);
      }
      below = top;
    }
  }
}

// Every level's batch sort (buckets ranked in place, crowded ones sorted) against std::sort and
// std::unique, over batch shapes that make empty, single, full (16) and crowded buckets.
template <class S>
void check_sort_unique() {
  std::mt19937_64 rng(23);
  for (auto& [l, k] : simdex::testing::usable_levels(simdex::btree_detail::kernel_tables<S, 0>())) {
    SCOPED_TRACE(simdex::isa_name(l));
    for (std::size_t n :
         {std::size_t{4095}, std::size_t{4096}, std::size_t{4097}, std::size_t{70001}}) {
      for (int shape = 0; shape < 8; ++shape) {
        SCOPED_TRACE(testing::Message() << "n " << n << " shape " << shape);
        std::vector<S> keys(n);
        for (std::size_t i = 0; i < n; ++i) {
          std::uint64_t r = rng();
          keys[i] = shape == 0   ? static_cast<S>(r)               // whole range
                    : shape == 1 ? static_cast<S>(r % 1000) - 500  // repeats
                    : shape == 2 ? (r % 100 == 0 ? std::numeric_limits<S>::max()
                                                 : static_cast<S>(r % 5000))  // one far key
                    : shape == 3 ? S{7}                                       // all equal
                    : shape == 4 ? static_cast<S>(i * 3)                      // ascending
                    : shape == 5 ? static_cast<S>(n - i)                      // descending
                    : shape == 6 ? static_cast<S>(r % (n / 4)) * 1000  // a few in each bucket
                    // Repeats in a few buckets only, the first and last buckets among them.
                    : i > 0 && r % 97 == 0 ? keys[r % i]
                    : i % 1000 == 1        ? std::numeric_limits<S>::min()
                    : i % 1000 == 2        ? std::numeric_limits<S>::max()
                                           : static_cast<S>(r);
        }
        std::vector<S> want = keys;
        std::sort(want.begin(), want.end());
        want.erase(std::unique(want.begin(), want.end()), want.end());
        std::size_t m = k->sort_unique(keys.data(), nullptr, keys.size(), false);
        keys.resize(m);
        ASSERT_EQ(keys, want);
      }
    }
  }
}

// With 8-byte values: every level against the baseline sort (std::stable_sort of positions),
// the first or the last value of a repeated key kept.
template <class S>
void check_sort_unique_vals() {
  std::mt19937_64 rng(29);
  for (auto& [l, k] : simdex::testing::usable_levels(simdex::btree_detail::kernel_tables<S, 8>())) {
    SCOPED_TRACE(simdex::isa_name(l));
    for (std::size_t n : {std::size_t{4096}, std::size_t{50001}}) {
      for (int shape = 0; shape < 3; ++shape) {
        for (bool keep_last : {false, true}) {
          SCOPED_TRACE(testing::Message()
                       << "n " << n << " shape " << shape << " last " << keep_last);
          std::vector<S> keys(n);
          std::vector<std::uint64_t> vals(n);
          for (std::size_t i = 0; i < n; ++i) {
            std::uint64_t r = rng();
            keys[i] = shape == 0   ? static_cast<S>(r)               // few repeats
                      : shape == 1 ? static_cast<S>(r % (n / 3))     // many, in every bucket
                                   : static_cast<S>(r % 50) * 1000;  // crowded buckets
            vals[i] = i;
          }
          std::vector<S> wk = keys;
          std::vector<std::uint64_t> wv = vals;
          std::size_t want = simdex::btree_detail::sort_unique<S>(
              wk.data(), reinterpret_cast<std::byte*>(wv.data()), 8, n, keep_last);
          std::size_t m =
              k->sort_unique(keys.data(), reinterpret_cast<std::byte*>(vals.data()), n, keep_last);
          ASSERT_EQ(m, want);
          for (std::size_t i = 0; i < m; ++i) {
            ASSERT_EQ(keys[i], wk[i]) << i;
            ASSERT_EQ(vals[i], wv[i]) << i;
          }
        }
      }
    }
  }
}

TEST(BtreeBatch, SortUniqueEveryLevel) {
  check_sort_unique<std::int32_t>();
  check_sort_unique<std::int64_t>();
  check_sort_unique_vals<std::int32_t>();
  check_sort_unique_vals<std::int64_t>();
}

// The sweep groups a batch over the tree's own key range: keys outside it land in one last
// group (input order), and the largest and smallest key values, present or not, are answered
// right (unused block lanes hold the largest value).
TEST(BtreeBatch, GroupInRangeAndExtremes) {
  std::vector<std::int64_t> keys = {5, -3, 100, 7, 1000, 6, -50, 99};
  std::vector<std::int64_t> out(keys.size());
  std::vector<std::uint32_t> at(keys.size());
  auto start = simdex::btree_detail::group_in_range<std::int64_t>(keys.data(), keys.size(), 0, 100,
                                                                  2, out.data(), at.data());
  ASSERT_EQ(start.size(), 6u);
  EXPECT_EQ(start[4], 5u);  // 5, 7, 6 | 100, 99 in range; -3, 1000, -50 after them
  EXPECT_EQ(std::vector<std::int64_t>(out.begin() + 5, out.end()),
            (std::vector<std::int64_t>{-3, 1000, -50}));
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(out[i], keys[at[i]]);
  using L = std::numeric_limits<std::uint64_t>;
  for (isa l : btree_levels<std::uint64_t, void>()) {
    SCOPED_TRACE(simdex::isa_name(l));
    simdex::btree_set<std::uint64_t> t({.level = l});
    std::vector<std::uint64_t> q(6000);
    std::unique_ptr<bool[]> found(new bool[q.size()]);
    for (std::size_t i = 0; i < q.size(); ++i) q[i] = i % 3 == 0 ? L::max() : i % 3 == 1 ? 0 : i;
    t.contains_batch(q, found.get());  // empty tree
    for (std::size_t i = 0; i < q.size(); ++i) ASSERT_FALSE(found[i]);
    for (std::uint64_t k = 1; k < 40000; ++k) t.insert(k * 1000);
    for (int with_ends = 0; with_ends < 2; ++with_ends) {
      if (with_ends) {
        t.insert(L::max());
        t.insert(0);
      }
      t.contains_batch(q, found.get());
      for (std::size_t i = 0; i < q.size(); ++i)
        ASSERT_EQ(found[i], t.contains(q[i])) << i << " " << q[i];
    }
  }
}

TYPED_TEST(BtreeSet, LargeBatchesGrouped) {
  using K = TypeParam;
  for (isa l : btree_levels<K, void>()) {
    SCOPED_TRACE(simdex::isa_name(l));
    std::mt19937_64 rng(31);
    for (std::uint64_t domain : {std::uint64_t{700}, std::uint64_t{1} << 30}) {
      simdex::btree_set<K> t({.level = l});
      std::set<K, total_less<K>> ref;
      for (int round = 0; round < 3; ++round) {
        // Clustered keys with a few extremes, repeats included.
        std::vector<K> batch(5000 + 3000 * static_cast<std::size_t>(round));
        for (K& k : batch) k = make_key<K>(rng(), domain);
        std::size_t added = t.insert_batch(batch);
        std::size_t expect_added = 0;
        for (K k : batch) expect_added += ref.insert(k).second;
        ASSERT_EQ(added, expect_added);
        expect_valid(t, "grouped insert_batch");
        ASSERT_TRUE(std::equal(t.begin(), t.end(), ref.begin(), ref.end(),
                               [](K a, K b) { return same_key(a, b); }));
        std::vector<K> queries(t.size() / 8 + 4100);
        for (K& k : queries) k = make_key<K>(rng(), domain + 50);
        std::unique_ptr<bool[]> found(new bool[queries.size()]);
        t.contains_batch(queries, found.get());
        std::vector<std::uint64_t> ranks(queries.size());
        t.rank_batch(queries, ranks.data());
        std::vector<K> sorted(ref.begin(), ref.end());
        for (std::size_t i = 0; i < queries.size(); ++i) {
          ASSERT_EQ(found[i], ref.count(queries[i]) == 1) << i;
          auto lb = std::lower_bound(sorted.begin(), sorted.end(), queries[i], total_less<K>());
          ASSERT_EQ(ranks[i], static_cast<std::uint64_t>(lb - sorted.begin())) << i;
        }
        std::vector<K> gone(batch.begin(), batch.begin() + static_cast<long>(batch.size() / 2));
        std::size_t erased = t.erase_batch(gone);
        std::size_t expect_erased = 0;
        for (K k : gone) expect_erased += ref.erase(k);
        ASSERT_EQ(erased, expect_erased);
        expect_valid(t, "grouped erase_batch");
      }
    }
  }
}

TEST(BtreeBoundary, FloatsAndNaN) {
  simdex::btree_set<double> t;
  EXPECT_THROW(t.insert(std::nan("")), std::invalid_argument);
  EXPECT_THROW((void)t.contains(std::nan("")), std::invalid_argument);
  EXPECT_TRUE(t.insert(0.0));
  EXPECT_TRUE(t.insert(-0.0));  // distinct in totalOrder
  EXPECT_TRUE(t.insert(std::numeric_limits<double>::infinity()));
  EXPECT_TRUE(t.insert(-std::numeric_limits<double>::infinity()));
  EXPECT_EQ(t.size(), 4u);
  std::vector<double> got(t.begin(), t.end());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_TRUE(std::signbit(got[1]) && got[1] == 0.0);
  EXPECT_TRUE(!std::signbit(got[2]) && got[2] == 0.0);
  EXPECT_EQ(got[0], -std::numeric_limits<double>::infinity());
  std::vector<float> withnan = {1.0f, std::nanf(""), 2.0f};
  simdex::btree_set<float> f;
  EXPECT_THROW(f.insert_batch(withnan), std::invalid_argument);
  EXPECT_TRUE(f.empty());
}

TEST(BtreeBoundary, IntegerExtremes) {
  simdex::btree_set<std::uint32_t> t;
  for (std::uint32_t k : {0u, 1u, 0xffffffffu, 0xfffffffeu, 0x80000000u, 0x7fffffffu})
    EXPECT_TRUE(t.insert(k));
  EXPECT_TRUE(t.contains(0xffffffffu));
  EXPECT_EQ(*t.lower_bound(0xffffffffu), 0xffffffffu);
  EXPECT_TRUE(t.upper_bound(0xffffffffu) == t.end());
  EXPECT_TRUE(t.predecessor(0u) == t.end());
  EXPECT_EQ(*t.begin(), 0u);
  EXPECT_EQ(*--t.end(), 0xffffffffu);
  EXPECT_EQ(t.validate(), "");
  simdex::btree_set<std::int64_t> s;
  auto mn = std::numeric_limits<std::int64_t>::min(), mx = std::numeric_limits<std::int64_t>::max();
  EXPECT_TRUE(s.insert(mx));
  EXPECT_TRUE(s.insert(mn));
  EXPECT_FALSE(s.contains(mx - 1));
  EXPECT_TRUE(s.contains(mx));
  EXPECT_EQ(*s.begin(), mn);
  EXPECT_TRUE(s.erase(mx));
  EXPECT_FALSE(s.contains(mx));
}

// Maps: values travel with their keys through every split, shift and merge.
template <class K, class V>
void run_map(isa level, std::uint64_t seed, std::size_t ops, std::uint64_t domain) {
  SCOPED_TRACE(simdex::isa_name(level));
  simdex::btree_map<K, V> t({.level = level});
  std::map<K, V, total_less<K>> ref;
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < ops; ++i) {
    K k = make_key<K>(rng(), domain);
    std::uint64_t r = rng();
    V v = value_of<K, V>::make(r);
    int op = static_cast<int>(r % 10);
    if (op < 4) {
      bool inserted = ref.find(k) == ref.end();
      ASSERT_EQ(t.insert(k, v), inserted);
      if (inserted) ref[k] = v;
    } else if (op < 5) {
      ASSERT_EQ(t.insert_or_assign(k, v), ref.find(k) == ref.end());
      ref[k] = v;
    } else if (op < 8) {
      ASSERT_EQ(t.erase(k), ref.erase(k) == 1);
    } else {
      auto g = t.get(k);
      auto it = ref.find(k);
      ASSERT_EQ(g.has_value(), it != ref.end());
      if (g) {
        ASSERT_EQ(std::memcmp(&*g, &it->second, sizeof(V)), 0);
      }
    }
  }
  expect_valid(t, "map ops");
  std::vector<K> ks;
  std::vector<V> vs;
  for (int i = 0; i < 3000; ++i) {
    ks.push_back(make_key<K>(rng(), domain));
    vs.push_back(value_of<K, V>::make(rng()));
  }
  t.insert_batch(ks, vs, true);
  for (std::size_t i = 0; i < ks.size(); ++i) ref[ks[i]] = vs[i];
  expect_valid(t, "map batch");
  ASSERT_EQ(t.size(), ref.size());
  auto it = t.begin();
  for (auto& [k, v] : ref) {
    ASSERT_TRUE(same_key(it.key(), k));
    ASSERT_EQ(std::memcmp(&it.value(), &v, sizeof(V)), 0);
    ++it;
  }
  // Build from unsorted with duplicates: the last value wins.
  simdex::btree_map<K, V> b({.level = level});
  b.build(ks, vs);
  std::map<K, V, total_less<K>> last;
  for (std::size_t i = 0; i < ks.size(); ++i) last[ks[i]] = vs[i];
  expect_valid(b, "map build");
  ASSERT_EQ(b.size(), last.size());
  for (auto& [k, v] : last) {
    V got = *b.get(k);
    ASSERT_EQ(std::memcmp(&got, &v, sizeof(V)), 0);
  }
}

struct v16 {
  std::uint64_t a, b;
};
struct v3 {
  std::uint8_t x[3];
};

TEST(BtreeMap, Values) {
  for (isa l : btree_levels<std::uint32_t, std::uint64_t>()) {
    run_map<std::uint32_t, std::uint64_t>(l, 1, 100000 / kScale, 20000);
    run_map<std::int64_t, v16>(l, 2, 100000 / kScale, 20000);
    run_map<double, std::uint16_t>(l, 3, 100000 / kScale, 3000);
    run_map<float, v3>(l, 4, 100000 / kScale, 50000);
    run_map<std::uint64_t, double>(l, 5, 100000 / kScale, 1u << 30);
  }
}

// memory_usage() counts live nodes: it falls as erases merge pages away and is about the
// object alone once empty; reserved_bytes() keeps the mapped regions until clear().
template <class T>
void check_memory_follows_erases(isa l, std::size_t n) {
  T t({.pages = simdex::page_size::small, .level = l});
  auto add = [&t](std::uint64_t k) {
    if constexpr (requires { t.insert(k, k); })
      t.insert(k, k);
    else
      t.insert(k);
  };
  std::mt19937_64 r(n);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) {
    k = r();
    add(k);
  }
  const std::size_t empty = sizeof(T), full = t.memory_usage(), reserved = t.reserved_bytes();
  EXPECT_GE(full, empty + t.leaf_pages() * 4096);
  EXPECT_GE(reserved + empty, full);
  const std::size_t keep = n / 10;  // erase 90%, one by one
  for (std::size_t i = keep; i < n; ++i) t.erase(keys[i]);
  ASSERT_EQ(t.validate(), "");
  EXPECT_LT(t.memory_usage(), full / 3) << "after erasing 90% of " << n;
  EXPECT_EQ(t.reserved_bytes(), reserved);  // freed nodes stay on the free lists for reuse
  std::vector<std::uint64_t> rest(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(keep));
  t.erase_batch(rest);
  ASSERT_TRUE(t.empty());
  ASSERT_EQ(t.validate(), "");
  EXPECT_EQ(t.memory_usage(), empty);
  for (std::size_t i = 0; i < n; ++i) add(keys[i]);  // free nodes are reused
  EXPECT_EQ(t.reserved_bytes(), reserved);
  EXPECT_EQ(t.memory_usage(), full);
  t.clear();
  EXPECT_EQ(t.memory_usage(), empty);
  EXPECT_EQ(t.reserved_bytes(), 0u);
}

// The std::set / std::map members a C++ user reaches for: count, equal_range, reverse and
// const iteration, against std::set (found missing by an audit of the API).
TEST(BtreeMisc, StdLikeMembers) {
  std::mt19937_64 rng(7);
  simdex::btree_set<std::int64_t> t;
  std::set<std::int64_t> ref;
  for (int i = 0; i < 5000; ++i) {
    std::int64_t k = static_cast<std::int64_t>(rng() % 20000);
    t.insert(k);
    ref.insert(k);
  }
  for (std::int64_t k = -5; k < 20005; k += 3) {
    EXPECT_EQ(t.count(k), ref.count(k));
    auto [lo, hi] = t.equal_range(k);
    auto [rlo, rhi] = ref.equal_range(k);
    EXPECT_EQ(std::distance(lo, hi), std::distance(rlo, rhi));
    if (rlo != ref.end()) {
      EXPECT_EQ(lo.key(), *rlo);
    }
  }
  std::vector<std::int64_t> back(t.rbegin(), t.rend());
  EXPECT_TRUE(std::equal(back.begin(), back.end(), ref.rbegin(), ref.rend()));
  EXPECT_EQ(std::distance(t.cbegin(), t.cend()), static_cast<std::ptrdiff_t>(ref.size()));
  simdex::btree_set<double> d;
  d.insert(-0.0);
  d.insert(1.0);
  EXPECT_EQ(d.count(0.0), 0u);  // -0.0 and 0.0 are two keys, as everywhere in the tree
  auto [z0, z1] = d.equal_range(0.0);
  EXPECT_EQ(z0, z1);
  auto [m0, m1] = d.equal_range(-0.0);
  EXPECT_EQ(std::distance(m0, m1), 1);
}

// const_iterator: a const tree hands out const_iterators, whose value() cannot be written.
template <class It>
constexpr bool value_writable = requires(It it) {
  it.value() = typename It::value_type::second_type{};
};
template <class It>
constexpr bool arrow_second_writable = requires(It it) {
  it->second = typename It::value_type::second_type{};
};
using imap = simdex::btree_map<std::int64_t, double>;
using iset = simdex::btree_set<std::uint64_t>;
static_assert(std::is_same_v<decltype(std::declval<const imap&>().find(1)), imap::const_iterator>);
static_assert(std::is_same_v<decltype(std::declval<imap&>().find(1)), imap::iterator>);
static_assert(std::is_same_v<decltype(std::declval<const imap&>().find(1).value()), const double&>);
static_assert(std::is_same_v<decltype(std::declval<imap&>().find(1).value()), double&>);
static_assert(!value_writable<imap::const_iterator> && value_writable<imap::iterator>);
static_assert(!arrow_second_writable<imap::const_iterator> &&
              arrow_second_writable<imap::iterator>);
static_assert(std::is_convertible_v<imap::iterator, imap::const_iterator>);
static_assert(!std::is_convertible_v<imap::const_iterator, imap::iterator>);
static_assert(std::is_same_v<decltype(std::declval<const iset&>().begin()), iset::const_iterator>);
static_assert(std::is_same_v<decltype(std::declval<iset&>().cbegin()), iset::const_iterator>);
static_assert(std::is_same_v<decltype(std::declval<iset&>().end()), iset::iterator>);
static_assert(
    std::is_same_v<decltype(std::declval<const iset&>().rbegin()), iset::const_reverse_iterator>);
static_assert(std::is_same_v<decltype(std::declval<const iset&>().equal_range(1)),
                             std::pair<iset::const_iterator, iset::const_iterator>>);
static_assert(
    std::is_same_v<decltype(std::declval<const iset&>().predecessor(1)), iset::const_iterator>);
static_assert(std::is_same_v<decltype(std::declval<const iset&>().nth(1)), iset::const_iterator>);
// (std::bidirectional_iterator of both iterators of a set and a map: asserted in btree.h.)
static_assert(std::ranges::bidirectional_range<const imap> && std::ranges::sized_range<const iset>);

TEST(BtreeMisc, ConstIterators) {
  imap m;
  for (std::int64_t k = 0; k < 3000; ++k) m.insert(k, 0.5 * static_cast<double>(k));
  const imap& cm = m;
  imap::const_iterator c = cm.find(7);
  ASSERT_TRUE(c != cm.end());
  EXPECT_EQ(c.value(), 3.5);
  // iterator -> const_iterator, and mixed comparisons both ways.
  imap::iterator i = m.find(7);
  imap::const_iterator ci = i;
  EXPECT_TRUE(ci == i && i == ci && c == i && !(c != i) && !(i != c));
  EXPECT_TRUE(m.begin() != cm.end() && cm.begin() == m.begin() && m.cend() == m.end());
  ++i;
  EXPECT_TRUE(c != i && i != c);
  // Writes go through an iterator, seen through the const_iterator at the same key.
  i.value() = 99.0;
  EXPECT_EQ(cm.find(8).value(), 99.0);
  // operator->: a map's pair (second writable through the iterator only), a set's key.
  EXPECT_EQ(c->first, 7);
  EXPECT_EQ(c->second, 3.5);
  m.find(9)->second = -1.0;
  EXPECT_EQ(*m.get(9), -1.0);
  EXPECT_EQ(cm.rbegin()->first, 2999);
  EXPECT_EQ(m.rbegin()->second, 0.5 * 2999);
  auto [k0, v0] = *cm.begin();  // by value: auto& [k, v] is impossible
  EXPECT_EQ(k0, 0);
  EXPECT_EQ(v0, 0.0);
  iset s;
  s.insert(5);
  s.insert(11);
  EXPECT_EQ(*s.begin().operator->().operator->(), 5u);
  EXPECT_EQ(*std::as_const(s).find(11).operator->().operator->(), 11u);
  // erase with const_iterators returns an iterator.
  imap::iterator next = m.erase(cm.find(7));
  EXPECT_EQ(next.key(), 8);
  EXPECT_FALSE(m.contains(7));
  imap::iterator after = m.erase(cm.lower_bound(100), cm.lower_bound(200));
  EXPECT_EQ(after.key(), 200);
  EXPECT_EQ(m.size(), 3000u - 1 - 100);
  EXPECT_TRUE(m.erase(cm.find(5), cm.find(5)) == m.find(5));
  EXPECT_EQ(s.erase(std::as_const(s).begin()).key(), 11u);
  // lower_bound_batch: const_iterators from a const tree.
  std::vector<std::int64_t> qs = {-5, 7, 150, 2500, 5000};
  std::vector<imap::const_iterator> lbs(qs.size());
  cm.lower_bound_batch(qs, lbs.data());
  EXPECT_EQ(lbs[0].key(), 0);
  EXPECT_EQ(lbs[1].key(), 8);
  EXPECT_EQ(lbs[2].key(), 200);
  EXPECT_EQ(lbs[3].key(), 2500);
  EXPECT_TRUE(lbs[4] == cm.end());
  // std::ranges algorithms over a const tree.
  EXPECT_EQ(std::ranges::distance(cm), static_cast<std::ptrdiff_t>(cm.size()));
  EXPECT_EQ(std::ranges::distance(cm.begin(), cm.end()), static_cast<std::ptrdiff_t>(cm.size()));
  EXPECT_EQ(std::ranges::count_if(cm, [](const auto& kv) { return kv.first % 2 == 0; }),
            static_cast<std::ptrdiff_t>(1500 - 50));
  auto f = std::ranges::find(cm, std::pair<std::int64_t, double>(10, 5.0));
  ASSERT_TRUE(f != cm.end());
  EXPECT_EQ(f.key(), 10);
  // (Over cm.rbegin(), cm.rend(): clang 14 cannot build libstdc++ 12's views, any range's.)
  auto g = std::ranges::find_if(cm.rbegin(), cm.rend(), [](auto kv) { return kv.first < 150; });
  EXPECT_EQ(g->first, 99);  // through reverse_iterator's operator->
  const iset& cs = s;
  EXPECT_TRUE(std::ranges::find(cs, 11u) == cs.begin());
  EXPECT_EQ(std::ranges::count(cs, 12u), 0);
}

TEST(BtreeMisc, MemoryUsageFollowsErases) {
  for (isa l : btree_levels<std::uint64_t, void>())
    check_memory_follows_erases<simdex::btree_set<std::uint64_t>>(l, 200000 / kScale);
  for (isa l : btree_levels<std::uint64_t, std::uint64_t>())
    check_memory_follows_erases<simdex::btree_map<std::uint64_t, std::uint64_t>>(l,
                                                                                 100000 / kScale);
}

// A tree built from sorted keys leaves room in every block, so a batch of a sixteenth of its
// size (random keys: each page gets about a sixteenth more, well under its two free lanes per
// block) goes in without splitting pages, and erasing it again leaves the pages as they were.
template <class T>
void check_build_leaves_room(isa l, std::size_t n) {
  T t({.pages = simdex::page_size::small, .level = l});
  std::mt19937_64 r(n + 7);
  std::vector<std::uint64_t> keys(n);
  for (auto& k : keys) k = r() | 1;  // odd: the batch below is even, so never a duplicate
  std::vector<std::uint64_t> base = keys;
  std::vector<std::uint64_t> batch(n / 16);
  for (auto& k : batch) k = r() & ~std::uint64_t{1};
  std::sort(base.begin(), base.end());
  base.erase(std::unique(base.begin(), base.end()), base.end());
  if constexpr (requires { t.build_sorted(base, base); })
    t.build_sorted(base, base);
  else
    t.build_sorted(base);
  ASSERT_EQ(t.validate(), "");
  const std::size_t pages = t.leaf_pages();
  for (int round = 0; round < 3; ++round) {
    if constexpr (requires { t.insert_batch(batch, batch); })
      t.insert_batch(batch, batch);
    else
      t.insert_batch(batch);
    ASSERT_EQ(t.validate(), "");
    // A few pages may draw more than their room (the batch is random); most must not split.
    EXPECT_LE(t.leaf_pages(), pages + pages / 50) << "round " << round;
    t.erase_batch(batch);
    ASSERT_EQ(t.validate(), "");
    ASSERT_EQ(t.size(), base.size());
  }
}

// A set's batch merge lays a page out from its gathered keys and the new ones (merge_pack)
// when they fit in it: pages built full and uneven from single inserts, small pages (fewer keys
// than blocks), batches with present keys and the key type's extremes, from a few keys a page
// (key by key) to more than a page takes (the merge that splits), at every level.
template <class K>
void check_set_batch_merge(isa l) {
  SCOPED_TRACE(simdex::isa_name(l));
  using lim = std::numeric_limits<K>;
  std::mt19937_64 rng(43);
  constexpr std::uint64_t kSpan = 64 * 60000;
  auto key = [&](std::uint64_t r) {
    return r % 50 == 0 ? (r % 100 == 0 ? lim::max() : lim::min())
                       : static_cast<K>(static_cast<K>(r % kSpan) - static_cast<K>(kSpan / 2));
  };
  for (int start = 0; start < 3; ++start) {
    SCOPED_TRACE(start);
    simdex::btree_set<K> t({.level = l});
    std::set<K> ref;
    std::vector<K> first;
    if (start == 0) {  // built: pages as full as a bulk build leaves them
      for (std::uint64_t i = 0; i < 60000 / kScale; ++i) first.push_back(key(i * 64 + 5));
      t.build(first);
    } else if (start == 1) {  // single inserts: blocks filled unevenly
      for (std::uint64_t i = 0; i < 30000 / kScale; ++i) first.push_back(key(rng()));
      for (K k : first) t.insert(k);
    }  // else empty: the first batch builds small pages
    ref.insert(first.begin(), first.end());
    for (std::size_t per : {std::size_t{50}, std::size_t{12}, std::size_t{9}, std::size_t{2}}) {
      std::vector<K> batch(ref.size() / per + 4096);
      std::vector<K> held(ref.begin(), ref.end());
      for (K& k : batch) {
        std::uint64_t r = rng();
        k = r % 10 == 0 && !held.empty() ? held[r % held.size()] : key(r >> 4);
      }
      std::size_t want = 0;
      for (K k : batch) want += ref.insert(k).second;
      ASSERT_EQ(t.insert_batch(batch), want) << per;
      expect_valid(t, "insert_batch");
      ASSERT_TRUE(std::equal(t.begin(), t.end(), ref.begin(), ref.end()));
      std::vector<K> gone(batch.begin(), batch.begin() + static_cast<long>(batch.size() / 3));
      std::size_t erased = 0;
      for (K k : gone) erased += ref.erase(k);
      ASSERT_EQ(t.erase_batch(gone), erased);
      expect_valid(t, "erase_batch");
    }
  }
}

TEST(BtreeBatch, SetMergeEveryLevel) {
  for (isa l : btree_levels<std::uint64_t, void>()) check_set_batch_merge<std::uint64_t>(l);
  for (isa l : btree_levels<std::int32_t, void>()) check_set_batch_merge<std::int32_t>(l);
}

TEST(BtreeMisc, BuildLeavesRoomForBatches) {
  for (isa l : btree_levels<std::uint64_t, void>())
    check_build_leaves_room<simdex::btree_set<std::uint64_t>>(l, 400000 / kScale);
  for (isa l : btree_levels<std::uint64_t, std::uint64_t>())
    check_build_leaves_room<simdex::btree_map<std::uint64_t, std::uint64_t>>(l, 200000 / kScale);
}

// A batch that changes nothing moves nothing: inserting keys the tree holds (a set, and a map
// without assignment) and erasing keys it lacks leave every iterator on its key, at every level
// (the batch merge once repacked each page it visited, new keys or not).
template <class Tree, bool kMap>
void check_no_op_batches_keep_iterators(isa l) {
  Tree t({.level = l});
  std::vector<std::uint64_t> keys, absent;
  for (std::uint64_t i = 0; i < 200000 / kScale; ++i) {
    keys.push_back(i * 3);
    absent.push_back(i * 3 + 1);
  }
  std::vector<std::uint64_t> held;
  for (std::size_t i = 0; i < keys.size(); i += 2) held.push_back(keys[i]);
  std::vector<std::uint64_t> order = held;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(l == isa::scalar ? 1 : 2));
  for (std::uint64_t k : order) {  // random single inserts: blocks filled unevenly, not as built
    if constexpr (kMap) {
      t.insert(k, k + 7);
    } else {
      t.insert(k);
    }
  }
  std::vector<typename Tree::const_iterator> at;
  for (std::size_t i = 0; i < held.size(); i += held.size() / 50) at.push_back(t.find(held[i]));
  auto same = [&](const char* what) {
    SCOPED_TRACE(what);
    std::size_t j = 0;
    for (std::size_t i = 0; i < held.size(); i += held.size() / 50, ++j) {
      ASSERT_EQ(at[j].key(), held[i]);
      auto it = at[j];
      ++it;
      if (i + 1 < held.size()) {
        ASSERT_EQ(it.key(), held[i + 1]);
      }
    }
  };
  if constexpr (kMap) {
    std::vector<std::uint64_t> other(held.size(), 1);
    EXPECT_EQ(t.insert_batch(held, other), 0u);
    EXPECT_EQ(at[0].value(), held[0] + 7);
  } else {
    EXPECT_EQ(t.insert_batch(held), 0u);
  }
  same("insert_batch of present keys");
  EXPECT_EQ(t.erase_batch(absent), 0u);
  same("erase_batch of absent keys");
  EXPECT_EQ(t.validate(), "");
}

TEST(BtreeMisc, NoOpBatchesKeepIterators) {
  for (isa l : btree_levels<std::uint64_t, void>())
    check_no_op_batches_keep_iterators<simdex::btree_set<std::uint64_t>, false>(l);
  for (isa l : btree_levels<std::uint64_t, std::uint64_t>())
    check_no_op_batches_keep_iterators<simdex::btree_map<std::uint64_t, std::uint64_t>, true>(l);
}

TEST(BtreeMisc, MoveMemoryAndPages) {
  simdex::btree_set<std::uint32_t> a({.pages = simdex::page_size::small});
  for (std::uint32_t i = 0; i < 100000; ++i) a.insert(i * 7);
  EXPECT_GE(a.memory_usage(), a.leaf_pages() * 4096);
  EXPECT_EQ(a.pages(), simdex::page_size::small);
  simdex::btree_set<std::uint32_t> b(std::move(a));
  EXPECT_EQ(b.size(), 100000u);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_TRUE(a.insert(5));  // a moved-from tree is empty and usable
  EXPECT_EQ(a.validate(), "");
  EXPECT_EQ(b.validate(), "");
  a = std::move(b);
  EXPECT_EQ(a.size(), 100000u);
  EXPECT_TRUE(a.contains(7 * 99999));
  a.clear();
  EXPECT_TRUE(a.empty());
  EXPECT_EQ(a.validate(), "");
  EXPECT_THROW(simdex::btree_set<std::uint32_t>({.level = simdex::isa::sse42}),
               std::invalid_argument);
}

// Turns the arena's failure hook off when a test ends, failed or not.
struct carve_hook_off {
  ~carve_hook_off() { simdex::btree_detail::arena::fail_nth_carve(0); }
};

// Out of memory in the middle of an edit: the n-th page the arena carves throws (the arena's
// test hook), for many n. Every write either completes or throws std::bad_alloc leaving the
// tree valid with what it held before (a batch may keep some of its keys, consistently).
// singles: single inserts and erases only, so that inner nodes come from the arena one split
// at a time (batches keep spare ones).
template <class K, class V>
void oom_run(isa level, std::size_t fail_at, std::uint64_t seed, bool singles = false) {
  using simdex::btree_detail::arena;
  constexpr bool kSet = std::is_void_v<V>;
  using tree_t = std::conditional_t<kSet, simdex::btree_set<K>, simdex::btree_map<K, V>>;
  SCOPED_TRACE(std::string("level ") + simdex::isa_name(level) + " fail_at " +
               std::to_string(fail_at));
  carve_hook_off off;
  auto value_of = [](K k) { return static_cast<std::uint64_t>(k) * 7 + 1; };
  tree_t t({.pages = simdex::page_size::small, .level = level});
  std::set<K> ref;
  auto check = [&](const char* phase) {
    expect_valid(t, phase);
    ASSERT_EQ(t.size(), ref.size()) << phase;
    auto r = ref.begin();
    for (auto e : t) {
      ASSERT_TRUE(r != ref.end()) << phase;
      if constexpr (kSet) {
        ASSERT_EQ(e, *r) << phase;
      } else {
        ASSERT_EQ(e.first, *r) << phase;
        ASSERT_EQ(e.second, value_of(*r)) << phase;
      }
      ++r;
    }
    ASSERT_TRUE(r == ref.end()) << phase;
  };
  std::mt19937_64 rng(seed);
  auto key = [&] { return static_cast<K>(rng() % (1u << 22)); };
  arena::fail_nth_carve(fail_at);
  int after = -1;  // ops left once the failure has fired
  for (int op = 0; op < 200000 && after != 0; ++op, after -= after > 0) {
    unsigned what = rng() % (singles ? 70 : 100);
    std::set<K> before;
    try {
      if (what < 55) {
        K k = key();
        bool added;
        if constexpr (kSet)
          added = t.insert(k);
        else
          added = t.insert(k, value_of(k));
        ASSERT_EQ(added, ref.insert(k).second);
      } else if (what < 70) {
        K k = key();
        ASSERT_EQ(t.erase(k), ref.erase(k) == 1);
      } else if (what < 88) {
        // Ranges of several pages' keys: merges that split off new pages, as well as sparse
        // batches that go in one by one.
        std::vector<K> batch;
        std::size_t m = 1 + rng() % 1500;
        K base = key();
        unsigned step = 1 + static_cast<unsigned>(rng() % 64);
        for (std::size_t i = 0; i < m; ++i) batch.push_back(static_cast<K>(base + i * step));
        before = ref;
        std::size_t added;
        if constexpr (kSet) {
          added = t.insert_batch(batch);
        } else {
          std::vector<V> vals;
          for (K k : batch) vals.push_back(value_of(k));
          added = t.insert_batch(batch, vals);
        }
        std::size_t expect = 0;
        for (K k : batch) expect += ref.insert(k).second;
        ASSERT_EQ(added, expect);
      } else if (what < 96) {
        std::vector<K> batch;
        for (std::size_t i = 0, m = 1 + rng() % 300; i < m; ++i) batch.push_back(key());
        std::size_t gone = t.erase_batch(batch);
        std::size_t expect = 0;
        for (K k : batch) expect += ref.erase(k);
        ASSERT_EQ(gone, expect);
      } else if (what < 97) {
        // Rebuild from the reference: a build that fails leaves the tree as it was.
        std::vector<K> ks(ref.begin(), ref.end());
        before = ref;
        ref.clear();
        if constexpr (kSet) {
          t.build_sorted(ks);
        } else {
          std::vector<V> vals;
          for (K k : ks) vals.push_back(value_of(k));
          t.build_sorted(ks, vals);
        }
        ref = std::move(before);
      }
    } catch (const std::bad_alloc&) {
      ASSERT_EQ(after, -1) << "a second failure with the hook off";
      after = 20;
      // A batch keeps what it placed: the tree must lie between before and before + batch,
      // which the caller accepts as the new contents.
      if (!before.empty() || what >= 70) {
        std::set<K> now;
        for (auto e : t) {
          if constexpr (kSet)
            now.insert(e);
          else
            now.insert(e.first);
        }
        if (what < 88) {
          ASSERT_TRUE(std::includes(now.begin(), now.end(), before.begin(), before.end()));
        } else if (what == 96) {
          ASSERT_TRUE(now == before) << "a failed build changed the tree";
        }
        ref = std::move(now);
      }
      check("after the failure");
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
  ASSERT_EQ(after, 0) << "the failure never fired";
  check("end");
}

// A build over a non-empty tree that runs out of memory partway (the n-th page carved for the
// new tree throws) leaves the old keys and values; once memory is back, the build goes through.
template <class K, class V>
void failed_build_keeps_tree(isa level, bool sorted) {
  using simdex::btree_detail::arena;
  constexpr bool kSet = std::is_void_v<V>;
  using tree_t = std::conditional_t<kSet, simdex::btree_set<K>, simdex::btree_map<K, V>>;
  SCOPED_TRACE(std::string("level ") + simdex::isa_name(level) +
               (sorted ? " build_sorted" : " build"));
  carve_hook_off off;
  auto value_of = [](K k) { return static_cast<V>(k * 7 + 1); };
  auto build = [&](tree_t& t, const std::vector<K>& ks) {
    if constexpr (kSet) {
      sorted ? t.build_sorted(ks) : t.build(ks);
    } else {
      std::vector<V> vs;
      for (K k : ks) vs.push_back(value_of(k));
      sorted ? t.build_sorted(ks, vs) : t.build(ks, vs);
    }
  };
  // Old keys spread over a few pages; the new ones need tens of pages and inner nodes.
  std::vector<K> old_keys, new_keys;
  for (K i = 0; i < 3000; ++i) old_keys.push_back(static_cast<K>(3 * i));
  for (K i = 0; i < 30000; ++i) new_keys.push_back(static_cast<K>(5 * i + 1));
  tree_t t({.pages = simdex::page_size::small, .level = level});
  build(t, old_keys);
  auto holds = [&](const std::vector<K>& ks) {
    expect_valid(t, "after the build");
    ASSERT_EQ(t.size(), ks.size());
    auto k = ks.begin();
    for (auto e : t) {
      if constexpr (kSet) {
        ASSERT_EQ(e, *k);
      } else {
        ASSERT_EQ(e.first, *k);
        ASSERT_EQ(e.second, value_of(*k));
      }
      ++k;
    }
  };
  for (std::size_t n : {1, 2, 3, 10, 30}) {
    SCOPED_TRACE("fail_at " + std::to_string(n));
    arena::fail_nth_carve(n);
    EXPECT_THROW(build(t, new_keys), std::bad_alloc);
    arena::fail_nth_carve(0);
    holds(old_keys);
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    ASSERT_TRUE(t.contains(old_keys[1234]));
  }
  build(t, new_keys);
  holds(new_keys);
}

TEST(BtreeOutOfMemory, FailedBuildKeepsTheTree) {
  for (bool sorted : {true, false}) {
    for (isa l : btree_levels<std::uint64_t, void>())
      failed_build_keeps_tree<std::uint64_t, void>(l, sorted);
    for (isa l : btree_levels<std::int32_t, void>())
      failed_build_keeps_tree<std::int32_t, void>(l, sorted);
    for (isa l : btree_levels<std::uint64_t, std::uint64_t>())
      failed_build_keeps_tree<std::uint64_t, std::uint64_t>(l, sorted);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

TEST(BtreeOutOfMemory, EveryWriteLeavesTheTreeValid) {
  // Early carves hit the first splits and a new root; later ones a taller tree's inner nodes.
  std::vector<std::size_t> points;
  for (std::size_t n = 1; n <= 16; ++n) points.push_back(n);
  for (std::size_t n : {29, 47, 71, 90, 150, 230})
    if (n < 100 || kScale == 1) points.push_back(n);  // sanitizers: the shorter runs
  std::uint64_t seed = 1;
  for (std::size_t n : points) {
    for (isa l : btree_levels<std::uint64_t, void>()) oom_run<std::uint64_t, void>(l, n, seed++);
    for (isa l : btree_levels<std::uint32_t, void>()) oom_run<std::uint32_t, void>(l, n, seed++);
    for (isa l : btree_levels<std::uint64_t, std::uint64_t>())
      oom_run<std::uint64_t, std::uint64_t>(l, n, seed++);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // Single inserts, the carves around those that cut a page into inner nodes (the third: the
  // first root; about the 67th and 135th: inner splits).
  for (std::size_t from : {1, 63, 131})
    for (std::size_t n = from; n < from + (kScale == 1 ? 11 : 6); ++n)
      for (isa l : btree_levels<std::uint64_t, void>())
        oom_run<std::uint64_t, void>(l, n, seed++, true);
}

}  // namespace
