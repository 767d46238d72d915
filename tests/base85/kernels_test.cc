// Every level's kernels against the scalar reference: random round trips at every length
// and alignment, injected invalid chars, and the overflow rule inside full SIMD blocks.
#include "base85/kernels.h"

#include <gtest/gtest.h>

#include <cstring>

#include "helpers.h"
#include "isa_levels.h"

using namespace simdex;
using namespace simdex::base85;
using namespace simdex::base85::testing;

namespace {

const variant kVariants[] = {variant::b85, variant::z85, variant::a85};

std::string level_name(isa l) { return isa_name(l); }

// Two decodes of one text agree: the error, its position, and (when they succeed) the bytes.
::testing::AssertionResult same_decode(const result& r1, const std::uint8_t* out1, const result& r2,
                                       const std::uint8_t* out2) {
  if (r1.error != r2.error || r1.position != r2.position)
    return ::testing::AssertionFailure() << error_name(r1.error) << " at " << r1.position << " vs "
                                         << error_name(r2.error) << " at " << r2.position;
  if (r1.ok() && (r1.written != r2.written || std::memcmp(out1, out2, r1.written) != 0))
    return ::testing::AssertionFailure()
           << "bytes differ (" << r1.written << " vs " << r2.written << " written)";
  return ::testing::AssertionSuccess();
}

// The random-text tests' loop: at every usable level, `rounds` calls of
// body(k, v, data, round, g), the variant cycling through kVariants, data random bytes of a
// length below max_len; stops at the first fatal failure.
template <class Body>
void random_rounds(std::uint64_t seed, int rounds, std::size_t max_len, Body&& body) {
  std::mt19937_64 g(seed);
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(level_name(level));
    for (int round = 0; round < rounds && !::testing::Test::HasFatalFailure(); ++round)
      body(k, kVariants[round % 3], random_bytes(g() % max_len, g), round, g);
  }
}

TEST(Base85Kernels, RoundTripEveryLengthAndAlignment) {
  std::mt19937_64 g(1);
  std::vector<std::uint8_t> src(4096 + 64), back(4096 + 64 + 4);
  std::string text(5 * 1025 + 64, '\0');
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(level_name(level));
    for (variant v : kVariants) {
      for (auto& b : src) b = static_cast<std::uint8_t>(g());
      for (std::size_t n = 0; n <= 4096; ++n) {
        std::size_t align = (n * 7) % 64;  // every alignment, many times over
        encoder e(eo(v), k);
        std::string out(e.max_output(n) + encoder::kMaxFinish, '\0');
        std::size_t w = e.update(src.data() + align, n, out.data());
        w += e.finish(out.data() + w);
        out.resize(w);
        encoder ref(eo(v), &kScalarKernels);
        std::string expect(ref.max_output(n) + encoder::kMaxFinish, '\0');
        std::size_t rw = ref.update(src.data() + align, n, expect.data());
        rw += ref.finish(expect.data() + rw);
        expect.resize(rw);
        ASSERT_EQ(out, expect) << "n=" << n;
        // Decode from a misaligned copy.
        std::memcpy(text.data() + align, out.data(), out.size());
        decoder d(doo(v), k);
        result r = d.update(text.data() + align, out.size(), back.data());
        ASSERT_TRUE(r.ok()) << "n=" << n << " pos=" << r.position;
        result f = d.finish(back.data() + r.written);
        ASSERT_TRUE(f.ok());
        ASSERT_EQ(r.written + f.written, n);
        ASSERT_EQ(0, std::memcmp(back.data(), src.data() + align, n)) << "n=" << n;
      }
    }
  }
}

