// Machine group, loaded latency (Intel MLC's loaded-latency curve): one thread chases a
// dependent chain through DRAM while 0, 1, 2, ... other pinned threads stream reads, each
// pausing after every chunk for an injected delay to vary the bandwidth they draw. Latency
// against the bandwidth the streams achieved, both over the same wall-clock run.
#include "machine_util.h"

namespace simdex::lab_bench {
namespace {

using bench::better;
using namespace machine;

// Dependent loads per chase window: 256 x 100-400 ns is 25-100 us between the chaser's
// heartbeats, inside the 200 us window even under load.
constexpr std::size_t kWindow = 256;

void spin_ns(double ns) {
  const std::uint64_t end = lab::tsc() + static_cast<std::uint64_t>(ns * lab::tsc_per_ns());
  while (lab::tsc() < end) _mm_pause();
}

struct load_point {
  int loads = 0;     // streaming threads beside the chaser
  double delay = 0;  // ns each streamer pauses after a chunk
  std::string label;
  std::vector<double> gib;                 // per sample
  std::vector<std::uint64_t> sums, bytes;  // the last sample's, per streamer
};

void loaded_latency(trial& t) {
  const int cpus = conc::cpu_count();
  const int most_loads = cpus - 1;
  lab::chain ch({mem::dram_bytes(t), lab::kLine, true, page_size::small}, 11);
  lab::chain_cursor cursor(ch);
  const std::size_t total = stream_bytes(t, std::max(1, most_loads));
  const std::size_t region = total / static_cast<std::size_t>(std::max(1, most_loads));
  page_buffer sbuf(total, page_size::small);
  lab::fill_words(sbuf.data(), total, 5);
  // Samples of about 20 ms (quick) or 100 ms at the idle latency, from a pilot walk.
  const double idle_ns = cursor.sample(1, 20000);
  const std::size_t windows = std::max<std::size_t>(
      8, static_cast<std::size_t>((t.quick() ? 20e6 : 100e6) / idle_ns / kWindow));
  std::vector<double> delays = t.quick() ? std::vector<double>{0, 4e3, 16e3}
                                         : std::vector<double>{0, 1e3, 2e3, 4e3, 8e3, 16e3, 32e3};
  std::vector<load_point> points = {{0, 0, "idle", {}, {}, {}}};
  if (most_loads > 0)
    for (int k : doubling(most_loads))
      for (double d : delays)
        points.push_back({k, d, format("%d streaming, delay %.0f us", k, d * 1e-3), {}, {}, {}});
  conc::team_book book;
  std::vector<trial::contender> cs;
  for (auto& pt : points)
    cs.push_back({pt.label, [&] {
                    const auto team = conc::team_cpus(1 + pt.loads);
                    const auto n = static_cast<std::size_t>(pt.loads);
                    std::vector<std::uint64_t> sums(n), bytes(n);
                    std::atomic<bool> stop{false};
                    double chase_ns = 0;
                    lab::heartbeat hb(1 + pt.loads);
                    auto run = conc::run_pinned(team, [&](int me) {
                      if (me == 0) {
                        for (std::size_t w = 0; w < windows; ++w) {
                          chase_ns += cursor.sample(1, kWindow);
                          hb.beat(0);
                        }
                        stop.store(true, std::memory_order_relaxed);
                      } else {
                        auto i = static_cast<std::size_t>(me - 1);
                        const std::byte* p = sbuf.data() + i * region;
                        std::uint64_t s = 0, b = 0;
                        for (std::size_t off = 0; !stop.load(std::memory_order_relaxed);
                             off = (off + kChunk) % region) {
                          s += lab::sum_words(p + off, kChunk);
                          b += kChunk;
                          hb.beat(me);
                          if (pt.delay > 0) spin_ns(pt.delay);
                        }
                        sums[i] = s;
                        bytes[i] = b;
                      }
                      hb.finish(me);
                    });
                    book[pt.label].add(run, run.team.wall_ns);
                    if (pt.loads > 0) book[pt.label].co_running.push_back(hb.co_running());
                    double streamed = 0;
                    for (auto b : bytes) streamed += static_cast<double>(b);
                    pt.gib.push_back(mem::gib_s(streamed, run.team.wall_ns));
                    pt.sums = sums;
                    pt.bytes = bytes;
                    return chase_ns / static_cast<double>(windows);
                  }});
  auto s = t.measure("latency", {{"bytes", static_cast<std::int64_t>(ch.layout().span)}},
                     "ns/access", better::lower, cs, "idle");
  // The streams' bandwidth, recorded beside the latency it came with.
  std::vector<lab::summary> bw;
  for (const auto& pt : points) {
    bw.push_back(lab::summarize(pt.gib));
    if (pt.loads > 0)
      t.record("bandwidth", {{"bytes", static_cast<std::int64_t>(total)}}, pt.label, "GiB/s",
               better::higher, bw.back());
  }
  mem::latency_checks(t, ch, "the chaser's chain");
  // Every streamer's last sample: its sum against every byte it was credited with.
  lab::check bytes{"bytes_touched", lab::check_status::pass, "no streaming thread ran"};
  for (const auto& pt : points)
    for (std::size_t i = 0; i < pt.bytes.size() && bytes.status == lab::check_status::pass; ++i) {
      bytes = lab::bytes_read_cyclic(sbuf.data() + i * region, region, pt.bytes[i], pt.sums[i]);
      bytes.detail = pt.label + ", thread " + std::to_string(i + 1) + ": " + bytes.detail;
    }
  t.add(bytes);
  std::vector<std::string> loaded;
  for (std::size_t i = 1; i < points.size(); ++i) loaded.push_back(points[i].label);
  // One CPU: nothing streams beside the chase and the figure is the idle latency.
  streaming_team_checks(t, book, loaded, {"idle"});
  // One line per streamer count, from the idle point through growing delays' bandwidths.
  curve c("loaded",
          "Loaded latency: one chain over " + mem::size_label(ch.layout().span) +
              " (4 KiB pages) while other threads stream reads",
          "bandwidth of the streaming threads (GiB/s)", "ns per dependent load", false, false);
  std::size_t top = 0;
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (c.lines.empty() || points[i].loads != points[i - 1].loads)
      c.lines.push_back(
          {format("%d streaming thread%s", points[i].loads, points[i].loads == 1 ? "" : "s"),
           {{0, s[0].median, s[0].min, s[0].max}}});
    c.lines.back().points.push_back({bw[i].median, s[i].median, s[i].min, s[i].max});
    if (bw[i].median > bw[top].median) top = i;
  }
  if (c.lines.empty()) c.lines.push_back({"idle", {{0, s[0].median, s[0].min, s[0].max}}});
  for (auto& l : c.lines)
    std::sort(l.points.begin(), l.points.end(),
              [](const point& a, const point& b) { return a.x < b.x; });
  t.plot(c);
  t.figure(s[top].median,
           top == 0 ? "idle" : points[top].label + format(", %.1f GiB/s", bw[top].median));
  t.set({{"idle", s[0].median},
         {"loaded", s[top].median},
         {"gib", bw[top].median},
         {"loads", double(points[top].loads)}});
}

verdict loaded_latency_verdict(const trial& t) {
  if (t.get("loads") == 0)
    return measured(format("idle latency %.0f ns (no other CPU to load it)", t.get("idle")));
  return measured(
      format("a dependent DRAM load takes %.0f ns idle and %.0f ns (%.2fx) while %.0f "
             "streaming thread%s %.1f GiB/s",
             t.get("idle"), t.get("loaded"), t.get("loaded") / t.get("idle"), t.get("loads"),
             t.get("loads") == 1 ? " draws" : "s draw", t.get("gib")));
}

const registration kLoadedLatency("loaded_latency", loaded_latency, loaded_latency_verdict);

}  // namespace
}  // namespace simdex::lab_bench
