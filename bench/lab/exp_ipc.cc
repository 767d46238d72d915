// IPC group: a pipe against a shared-memory mailbox, a pipe against a Unix socketpair, TCP over
// loopback against a Unix stream socket. Each transport is measured both ways: a one-way stream
// of 8-byte messages (one write and one read per message, the study's shape) and a ping-pong
// whose round trips are timed one by one. Every message is checked on arrival.
#include <initializer_list>

#include "handoff.h"

namespace simdex::lab_bench {
namespace {

using bench::better;
using namespace conc;

// A transport the samples create afresh: a kernel channel or a spinning mailbox.
struct transport {
  std::string name;
  lab::channel_kind kind = lab::channel_kind::pipe;
  bool nodelay = false;
  bool shared_memory = false;
};

struct ipc_run {
  team_book book;
  handoff_book answers;
  std::vector<lab::check> nodelay;  // one per TCP transport, from its first channel
  std::map<std::string, std::vector<double>> rtt_us;

  handoff_result run(const transport& tr, bool pingpong, double budget_ns) {
    const auto cpus = team_cpus(2);
    const std::string label = tr.name + (pingpong ? ", ping-pong" : ", stream");
    handoff_result r;
    if (tr.shared_memory) {
      mailbox<> box(lab::backoff::spin);
      r = pingpong ? ping_pong(box, cpus, budget_ns, book[label])
                   : stream(box, cpus, budget_ns, book[label]);
    } else {
      lab::channel c(tr.kind, tr.nodelay);
      if (tr.kind == lab::channel_kind::tcp && !seen_nodelay_.count(tr.name)) {
        seen_nodelay_[tr.name] = true;
        nodelay.push_back(lab::nodelay(tr.name, c));
      }
      fd_box box(c);
      r = pingpong ? ping_pong(box, cpus, budget_ns, book[label])
                   : stream(box, cpus, budget_ns, book[label]);
    }
    answers.add(r);
    if (pingpong) rtt_us[tr.name].push_back(r.rtt.median_ns * 1e-3);
    return r;
  }

  // The median of a transport's ping-pong round trips, us.
  double median_rtt(const std::string& name) { return lab::summarize(rtt_us[name]).median; }

  // Streams and ping-pongs of every transport, interleaved; returns {streams..., pingpongs...}.
  std::vector<lab::summary> measure(trial& t, const std::vector<transport>& trs) {
    const double ns = budget_ns(t);
    std::vector<trial::contender> streams, pings;
    for (const auto& tr : trs) {
      streams.push_back({tr.name, [&, tr] { return run(tr, false, ns).per_s / 1e6; }});
      pings.push_back({tr.name, [&, tr] { return run(tr, true, ns).per_s / 2e3; }});
    }
    const bench::params p = {{"message_bytes", std::int64_t{8}}};
    auto s = t.measure("stream", p, "Mmsgs/s", better::higher, streams, trs[0].name);
    auto q = t.measure("ping_pong", p, "k round trips/s", better::higher, pings, trs[0].name);
    for (const auto& tr : trs)
      t.record("ping_pong_rtt", p, tr.name, "us", better::lower, lab::summarize(rtt_us[tr.name]));
    s.insert(s.end(), q.begin(), q.end());
    return s;
  }

  // Runs the transports `which` once more each under the counters.
  void count(trial& t, const std::vector<transport>& trs, std::initializer_list<std::size_t> which,
             bool pingpong) {
    for (std::size_t i : which)
      t.count(
          trs[i].name + (pingpong ? ", ping-pong" : ", stream"),
          [&] { run(trs[i], pingpong, budget_ns(t)); }, true);
  }

  // Common checks: every thread got a CPU promptly when woken (a busy machine adds its time
  // slices to every wake-up); `spin_labels` also need their threads side by side.
  void checks(trial& t, const std::vector<transport>& trs,
              const std::vector<std::string>& spin_labels) {
    t.add(answers.check("every message and every answer"));
    ran_as_placed(t, book);
    std::vector<std::string> all;
    for (const auto& tr : trs)
      for (const char* shape : {", stream", ", ping-pong"}) all.push_back(tr.name + shape);
    t.add(book.run_queue(all));
    if (!spin_labels.empty()) t.add(book.overlap(spin_labels));
    for (const auto& c : nodelay) t.add(c);
  }