TEST(Base85Kernels, RandomTextAgainstScalar) {
  std::mt19937_64 g(2);
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(level_name(level));
    for (variant v : kVariants) {
      const alphabet& a = alphabet_of(v);
      for (int round = 0; round < 3000; ++round) {
        std::size_t groups = g() % 200;
        std::string text(5 * groups, '\0');
        for (char& c : text) c = static_cast<char>(a.enc[g() % 85]);
        // A few random bytes anywhere (invalid chars, high digits).
        int faults = static_cast<int>(g() % 3);
        for (int f = 0; f < faults && groups; ++f) text[g() % text.size()] = static_cast<char>(g());
        if (groups && g() % 2) text[5 * (g() % groups)] = static_cast<char>(a.enc[82 + g() % 3]);
        std::vector<std::uint8_t> o1(4 * groups + 1, 0xaa), o2(4 * groups + 1, 0xaa);
        std::size_t n1 = k->decode(text.data(), groups, o1.data(), a);
        std::size_t n2 = kScalarKernels.decode(text.data(), groups, o2.data(), a);
        ASSERT_EQ(n1, n2);
        ASSERT_EQ(0, std::memcmp(o1.data(), o2.data(), 4 * n1));
        ASSERT_EQ(o1[4 * groups], 0xaa);  // nothing written past the groups
      }
    }
  }
}

// Every byte value at every char of a block of 16 and of 32 groups (a full SSE4.2 and AVX2
// block; a 16-group step at AVX-512), in text of one repeated char: each alphabet lookup row,
// chars below 32 and from 128 up, and text made of each alphabet char alone (where a wrong
// lookup would not be caught by a bad char elsewhere in the block), against scalar.
TEST(Base85Kernels, EveryByteAtEveryPosition) {
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(level_name(level));
    for (variant v : kVariants) {
      const alphabet& a = alphabet_of(v);
      for (std::size_t groups : {7, 13, 15, 16, 32}) {  // with tails after whole steps
        std::uint8_t o1[128], o2[128];
        const kernels* lk = k;  // clang 14 does not capture structured bindings
        auto same = [&](const std::string& text) {
          std::size_t n1 = lk->decode(text.data(), groups, o1, a);
          std::size_t n2 = kScalarKernels.decode(text.data(), groups, o2, a);
          return n1 == n2 && std::memcmp(o1, o2, 4 * n1) == 0;
        };
        for (int d = 0; d < 85; ++d)
          ASSERT_TRUE(same(std::string(5 * groups, static_cast<char>(a.enc[d])))) << "d=" << d;
        std::string text(5 * groups, static_cast<char>(a.enc[7]));
        for (std::size_t at = 0; at < text.size(); ++at) {
          for (int c = 0; c < 256; ++c) {
            text[at] = static_cast<char>(c);
            ASSERT_TRUE(same(text)) << "at=" << at << " c=" << c;
          }
          text[at] = static_cast<char>(a.enc[7]);
        }
      }
    }
  }
}

TEST(Base85Kernels, EncodeStopsAtFoldedWords) {
  std::mt19937_64 g(3);
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(level_name(level));
    const alphabet& a = alphabet_of(variant::a85);
    for (std::size_t n : {40, 37})  // 37: a tail after whole steps at every level
      for (std::size_t at = 0; at < n; ++at)
        for (std::uint32_t word : {0u, 0x20202020u}) {
          std::vector<std::uint8_t> in = random_bytes(4 * n, g);
          std::memcpy(in.data() + 4 * at, &word, 4);
          std::string out(5 * n, '\0');
          EXPECT_EQ(k->encode(in.data(), n, out.data(), a, true, true), at);
          EXPECT_EQ(k->encode(in.data(), n, out.data(), a, word == 0, word != 0), at);
          EXPECT_EQ(k->encode(in.data(), n, out.data(), a, word != 0, word == 0), n);
        }
  }
}

