// The filter object: sizes, bulk vs single, union, folding, FPP estimate and sizing models.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "simdex/bloom.h"

using namespace simdex;
using namespace simdex::bloom;

TEST(BloomFilter, SizesAndValidation) {
  for (std::size_t b = 32; b <= (std::size_t{1} << 22); b <<= 1) {
    filter f(b, page_size::small);
    EXPECT_EQ(f.size_bytes(), b);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(f.words()) % 64, 0u);
    EXPECT_EQ(f.popcount(), 0u);
  }
  EXPECT_THROW(filter(0), std::invalid_argument);
  EXPECT_THROW(filter(16), std::invalid_argument);
  EXPECT_THROW(filter(96), std::invalid_argument);
  EXPECT_THROW(filter(kMaxBytes * 2), std::invalid_argument);
  EXPECT_THROW(filter::with_blocks(0), std::invalid_argument);
  EXPECT_EQ(filter::with_blocks(3).size_bytes(), 96u);
  EXPECT_THROW(filter::from_bitset("x", 1), std::invalid_argument);
  EXPECT_THROW(filter::for_ndv(10, 0.0), std::invalid_argument);
  EXPECT_THROW(filter::for_ndv(10, 1.0), std::invalid_argument);
}

TEST(BloomFilter, EmptyAndMovedFromAreSafe) {
  bloom::filter empty;
  EXPECT_TRUE(empty.empty());
  EXPECT_FALSE(empty.check(1));
  empty.insert(1);
  std::uint64_t h[3] = {1, 2, 3};
  std::uint8_t out[3] = {9, 9, 9};
  empty.check(h, out);
  EXPECT_EQ(out[0] + out[1] + out[2], 0);
  bloom::filter a(64);
  a.insert(7);
  bloom::filter b = std::move(a);
  EXPECT_TRUE(b.check(7));
  EXPECT_TRUE(a.empty());  // NOLINT(bugprone-use-after-move): moved-from is specified empty
  EXPECT_FALSE(a.check(7));
  EXPECT_EQ(a.fill(), 0.0);
  // Nothing to fold in an empty filter: fold_to_fpp answers 0 folds, fold(k > 0) names it.
  EXPECT_EQ(a.fold_to_fpp(0.5), 0);
  EXPECT_TRUE(a.empty());
  a.fold(0);
  EXPECT_THROW(a.fold(1), std::invalid_argument);
}

TEST(BloomFilter, MisusedArgumentsThrow) {
  filter f(1024);
  f.insert(42);
  EXPECT_THROW(f.fold_to_fpp(std::nan("")), std::invalid_argument);  // was: folded to 1 block
  EXPECT_EQ(f.num_blocks(), 32u);
  EXPECT_THROW(model_fpp(1000, -32.0), std::invalid_argument);  // was: 0.0, a perfect filter
  EXPECT_THROW(model_fpp(1000, std::nan("")), std::invalid_argument);
  EXPECT_EQ(model_fpp(1000, 0.0), 1.0);
}

TEST(BloomFilter, NoFalseNegativesAndBulkAgrees) {
  std::mt19937_64 g(5);
  for (std::uint64_t z : {1u, 5u, 1024u}) {
    filter f = filter::with_blocks(z), bulk = filter::with_blocks(z);
    std::vector<std::uint64_t> hs(z * 20);
    for (auto& h : hs) h = g();
    for (auto h : hs) f.insert(h);
    bulk.insert(hs);
    EXPECT_EQ(f, bulk);
    std::vector<std::uint8_t> out(hs.size());
    f.check(hs, out.data());
    for (std::size_t i = 0; i < hs.size(); ++i) ASSERT_TRUE(out[i] && f.check(hs[i]));
  }
}

TEST(BloomFilter, MergeIsUnion) {
  std::mt19937_64 g(6);
  filter a(1024), b(1024);
  std::vector<std::uint64_t> ha(300), hb(300);
  for (auto& h : ha) h = g();
  for (auto& h : hb) h = g();
  a.insert(ha);
  b.insert(hb);
  filter u = a;
  u.merge(b);
  for (auto h : ha) EXPECT_TRUE(u.check(h));
  for (auto h : hb) EXPECT_TRUE(u.check(h));
  EXPECT_THROW(u.merge(filter(2048)), std::invalid_argument);
}

