// Bandwidth kernels and the checks that bytes credited are bytes touched and that no figure
// beats the memory system.
#include "simdex/lab/streams.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "simdex/lab/timing.h"
#include "simdex/lab/validity.h"

namespace {

using namespace simdex;
using namespace simdex::lab;

constexpr std::size_t kBytes = std::size_t{4} << 20;

page_buffer random_buffer() {
  page_buffer b(kBytes, page_size::small);
  rng r(9);
  auto* w = reinterpret_cast<std::uint64_t*>(b.data());
  for (std::size_t i = 0; i < kBytes / 8; ++i) w[i] = r.next();
  return b;
}

TEST(LabStreams, SumReadsEveryWord) {
  std::vector<std::uint64_t> v(1001);
  std::uint64_t want = 0;
  for (std::size_t i = 0; i < v.size(); ++i) want += v[i] = i * 7 + 1;
  EXPECT_EQ(sum_words(v.data(), v.size() * 8), want);
}

TEST(LabBytesTouched, PassesForTheSumKernel) {
  auto b = random_buffer();
  auto k = bytes_read(b.data(), kBytes, sum_words(b.data(), kBytes));
  EXPECT_EQ(k.status, check_status::pass) << k.detail;
}

// The study's mmap scan: one byte per 4 KiB page read, the whole buffer credited.
TEST(LabBytesTouched, FailsForOneBytePerPage) {
  auto b = random_buffer();
  std::uint64_t sum = 0;
  for (std::size_t off = 0; off < kBytes; off += 4096)
    sum += static_cast<std::uint8_t>(b.data()[off]);
  auto k = bytes_read(b.data(), kBytes, sum);
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_NE(k.detail.find("did not read every byte"), std::string::npos) << k.detail;
}

TEST(LabBytesWritten, FillIsCheckedWordByWord) {
  page_buffer b(kBytes, page_size::small);
  fill_words(b.data(), kBytes, 5);
  EXPECT_EQ(first_unfilled(b.data(), kBytes, 5), kBytes);
  EXPECT_EQ(bytes_written(b.data(), kBytes, 5).status, check_status::pass);
  // The study's page-touch loop: one write per page, whole buffer credited.
  page_buffer touched(kBytes, page_size::small);
  for (std::size_t off = 0; off < kBytes; off += 4096)
    reinterpret_cast<std::uint64_t*>(touched.data() + off)[0] = pattern_word(5, off / 8);
  auto k = bytes_written(touched.data(), kBytes, 5);
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_EQ(first_unfilled(touched.data(), kBytes, 5), 8u);
}

TEST(LabBelowMemcpy, FlagsAFigureTheMemoryCannotMove) {
  // 676 GiB/s against a 10 GiB/s memcpy: the study's mmap figure on any machine.
  EXPECT_EQ(below_memcpy("mmap scan", 676, 10).status, check_status::fail);
  EXPECT_EQ(below_memcpy("read", 29, 10).status, check_status::pass);  // a copy moves 3 B per byte
  EXPECT_EQ(below_memcpy("read", 38, 10).status, check_status::fail);  // beyond 3 x 1.25
  EXPECT_EQ(below_memcpy("read", 19, 0).status, check_status::warn);   // nothing to compare with
}

TEST(LabMemcpy, CopiesHalfOntoHalf) {
  page_buffer b(kBytes, page_size::small);
  std::memset(b.data(), 7, kBytes / 2);
  EXPECT_GT(memcpy_gib_s(b, 0), 0);  // round 0 copies the first half onto the second
  EXPECT_EQ(static_cast<int>(b.data()[kBytes - 1]), 7);
}

}  // namespace