// Overflow regression: a group led by digit 82, 83 or 84 that is worth more than 2^32-1,
// at every group offset of full SIMD blocks, at every level (base85-simd missed 83/84).
TEST(Base85Kernels, OverflowInsideBlocks) {
  const std::uint8_t over[][5] = {{82, 23, 54, 12, 1},  // |NsC1: 2^32 exactly
                                  {83, 0, 0, 0, 0},
                                  {84, 0, 0, 0, 0},
                                  {84, 84, 84, 84, 84},
                                  {82, 84, 0, 0, 0}};
  const std::uint8_t max_ok[5] = {82, 23, 54, 12, 0};  // |NsC0: 2^32-1
  // 48 groups: blocks of 16 and 32 plus tails; 136: blocks of 64 (AVX-512 VBMI's main loop).
  for (std::size_t kGroups : {48, 136})
    for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
      SCOPED_TRACE(level_name(level));
      for (variant v : kVariants) {
        const alphabet& a = alphabet_of(v);
        for (std::size_t at = 0; at < kGroups; ++at) {
          std::string text(5 * kGroups, static_cast<char>(a.enc[7]));
          for (int i = 0; i < 5; ++i) text[5 * at + i] = static_cast<char>(a.enc[max_ok[i]]);
          std::vector<std::uint8_t> out(4 * kGroups);
          ASSERT_EQ(k->decode(text.data(), kGroups, out.data(), a), kGroups);
          EXPECT_EQ(std::memcmp(out.data() + 4 * at, "\xff\xff\xff\xff", 4), 0);
          for (const auto& o : over) {
            for (int i = 0; i < 5; ++i) text[5 * at + i] = static_cast<char>(a.enc[o[i]]);
            ASSERT_EQ(k->decode(text.data(), kGroups, out.data(), a), at) << "at=" << at;
            decoder d(doo(v), k);
            std::vector<std::uint8_t> big(d.max_output(text.size()));
            result r = d.update(text.data(), text.size(), big.data());
            EXPECT_EQ(r.error, error_kind::overflow);
            EXPECT_EQ(r.position, 5 * at);
          }
        }
      }
    }
}

TEST(Base85Streaming, ChunksOfAnySize) {
  std::mt19937_64 g(4);
  for (int round = 0; round < 300; ++round) {
    variant v = kVariants[round % 3];
    std::size_t n = g() % 3000;
    std::vector<std::uint8_t> data = random_bytes(n, g);
    for (std::size_t i = 0; i + 4 <= n; i += 4)  // some zero and space words for a85
      if (g() % 8 == 0) std::memset(data.data() + i, g() % 2 ? 0 : ' ', 4);
    encode_options eopt = eo(v, g() % 2);
    eopt.wrap = g() % 3 ? 0 : g() % 100;
    eopt.fold_spaces = g() % 2;
    eopt.adobe = g() % 2;
    std::string whole = enc(data, eopt);
    ASSERT_LE(whole.size(), encoded_size(n, eopt));
    encoder e(eopt);
    std::string pieces;
    for (std::size_t i = 0; i < n;) {
      std::size_t c = std::min<std::size_t>(n - i, g() % 70);
      std::string buf(e.max_output(c), '\0');
      buf.resize(e.update(data.data() + i, c, buf.data()));
      pieces += buf;
      i += c;
    }
    char tail[encoder::kMaxFinish];
    pieces.append(tail, e.finish(tail));
    ASSERT_EQ(pieces, whole);

    decode_options dopt = doo(v);
    dopt.fold_spaces = eopt.fold_spaces;
    dopt.adobe = eopt.adobe;
    dopt.ignore = char_set("\n");
    std::string back1 = dec(whole, dopt);
    decoder d(dopt);
    std::string back2;
    for (std::size_t i = 0; i < whole.size();) {
      std::size_t c = std::min<std::size_t>(whole.size() - i, g() % 70);
      std::vector<std::uint8_t> buf(d.max_output(c));
      result r = d.update(whole.data() + i, c, buf.data());
      ASSERT_TRUE(r.ok());
      back2.append(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(r.written));
      i += c;
    }
    std::uint8_t t[decoder::kMaxFinish];
    result f = d.finish(t);
    ASSERT_TRUE(f.ok());
    back2.append(t, t + f.written);
    std::string expect(data.begin(), data.end());
    if (eopt.pad) expect.resize((n + 3) / 4 * 4, '\0');
    ASSERT_EQ(back1, expect);
    ASSERT_EQ(back2, expect);
  }
}

