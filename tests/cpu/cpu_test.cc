#include "simdex/cpu.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <string>

#include "simdex/memory.h"

namespace simdex {
namespace {

TEST(Isa, NamesRoundTrip) {
  for (int l = 0; l < kIsaCount; ++l) {
    auto level = static_cast<isa>(l);
    auto parsed = parse_isa(isa_name(level));
    ASSERT_TRUE(parsed.has_value()) << isa_name(level);
    EXPECT_EQ(*parsed, level);
  }
  EXPECT_EQ(parse_isa("sse42"), isa::sse42);
  EXPECT_FALSE(parse_isa("avx3").has_value());
  EXPECT_FALSE(parse_isa("").has_value());
  EXPECT_FALSE(parse_isa("AVX2").has_value());
}

TEST(Isa, ActiveRespectsCapAndHardware) {
  isa active = active_isa();
  EXPECT_LE(static_cast<int>(active), static_cast<int>(detected_isa()));
  if (const char* env = std::getenv("SIMDEX_ISA"); env && *env) {
    auto cap = parse_isa(env);
    ASSERT_TRUE(cap.has_value());
    EXPECT_LE(static_cast<int>(active), static_cast<int>(*cap));
  } else {
    EXPECT_EQ(active, detected_isa());
  }
  EXPECT_TRUE(isa_usable(isa::scalar));
  EXPECT_TRUE(isa_usable(active));
}

TEST(Isa, DetectedLevelMatchesFeatures) {
  const auto& f = features();
  isa d = detected_isa();
  if (static_cast<int>(d) >= static_cast<int>(isa::avx2)) {
    EXPECT_TRUE(f.avx2 && f.os_avx && f.bmi2);
  }
  if (static_cast<int>(d) >= static_cast<int>(isa::avx512)) {
    EXPECT_TRUE(f.avx512f && f.avx512bw && f.os_avx512);
  }
  if (d == isa::avx512vbmi) {
    EXPECT_TRUE(f.avx512vbmi);
  }
  EXPECT_FALSE(f.vendor.empty());
}

TEST(Dispatch, PickFallsBackToLowerLevels) {
  struct table {
    int id;
  };
  static const table s{0}, a2{2};
  dispatch::by_level<table> tables = {&s, nullptr, &a2, nullptr, nullptr};
  auto c = dispatch::pick(tables);
  if (static_cast<int>(active_isa()) >= static_cast<int>(isa::avx2)) {
    EXPECT_EQ(c.table->id, 2);
    EXPECT_EQ(c.level, isa::avx2);
  } else {
    EXPECT_EQ(c.table->id, 0);
    EXPECT_EQ(c.level, isa::scalar);
  }
  EXPECT_EQ(dispatch::exact(tables, isa::sse42), nullptr);
}

TEST(Dispatch, HomeIsTheLowestLevelWithThePickedEntry) {
  // The AVX2 table reuses scalar's `a` and has its own `b`, as a level reuses a lower kernel.
  struct table {
    int a, b;
  };
  static const table s{1, 1}, a2{1, 2};
  const dispatch::by_level<table> tables = {.scalar = &s, .avx2 = &a2};
  const bool avx2 = static_cast<int>(active_isa()) >= static_cast<int>(isa::avx2);
  EXPECT_EQ(dispatch::home(tables, &table::a), isa::scalar);
  EXPECT_EQ(dispatch::home(tables, &table::b), avx2 ? isa::avx2 : isa::scalar);
}

TEST(KernelReport, EveryFamilyAtOrBelowActive) {
  auto report = kernel_report();
  EXPECT_FALSE(report.empty());
  for (const auto& k : report) {
    EXPECT_FALSE(k.family.empty());
    EXPECT_LE(static_cast<int>(k.level), static_cast<int>(active_isa())) << k.family;
  }
}

TEST(Pages, BufferIsAlignedZeroedAndWritable) {
  for (page_size p : {page_size::small, page_size::huge}) {
    page_buffer b(3 << 20, p);
    ASSERT_NE(b.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % (2 << 20), 0u);
    EXPECT_GE(b.size(), std::size_t{3} << 20);
    for (std::size_t i = 0; i < b.size(); i += 4096) EXPECT_EQ(b.data()[i], std::byte{0});
    b.data()[b.size() - 1] = std::byte{1};
    if (p == page_size::small) {
      EXPECT_EQ(b.huge_bytes(), 0u);
    }
    page_buffer moved = std::move(b);
    EXPECT_EQ(b.data(), nullptr);
    EXPECT_EQ(moved.data()[moved.size() - 1], std::byte{1});
  }
  EXPECT_FALSE(thp_mode().empty());
}

TEST(Pages, SizeTooLargeToMapThrowsBadAlloc) {
  // Sizes whose rounding to 2 MiB wraps around must fail, not give a 2 MiB buffer.
  for (std::size_t bytes : {SIZE_MAX, SIZE_MAX - (std::size_t{2} << 20), SIZE_MAX / 2 + 1})
    EXPECT_THROW(page_buffer(bytes, page_size::small), std::bad_alloc) << bytes;
}

}  // namespace
}  // namespace simdex

namespace simdex {
namespace {

TEST(Isa, ResolveCapsAndRejectsUnknownValues) {
  EXPECT_EQ(resolve_isa(isa::avx512vbmi, nullptr), isa::avx512vbmi);
  EXPECT_EQ(resolve_isa(isa::avx512vbmi, ""), isa::avx512vbmi);
  EXPECT_EQ(resolve_isa(isa::avx512vbmi, "avx2"), isa::avx2);
  EXPECT_EQ(resolve_isa(isa::sse42, "avx512"), isa::sse42);  // a cap never raises the level
  EXPECT_EQ(resolve_isa(isa::avx2, "scalar"), isa::scalar);
  try {
    resolve_isa(isa::avx2, "avx1024");
    FAIL() << "unknown level accepted";
  } catch (const std::invalid_argument& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("avx1024"), std::string::npos);
    EXPECT_NE(msg.find("avx512vbmi"), std::string::npos);
  }
}

}  // namespace
}  // namespace simdex