 private:
  std::map<std::string, bool> seen_nodelay_;
};

// --- 16: pipe vs shared-memory hand-off ------------------------------------------------------

void pipe_shm(trial& t) {
  ipc_run ipc;
  const std::vector<transport> trs = {
      {"pipe", lab::channel_kind::pipe, false, false},
      {"shared-memory mailbox", lab::channel_kind::pipe, false, true}};
  auto s = ipc.measure(t, trs);
  ipc.count(t, trs, {0, 1}, false);
  ipc.checks(t, trs, {"shared-memory mailbox, stream", "shared-memory mailbox, ping-pong"});
  t.figure(s[1].median / s[0].median, "shared-memory mailbox / pipe, messages per second");
  t.set({{"stream", s[1].median / s[0].median},
         {"pipe_mmsgs", s[0].median},
         {"shm_mmsgs", s[1].median},
         {"pipe_rtt", ipc.median_rtt("pipe")},
         {"shm_rtt", ipc.median_rtt("shared-memory mailbox")}});
}

verdict pipe_shm_verdict(const trial& t) {
  if (cpu_count() < 2)
    return one_cpu_verdict(
        "both threads ran on it, so the spinning mailbox waited for the other thread's time "
        "slice instead of seeing its write");
  std::string why = format(
      "8-byte messages: pipe %.2fM/s, shared-memory mailbox %.2fM/s (%.1fx; study 2.31M vs "
      "10.6M, 4.6x); round trip: pipe %.1f us, mailbox %.2f us",
      t.get("pipe_mmsgs"), t.get("shm_mmsgs"), t.get("stream"), t.get("pipe_rtt"),
      t.get("shm_rtt"));
  if (t.get("stream") >= 2) return {verdict_kind::confirmed, why + ": kernel crossings dominate"};
  if (t.get("stream") <= 1) return {verdict_kind::contradicted, why};
  return {verdict_kind::inconclusive, why};
}

const registration kPipeShm("pipe_shm", pipe_shm, pipe_shm_verdict);

// --- 26: pipe vs socketpair ------------------------------------------------------------------

void pipe_socketpair(trial& t) {
  ipc_run ipc;
  const std::vector<transport> trs = {{"pipe", lab::channel_kind::pipe, false, false},
                                      {"socketpair", lab::channel_kind::socketpair, false, false}};
  auto s = ipc.measure(t, trs);
  ipc.count(t, trs, {0, 1}, false);
  ipc.checks(t, trs, {});
  t.figure(s[0].median / s[1].median, "pipe / socketpair, messages per second");
  t.set({{"stream", s[0].median / s[1].median},
         {"pingpong", s[2].median / s[3].median},
         {"pipe_rtt", ipc.median_rtt("pipe")},
         {"sock_rtt", ipc.median_rtt("socketpair")}});
}

verdict pipe_socketpair_verdict(const trial& t) {
  std::string why = format(
      "streaming 8-byte messages the pipe runs %.2fx the socketpair (study 1.71x); ping-pong "
      "%.2fx (round trips %.1f us and %.1f us)",
      t.get("stream"), t.get("pingpong"), t.get("pipe_rtt"), t.get("sock_rtt"));
  return by_threshold(t.get("stream"), 1.2, 1, why);
}

const registration kPipeSocketpair("pipe_socketpair", pipe_socketpair, pipe_socketpair_verdict);

// --- 30: TCP loopback ------------------------------------------------------------------------

void tcp_loopback(trial& t) {
  ipc_run ipc;
  const std::vector<transport> trs = {
      {"TCP, TCP_NODELAY", lab::channel_kind::tcp, true, false},
      {"TCP, Nagle (no TCP_NODELAY)", lab::channel_kind::tcp, false, false},
      {"unix stream", lab::channel_kind::unix_stream, false, false}};
  auto s = ipc.measure(t, trs);
  ipc.count(t, trs, {0, 2}, true);
  ipc.checks(t, trs, {});
  const double tcp_rtt = lab::summarize(ipc.rtt_us[trs[0].name]).median;
  t.figure(tcp_rtt, "TCP loopback round trip with TCP_NODELAY, us");
  t.set({{"stream_nagle", s[1].median / s[2].median},
         {"stream_nodelay", s[0].median / s[2].median},
         {"pingpong", s[5].median / s[3].median},
         {"tcp_rtt", tcp_rtt},
         {"unix_rtt", ipc.median_rtt("unix stream")}});
}

verdict tcp_loopback_verdict(const trial& t) {
  std::string why = format(
      "streaming 8-byte messages TCP runs %.2fx a Unix stream socket with Nagle, %.2fx with "
      "TCP_NODELAY (study 1.02x, without TCP_NODELAY); ping-pong: Unix %.1fx TCP (study 4.6x), "
      "round trips %.1f us (TCP, TCP_NODELAY) and %.1f us (Unix)",
      t.get("stream_nagle"), t.get("stream_nodelay"), t.get("pingpong"), t.get("tcp_rtt"),
      t.get("unix_rtt"));
  bool stream_close = t.get("stream_nagle") > 0.67 && t.get("stream_nagle") < 1.5;
  bool pingpong_apart = t.get("pingpong") >= 2;
  if (stream_close && pingpong_apart) return {verdict_kind::confirmed, why};
  if (!stream_close && !pingpong_apart) return {verdict_kind::contradicted, why};
  return {verdict_kind::inconclusive, why + ": one of the study's two shapes holds"};
}

const registration kTcpLoopback("tcp_loopback", tcp_loopback, tcp_loopback_verdict);

}  // namespace
}  // namespace simdex::lab_bench