// Skipped chars (line breaks, spaces) anywhere, plus the odd invalid char: every level gives
// the scalar decoder's bytes, or its error kind and position.
TEST(Base85Kernels, SkippedCharsAndErrorsAgainstScalar) {
  random_rounds(
      9, 600, 6000,
      [](const kernels* k, variant v, const std::vector<std::uint8_t>& data, int round,
         std::mt19937_64& g) {
        std::string text = enc(data, eo(v)), noisy;
        const int every = 1 + static_cast<int>(g() % 90);
        for (char c : text) {
          if (g() % static_cast<unsigned>(every) == 0) noisy += " \n\r\t"[g() % 4];
          noisy += c;
        }
        if (round % 4 == 0 && !noisy.empty()) noisy[g() % noisy.size()] = '\x7f';
        decode_options o = doo(v);
        // Whitespace has a built-in class table, which short text uses from the first char.
        o.ignore = char_set(round % 2 ? " \n\r\t" : kWhitespace);
        std::vector<std::uint8_t> out1(max_decoded_size(noisy.size(), o) + 4), out2 = out1;
        decoder d1(o, k), d2(o, &kScalarKernels);
        result r1 = d1.update(noisy.data(), noisy.size(), out1.data());
        result r2 = d2.update(noisy.data(), noisy.size(), out2.data());
        ASSERT_TRUE(same_decode(r1, out1.data(), r2, out2.data()));
        ASSERT_EQ(r1.written, r2.written);  // after an error too: both stop at the same group
        ASSERT_EQ(0, std::memcmp(out1.data(), out2.data(), r1.written));
        if (round % 8 == 0) {  // byte-at-a-time: the char-by-char path alone, no kernels
          decoder d3(o, k);
          std::vector<std::uint8_t> out3(out1.size() + 8);
          result r3 = bytewise(d3, noisy, out3.data());
          ASSERT_TRUE(same_decode(r3, out3.data(), r1, out1.data()));
        }
        if (r1.ok() && round % 4 != 0) {
          result f = d1.finish(out1.data() + r1.written);
          ASSERT_TRUE(f.ok());
          ASSERT_EQ(r1.written + f.written, data.size());
          ASSERT_EQ(0, std::memcmp(out1.data(), data.data(), data.size()));
        }
      });
}

TEST(Base85Kernels, CompactAgainstScalar) {
  std::mt19937_64 g(10);
  std::uint8_t cls[kClassBytes];
  for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
    SCOPED_TRACE(level_name(level));
    for (int round = 0; round < 3000; ++round) {
      for (auto& c : cls) c = static_cast<std::uint8_t>(g() % 16 == 0 ? 2 : g() % 4 == 0 ? 1 : 0);
      if (round % 3 == 1) {  // a run of kept chars (the range test) and a few skipped ones
        int first = static_cast<int>(g() % 100), run = 1 + static_cast<int>(g() % 28);
        for (int c = 0; c < 128; ++c)
          cls[c] = c >= first && c < first + run ? 0 : g() % 8 == 0 ? 1 : 2;
      }
      for (int c = 128; c < 256; ++c) cls[c] = 2;
      add_class_rows(cls);
      std::string in(g() % 300, '\0');
      std::vector<char> common;  // most rounds: text of kept and skipped chars, stops rare
      for (int c = 0; c < 128; ++c)
        if (cls[c] != 2) common.push_back(static_cast<char>(c));
      std::vector<char> kept, skipped;
      for (char c : common) (cls[static_cast<unsigned char>(c)] ? skipped : kept).push_back(c);
      const unsigned sparse = round % 2 ? 1 + static_cast<unsigned>(g() % 40) : 0;
      for (char& c : in) {
        if (round % 4 == 0 || g() % 200 == 0)
          c = static_cast<char>(g());
        else if (sparse && !kept.empty() && !skipped.empty())  // skips every ~`sparse` chars
          c = g() % sparse == 0 ? skipped[g() % skipped.size()] : kept[g() % kept.size()];
        else
          c = common[g() % common.size()];
      }
      std::size_t cap = 1 + g() % 320;
      std::string o1(cap + 64, '\0'), o2 = o1;
      std::size_t c1 = 0, c2 = 0;
      std::size_t m1 = k->compact(in.data(), in.size(), o1.data(), cap, cls, c1);
      std::size_t m2 = kScalarKernels.compact(in.data(), in.size(), o2.data(), cap, cls, c2);
      ASSERT_EQ(m1, m2);
      ASSERT_EQ(c1, c2);
      ASSERT_EQ(o1.substr(0, m1), o2.substr(0, m2));
    }
  }
}

