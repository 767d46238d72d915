// Concurrency group, hand-offs and memory order: spinning against yielding against blocking,
// the cost of each C++ memory order, and litmus tests judged against x86-TSO. The software
// context-switch counter proves a spinning hand-off spun and a blocking one slept.
#include "handoff.h"
#include "simdex/lab/litmus.h"
#include "transfer.h"

namespace simdex::lab_bench {
namespace {

using bench::better;
using namespace conc;

// --- 21: blocking vs spinning ----------------------------------------------------------------

void blocking_spinning(trial& t) {
  const auto cpus = team_cpus(2);
  const double ns = budget_ns(t);
  team_book book;
  handoff_book answers;
  // Context switches inside the hand-off loops and hand-offs, summed over each kind's runs.
  lab::reading switched[3];
  double handed[3] = {0, 0, 0};
  for (auto& r : switched) r.available = true;
  auto run = [&](int kind, team_tally& tally) {
    handoff_result r;
    if (kind == 0) {
      mailbox<> box(lab::backoff::spin);
      r = ping_pong(box, cpus, ns, tally);
    } else if (kind == 1) {
      mailbox<> box(lab::backoff::yield);
      r = ping_pong(box, cpus, ns, tally);
    } else {
      condvar_box box;
      r = ping_pong(box, cpus, ns, tally);
    }
    answers.add(r);
    if (!r.switches.available) switched[kind] = r.switches;
    if (switched[kind].available) switched[kind].value += r.switches.value;
    handed[kind] += static_cast<double>(r.count);
    return r;
  };
  const char* names[] = {"spin", "yield", "condition variable"};
  std::vector<trial::contender> cs;
  std::vector<std::vector<double>> rtt_us(3);
  for (int k = 0; k < 3; ++k)
    cs.push_back({names[k], [&, k] {
                    auto r = run(k, book[names[k]]);
                    rtt_us[static_cast<std::size_t>(k)].push_back(r.rtt.median_ns * 1e-3);
                    return r.per_s;
                  }});
  auto s = t.measure("ping_pong", {{"ms_per_sample", ns * 1e-6}}, "handoffs/s", better::higher, cs,
                     "condition variable");
  std::vector<lab::summary> rtt;
  for (int k = 0; k < 3; ++k) {
    rtt.push_back(lab::summarize(rtt_us[static_cast<std::size_t>(k)]));
    t.record("ping_pong_rtt", {{"ms_per_sample", ns * 1e-6}}, names[k], "us", better::lower,
             rtt.back());
  }
  // The counters once more around one run of each, for the record; the check below counts
  // switches inside the hand-off loops of every timed run.
  for (int k = 0; k < 3; ++k)
    t.count(
        names[k], [&, k] { run(k, book["counted"]); }, true);
  t.add(answers.check("every hand-off answered with its value + 1"));
  t.add(lab::switches_per_handoff("spin", &switched[0], handed[0], lab::waiting::spin));
  t.add(lab::switches_per_handoff("condition variable", &switched[2], handed[2],
                                  lab::waiting::block));
  t.note(switched[1].available
             ? format("yield: %.3g context switches per hand-off (sched_yield switches only when "
                      "another task waits for the CPU)",
                      switched[1].value / handed[1])
             : "yield: context-switch counter " + switched[1].status);
  ran_as_placed(t, book);
  t.add(book.run_queue({"spin", "yield", "condition variable"}));
  t.add(book.overlap({"spin"}, "from the spin round trips far above the median"));
  t.note(book.steal());
  t.figure(rtt[2].median, "condition-variable round trip, us");
  t.set({{"spin_over_cv", s[0].median / s[2].median},
         {"yield_over_cv", s[1].median / s[2].median},
         {"spin_rtt", rtt[0].median},
         {"cv_rtt", rtt[2].median}});
}

verdict blocking_spinning_verdict(const trial& t) {
  if (cpu_count() < 2)
    return one_cpu_verdict(
        "both threads ran on it, so a spinning hand-off waited for the other thread's time slice "
        "instead of seeing its write");
  std::string why = format(
      "spinning hands off %.0fx as often as a condition variable, yielding %.1fx (study 163x and "
      "2.4x); round trips: spin %.2f us, condition variable %.1f us",
      t.get("spin_over_cv"), t.get("yield_over_cv"), t.get("spin_rtt"), t.get("cv_rtt"));
  if (t.get("spin_over_cv") >= 10)
    return {verdict_kind::confirmed, why + ": a wake-up through the scheduler dominates"};
  if (t.get("spin_over_cv") < 2) return {verdict_kind::contradicted, why};
  return {verdict_kind::inconclusive, why};
}

const registration kBlockingSpinning("blocking_spinning", blocking_spinning,
                                     blocking_spinning_verdict);

// --- 14: memory order ------------------------------------------------------------------------

// `threads` threads fetch_add on one counter with order O until the budget is spent; `exact`
// turns false if the counter did not end at the number of additions.
template <std::memory_order O>
double fetch_add_mops(int threads, double budget_ns, team_tally& tally, bool& exact) {
  alignas(64) std::atomic<std::uint64_t> c{0};
  budget b(budget_ns);
  std::atomic<std::uint64_t> made{0};
  double rate = team_mops(team_cpus(threads), tally, [&](int me, lab::heartbeat& hb) {
    std::uint64_t n = 0;
    while (b.left()) {
      for (int i = 0; i < 256; ++i) c.fetch_add(1, O);
      n += 256;
      hb.beat(me);
    }
    made.fetch_add(n);
    return n;
  });
  exact = exact && c.load() == made.load();
  return rate;
}

template <std::memory_order L, std::memory_order S>
double ring_mmsgs(double budget_ns, team_tally& tally, delivery_book& delivered) {
  transfer_spec spec;
  spec.budget_ns = budget_ns;
  return transfer_mmsgs<std::uint64_t, lab::spsc_ring<std::uint64_t, L, S>>(1 << 12, spec, tally,
                                                                            delivered);
}

struct litmus_variant {
  lab::litmus_test test;
  lab::litmus_order order;
  std::string name() const {
    return std::string(lab::litmus_name(test)) + ", " + lab::order_name(order);
  }
};

void memory_order(trial& t) {
  const double ns = t.quick() ? 20e6 : 100e6;
  constexpr auto rlx = std::memory_order_relaxed, acq = std::memory_order_acquire,
                 rel = std::memory_order_release, ar = std::memory_order_acq_rel,
                 sc = std::memory_order_seq_cst;
  team_book book;
  handoff_book answers;
  delivery_book delivered;
  bool exact = true;
  const auto cpus = team_cpus(2);
  // Cost: the same operations with each order.
  auto fa = t.measure(
      "fetch_add", {{"ms_per_sample", ns * 1e-6}}, "Mops/s", better::higher,
      {{"relaxed, 1 thread", [&] { return fetch_add_mops<rlx>(1, ns, book["fa1"], exact); }},
       {"acq_rel, 1 thread", [&] { return fetch_add_mops<ar>(1, ns, book["fa1"], exact); }},
       {"seq_cst, 1 thread", [&] { return fetch_add_mops<sc>(1, ns, book["fa1"], exact); }},
       {"relaxed, 2 threads",
        [&] { return fetch_add_mops<rlx>(2, ns, book["fetch_add relaxed, 2 threads"], exact); }},
       {"acq_rel, 2 threads",
        [&] { return fetch_add_mops<ar>(2, ns, book["fetch_add acq_rel, 2 threads"], exact); }},
       {"seq_cst, 2 threads",
        [&] { return fetch_add_mops<sc>(2, ns, book["fetch_add seq_cst, 2 threads"], exact); }}},
      "seq_cst, 1 thread");
  auto flag =
      t.measure("flag_handoff", {{"ms_per_sample", ns * 1e-6}}, "handoffs/s", better::higher,
                {{"release/acquire",
                  [&] {
                    mailbox<rel, acq> box;
                    auto r = ping_pong(box, cpus, ns, book["flag release/acquire"]);
                    answers.add(r);
                    return r.per_s;
                  }},
                 {"seq_cst",
                  [&] {
                    mailbox<sc, sc> box;
                    auto r = ping_pong(box, cpus, ns, book["flag seq_cst"]);
                    answers.add(r);
                    return r.per_s;
                  }}},
                "seq_cst");
  auto ring =
      t.measure("spsc_ring", {{"capacity", std::int64_t{1} << 12}}, "Mmsgs/s", better::higher,
                {{"acquire/release indices",
                  [&] { return ring_mmsgs<acq, rel>(ns, book["ring acq/rel"], delivered); }},
                 {"seq_cst indices",
                  [&] { return ring_mmsgs<sc, sc>(ns, book["ring seq_cst"], delivered); }}},
                "seq_cst indices");

  // Litmus: blocks of each variant in turn, so drift in the machine touches all alike.
  const litmus_variant vs[] = {{lab::litmus_test::message_passing, lab::litmus_order::relaxed},
                               {lab::litmus_test::message_passing, lab::litmus_order::acq_rel},
                               {lab::litmus_test::message_passing, lab::litmus_order::seq_cst},
                               {lab::litmus_test::store_buffering, lab::litmus_order::relaxed},
                               {lab::litmus_test::store_buffering, lab::litmus_order::acq_rel},
                               {lab::litmus_test::store_buffering, lab::litmus_order::seq_cst}};
  const std::size_t nv = std::size(vs);
  std::vector<lab::litmus_outcomes> total(nv);
  std::vector<std::vector<double>> per100k(nv);
  lab::litmus_options opt;
  opt.budget_ns = t.quick() ? 40e6 : 200e6;
  for (int block = 0; block < t.reps(); ++block)
    for (std::size_t v = 0; v < nv; ++v) {
      opt.seed = 14 + static_cast<std::uint64_t>(block);
      auto run = lab::run_litmus(vs[v].test, vs[v].order, 1'000'000, cpus, opt);
      book["litmus"].add(run.team, run.team.wall_ns);
      total[v] += run.outcomes;
      int f = vs[v].test == lab::litmus_test::message_passing ? 1 : 0;
      per100k[v].push_back(run.outcomes.rounds
                               ? 1e5 * double(run.outcomes.counts[f]) / double(run.outcomes.rounds)
                               : 0);
    }
  for (std::size_t v = 0; v < nv; ++v) {
    bool mp = vs[v].test == lab::litmus_test::message_passing;
    t.record(mp ? "litmus_mp" : "litmus_sb", {{"blocks", std::int64_t{t.reps()}}}, vs[v].name(),
             mp ? "flag seen, data not, per 100k" : "both loads old, per 100k", better::lower,
             lab::summarize(per100k[v]));
  }
  // MP's witness is rare: judge whether its harness raced over all three orders together.
  lab::litmus_outcomes mp;
  for (std::size_t v = 0; v < 3; ++v) mp += total[v];
  t.add(lab::litmus_raced("MP, all orders", lab::litmus_test::message_passing, mp));
  for (std::size_t v = 3; v < nv; ++v) t.add(lab::litmus_raced(vs[v].name(), vs[v].test, total[v]));
  for (std::size_t v = 0; v < nv; ++v)
    t.add(lab::litmus_allowed(vs[v].name(), vs[v].test, vs[v].order, total[v]));

  t.count(
      "fetch_add seq_cst, 2 threads", [&] { fetch_add_mops<sc>(2, ns, book["counted"], exact); },
      true);
  t.add(lab::holds("work_done", exact,
                   "every shared counter ended at the number of fetch_adds made on it",
                   "a shared counter missed fetch_adds"));
  t.add(answers.check("every flag hand-off"));
  t.add(delivered.check("every ring transfer"));
  ran_as_placed(t, book);
  // The cost comparisons need the threads side by side; the litmus verdict does not (its
  // witness counts say whether they raced), so a failure here is a warning.
  const std::vector<std::string> two = {"fetch_add seq_cst, 2 threads", "flag seq_cst",
                                        "ring seq_cst"};
  bool side_by_side = true;
  for (lab::check c : {book.run_queue(two), book.overlap(two)}) {
    if (c.status == lab::check_status::fail) {
      c.status = lab::check_status::warn;
      side_by_side = false;
    }
    t.add(c);
  }
  t.set("overlapped", side_by_side);
  const auto& sb_rlx = total[3];
  t.figure(sb_rlx.rounds ? 1e5 * double(sb_rlx.counts[0]) / double(sb_rlx.rounds) : 0,
           "SB relaxed: both loads saw the old value, per 100k rounds");
  t.set({{"sb_relaxed", double(total[3].counts[0])},
         {"sb_acq_rel", double(total[4].counts[0])},
         {"sb_seq_cst", double(total[5].counts[0])},
         {"sb_rounds", double(total[3].rounds)},
         {"mp_bad", double(total[0].counts[1] + total[1].counts[1] + total[2].counts[1])},
         {"mp_rounds", double(mp.rounds)},
         {"fa_1", fa[2].median / fa[0].median},
         {"fa_2", fa[5].median / fa[3].median},
         {"flag", flag[1].median / flag[0].median},
         {"ring", ring[1].median / ring[0].median}});
}

verdict memory_order_verdict(const trial& t) {
  std::string why = format(
      "SB: both loads old in %.0f (relaxed) and %.0f (acquire/release) of %.0f rounds, %.0f with "
      "seq_cst; MP: flag without data %.0f times in %.0f rounds",
      t.get("sb_relaxed"), t.get("sb_acq_rel"), t.get("sb_rounds"), t.get("sb_seq_cst"),
      t.get("mp_bad"), t.get("mp_rounds"));
  why += format(
      ". Throughput with seq_cst against the weaker order: fetch_add %.2fx (1 thread) and %.2fx "
      "(2 threads; one lock-prefixed instruction for every order on x86), flag hand-off %.2fx, "
      "ring %.2fx (the study: 1.00x, 0.93x at 4 threads, 1.02x, 0.77x)",
      t.get("fa_1"), t.get("fa_2"), t.get("flag"), t.get("ring"));
  if (t.get("overlapped") == 0)
    why +=
        " (the two-thread costs were measured while the threads "
        "took turns: take them as indicative)";
  bool sb_seen = t.get("sb_relaxed") > 0 && t.get("sb_acq_rel") > 0;
  if (!sb_seen)
    return {verdict_kind::inconclusive,
            why + ": the harness raced but never showed the store-buffering outcome x86 allows"};
  return {verdict_kind::confirmed,
          why +
              ": weaker orders let SB's stores wait behind the loads and seq_cst forbids it, "
              "as the study found; its MP reorderings (1.4 per 100k) are an Arm result: "
              "x86-TSO forbids them and none occurred"};
}

const registration kMemoryOrder("memory_order", memory_order, memory_order_verdict);

}  // namespace
}  // namespace simdex::lab_bench
