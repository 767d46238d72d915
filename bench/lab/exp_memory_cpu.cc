// Memory group, the core itself: instruction-level parallelism, branch prediction, aliasing.
// Each kernel's result is checked against a plain C++ reference, so the work credited was done.
#include <algorithm>
#include <cstdio>
#include <span>
#include <vector>

#include "memory_util.h"

namespace simdex::lab_bench {
namespace {

using bench::better;
using namespace mem;

// --- 7: ILP ------------------------------------------------------------------------------------

constexpr std::uint64_t kMul = 0x9e3779b97f4a7c15ull;

// `Chains` independent chains of 64-bit multiplies, `ops` multiplies in all. The multiply is in
// asm so the compiler can neither vectorize nor reassociate it: what runs is what is timed.
template <int Chains>
double imul_ns(std::size_t ops, std::uint64_t (&x)[Chains]) {
  const std::uint64_t m = kMul;
  std::uint64_t t0 = lab::now_ns();
  for (std::size_t i = 0; i < ops / Chains; ++i)
    for (int c = 0; c < Chains; ++c) asm volatile("imul %1, %0" : "+r"(x[c]) : "r"(m));
  std::uint64_t t1 = lab::now_ns();
  return static_cast<double>(t1 - t0) / static_cast<double>(ops);
}

std::uint64_t power(std::uint64_t base, std::size_t e) {
  std::uint64_t r = 1;
  for (; e; e >>= 1, base *= base)
    if (e & 1) r *= base;
  return r;
}

void ilp(trial& t) {
  const std::size_t ops = t.quick() ? 20'000'000 : 100'000'000;
  const double cyc = lab::cycle_ns();
  std::uint64_t d[1] = {3}, i4[4] = {3, 5, 7, 11}, i8[8] = {3, 5, 7, 11, 13, 17, 19, 23};
  std::size_t calls = 0;
  // Multiplies per ns (the study's items/s), not ns per multiply: one independent multiply
  // per cycle is this kernel's expected speed, not a hoisted loop.
  auto s = t.measure("multiply", {{"multiplies", static_cast<std::int64_t>(ops)}}, "Gmul/s",
                     better::higher,
                     {{"dependent (1 chain)",
                       [&] {
                         ++calls;
                         return 1 / imul_ns<1>(ops, d);
                       }},
                      {"independent (4 chains)", [&] { return 1 / imul_ns<4>(ops, i4); }},
                      {"independent (8 chains)", [&] { return 1 / imul_ns<8>(ops, i8); }}},
                     "dependent (1 chain)");
  // Each chain ran calls x ops/Chains multiplies: its value must be start * kMul^that.
  bool ok = d[0] == 3 * power(kMul, calls * ops) && i4[3] == 11 * power(kMul, calls * ops / 4) &&
            i8[7] == 23 * power(kMul, calls * ops / 8);
  t.add(lab::holds("work_done", ok, "every chain's final value equals start x m^(multiplies run)",
                   "a chain's final value is not start x m^n: multiplies were skipped"));
  double dep_cycles = 1 / s[0].median / cyc;
  t.add(
      {"known_latency",
       dep_cycles > 2.5 && dep_cycles < 4.5 ? lab::check_status::pass : lab::check_status::warn,
       format("dependent 64-bit multiply: %.2f cycles (x86 cores since Nehalem: 3)", dep_cycles)});
  t.figure(s[1].median / s[0].median, "independent (4 chains) / dependent throughput");
  t.set({{"speedup4", s[1].median / s[0].median},
         {"speedup8", s[2].median / s[0].median},
         {"dep_cycles", dep_cycles},
         {"ind_cycles", 1 / s[1].median / cyc}});
}

verdict ilp_verdict(const trial& t) {
  std::string why =
      format("4 independent chains run %.1fx as fast as one dependent chain (8: %.1fx; study 3.4x)",
             t.get("speedup4"), t.get("speedup8")) +
      format(": %.2f cycles per dependent multiply, %.2f per independent one", t.get("dep_cycles"),
             t.get("ind_cycles"));
  return by_threshold(t.get("speedup4"), 2, 1.3, why);
}

const registration kIlp("ilp", ilp, ilp_verdict);

// --- 8: branch predictability --------------------------------------------------------------

using sum_kernel = std::uint64_t (*)(const std::uint8_t*, std::size_t);

double items_per_ns(sum_kernel k, const std::vector<std::uint8_t>& v, std::uint64_t& sum) {
  std::uint64_t t0 = lab::now_ns();
  sum = k(v.data(), v.size());
  std::uint64_t t1 = lab::now_ns();
  lab::do_not_optimize(sum);
  return static_cast<double>(v.size()) / static_cast<double>(t1 - t0);
}

void branch(trial& t) {
  const std::size_t n = t.quick() ? std::size_t{1} << 20 : std::size_t{1} << 22;
  lab::rng r(8);
  std::vector<std::uint8_t> random(n), sorted, taken(n, 1), alternating(n);
  for (auto& x : random) x = static_cast<std::uint8_t>(r.next() & 1);
  sorted = random;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < n; ++i) alternating[i] = static_cast<std::uint8_t>(i & 1);
  const std::pair<const char*, const std::vector<std::uint8_t>*> patterns[] = {
      {"random", &random},
      {"sorted", &sorted},
      {"always taken", &taken},
      {"alternating", &alternating}};
  const std::pair<const char*, sum_kernel> kernels[] = {{"asm branch", lab::branch_sum},
                                                        {"C++ if/else (study)", lab::plain_sum},
                                                        {"branch-free", lab::branchless_sum}};
  std::vector<trial::contender> cs;
  std::vector<std::uint64_t> sums(std::size(patterns) * std::size(kernels));
  for (std::size_t k = 0; k < std::size(kernels); ++k)
    for (std::size_t p = 0; p < std::size(patterns); ++p) {
      std::uint64_t* out = &sums[k * std::size(patterns) + p];
      cs.emplace_back(std::string(kernels[k].first) + ", " + patterns[p].first, [&, k, p, out] {
        return items_per_ns(kernels[k].second, *patterns[p].second, *out);
      });
    }
  auto s = t.measure("sum", {{"bytes", static_cast<std::int64_t>(n)}}, "Gitems/s", better::higher,
                     cs, "asm branch, sorted");
  // Every kernel's sum must be 3 per nonzero byte plus 1 per zero byte of its pattern.
  bool ok = true;
  for (std::size_t k = 0; k < std::size(kernels); ++k)
    for (std::size_t p = 0; p < std::size(patterns); ++p) {
      const auto& v = *patterns[p].second;
      std::uint64_t ones = static_cast<std::uint64_t>(std::count(v.begin(), v.end(), 1));
      ok &= sums[k * std::size(patterns) + p] == 3 * ones + (n - ones);
    }
  t.add(lab::holds("work_done", ok,
                   "every kernel's sum equals 3 per nonzero byte + 1 per zero byte",
                   "a kernel's sum is wrong: elements were skipped"));
  // Throughputs to times: the check compares time per element, random against sorted.
  auto as_time = [](const lab::summary& x) {
    std::vector<double> ns;
    for (double v : x.samples) ns.push_back(1 / v);
    return lab::summarize(ns);
  };
  std::uint64_t sink = 0;
  auto asm_counts =
      t.count("asm branch, random", [&] { sink += lab::branch_sum(random.data(), n); });
  auto plain_counts =
      t.count("C++ if/else, random", [&] { sink += lab::plain_sum(random.data(), n); });
  lab::do_not_optimize(sink);
  t.add(lab::branch_present("asm branch", as_time(s[0]), as_time(s[1]),
                            lab::find(asm_counts, "branch-misses"), static_cast<double>(n)));
  lab::check study =
      lab::branch_present("the study's C++ loop", as_time(s[4]), as_time(s[5]),
                          lab::find(plain_counts, "branch-misses"), static_cast<double>(n));
  t.note(study.detail);
  const double cyc = lab::cycle_ns();
  // Half of the random elements mispredict: the extra time per element, doubled, per cycle.
  double penalty = (1 / s[0].median - 1 / s[1].median) * 2 / cyc;
  t.figure(penalty, "cycles per mispredicted branch (asm branch, random vs sorted)");
  t.set({{"penalty", penalty},
         {"asm_ratio", s[1].median / s[0].median},
         {"study_ratio", s[5].median / s[4].median},
         {"study_branch", study.status == lab::check_status::pass}});
}

verdict branch_verdict(const trial& t) {
  std::string why = format(
      "a real branch on random data runs %.1fx slower than on sorted data, %.0f cycles per "
      "misprediction; ",
      t.get("asm_ratio"), t.get("penalty"));
  if (t.get("study_branch") == 0)
    why += format(
        "the study's C++ loop shows %.2fx here: the compiler made it branch-free, so the "
        "study's four equal figures measured no branch at all",
        t.get("study_ratio"));
  else
    why += format("the study's C++ loop kept its branch with this compiler (%.1fx)",
                  t.get("study_ratio"));
  return {verdict_kind::contradicted, why};
}

const registration kBranch("branch", branch, branch_verdict);

// --- 37: aliasing
// ---------------------------------------------------------------------------------

// Both loops start on a 64-byte boundary (bench/lab/CMakeLists.txt): this 5-instruction loop
// runs at half speed here when it straddles one, a "restrict effect" of 2x either way.
// out[i] = a[i] + b[i]. Without restrict the compiler must allow out to overlap a or b: it checks
// at run time and takes a scalar path when they do overlap.
[[gnu::noinline]] void add_may_alias(const float* a, const float* b, float* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
[[gnu::noinline]] void add_restrict(const float* __restrict a, const float* __restrict b,
                                    float* __restrict out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

void aliasing(trial& t) {
  const std::size_t n = 2048;  // three 8 KiB arrays: L1-resident
  const int calls = t.quick() ? 2000 : 10000;
  // Arrays placed so that a load never shares its low 12 address bits with a recent store
  // (4K aliasing makes such a load wait): out is 3 KiB past a and 2 KiB past b modulo 4 KiB.
  std::vector<float> a0(n + 1), arena(3 * 4096);
  std::span<float> a(arena.data(), n + 1), b(arena.data() + 4096 + 256, n),
      out(arena.data() + 8192 + 768, n);
  lab::rng r(37);
  for (std::size_t i = 0; i <= n; ++i) a0[i] = static_cast<float>(r.below(100));
  for (auto& x : b) x = static_cast<float>(r.below(100));
  // In place (out = a) every element still depends only on itself; shifted by one (out = a + 1)
  // each element is the previous one plus b: a running sum. A batch is kRepeat calls back to
  // back (~10 us) from a restored `a`; a sample is the median batch, so a preempted batch does
  // not weigh as much as the others.
  constexpr int kRepeat = 32;
  auto reference = [&](int k) {  // the same loop, element by element, kRepeat times
    std::vector<float> x(a0), o(n);
    for (int c = 0; c < kRepeat; ++c)
      for (std::size_t i = 0; i < n; ++i) {
        float v = x[i] + b[i];
        lab::do_not_optimize(v);  // keeps this loop scalar and in order
        if (k <= 1) o[i] = v;
        if (k == 2) x[i] = v;
        if (k == 3) x[i + 1] = v;
      }
    return k <= 1 ? o : x;
  };
  bool ok[4] = {true, true, true, true};
  std::vector<double> per_batch(static_cast<std::size_t>(calls / kRepeat));
  auto run = [&](int k) {
    for (double& ns : per_batch) {
      std::copy(a0.begin(), a0.end(), a.begin());
      ns = time_ns([&] {
        for (int c = 0; c < kRepeat; ++c) {
          if (k == 0) add_may_alias(a.data(), b.data(), out.data(), n);
          if (k == 1) add_restrict(a.data(), b.data(), out.data(), n);
          if (k == 2) add_may_alias(a.data(), b.data(), a.data(), n);
          if (k == 3) add_may_alias(a.data(), b.data(), a.data() + 1, n);
        }
      });
    }
    ok[k] = std::ranges::equal(k <= 1 ? out : a, reference(k));
    return double(n) * kRepeat / lab::summarize(per_batch).median;
  };
  auto s = t.measure("add", {{"floats", static_cast<std::int64_t>(n)}}, "Gitems/s", better::higher,
                     {{"may alias (no restrict), separate arrays", [&] { return run(0); }},
                      {"restrict, separate arrays", [&] { return run(1); }},
                      {"output is the input (in place, out = a)", [&] { return run(2); }},
                      {"output overlaps input shifted (out = a + 1)", [&] { return run(3); }}},
                     "may alias (no restrict), separate arrays");
  bool all = ok[0] && ok[1] && ok[2] && ok[3];
  t.add(lab::holds("work_done", all,
                   "each variant's output equals a plain scalar evaluation of the same loop",
                   "a variant's output differs from the scalar evaluation"));
  t.figure(s[0].median / s[3].median, "separate arrays / shifted overlap throughput");
  t.set({{"restrict", s[1].median / s[0].median},
         {"inplace", s[0].median / s[2].median},
         {"overlap", s[0].median / s[3].median}});
}

verdict aliasing_verdict(const trial& t) {
  std::string why = format(
                        "restrict runs %.2fx the unannotated loop on separate arrays; writing in "
                        "place costs %.2fx; an output shifted one element into its input, %.0fx",
                        t.get("restrict"), t.get("inplace"), t.get("overlap")) +
                    " (study: restrict 1.02x, aliased output 2.9x slower)";
  bool close = t.get("restrict") > 0.85 && t.get("restrict") < 1.2;
  if (close && t.get("overlap") >= 2)
    return {verdict_kind::confirmed,
            why +
                ": the signature matters little (the compiler checks overlap at run time and "
                "keeps the vector loop); a real dependence through memory costs a lot"};
  if (!close) return {verdict_kind::contradicted, why + ": restrict itself made a difference"};
  return {verdict_kind::contradicted, why + ": overlap cost little"};
}

const registration kAliasing("aliasing", aliasing, aliasing_verdict);

}  // namespace
}  // namespace simdex::lab_bench
