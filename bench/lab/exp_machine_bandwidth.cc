// Machine group, bandwidth across threads (pmbw's parallel scan, MLC's bandwidth matrix): 1, 2,
// 4, ... pinned threads each read, then write, a region of their own of a working set far beyond
// the last-level cache, timed on the wall clock from the common start to the last thread's end.
#include <numeric>

#include "machine_util.h"

namespace simdex::lab_bench {
namespace {

using bench::better;
using namespace machine;

void bandwidth_threads(trial& t) {
  const int most = conc::cpu_count();
  const auto counts = doubling(most);
  // Every team splits the same bytes into whole chunks, so each write covers the whole buffer
  // and the buffer always holds one pattern, whose sum every read must return.
  std::size_t split = 1;
  for (int n : counts) split = std::lcm(split, static_cast<std::size_t>(n));
  const std::size_t total = stream_bytes(t, static_cast<int>(split)), words = total / 8;
  page_buffer buf(total, page_size::small);
  std::byte* base = buf.data();
  std::uint64_t held = 1;  // the pattern seed the buffer holds
  // First touch by the largest team, each thread its own region: its pages land on its node.
  {
    const std::size_t r = total / static_cast<std::size_t>(most);
    lab::run_team(conc::team_cpus(most), [&](int me) {
      auto i = static_cast<std::size_t>(me);
      lab::fill_words(base + i * r, r, held + i * r / 8);
    });
  }
  mem::memcpy_limit limit(std::min(total, 4 * lab::last_level_bytes()));
  conc::team_book book;
  std::vector<std::string> multi, single;
  curve c = conc::thread_curve(
      "threads", "Bandwidth across threads, each over its own part of " + mem::size_label(total),
      "GiB/s");
  series read_line{"read", {}}, write_line{"write", {}};
  lab::check bytes{"bytes_touched", lab::check_status::pass, ""}, bound = bytes;
  double worst_ratio = -1, read1 = 0, write1 = 0, readn = 0, writen = 0;
  std::uint64_t reads = 0, bad_reads = 0;
  for (int n : counts) {
    const std::size_t region = total / static_cast<std::size_t>(n);
    const auto cpus = conc::team_cpus(n);
    const std::string tn = conc::thread_label(n);
    std::vector<std::uint64_t> sums(static_cast<std::size_t>(n));
    auto gib = [](double mops) { return mops * 1e6 / (1 << 30); };  // team_mops of bytes
    auto read = [&] {
      double g = gib(conc::team_mops(cpus, book["read, " + tn], [&](int me, lab::heartbeat& hb) {
        auto i = static_cast<std::size_t>(me);
        sums[i] = read_beating(base + i * region, region, hb, me);
        return region;
      }));
      std::uint64_t s = 0;
      for (auto x : sums) s += x;  // wrapping, as the pattern's sum
      ++reads;
      bad_reads += s != lab::pattern_sum(held, words);
      return g;
    };
    auto write = [&] {
      const std::uint64_t sd = held + 1000;
      double g = gib(conc::team_mops(cpus, book["write, " + tn], [&](int me, lab::heartbeat& hb) {
        auto i = static_cast<std::size_t>(me);
        for (std::size_t off = 0; off < region; off += kChunk)
          // Word w of the buffer holds pattern_word(sd, w), whichever thread wrote it.
          lab::fill_words(base + i * region + off, kChunk, sd + (i * region + off) / 8),
              hb.beat(me);
        return region;
      }));
      held = sd;
      return g;
    };
    auto s = t.sample({{"read", read}, {"write", write}, limit.contender()});
    bench::params p = {{"threads", std::int64_t{n}}, {"bytes", static_cast<std::int64_t>(total)}};
    t.record("read", p, "read", "GiB/s", better::higher, s[0]);
    t.record("write", p, "write", "GiB/s", better::higher, s[1]);
    t.record("memcpy", p, "memcpy (limit)", "GiB/s", better::higher, s[2]);
    for (const char* k : {"read, ", "write, "}) (n > 1 ? multi : single).push_back(k + tn);
    // Every word as the last write left it, checked word by word.
    if (bytes.status == lab::check_status::pass) {
      bytes = lab::bytes_written(base, total, held);
      bytes.detail = tn + ": " + bytes.detail;
    }
    // One thread moves at most what one core's memcpy allows (below_memcpy's bound, per
    // thread): n threads above n times that credit bytes nobody moved.
    for (int k = 0; k < 2; ++k) {
      double per_thread = s[static_cast<std::size_t>(k)].median / n;
      lab::check b = lab::below_memcpy(
          format("%s, %s, per thread", k ? "write" : "read", tn.c_str()), per_thread, s[2].max);
      double ratio = s[2].max > 0 ? per_thread / s[2].max : 0;
      if (bound.status != lab::check_status::fail &&
          (ratio > worst_ratio || b.status == lab::check_status::fail)) {
        worst_ratio = ratio;
        bound = b;
      }
    }
    read_line.points.push_back({double(n), s[0].median, s[0].min, s[0].max});
    write_line.points.push_back({double(n), s[1].median, s[1].min, s[1].max});
    if (n == 1) read1 = s[0].median, write1 = s[1].median;
    readn = s[0].median, writen = s[1].median;
  }
  // Reads: each sample's sum against the sum of the pattern the writes left (verified above).
  if (bad_reads > 0 && bytes.status != lab::check_status::fail)
    bytes = {
        "bytes_touched", lab::check_status::fail,
        format("%llu of %llu reads returned a sum other than that of every credited word: a "
               "reader skipped bytes it is credited with",
               static_cast<unsigned long long>(bad_reads), static_cast<unsigned long long>(reads))};
  else if (bytes.status != lab::check_status::fail)
    bytes.detail += format("; all %llu reads summed every credited word",
                           static_cast<unsigned long long>(reads));
  t.add(bytes);
  t.add(bound);
  streaming_team_checks(t, book, multi, single);
  c.lines = {read_line, write_line};
  t.plot(c);
  t.figure(readn, format("read, %d threads, %s", most, mem::size_label(total).c_str()));
  t.set({{"cpus", double(most)},
         {"read1", read1},
         {"write1", write1},
         {"readn", readn},
         {"writen", writen}});
}

verdict bandwidth_threads_verdict(const trial& t) {
  const double n = t.get("cpus");
  std::string why = format("reading, one thread draws %.1f GiB/s", t.get("read1"));
  if (n > 1)
    why += format(" and %.0f threads %.1f GiB/s (%.2fx)", n, t.get("readn"),
                  t.get("readn") / t.get("read1"));
  why += format("; writing, %.1f GiB/s", t.get("write1"));
  if (n > 1)
    why += format(" and %.1f GiB/s (%.2fx)", t.get("writen"), t.get("writen") / t.get("write1"));
  return measured(why);
}

const registration kBandwidthThreads("bandwidth_threads", bandwidth_threads,
                                     bandwidth_threads_verdict);

}  // namespace
}  // namespace simdex::lab_bench
