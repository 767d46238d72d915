// Every kernel at every usable level against the spec's loop, on random filters.
#include "bloom/kernels.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "simdex/bloom.h"

using namespace simdex;
using namespace simdex::bloom;

namespace {

std::vector<std::uint32_t> random_words(std::mt19937_64& g, std::uint64_t blocks, double density) {
  std::vector<std::uint32_t> w(blocks * 8);
  std::bernoulli_distribution bit(density);
  for (auto& x : w)
    for (int b = 0; b < 32; ++b) x |= static_cast<std::uint32_t>(bit(g)) << b;
  return w;
}

// Hashes that hit inserted keys half the time, so both outcomes are common.
std::vector<std::uint64_t> probe_hashes(std::mt19937_64& g,
                                        const std::vector<std::uint64_t>& inserted, std::size_t n) {
  std::vector<std::uint64_t> h(n);
  for (auto& x : h) x = (g() & 1) && !inserted.empty() ? inserted[g() % inserted.size()] : g();
  return h;
}

const std::uint64_t kBlockCounts[] = {1, 2, 3, 7, 64, 1000, 4096};
// Bulk probes switch from the unrolled loop to the prefetched one above 1 MiB (32768 blocks).
const std::uint64_t kBulkBlockCounts[] = {1, 2, 3, 7, 64, 1000, 4096, 32768, 32769, 40000};

}  // namespace

TEST(BloomKernels, SingleCheckAndInsertMatchSpec) {
  std::mt19937_64 g(1);
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(isa_name(level));
    for (std::uint64_t z : kBlockCounts) {
      for (double density : {0.3, 0.7, 0.95}) {
        auto words = random_words(g, z, density);
        for (int i = 0; i < 2000; ++i) {
          std::uint64_t h = g();
          ASSERT_EQ(k->check(words.data(), z, h), spec::check(words.data(), z, h)) << z << " " << h;
        }
      }
      std::vector<std::uint32_t> a(z * 8), b(z * 8);
      for (int i = 0; i < 500; ++i) {
        std::uint64_t h = g();
        k->insert(a.data(), z, h);
        spec::insert(b.data(), z, h);
        ASSERT_TRUE(k->check(a.data(), z, h));
      }
      ASSERT_EQ(a, b);
    }
  }
}

TEST(BloomKernels, BulkMatchesSpec) {
  std::mt19937_64 g(2);
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(isa_name(level));
    for (std::uint64_t z : kBulkBlockCounts) {
      std::vector<std::uint64_t> ins(std::min<std::uint64_t>(z * 4, 20000));
      for (auto& x : ins) x = g();
      // Insert in bulk, including duplicates and keys sharing a block, vs one by one via spec.
      ins.insert(ins.end(), ins.begin(), ins.begin() + static_cast<long>(ins.size() / 3));
      std::vector<std::uint32_t> a(z * 8), b(z * 8);
      k->insert_bulk(a.data(), z, ins.data(), ins.size());
      for (auto h : ins) spec::insert(b.data(), z, h);
      ASSERT_EQ(a, b) << "z=" << z;
      for (std::size_t n : {0, 1, 2, 3, 23, 24, 25, 63, 64, 65, 127, 128, 129, 1000}) {
        auto probes = probe_hashes(g, ins, n);
        std::vector<std::uint8_t> bytes(n + 1, 0xee);
        std::vector<std::uint64_t> bits((n + 63) / 64 + 1, 0xdeadbeef);
        k->check_bulk(a.data(), z, probes.data(), n, bytes.data());
        k->check_bulk_bits(a.data(), z, probes.data(), n, bits.data());
        for (std::size_t i = 0; i < n; ++i) {
          bool want = spec::check(a.data(), z, probes[i]);
          ASSERT_EQ(bytes[i], want ? 1 : 0) << "n=" << n << " i=" << i;
          ASSERT_EQ((bits[i / 64] >> (i % 64)) & 1, want ? 1u : 0u) << "n=" << n << " i=" << i;
        }
        ASSERT_EQ(bytes[n], 0xee) << "wrote past the end";
        if (n % 64) {
          ASSERT_EQ(bits[n / 64] >> (n % 64), 0u) << "padding bits not zero";
        }
        ASSERT_EQ(bits[(n + 63) / 64], 0xdeadbeefu) << "wrote past the end";
      }
    }
  }
}

