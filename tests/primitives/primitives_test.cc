// Every primitive at every usable level against the scalar reference, on exhaustive and
// random inputs.
#include "simdex/primitives.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "isa_levels.h"
#include "primitives/kernels.h"

namespace simdex::primitives {
namespace {

using simdex::testing::usable_levels;

const kernels& ref() { return *kernel_tables().scalar; }

// A few content shapes per size: random sorted, all-equal, dense runs, extremes.
std::vector<std::vector<std::uint8_t>> sorted_arrays(std::size_t n, std::mt19937& rng) {
  std::vector<std::vector<std::uint8_t>> out;
  std::uniform_int_distribution<int> byte(0, 255);
  for (int shape = 0; shape < 6; ++shape) {
    std::vector<std::uint8_t> a(n);
    for (auto& x : a) {
      switch (shape) {
        case 0:
          x = static_cast<std::uint8_t>(byte(rng));
          break;
        case 1:
          x = 0x80;
          break;
        case 2:
          x = static_cast<std::uint8_t>(byte(rng) & 0x0f);
          break;
        case 3:
          x = static_cast<std::uint8_t>(0xf0 | (byte(rng) & 0x0f));
          break;
        case 4:
          x = static_cast<std::uint8_t>(byte(rng) < 128 ? 0 : 255);
          break;
        default:
          x = static_cast<std::uint8_t>(0x70 + (byte(rng) & 0x1f));
          break;
      }
    }
    std::sort(a.begin(), a.end());
    out.push_back(std::move(a));
  }
  return out;
}

TEST(LowerBound, ExhaustiveSizesAndKeysEveryLevel) {
  std::mt19937 rng(1);
  auto levels = usable_levels(kernel_tables());
  ASSERT_FALSE(levels.empty());
  for (std::size_t n = 0; n <= 256; ++n) {
    for (auto& a : sorted_arrays(n, rng)) {
      // Padded copy: garbage that would count if the tail mask were wrong.
      std::vector<std::uint8_t> padded(n + kLowerBoundPadding, 0);
      std::copy(a.begin(), a.end(), padded.begin());
      for (int key = 0; key < 256; ++key) {
        auto k = static_cast<std::uint8_t>(key);
        std::size_t expect =
            static_cast<std::size_t>(std::lower_bound(a.begin(), a.end(), k) - a.begin());
        ASSERT_EQ(ref().lower_bound(a.data(), n, k), expect);
        for (auto [level, t] : levels) {
          ASSERT_EQ(t->lower_bound(a.data(), n, k), expect)
              << isa_name(level) << " n=" << n << " key=" << key;
          ASSERT_EQ(t->lower_bound_padded(padded.data(), n, k), expect)
              << isa_name(level) << " padded n=" << n << " key=" << key;
        }
      }
    }
  }
}

TEST(LowerBound, UnsortedInputCountsTheSameAtEveryLevel) {
  std::mt19937 rng(2);
  for (std::size_t n : {1u, 15u, 16u, 17u, 31u, 33u, 63u, 64u, 65u, 200u, 1000u}) {
    std::vector<std::uint8_t> a(n + kLowerBoundPadding);
    for (auto& x : a) x = static_cast<std::uint8_t>(rng());
    for (int key = 0; key < 256; ++key) {
      auto k = static_cast<std::uint8_t>(key);
      std::size_t expect = ref().lower_bound(a.data(), n, k);
      for (auto [level, t] : usable_levels(kernel_tables())) {
        ASSERT_EQ(t->lower_bound(a.data(), n, k), expect) << isa_name(level);
        ASSERT_EQ(t->lower_bound_padded(a.data(), n, k), expect) << isa_name(level);
      }
    }
  }
}

// The unpadded form must not read past the end: put the array against a PROT_NONE page.
TEST(LowerBound, UnpaddedNeverReadsPastTheEnd) {
  long page = sysconf(_SC_PAGESIZE);
  auto* base = static_cast<std::uint8_t*>(
      mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(base, MAP_FAILED);
  ASSERT_EQ(mprotect(base + page, page, PROT_NONE), 0);
  for (std::size_t n = 0; n <= 256; ++n) {
    std::uint8_t* a = base + page - n;
    for (std::size_t i = 0; i < n; ++i) a[i] = static_cast<std::uint8_t>(i);
    for (auto [level, t] : usable_levels(kernel_tables()))
      ASSERT_EQ(t->lower_bound(a, n, 100), std::min<std::size_t>(n, 100)) << isa_name(level);
    std::vector<std::uint8_t> in(a, a + n), out(n);
    std::uint8_t lut[16];
    for (int i = 0; i < 16; ++i) lut[i] = static_cast<std::uint8_t>(15 - i);
    for (auto [level, t] : usable_levels(kernel_tables()))
      t->remap_branches(a, base + page - n, n, lut);
  }
  munmap(base, 2 * page);
}

TEST(RemapBranches, AllLengthsAlignmentsAndInPlace) {
  std::mt19937 rng(3);
  for (std::size_t n = 0; n <= 300; ++n) {
    for (std::size_t offset = 0; offset < 4; ++offset) {
      std::vector<std::uint8_t> in(n + offset), lut(16);
      for (auto& x : in) x = static_cast<std::uint8_t>(rng());
      for (auto& x : lut) x = static_cast<std::uint8_t>(rng());  // high bits must be ignored
      std::vector<std::uint8_t> expect(n + offset);
      ref().remap_branches(in.data() + offset, expect.data() + offset, n, lut.data());
      for (std::size_t i = 0; i < n; ++i) {
        std::uint8_t b = in[offset + i];
        ASSERT_EQ(expect[offset + i],
                  static_cast<std::uint8_t>(((lut[b >> 4] & 15) << 4) | (b & 15)));
      }
      for (auto [level, t] : usable_levels(kernel_tables())) {
        std::vector<std::uint8_t> out(n + offset + 64, 0xAA);
        t->remap_branches(in.data() + offset, out.data() + offset, n, lut.data());
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(out[offset + i], expect[offset + i]) << isa_name(level) << " n=" << n;
        for (std::size_t i = n + offset; i < out.size(); ++i)
          ASSERT_EQ(out[i], 0xAA) << "wrote past the end";
        std::vector<std::uint8_t> inplace = in;
        t->remap_branches(inplace.data() + offset, inplace.data() + offset, n, lut.data());
        for (std::size_t i = 0; i < n; ++i)
          ASSERT_EQ(inplace[offset + i], expect[offset + i]) << "in place";
      }
    }
  }
}

TEST(RankTable, EveryOccupancyPattern) {
  for (unsigned pattern = 0; pattern < (1u << 16); ++pattern) {
    std::uint8_t counts[16], expect[16];
    for (int i = 0; i < 16; ++i)
      counts[i] = (pattern >> i) & 1 ? static_cast<std::uint8_t>(1 + (pattern * 7 + i) % 255) : 0;
    ref().rank_table(counts, expect);
    std::uint8_t r = 0;
    for (int i = 0; i < 16; ++i) {
      ASSERT_EQ(expect[i], r);
      r += counts[i] != 0;
    }
    for (auto [level, t] : usable_levels(kernel_tables())) {
      std::uint8_t got[16];
      t->rank_table(counts, got);
      ASSERT_TRUE(std::equal(got, got + 16, expect)) << isa_name(level) << " pattern=" << pattern;
    }
  }
}

TEST(FindU32x16, EverySizeAndPosition) {
  std::mt19937 rng(4);
  for (int round = 0; round < 2000; ++round) {
    std::uint32_t slots[16];
    for (auto& s : slots) s = rng() % 8;  // small alphabet: duplicates and padding matches
    for (std::size_t size = 0; size <= 16; ++size) {
      for (std::uint32_t needle = 0; needle < 9; ++needle) {
        std::size_t expect = ref().find_u32x16(slots, size, needle);
        std::size_t naive = std::find(slots, slots + size, needle) - slots;
        ASSERT_EQ(expect, naive);
        for (auto [level, t] : usable_levels(kernel_tables()))
          ASSERT_EQ(t->find_u32x16(slots, size, needle), expect) << isa_name(level);
      }
    }
  }
}

template <std::size_t N>
void check_find_min(std::mt19937& rng, int range) {
  std::uint16_t v[N];
  for (auto& x : v) x = static_cast<std::uint16_t>(rng() % range);
  std::size_t expect = static_cast<std::size_t>(std::min_element(v, v + N) - v);
  auto fn = N == 32 ? &kernels::find_min_index_32 : &kernels::find_min_index_64;
  ASSERT_EQ((ref().*fn)(v), expect);
  for (auto [level, t] : usable_levels(kernel_tables()))
    ASSERT_EQ((t->*fn)(v), expect) << isa_name(level);
}

TEST(FindMinIndex, RandomTiesAndExtremes) {
  std::mt19937 rng(5);
  for (int round = 0; round < 20000; ++round) {
    int range = round % 4 == 0 ? 3 : (round % 4 == 1 ? 65536 : (round % 4 == 2 ? 1 : 300));
    check_find_min<32>(rng, range);
    check_find_min<64>(rng, range);
  }
  for (std::size_t pos = 0; pos < 64; ++pos) {
    std::uint16_t v[64];
    std::fill(v, v + 64, 0xffff);
    v[pos] = 0xfffe;
    for (auto [level, t] : usable_levels(kernel_tables())) {
      ASSERT_EQ(t->find_min_index_64(v), pos) << isa_name(level);
      if (pos < 32) {
        ASSERT_EQ(t->find_min_index_32(v), pos) << isa_name(level);
      }
    }
  }
}

TEST(PublicApi, UsesTheActiveLevel) {
  std::uint8_t a[100];
  for (int i = 0; i < 100; ++i) a[i] = static_cast<std::uint8_t>(2 * i);
  EXPECT_EQ(lower_bound(a, 100, 51), 26u);
  std::uint32_t slots[16] = {5, 6, 7};
  EXPECT_EQ(find_u32x16(slots, 3, 7), 2u);
  EXPECT_EQ(find_u32x16(slots, 3, 0), 3u);  // padding zeros beyond size do not match
}

// A size past 16 made the kernels shift a bit by it: wrong answers, and UB past 31.
TEST(PublicApi, FindU32x16RefusesASizeOver16) {
  std::uint32_t slots[16] = {5, 6, 7};
  EXPECT_EQ(find_u32x16(slots, 16, 1), 16u);
  EXPECT_THROW(find_u32x16(slots, 17, 1), std::invalid_argument);
  EXPECT_THROW(find_u32x16(slots, 40, 1), std::invalid_argument);
}

}  // namespace
}  // namespace simdex::primitives
