// Memory group, latency: pointer chasing, cache levels, associativity, TLB pressure. Every
// figure is ns per dependent load over 64-byte lines, with 4 KiB and 2 MiB pages where the
// page size matters, the huge-page share read back from the kernel, and every load checked to
// be on the chain.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <vector>

#include "lab/difference_rule.h"
#include "lab/levels.h"
#include "memory_util.h"

namespace simdex::lab_bench {
namespace {

using bench::better;
using namespace mem;

// --- 2: pointer chasing ------------------------------------------------------------------------

// Relative 10th-90th percentile spread of the 1-chain windows above which the DRAM figure is
// called noisy: on a shared guest one chain's latency moves by a third within seconds.
constexpr double kChaseSpread = 0.25;

// One chain sampled in short windows, each starting where the last one stopped (the chain's
// cursor, which its 16-chain samples share): a sample is the median of its windows, so a
// preemption or a neighbour's burst moves one window rather than the sample; every window is
// kept for the run's spread.
struct windowed_chain {
  lab::chain_cursor& at;
  std::vector<double>& windows;
  double sample(std::size_t steps, int count) {
    std::vector<double> w;
    for (int i = 0; i < count; ++i) w.push_back(at.sample(1, steps / count));
    windows.insert(windows.end(), w.begin(), w.end());
    return lab::summarize(w).median;
  }
};

// What a read of every word of a chain's span must sum to, from the layout alone rather than
// from another read: each node's line holds the next node's address and is otherwise zero, and
// the links form one cycle, so the words sum to the addresses of all the nodes.
std::uint64_t chain_word_sum(const lab::chain& c) {
  std::uint64_t s = 0;
  for (std::size_t k = 0; k < c.nodes(); ++k)
    s += reinterpret_cast<std::uintptr_t>(c.at_position(k));
  return s;
}

void pointer_chase(trial& t) {
  const std::size_t bytes = dram_bytes(t);
  const std::size_t steps = t.quick() ? 500'000 : 2'000'000;
  const int windows = 8;
  lab::chain small({.span = bytes, .pages = page_size::small});
  lab::chain huge({.span = bytes, .pages = page_size::huge});
  // A second allocation for the 4 KiB figure, alternating with the first: where the pages
  // landed is part of what moves the figure from run to run.
  lab::chain small_b({.span = bytes, .pages = page_size::small}, 43);
  std::vector<double> w4k, w2m;
  // One cursor per chain, shared by its 1-chain windows and 16-chain samples.
  lab::chain_cursor at_small(small), at_small_b(small_b), at_huge(huge);
  windowed_chain a{at_small, w4k}, b{at_small_b, w4k}, h{at_huge, w2m};
  std::size_t turn = 0;
  std::uint64_t seq_sum = 0;
  bench::params p = {{"bytes", static_cast<std::int64_t>(bytes)}};
  auto lat =
      t.measure("latency", p, "ns/access", better::lower,
                {{"1 chain, 4k pages", [&] { return (turn++ % 2 ? b : a).sample(steps, windows); }},
                 {"1 chain, 2m pages", [&] { return h.sample(steps, windows); }},
                 {"16 chains, 4k pages", [&] { return at_small.sample(16, steps / 4); }},
                 {"16 chains, 2m pages", [&] { return at_huge.sample(16, steps / 4); }}});
  auto seq = t.measure("sequential", p, "GiB/s", better::higher,
                       {{"sequential read", [&] {
                           return gib_s(bytes, read_ns(small.buffer().data(), bytes, seq_sum));
                         }}});
  const auto s4k = lab::spread_of(w4k), s2m = lab::spread_of(w2m);
  t.add(lab::spread("1 chain, 4k pages, ns per access", s4k, kChaseSpread));
  t.note(format("1 chain, 4k pages: %zu windows, 10th-90th percentile %.0f-%.0f ns; ", s4k.n,
                s4k.p10, s4k.p90) +
         format("2m pages: %.0f-%.0f ns", s2m.p10, s2m.p90));
  t.add(lab::holds("bytes_touched", seq_sum == chain_word_sum(small),
                   format("sequential read: the checksum equals the sum of the %zu node "
                          "addresses the %.0f credited bytes hold",
                          small.nodes(), double(bytes)),
                   format("sequential read: the checksum differs from the sum of the %zu node "
                          "addresses the %.0f credited bytes hold: the read skipped bytes",
                          small.nodes(), double(bytes))));
  t.add(lab::below_memcpy("sequential read", seq[0].median, t.memcpy_gib_s()));
  latency_checks(t, huge, "2m chain", {1, 16});
  latency_checks(t, small, "4k chain", {1, 16});
  if (const auto* m = t.limits()) {
    double off = std::fabs(lat[0].median / m->latency_1_4k.median - 1);
    t.add(
        {"same_as_machine", off <= 0.1 ? lab::check_status::pass : lab::check_status::warn,
         format("1-chain 4k latency %.1f ns vs %.1f ns in this run's machine probe (%.0f%% apart)",
                lat[0].median, m->latency_1_4k.median, 100 * off)});
  }
  t.figure(lat[0].median, "DRAM latency, 1 chain, 4 KiB pages, " + size_label(bytes) +
                              format(" (10th-90th percentile %.0f-%.0f)", s4k.p10, s4k.p90));
  t.set({{"chase_4k", lat[0].median}, {"chase_2m", lat[1].median}, {"chase16_4k", lat[2].median}});
  t.set("seq_item", 4.0 / (seq[0].median * (1 << 30)) * 1e9);  // ns per 4-byte item
  t.set({{"spread", s4k.relative}, {"p10", s4k.p10}, {"p90", s4k.p90}});
}

verdict pointer_chase_verdict(const trial& t) {
  double ratio = t.get("chase_4k") / t.get("seq_item");
  std::string why =
      format("a dependent load from DRAM costs %.0f ns, %.0fx a streamed 4-byte item",
             t.get("chase_4k"), ratio) +
      format(" (study: about 1300x); 16 chains overlap to %.1f ns/access, 2 MiB pages give %.0f ns",
             t.get("chase16_4k"), t.get("chase_2m"));
  if (t.get("spread") > kChaseSpread)
    return {verdict_kind::inconclusive,
            format("noisy: one chain's DRAM latency ranged %.0f-%.0f ns (10th-90th percentile of "
                   "its windows, %.0f%% of the median) within this run; ",
                   t.get("p10"), t.get("p90"), 100 * t.get("spread")) +
                why};
  return by_threshold(ratio, 100, 30, why, why + "; between one and two orders of magnitude");
}

const registration kPointerChase("pointer_chase", pointer_chase, pointer_chase_verdict);

// --- 6: cache levels ---------------------------------------------------------------------------

// ns per access of one chain over `bytes`, 4 KiB and 2 MiB pages interleaved; the chains of the
// largest size are kept for the checks.
struct sweep_point {
  std::size_t bytes;
  lab::summary small, huge;
};

// Loads per sample: about 5 ms of chasing (20 ms in full mode), from a pilot walk that first
// warms the caches and TLB with every node once (up to 64K nodes), then times lines it has not
// just walked unless the set is that small. Both take their positions from the chain's cursor,
// so the samples after them start on lines neither walked.
std::size_t steps_for(const trial& t, lab::chain_cursor& at) {
  std::size_t pilot = std::min<std::size_t>(at.walked().nodes(), 65536);
  at.sample(1, pilot);
  double ns = at.sample(1, std::min<std::size_t>(pilot, 4096));
  double want = (t.quick() ? 5e6 : 20e6) / std::max(ns, 0.1);
  return std::clamp<std::size_t>(static_cast<std::size_t>(want), 10'000, 4'000'000);
}

// Read and write GiB/s over the first `b` bytes of `buf`, repeated to ~64 MiB a sample; the
// largest (DRAM) size also gets the byte checks and a memcpy sampled beside it.
void bandwidth_at(trial& t, std::byte* buf, std::size_t b, series& rd, series& wr, bool last) {
  const std::size_t passes = std::max<std::size_t>(1, 64 * MiB / b);
  std::uint64_t read_sum = 0, seed = 1000;
  std::vector<trial::contender> cs = {{"read",
                                       [&] {
                                         return gib_s(double(b) * passes, time_ns([&] {
                                                        read_sum = 0;
                                                        for (std::size_t p = 0; p < passes; ++p)
                                                          read_sum += lab::sum_words(buf, b);
                                                      }));
                                       }},
                                      {"write", [&] {
                                         ++seed;
                                         return gib_s(double(b) * passes, time_ns([&] {
                                                        for (std::size_t p = 0; p < passes; ++p)
                                                          lab::fill_words(buf, b, seed);
                                                      }));
                                       }}};
  std::unique_ptr<memcpy_limit> limit;
  if (last) {
    limit = std::make_unique<memcpy_limit>(b);
    cs.push_back(limit->contender());
  }
  auto s = t.measure("bandwidth", {{"bytes", static_cast<std::int64_t>(b)}}, "GiB/s",
                     better::higher, cs);
  rd.points.push_back({double(b), s[0].median, s[0].min, s[0].max});
  wr.points.push_back({double(b), s[1].median, s[1].min, s[1].max});
  if (!last) return;
  t.add(lab::bytes_written(buf, b, seed));  // the last sample was a write
  // The last read sample ran after the write of the previous repetition (seed - 1): it must
  // return passes x the sum of that pattern.
  std::uint64_t one = 0;
  for (std::size_t i = 0; i < b / 8; ++i) one += lab::pattern_word(seed - 1, i);
  bool ok = read_sum == passes * one;
  if (t.reps() < 2)
    t.add({"bytes_touched", lab::check_status::warn, "read: needs 2 repetitions to check"});
  else
    t.add(lab::holds("bytes_touched", ok,
                     "read: the checksum equals the sum of every credited word",
                     "read: the checksum differs from the sum of the credited words"));
  t.add(lab::below_memcpy("read, " + size_label(b), s[0].median, s[2].max));
  t.add(lab::below_memcpy("write, " + size_label(b), s[1].median, s[2].max));
}

void cache_levels(trial& t) {
  const std::size_t top = t.quick() ? 256 * MiB : 1024 * MiB;
  std::vector<std::size_t> sizes;
  for (std::size_t b = 4 * KiB; b <= top; b *= 2) {
    sizes.push_back(b);
    if (!t.quick() && b * 3 / 2 < top) sizes.push_back(b * 3 / 2);
  }
  std::vector<sweep_point> pts;
  series bw_read{"read (sum of 8-byte words)", {}}, bw_write{"write (8-byte stores)", {}};
  for (std::size_t b : sizes) {
    // Small sets still get a 2 MiB buffer (page_buffer's granule); only `span` bytes are used.
    lab::chain small({.span = b, .pages = page_size::small});
    lab::chain huge({.span = b, .pages = page_size::huge});
    lab::chain_cursor at_small(small), at_huge(huge);
    std::size_t steps = std::max(steps_for(t, at_small), steps_for(t, at_huge));
    auto s =
        t.measure("latency", {{"bytes", static_cast<std::int64_t>(b)}}, "ns/access", better::lower,
                  {{"4k pages", [&] { return at_small.sample(1, steps); }},
                   {"2m pages", [&] { return at_huge.sample(1, steps); }}});
    pts.push_back({b, s[0], s[1]});
    if (b == sizes.back()) {
      latency_checks(t, huge, "2m chain, " + size_label(b));
      latency_checks(t, small, "4k chain, " + size_label(b));
    }
    bandwidth_at(t, small.buffer().data(), b, bw_read, bw_write, b == sizes.back());
  }
  curve c("latency", "Latency against working-set size (1 dependent chain, 64-byte lines)",
          "working set (bytes)", "ns per access", true, true);
  series s4{"4 KiB pages", {}}, s2{"2 MiB pages", {}};
  for (const auto& p : pts) {
    s4.points.push_back({double(p.bytes), p.small.median, p.small.min, p.small.max});
    s2.points.push_back({double(p.bytes), p.huge.median, p.huge.min, p.huge.max});
  }
  c.lines = {s4, s2};
  c.markers = cache_markers();
  t.plot(c);
  curve bw("bandwidth", "Bandwidth against working-set size (one core, 4 KiB pages)",
           "working set (bytes)", "GiB/s", true, false);
  bw.lines = {bw_read, bw_write};
  bw.markers = cache_markers();
  t.plot(bw);
  // Plateaus: half of each cache level, and the largest set for DRAM.
  auto at = [&](std::size_t want) {
    const sweep_point* best = &pts.front();
    for (const auto& p : pts)
      if (p.bytes <= want) best = &p;
    return best->small.median;
  };
  std::vector<lab::plateau> levels;
  for (const auto& cl : lab::data_caches())
    levels.push_back({format("L%d", cl.level), cl.level, at(cl.bytes / 2)});
  levels.push_back({"DRAM", 0, pts.back().small.median});
  double cyc = lab::cycle_ns();
  std::string steps_text;
  bool stages = true;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    steps_text += (i ? ", " : "") + levels[i].name +
                  format(" %.1f ns (%.0f cycles)", levels[i].ns, levels[i].ns / cyc);
    if (i && levels[i].ns < 1.3 * levels[i - 1].ns) stages = false;
  }
  t.add(lab::levels_plausible(levels, cyc));
  std::vector<lab::sweep_latency> sweep;
  for (const auto& p : pts) sweep.push_back({p.bytes, p.small.median, p.huge.median});
  t.add(lab::cache_sizes_agree(lab::data_caches(), sweep));
  int decreases = 0;
  for (std::size_t i = 1; i < pts.size(); ++i)
    decreases += pts[i].small.median < 0.8 * pts[i - 1].small.median;
  t.add({"monotone", decreases ? lab::check_status::warn : lab::check_status::pass,
         format("%d sizes faster than the next smaller one by more than 20%% (noise or a "
                "prefetcher)",
                decreases)});
  t.figure(levels.front().ns, "L1 hit latency, 4 KiB pages");
  t.note("plateaus (half of each cache, 4 KiB pages): " + steps_text);
  t.set({{"stages", stages},
         {"dram", pts.back().small.median},
         {"dram_2m", pts.back().huge.median},
         {"l1", levels.front().ns},
         {"levels", double(levels.size())}});
}

verdict cache_levels_verdict(const trial& t) {
  std::string why =
      format("latency rises from %.1f ns (L1) to %.0f ns (DRAM, %.0f with 2 MiB pages)",
             t.get("l1"), t.get("dram"), t.get("dram_2m"));
  if (t.get("stages") != 0)
    return {verdict_kind::confirmed,
            why + ", at least 1.3x at each cache boundary (the notes list each plateau)"};
  return {verdict_kind::inconclusive,
          why + ", but not every cache boundary shows a 1.3x step (see the notes)"};
}

const registration kCacheLevels("cache_levels", cache_levels, cache_levels_verdict);

// --- 10: cache associativity -----------------------------------------------------------------

struct conflict_layout {
  std::string name;
  std::size_t stride;
  page_size pages;
};

void associativity(trial& t) {
  auto dc = lab::data_caches();
  const lab::cache_level* l1 = dc.empty() ? nullptr : &dc.front();
  const lab::cache_level* l2 = dc.size() > 1 ? &dc[1] : nullptr;
  int l1_ways = l1 && l1->ways ? l1->ways : 8;
  std::size_t l1_stride = l1 && l1->ways ? l1->bytes / l1->ways : 4 * KiB;
  // Lines one L1 way apart share an L1 set; one L2 way apart (in 2 MiB pages, where virtual
  // and physical offsets agree) they also share an L2 set.
  std::vector<conflict_layout> layouts = {{"L1 set", l1_stride, page_size::small}};
  if (l2 && l2->ways) layouts.push_back({"L2 set", l2->bytes / l2->ways, page_size::huge});
  std::vector<int> counts = {2, 4, 6, 8, 10, 12, 16, 24, 32, 48, 64};
  if (!t.quick()) counts.insert(counts.end(), {96, 128});
  curve c("latency", "Associativity: lines in one cache set against lines spread over sets",
          "lines in the chain", "ns per access", true, true);
  std::map<std::string, std::map<int, double>> med;
  for (const auto& lay : layouts) {
    series conflict{
        std::string("same ").append(lay.name).append(", stride ").append(size_label(lay.stride)),
        {}};
    series spread{std::string("spread, ").append(lay.name).append(" stride"), {}};
    for (int k : counts) {
      std::size_t span = static_cast<std::size_t>(k) * lay.stride;
      lab::chain same(
          {.span = span, .stride = lay.stride, .spread_sets = false, .pages = lay.pages});
      lab::chain apart(
          {.span = span, .stride = lay.stride, .spread_sets = true, .pages = lay.pages});
      lab::chain_cursor at_same(same), at_apart(apart);
      std::size_t steps = std::max(steps_for(t, at_same), steps_for(t, at_apart));
      auto s = t.measure("latency_" + std::string(lay.pages == page_size::huge ? "2m" : "4k"),
                         {{"lines", static_cast<std::int64_t>(k)},
                          {"stride", static_cast<std::int64_t>(lay.stride)}},
                         "ns/access", better::lower,
                         {{"same set", [&] { return at_same.sample(1, steps); }},
                          {"spread", [&] { return at_apart.sample(1, steps); }}},
                         "spread");
      conflict.points.push_back({double(k), s[0].median, s[0].min, s[0].max});
      spread.points.push_back({double(k), s[1].median, s[1].min, s[1].max});
      med[lay.name][k] = s[0].median / s[1].median;
      if (k == counts.back()) {
        latency_checks(t, same, lay.name + " conflict chain, " + std::to_string(k) + " lines");
        latency_checks(t, apart, lay.name + " spread chain, " + std::to_string(k) + " lines");
      }
    }
    c.lines.push_back(conflict);
    c.lines.push_back(spread);
  }
  c.markers.push_back({double(l1_ways), "L1 ways"});
  if (l2 && l2->ways && l2->ways != l1_ways) c.markers.push_back({double(l2->ways), "L2 ways"});
  t.plot(c);
  // The knee: the first line count where sharing a set costs 1.5x.
  int knee = 0;
  for (int k : counts)
    if (!knee && med["L1 set"][k] > 1.5) knee = k;
  double at2 = med["L1 set"][2 * l1_ways];
  double below = med["L1 set"][l1_ways];
  t.figure(at2, "same-set / spread latency at " + std::to_string(2 * l1_ways) + " lines (L1)");
  t.set({{"at2", at2}, {"below", below}, {"knee", knee}, {"ways", l1_ways}});
  if (med.count("L2 set")) t.set("l2_at64", med["L2 set"][64]);
}

verdict associativity_verdict(const trial& t) {
  std::string why = format(
                        "%.0f lines in one L1 set cost %.1fx lines spread over sets; the step "
                        "comes at %.0f lines",
                        2 * t.get("ways"), t.get("at2"), t.get("knee")) +
                    format(" (L1 has %.0f ways; at %.0f lines the ratio is %.2f)", t.get("ways"),
                           t.get("ways"), t.get("below"));
  bool knee_at_ways = t.get("knee") > t.get("ways") && t.get("knee") <= 2 * t.get("ways");
  if (t.get("at2") >= 1.5 && knee_at_ways)
    return {verdict_kind::confirmed, why + ": conflict misses once a set's ways are full"};
  if (t.get("at2") < 1.2)
    return {verdict_kind::contradicted, why + ": no conflict penalty visible"};
  return {verdict_kind::inconclusive, why + ": a penalty, but not where the ways predict it"};
}

const registration kAssociativity("associativity", associativity, associativity_verdict);

// --- 22: TLB pressure --------------------------------------------------------------------------

// The study's loop shape: the next page comes from an index array; the page's own line is
// loaded but off the chain. Returns ns per page and where it ended.
struct study_tlb_loop {
  std::vector<std::uint32_t> next;  // position -> next position, copied from the chain
  std::vector<const void*> node;    // position -> node address
  explicit study_tlb_loop(const lab::chain& c) : next(c.nodes()), node(c.nodes()) {
    for (std::size_t k = 0; k < c.nodes(); ++k) {
      node[k] = c.at_position(k);
      next[k] = static_cast<std::uint32_t>((k + 1) % c.nodes());
    }
  }
  // From the node at `start` (the on-chain check's interface).
  const void* run(const void* start, std::size_t steps) const {
    std::size_t k = 0;
    while (node[k] != start) ++k;
    return run_at(k, steps);
  }
  // From cycle position `k`, with no search in the timed region.
  const void* run_at(std::size_t k, std::size_t steps) const {
    for (std::size_t s = 0; s < steps; ++s) {
      const void* data = *static_cast<const void* const*>(node[k]);
      lab::do_not_optimize(data);
      k = next[k];
    }
    return node[k];
  }
};

void tlb(trial& t) {
  std::vector<std::size_t> pages = {16, 64, 256, 1024, 4096, 16384, 65536};
  if (!t.quick()) pages.push_back(262144);
  curve c("latency", "TLB reach: one line per 4 KiB of address space, dependent chain",
          "address span (bytes)", "ns per access", true, true);
  series s4{"4 KiB pages", {}}, s2{"2 MiB pages", {}}, study{"the study's loop (4 KiB)", {}};
  double study_ns = 0;
  lab::summary big4, big2;  // at the largest span
  for (std::size_t n : pages) {
    std::size_t span = n * 4 * KiB;
    lab::chain small({.span = span, .stride = 4 * KiB, .pages = page_size::small});
    lab::chain huge({.span = span, .stride = 4 * KiB, .pages = page_size::huge});
    study_tlb_loop loop(small);
    // The study's loop walks the 4 KiB chain too: it takes its positions from the same cursor,
    // so it never warms the lines the next "4k pages" sample times.
    lab::chain_cursor at_small(small), at_huge(huge);
    std::size_t steps = std::max(steps_for(t, at_small), steps_for(t, at_huge));
    const void* sink = nullptr;
    auto s =
        t.measure("latency", {{"pages", static_cast<std::int64_t>(n)}}, "ns/access", better::lower,
                  {{"4k pages", [&] { return at_small.sample(1, steps); }},
                   {"2m pages", [&] { return at_huge.sample(1, steps); }},
                   {"study's loop, 4k pages (loads off the chain)", [&] {
                      std::size_t from = at_small.take(steps);
                      std::uint64_t t0 = lab::now_ns();
                      sink = loop.run_at(from, steps);
                      return static_cast<double>(lab::now_ns() - t0) / static_cast<double>(steps);
                    }}});
    lab::do_not_optimize(sink);
    s4.points.push_back({double(span), s[0].median, s[0].min, s[0].max});
    s2.points.push_back({double(span), s[1].median, s[1].min, s[1].max});
    study.points.push_back({double(span), s[2].median, s[2].min, s[2].max});
    if (n == pages.back()) {
      big4 = s[0];
      big2 = s[1];
      study_ns = s[2].median;
      latency_checks(t, huge, "2m chain, " + std::to_string(n) + " pages");
      latency_checks(t, small, "4k chain, " + std::to_string(n) + " pages");
      lab::check k = lab::on_chain(
          small, [&](const void* st, std::size_t steps2) { return loop.run(st, steps2); });
      t.note("the study's loop, checked the same way: " + k.detail);
      t.set("study_on_chain", k.status == lab::check_status::pass);
    }
  }
  c.lines = {s4, s2, study};
  t.plot(c);
  // The cost of a TLB miss is a difference of two timings: on a noisy machine it can come out
  // negative (2 MiB pages measured slower), which is no cost at all. Only a difference the
  // samples show is a figure; otherwise the two measurements are reported instead.
  const std::string label =
      "4 KiB minus 2 MiB pages at " + size_label(pages.back() * 4 * KiB) + " span";
  const lab::difference gap = lab::difference_of(big4, big2);
  // Samples apart that difference_of still did not call measured: too few repetitions for its
  // error rate (with 1 a side, noise alone puts one above the other half the time).
  const bool too_few = gap.kind == lab::difference_kind::within_noise && big4.min > big2.max;
  const double orders = lab::orderings(big4.samples.size(), big2.samples.size());
  if (gap.measured()) {
    t.figure(gap.value, label);
  } else {
    t.no_figure(label,
                gap.kind == lab::difference_kind::negative
                    ? format("2 MiB pages measured slower than 4 KiB pages (%.1f ns): a negative "
                             "difference is no cost",
                             gap.value)
                : too_few ? format("every 4 KiB sample lies above every 2 MiB sample, but with "
                                   "%zu repetition%s a side noise alone orders them so 1 time "
                                   "in %.0f; the rule asks for 1 in %.0f (5 repetitions a side)",
                                   big4.samples.size(), big4.samples.size() == 1 ? "" : "s", orders,
                                   lab::kMinOrderings)
                          : format("the samples overlap (4 KiB pages %.0f-%.0f ns, 2 MiB pages "
                                   "%.0f-%.0f ns): the difference (%.1f ns) is within the noise",
                                   big4.min, big4.max, big2.min, big2.max, gap.value),
                {{"4 KiB pages", big4}, {"2 MiB pages", big2}});
  }
  t.set({{"too_few", too_few},
         {"reps4", double(big4.samples.size())},
         {"orderings", orders},
         {"gap", gap.value},
         {"gap_kind", static_cast<double>(gap.kind)},
         {"big4", big4.median},
         {"big2", big2.median},
         {"min4", big4.min},
         {"max4", big4.max},
         {"min2", big2.min},
         {"max2", big2.max},
         {"study_ns", study_ns},
         {"span", double(pages.back() * 4 * KiB)}});
}

verdict tlb_verdict(const trial& t) {
  std::string why =
      format("a dependent load to a new 4 KiB page costs %.0f ns, %.0f ns with 2 MiB pages",
             t.get("big4"), t.get("big2")) +
      " over " + size_label(static_cast<std::size_t>(t.get("span"))) +
      format(
          " of address space; the study's loop runs at %.1f ns per page here because its loads "
          "are off the chain (",
          t.get("study_ns")) +
      (t.get("study_on_chain") != 0 ? "yet it passed the on-chain check"
                                    : "it fails the on-chain check") +
      ")";
  const auto kind = static_cast<lab::difference_kind>(static_cast<int>(t.get("gap_kind")));
  if (kind == lab::difference_kind::negative)
    return {verdict_kind::inconclusive,
            why + format(": the TLB cost is not measurable here: 2 MiB pages measured slower "
                         "(%.1f ns), and a negative difference is no cost",
                         t.get("gap"))};
  if (kind == lab::difference_kind::within_noise && t.get("too_few") != 0)
    return {verdict_kind::inconclusive,
            why + format(": too few repetitions to tell the TLB cost from noise: with %.0f a side, "
                         "noise alone puts every 4 KiB sample above every 2 MiB one 1 time in "
                         "%.0f (the rule asks for 1 in %.0f: 5 repetitions a side)",
                         t.get("reps4"), t.get("orderings"), lab::kMinOrderings)};
  if (kind == lab::difference_kind::within_noise)
    return {verdict_kind::inconclusive,
            why + format(": the TLB cost is within the noise here: the samples overlap (4 KiB "
                         "pages %.0f-%.0f ns, 2 MiB pages %.0f-%.0f ns)",
                         t.get("min4"), t.get("max4"), t.get("min2"), t.get("max2"))};
  if (t.get("gap") >= 3)
    return {verdict_kind::contradicted,
            why + ": its 671M pages/s (1.5 ns) is memory-level parallelism, not a TLB miss"};
  return {verdict_kind::inconclusive, why + ": no TLB cost visible between the page sizes"};
}

const registration kTlb("tlb", tlb, tlb_verdict);

}  // namespace
}  // namespace simdex::lab_bench