// `count` filters of the kBlockCounts sizes in turn, random bits at `fill`, and views of them.
struct random_filters {
  std::vector<std::vector<std::uint32_t>> store;
  std::vector<filter_view> views;
  random_filters(std::mt19937_64& g, int count, double fill) {
    for (int i = 0; i < count; ++i) {
      std::uint64_t z = kBlockCounts[i % 7];
      store.push_back(random_words(g, z, fill));
      views.push_back({store.back().data(), z});
    }
  }
};

TEST(BloomKernels, ManyFiltersMatchSpec) {
  std::mt19937_64 g(3);
  const random_filters fs(g, 77, 0.85);
  const std::vector<filter_view>& views = fs.views;
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(isa_name(level));
    // Kernels pick an in-cache or a prefetching loop from the first filter's size: start the
    // list at a 1-block filter and at a 4096-block one to run both.
    for (std::size_t first : {std::size_t{0}, std::size_t{6}}) {
      std::vector<filter_view> vs(views.begin() + static_cast<long>(first), views.end());
      vs.insert(vs.end(), views.begin(), views.begin() + static_cast<long>(first));
      for (int t = 0; t < 150; ++t) {
        std::uint64_t h = g();
        for (std::size_t n : {0, 1, 7, 8, 9, 30, 31, 32, 33, 40, 64, 65, 76, 77}) {
          std::vector<std::uint8_t> out(n + 1, 0xee);
          k->check_filters(vs.data(), n, h, out.data());
          for (std::size_t i = 0; i < n; ++i)
            ASSERT_EQ(out[i], spec::check(vs[i].words, vs[i].blocks, h) ? 1 : 0) << n << " " << i;
          ASSERT_EQ(out[n], 0xee);
        }
      }
    }
  }
}

// The filter-major API: every (filter, hash) answer as the spec gives it, an empty view none.
TEST(BloomKernels, ManyHashesAgainstManyFilters) {
  std::mt19937_64 g(5);
  random_filters fs(g, 23, 0.6);
  std::vector<filter_view> views = fs.views;
  views.insert(views.begin() + 5, filter_view{nullptr, 0});
  for (std::size_t nh : {0, 1, 3, 16, 17, 200}) {
    std::vector<std::uint64_t> hs(nh);
    for (auto& h : hs) h = g();
    std::vector<std::uint8_t> out(views.size() * nh + 1, 0xee);
    check_filters(views, hs, out.data());
    for (std::size_t i = 0; i < views.size(); ++i)
      for (std::size_t j = 0; j < nh; ++j) {
        const bool want =
            views[i].blocks != 0 && spec::check(views[i].words, views[i].blocks, hs[j]);
        ASSERT_EQ(out[i * nh + j], want ? 1 : 0) << i << " " << j;
      }
    ASSERT_EQ(out[views.size() * nh], 0xee);
  }
}

TEST(BloomKernels, BatchHashesMatchLibxxhash) {
  std::mt19937_64 g(4);
  std::vector<unsigned char> raw(8 * 1000 + 8);
  for (auto& b : raw) b = static_cast<unsigned char>(g());
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(isa_name(level));
    for (std::size_t n : {0, 1, 7, 8, 9, 17, 1000}) {
      for (std::size_t misalign : {0, 1, 3}) {
        const unsigned char* p = raw.data() + misalign;
        std::vector<std::uint64_t> h32(n), h64(n);
        k->hash_u32s(p, n, h32.data());
        k->hash_u64s(p, n, h64.data());
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_EQ(h32[i], XXH64(p + 4 * i, 4, 0));
          ASSERT_EQ(h64[i], XXH64(p + 8 * i, 8, 0));
        }
      }
    }
  }
}