// Words on both sides of every multiple of 85^2 (where a division by 7225 steps; this covers
// every step of the quotient / 85^2 too) and the largest words: every level against scalar.
TEST(Base85Kernels, EncodeEveryQuotientBoundary) {
  std::vector<std::uint8_t> in;
  auto push = [&in](std::uint64_t w) {
    if (w > 0xffffffffu) return;
    for (int s = 24; s >= 0; s -= 8) in.push_back(static_cast<std::uint8_t>(w >> s));
  };
  for (std::uint64_t j = 0; j * 7225 <= 0xffffffffu + 7225ull; ++j) {
    push(j * 7225);
    if (j) push(j * 7225 - 1);
  }
  for (std::uint64_t w = 0xffffffffu - 300; w <= 0xffffffffu; ++w) push(w);
  const std::size_t groups = in.size() / 4;
  std::string ref(5 * groups, '\0'), got(5 * groups, '\0');
  for (variant v : kVariants) {
    const alphabet& a = alphabet_of(v);
    ASSERT_EQ(kScalarKernels.encode(in.data(), groups, ref.data(), a, false, false), groups);
    for (auto [level, k] : simdex::testing::usable_levels(kernel_tables())) {
      SCOPED_TRACE(level_name(level));
      ASSERT_EQ(k->encode(in.data(), groups, got.data(), a, false, false), groups);
      ASSERT_EQ(got, ref);
    }
  }
}

// Text wrapped at a fixed width (every width, "\n" and "\r\n"), with the faults that break
// the pattern: a short line, an extra blank, a fold, a bad char, an overflow. Every level
// gives the byte-at-a-time decoder's bytes, or its error and position.
TEST(Base85Kernels, WrappedLinesAgainstBytewise) {
  random_rounds(11, 400, 9000,
                [](const kernels* k, variant v, std::vector<std::uint8_t> data, int round,
                   std::mt19937_64& g) {
                  for (std::size_t i = 0; i + 4 <= data.size(); i += 4)  // a85 folds now and then
                    if (g() % 64 == 0) std::memset(data.data() + i, 0, 4);
                  const std::string text = enc(data, eo(v));
                  const std::size_t width = round % 5 == 0 ? 1 + g() % 12 : 30 + g() % 140;
                  const std::string brk = g() % 3 ? "\n" : "\r\n";
                  std::string wrapped;
                  for (std::size_t i = 0; i < text.size(); i += width)
                    wrapped += text.substr(i, width) + brk;
                  if (round % 4 == 1 && !wrapped.empty()) {  // one fault somewhere
                    std::size_t at = g() % wrapped.size();
                    switch (g() % 4) {
                      case 0:
                        wrapped.erase(at, 1);
                        break;  // a short line (or a lost break)
                      case 1:
                        wrapped.insert(at, " ");
                        break;  // an extra blank
                      case 2:
                        wrapped[at] = '\x7f';
                        break;  // a bad char
                      default:
                        wrapped.insert(at, "\n");
                        break;  // an extra break
                    }
                  }
                  decode_options o = doo(v);
                  o.ignore = char_set(round % 2 ? " \r\n" : kWhitespace);
                  decoder whole(o, k), one_by_one(o, &kScalarKernels);
                  std::vector<std::uint8_t> out1(whole.max_output(wrapped.size()) + 8),
                      out2(out1.size());
                  result r1 = whole.update(wrapped.data(), wrapped.size(), out1.data());
                  result r2 = bytewise(one_by_one, wrapped, out2.data());
                  ASSERT_TRUE(same_decode(r1, out1.data(), r2, out2.data())) << "round " << round;
                });
}

}  // namespace

namespace {
TEST(Base85Report, NamesTheKernelThatRuns) {
  // At AVX-512 VBMI, Ascii85's encode runs AVX2's kernel (encode_vbmi hands contiguous
  // alphabets over); `simdex info` said avx512vbmi.
  int seen = 0;
  for (const auto& k : kernel_report()) {
    if (k.family.rfind("base85.", 0) != 0) continue;
    ++seen;
    if (k.family == "base85.a85.encode") {
      EXPECT_LE(static_cast<int>(k.level), static_cast<int>(isa::avx2));
    }
    if (k.family == "base85.b85.encode" && active_isa() == isa::avx512vbmi) {
      EXPECT_EQ(k.level, isa::avx512vbmi);
    }
  }
  EXPECT_EQ(seen, 6);
}
}  // namespace