TEST(BloomFilter, FoldKeepsMembersAndMeetsTarget) {
  std::mt19937_64 g(7);
  filter f(1 << 20);
  std::vector<std::uint64_t> hs(2000);
  for (auto& h : hs) h = g();
  f.insert(hs);
  double before = f.estimated_fpp();
  int k = f.fold_to_fpp(0.01);
  EXPECT_GT(k, 0);
  EXPECT_LE(f.estimated_fpp(), 0.01);
  EXPECT_GT(f.estimated_fpp(), before);
  for (auto h : hs) ASSERT_TRUE(f.check(h));
  // One more fold would overshoot the target.
  filter g2 = f;
  if (g2.num_blocks() % 2 == 0) {
    g2.fold(1);
    EXPECT_GT(g2.estimated_fpp(), 0.01);
  }
  // Odd block counts fold too when 2^k divides z; members stay.
  filter odd = filter::with_blocks(12);
  odd.insert(std::span<const std::uint64_t>(hs.data(), 20));
  odd.fold(2);
  EXPECT_EQ(odd.num_blocks(), 3u);
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(odd.check(hs[static_cast<std::size_t>(i)]));
  EXPECT_THROW(odd.fold(1), std::invalid_argument);
}

TEST(BloomFilter, EstimatedFppMatchesMeasured) {
  std::mt19937_64 g(8);
  filter f(32768);
  std::vector<std::uint64_t> hs(20000);
  for (auto& h : hs) h = g();
  f.insert(hs);
  int fp = 0;
  const int trials = 400000;
  for (int i = 0; i < trials; ++i) fp += f.check(g());
  double measured = static_cast<double>(fp) / trials;
  EXPECT_NEAR(measured, f.estimated_fpp(), 0.1 * f.estimated_fpp() + 0.0005);
  // The model for 20k values in 32 KiB (13.1 bits/value): ~0.35 %.
  EXPECT_NEAR(model_fpp(20000, 32768), f.estimated_fpp(), 0.15 * model_fpp(20000, 32768));
}

TEST(BloomSizing, ModelReproducesSpecTable) {
  EXPECT_NEAR(model_bits_per_value(0.10), 6.0, 0.05);
  EXPECT_NEAR(model_bits_per_value(0.01), 10.5, 0.05);
  EXPECT_NEAR(model_bits_per_value(0.001), 16.9, 0.05);
  EXPECT_NEAR(model_bits_per_value(0.0001), 26.4, 0.1);
  EXPECT_NEAR(model_bits_per_value(0.00001), 41.0, 0.1);
  // Spec examples: 1024 blocks with 26,214 values -> ~1.26 %; 5 bits/value 18 %; 20: 0.04 %.
  EXPECT_NEAR(model_fpp(26214, 32768), 0.0126, 0.0002);
  EXPECT_NEAR(model_fpp(1000, 5 * 1000 / 8.0), 0.179, 0.002);
  EXPECT_NEAR(model_fpp(1000, 20 * 1000 / 8.0), 0.00042, 0.00002);
}

TEST(BloomSizing, ArrowFormula) {
  // Arrow: 1M ndv at 1 % -> 9.57 bits/value -> 1.2 MB -> 2 MiB after power-of-two rounding.
  EXPECT_EQ(arrow_num_bytes(1'000'000, 0.01), std::size_t{2} << 20);
  EXPECT_EQ(arrow_num_bytes(0, 0.01), 32u);
  EXPECT_EQ(arrow_num_bytes(1, 0.5), 32u);
  EXPECT_EQ(arrow_num_bytes(std::uint64_t{1} << 40, 0.001), kMaxBytes);
  EXPECT_EQ(arrow_num_bytes(20000, 0.05), 32768u);      // what pyarrow writes
  EXPECT_EQ(arrow_num_bytes(1000, 1e-300), kMaxBytes);  // 1 - fpp^(1/8) rounds to 1
  EXPECT_EQ(model_num_bytes(1000, 1e-300), kMaxBytes);
  for (std::uint64_t ndv : {100u, 10000u, 1000000u})
    for (double p : {0.1, 0.01, 0.001}) {
      std::size_t m = model_num_bytes(ndv, p);
      EXPECT_LE(model_fpp(ndv, static_cast<double>(m)), p);
      if (m > 32) {
        EXPECT_GT(model_fpp(ndv, static_cast<double>(m / 2)), p);
      }
      EXPECT_GE(m, arrow_num_bytes(ndv, p) / 2);
    }
}