TEST(BloomHash, TypedHelpersHashPlainBytes) {
  std::int32_t i32 = -123456;
  std::int64_t i64 = 0x0123456789abcdefLL;
  float f = -0.0f;
  double d = 3.25;
  EXPECT_EQ(hash_int32(i32), XXH64(&i32, 4, 0));
  EXPECT_EQ(hash_int64(i64), XXH64(&i64, 8, 0));
  EXPECT_EQ(hash_float(f), XXH64(&f, 4, 0));
  EXPECT_NE(hash_float(-0.0f), hash_float(0.0f));  // PLAIN bytes differ
  EXPECT_EQ(hash_double(d), XXH64(&d, 8, 0));
  std::uint8_t i96[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(hash_int96(i96), XXH64(i96, 12, 0));
  EXPECT_EQ(hash_bytes("hello", 5), XXH64("hello", 5, 0));
  EXPECT_EQ(hash_bytes(nullptr, 0), XXH64("", 0, 0));
  unsigned char one = 1, zero = 0;
  EXPECT_EQ(hash_bool(true), XXH64(&one, 1, 0));
  EXPECT_EQ(hash_bool(false), XXH64(&zero, 1, 0));

  std::vector<std::int32_t> a = {1, -2, 3, 4, 5, 6, 7, 8, 9};
  std::vector<std::uint64_t> out(a.size());
  hash_int32s(a.data(), a.size(), out.data());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(out[i], hash_int32(a[i]));
  std::vector<std::uint8_t> flba(5 * 12);
  for (std::size_t i = 0; i < flba.size(); ++i) flba[i] = static_cast<std::uint8_t>(i * 7);
  std::vector<std::uint64_t> fo(flba.size() / 4);
  for (std::size_t w : {4, 5, 8, 12}) {
    std::size_t n = flba.size() / w;
    hash_fixed(flba.data(), w, n, fo.data());
    for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(fo[i], XXH64(flba.data() + i * w, w, 0)) << w;
  }
}

TEST(BloomHash, PlainByteArraysHashEachValueOrSayWhereTheyBreak) {
  std::vector<std::string> vals = {"", "a", "hello", std::string(300, 'x'), std::string("\0z", 2)};
  std::vector<std::uint8_t> page;
  for (const auto& v : vals) {
    const auto len = static_cast<std::uint32_t>(v.size());
    const auto* l = reinterpret_cast<const std::uint8_t*>(&len);
    page.insert(page.end(), l, l + 4);
    page.insert(page.end(), v.begin(), v.end());
  }
  std::vector<std::uint64_t> out(vals.size() + 1);
  hash_byte_array_values(kEncodingPlain, page.data(), page.size(), vals.size(), out.data());
  for (std::size_t i = 0; i < vals.size(); ++i)
    EXPECT_EQ(out[i], hash_bytes(vals[i].data(), vals[i].size()));
  hash_byte_array_values(kEncodingPlain, page.data(), 0, 0, out.data());
  // More values than the page holds, a value cut off, a length prefix cut off.
  EXPECT_THROW(hash_byte_array_values(kEncodingPlain, page.data(), page.size(), 6, out.data()),
               parse_error);
  EXPECT_THROW(hash_byte_array_values(kEncodingPlain, page.data(), page.size() - 1, 5, out.data()),
               parse_error);
  EXPECT_THROW(hash_byte_array_values(kEncodingPlain, page.data(), 2, 1, out.data()), parse_error);
}

TEST(BloomSizing, CountDistinctHashesIsExact) {
  std::mt19937_64 rng(7);
  for (std::size_t n : {0, 1, 2, 15, 16, 17, 1000, 65536}) {
    std::vector<std::uint64_t> h(n);
    for (auto& x : h) x = rng() % (n / 2 + 3);  // many repeats, and 0 among them
    std::vector<std::uint64_t> s = h;
    std::sort(s.begin(), s.end());
    const auto want = static_cast<std::size_t>(std::unique(s.begin(), s.end()) - s.begin());
    EXPECT_EQ(count_distinct_hashes(h.data(), h.size()), want) << n;
  }
  // Values sharing every low bit still land apart (the slot comes from a mix of the top bits).
  std::vector<std::uint64_t> h;
  for (std::uint64_t i = 1; i <= 4096; ++i) h.push_back(i << 40);
  h.insert(h.end(), h.begin(), h.end());
  EXPECT_EQ(count_distinct_hashes(h.data(), h.size()), 4096u);
}
