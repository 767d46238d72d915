// Language group, types at run time: std::variant vs a virtual hierarchy (28), dynamic_cast vs
// tag dispatch (35), exceptions vs error codes (23). Objects and callees come from another
// translation unit (exp_language_callees.cc); which object a call works on comes from a long
// random stream, so a branch predictor cannot learn the order (lang_util.h, random_stream).
#include <stdexcept>
#include <variant>
#include <vector>

#include "lang_callees.h"
#include "lang_util.h"

namespace simdex::lab_bench {
namespace {

using namespace lang;

constexpr std::size_t kPool = 4096;  // objects; 64 KiB of them at most, cache-resident

// Indices into the pool: a long random stream of them, or the pool in order (the study's
// regular alternation of kinds).
class index_stream {
 public:
  explicit index_stream(std::uint64_t seed) : v_(std::size_t{1} << 20) {
    lab::rng r(seed);
    for (auto& x : v_) x = static_cast<std::uint16_t>(r.below(kPool));
    for (std::size_t i = 0; i < kPool * 8; ++i) in_order_.push_back(i % kPool);
  }
  const std::uint16_t* take(std::size_t count, bool random) {
    if (!random) return in_order_.data();
    if (next_ + count > v_.size()) next_ = 0;
    const std::uint16_t* p = v_.data() + next_;
    next_ += count;
    return p;
  }

 private:
  std::vector<std::uint16_t> v_, in_order_;
  std::size_t next_ = 0;
};

// The two loops `a` and `b` (run(idx, n) -> accumulator), each over the pool in random order and
// in pool order: four kernels, every run checked against want(idx, n).
template <class Want, class RunA, class RunB>
std::vector<kernel> in_both_orders(index_stream& order, tally& work, Want want,
                                   const std::string& a, RunA run_a, const std::string& b,
                                   RunB run_b) {
  auto kern = [&order, &work, want](bool random, auto run) {
    return [&order, &work, want, random, run](std::size_t n) {
      const std::uint16_t* idx = order.take(n, random);
      return timed([&] { return run(idx, n); }, want(idx, n), work);
    };
  };
  const std::string alternating = ", kinds alternating (the study's)";
  return {{a + ", random order", kern(true, run_a)},
          {b + ", random order", kern(true, run_b)},
          {a + alternating, kern(false, run_a)},
          {b + alternating, kern(false, run_b)}};
}

// --- 28: std::variant vs virtual hierarchy -------------------------------------------------------

template <int K>
struct op_value {
  static constexpr int k = K;
  std::uint64_t operand;
};
using op_variant = std::variant<op_value<0>, op_value<1>, op_value<2>, op_value<3>>;

SIMDEX_LAB_NOINLINE std::uint64_t run_variant(const op_variant* ops, const std::uint16_t* idx,
                                              std::size_t n) {
  SIMDEX_LAB_LOOP();
  std::uint64_t acc = 1;
  for (std::size_t i = 0; i < n; ++i)
    acc = std::visit(
        [acc](const auto& o) {
          constexpr int k = std::decay_t<decltype(o)>::k;
          SIMDEX_LAB_INLINED(kOp0 + k);
          return op_body(k, acc, o.operand);
        },
        ops[idx[i]]);
  return acc;
}

SIMDEX_LAB_NOINLINE std::uint64_t run_virtual(const operation* const* ops, const std::uint16_t* idx,
                                              std::size_t n) {
  SIMDEX_LAB_LOOP();
  std::uint64_t acc = 1;
  for (std::size_t i = 0; i < n; ++i) acc = ops[idx[i]]->apply(acc);
  return acc;
}

void variant_virtual(trial& t) {
  const std::size_t calls = t.quick() ? 1 << 14 : 1 << 15;
  lab::rng r(28);
  std::vector<int> kinds(kPool);
  std::vector<std::uint64_t> operands(kPool);
  std::vector<op_variant> vars;
  // The objects sit side by side in one block, like the variants: neither side pays for
  // scattered heap objects.
  const std::size_t size = sizeof_operation();
  std::vector<std::max_align_t> arena(kPool * size / sizeof(std::max_align_t) + 1);
  std::vector<const operation*> objs;
  for (std::size_t i = 0; i < kPool; ++i) {
    kinds[i] = static_cast<int>(i % 4);  // in pool order the kinds alternate, as in the study
    operands[i] = r.next();
    switch (kinds[i]) {
      case 0:
        vars.emplace_back(op_value<0>{operands[i]});
        break;
      case 1:
        vars.emplace_back(op_value<1>{operands[i]});
        break;
      case 2:
        vars.emplace_back(op_value<2>{operands[i]});
        break;
      default:
        vars.emplace_back(op_value<3>{operands[i]});
    }
    objs.push_back(construct_operation(reinterpret_cast<char*>(arena.data()) + i * size, kinds[i],
                                       operands[i]));
  }
  index_stream order(280);
  const double cyc = lab::cycle_ns();
  tally work;
  auto want = [&](const std::uint16_t* idx, std::size_t n) {
    std::uint64_t acc = 1;
    for (std::size_t i = 0; i < n; ++i) acc = op_body(kinds[idx[i]], acc, operands[idx[i]]);
    return acc;
  };
  auto ks = in_both_orders(
      order, work, want, "std::variant",
      [&](const std::uint16_t* idx, std::size_t n) { return run_variant(vars.data(), idx, n); },
      "virtual",
      [&](const std::uint16_t* idx, std::size_t n) { return run_virtual(objs.data(), idx, n); });
  auto s = measure_calls(t, "acc = op(acc)", {{"calls", static_cast<std::int64_t>(calls)}}, ks,
                         calls, "virtual, random order");
  const std::vector<int> four = {kOp0, kOp1, kOp2, kOp3};
  const std::uint16_t* few = order.take(256, true);
  t.add(call_shape("virtual", shape::indirect,
                   probe_calls(four, [&] { run_virtual(objs.data(), few, 256); })));
  observed v = probe_calls(four, [&] { run_variant(vars.data(), few, 256); });
  t.note(std::string("std::visit compiles to: ") + shape_name(v.s) + " (" + v.how + ")");
  t.add(work_done("both loops' accumulators against the operations applied in plain C++",
                  work.wrong, work.runs));
  for (auto* o : objs) o->~operation();

  t.figure(s[0].median / s[1].median, "std::variant / virtual time, random order");
  t.set({{"random", s[0].median / s[1].median}, {"alternating", s[2].median / s[3].median}});
  t.set_cycles(cyc, {{"variant_cycles", s[0]},
                     {"virtual_cycles", s[1]},
                     {"variant_alt_cycles", s[2]},
                     {"virtual_alt_cycles", s[3]}});
  t.set("visit_inlined", v.s == shape::inlined);
}

verdict variant_virtual_verdict(const trial& t) {
  std::string why =
      format(
          "std::variant takes %.2fx the virtual hierarchy's time in random order (%.1f "
          "against %.1f cycles per operation)",
          t.get("random"), t.get("variant_cycles"), t.get("virtual_cycles")) +
      format(" and %.2fx with the kinds alternating as in the study (%.1f against %.1f)",
             t.get("alternating"), t.get("variant_alt_cycles"), t.get("virtual_alt_cycles")) +
      (t.get("visit_inlined") != 0 ? "; std::visit became a switch with the operations inlined"
                                   : "; std::visit calls the operations through a table");
  if (t.get("alternating") > 1.1 && t.get("random") > 1.1)
    return {verdict_kind::confirmed, "the virtual hierarchy is faster here too: " + why};
  if (t.get("alternating") < 0.9 || t.get("random") < 0.9)
    return {verdict_kind::contradicted,
            std::string("std::variant is faster here") +
                (t.get("visit_inlined") != 0
                     ? ": this standard library's std::visit is a switch, while the study's "
                       "libc++ visits through a table of function pointers, an indirect call "
                       "like the virtual one: "
                     : ": ") +
                why};
  return {verdict_kind::inconclusive, "neither is clearly faster: " + why};
}

const registration kVariantVirtual("variant_virtual", variant_virtual, variant_virtual_verdict);

// --- 35: dynamic_cast vs tag dispatch
// ----------------------------------------------------------------

SIMDEX_LAB_NOINLINE std::uint64_t run_tag(const node* const* nodes, const std::uint16_t* idx,
                                          std::size_t n) {
  SIMDEX_LAB_LOOP();
  std::uint64_t acc = 1;
  for (std::size_t i = 0; i < n; ++i) {
    const node* x = nodes[idx[i]];
    if (x->tag == kind::add)
      acc += static_cast<const added*>(x)->value;
    else
      acc *= static_cast<const multiplied*>(x)->value | 1;
  }
  return acc;
}

SIMDEX_LAB_NOINLINE std::uint64_t run_dynamic_cast(const node* const* nodes,
                                                   const std::uint16_t* idx, std::size_t n) {
  SIMDEX_LAB_LOOP();
  std::uint64_t acc = 1;
  for (std::size_t i = 0; i < n; ++i) {
    const node* x = nodes[idx[i]];
    if (const auto* a = dynamic_cast<const added*>(x))
      acc += a->value;
    else if (const auto* m = dynamic_cast<const multiplied*>(x))
      acc *= m->value | 1;
  }
  return acc;
}

void dynamic_cast_tag(trial& t) {
  const std::size_t calls = t.quick() ? 1 << 14 : 1 << 15;
  lab::rng r(35);
  std::vector<std::unique_ptr<node>> owned;
  std::vector<const node*> nodes;
  std::vector<int> made(kPool);
  std::vector<std::uint64_t> values(kPool);
  std::size_t hidden = 0;
  for (std::size_t i = 0; i < kPool; ++i) {
    // In pool order: added, multiplied, added, multiplied ... (the study's alternation); every
    // other added object is of the class the loops cannot see.
    made[i] = i % 2 == 1 ? 1 : (i % 4 == 2 ? 2 : 0);
    hidden += made[i] == 2;
    values[i] = r.next();
    owned.push_back(make_node(made[i], values[i]));
    nodes.push_back(owned.back().get());
  }
  index_stream order(350);
  const double cyc = lab::cycle_ns();
  tally work;
  auto want = [&](const std::uint16_t* idx, std::size_t n) {
    std::uint64_t acc = 1;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t v = values[idx[i]];
      acc = made[idx[i]] == 1 ? acc * (v | 1) : acc + v;
    }
    return acc;
  };
  auto ks = in_both_orders(
      order, work, want, "tag",
      [&](const std::uint16_t* idx, std::size_t n) { return run_tag(nodes.data(), idx, n); },
      "dynamic_cast",
      [&](const std::uint16_t* idx, std::size_t n) {
        return run_dynamic_cast(nodes.data(), idx, n);
      });
  auto s = measure_calls(t, "dispatch", {{"calls", static_cast<std::int64_t>(calls)}}, ks, calls,
                         "tag, random order");
  t.add(work_done(format("both loops' accumulators against the kinds the objects were made as "
                         "(%.0f of %.0f objects are of a class derived from `added` that only "
                         "another translation unit defines: dynamic_cast must walk the "
                         "hierarchy to accept them)",
                         double(hidden), double(kPool)),
                  work.wrong, work.runs));

  t.figure(s[1].median / s[0].median, "dynamic_cast / tag time, random order");
  t.set({{"random", s[1].median / s[0].median}, {"alternating", s[3].median / s[2].median}});
  t.set_cycles(cyc, {{"cast_cycles", s[1]},
                     {"tag_cycles", s[0]},
                     {"cast_alt_cycles", s[3]},
                     {"tag_alt_cycles", s[2]}});
}

verdict dynamic_cast_verdict(const trial& t) {
  std::string why =
      format(
          "dynamic_cast takes %.1fx the tag's time in random order (%.0f against %.0f cycles "
          "per object)",
          t.get("random"), t.get("cast_cycles"), t.get("tag_cycles")) +
      format(
          " and %.1fx with the kinds alternating as in the study (%.0f against %.1f cycles; "
          "study 14.5x)",
          t.get("alternating"), t.get("cast_alt_cycles"), t.get("tag_alt_cycles"));
  return by_threshold(t.get("alternating"), 3, 1.5, why, "smaller than the study's gap: " + why);
}

const registration kDynamicCast("dynamic_cast", dynamic_cast_tag, dynamic_cast_verdict);

// --- 23: exceptions vs error codes ---------------------------------------------------------------

constexpr std::size_t kParseInputs = 1 << 16;
constexpr std::size_t kRareEvery = 4096;  // the study's failure rate

// Every loop calls a parser in another translation unit, checks its outcome and counts failures.
SIMDEX_LAB_NOINLINE std::uint64_t run_error_code(const std::uint32_t* in, std::size_t n) {
  SIMDEX_LAB_LOOP();
  std::uint64_t sum = 0, errors = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t v;
    if (parse_or_code(in[i % kParseInputs], &v))
      sum += v;
    else
      ++errors;
  }
  return sum + (errors << 48);
}

SIMDEX_LAB_NOINLINE std::uint64_t run_optional(const std::uint32_t* in, std::size_t n) {
  SIMDEX_LAB_LOOP();
  std::uint64_t sum = 0, errors = 0;
  for (std::size_t i = 0; i < n; ++i) {
    auto r = parse_or_empty(in[i % kParseInputs]);
    if (r)
      sum += *r;
    else
      ++errors;
  }
  return sum + (errors << 48);
}

SIMDEX_LAB_NOINLINE std::uint64_t run_exception(const std::uint32_t* in, std::size_t n) {
  SIMDEX_LAB_LOOP();
  std::uint64_t sum = 0, errors = 0;
  for (std::size_t i = 0; i < n; ++i) {
    try {
      sum += parse_or_throw(in[i % kParseInputs]);
    } catch (const std::runtime_error&) {
      ++errors;
    }
  }
  return sum + (errors << 48);
}

// The study's no-fail loops: the parsers beside the loop (inlined), and the optional
// dereferenced without a check, so the error-code loop has no test left in it.
inline std::optional<std::uint64_t> study_parse_or_empty(std::uint32_t v) {
  if (v == 0) return std::nullopt;
  return parse_body(v);
}
inline std::uint64_t study_parse_or_throw(std::uint32_t v) {
  if (v == 0) throw std::runtime_error("invalid input 0");
  return parse_body(v);
}
SIMDEX_LAB_NOINLINE std::uint64_t run_study_error_code(const std::uint32_t* in, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += *study_parse_or_empty(in[i % kParseInputs]);
  return sum;
}
SIMDEX_LAB_NOINLINE std::uint64_t run_study_exception(const std::uint32_t* in, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += study_parse_or_throw(in[i % kParseInputs]);
  return sum;
}

void exceptions(trial& t) {
  const std::size_t calls = kParseInputs;
  lab::rng r(23);
  std::vector<std::uint32_t> clean(kParseInputs), rare, all_fail(kParseInputs, 0);
  for (auto& v : clean) v = static_cast<std::uint32_t>(r.below(0xffffffffu)) + 1;
  rare = clean;
  std::size_t planted = 0;
  for (std::size_t k = 0; k < kParseInputs / kRareEvery; ++k) {
    std::size_t at = r.below(kParseInputs);
    planted += rare[at] != 0;
    rare[at] = 0;
  }
  const double cyc = lab::cycle_ns();
  tally work;
  auto want = [](const std::vector<std::uint32_t>& in, std::size_t n) {
    std::uint64_t sum = 0, errors = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t v = in[i % kParseInputs];
      if (v == 0)
        ++errors;
      else
        sum += parse_body(v);
    }
    return sum + (errors << 48);
  };
  using loop = std::uint64_t (*)(const std::uint32_t*, std::size_t);
  auto kern = [&](const std::vector<std::uint32_t>& in, loop run) {
    return [&, run](std::size_t n) {
      return timed([&] { return run(in.data(), n); }, want(in, n), work);
    };
  };
  auto study = [&](bool exc) {
    return [&, exc](std::size_t n) {
      return timed(
          [&] {
            return exc ? run_study_exception(clean.data(), n)
                       : run_study_error_code(clean.data(), n);
          },
          want(clean, n), work);
    };
  };
  std::vector<kernel> ks = {
      {"error code, no failure", kern(clean, run_error_code)},
      {"exception, no failure", kern(clean, run_exception)},
      {"error code, 1 in 4096 fails", kern(rare, run_error_code)},
      {"exception, 1 in 4096 fails", kern(rare, run_exception)},
      {"std::optional (the study's type), no failure", kern(clean, run_optional)},
      {"the study's no-failure error code (inlined, unchecked)", study(false)},
      {"the study's no-failure exception (inlined)", study(true)}};
  auto s = measure_calls(t, "parse", {{"calls", static_cast<std::int64_t>(calls)}}, ks, calls,
                         "error code, no failure");
  // Every call fails: the cost of one throw and catch, one frame up.
  const std::size_t fail_calls = t.quick() ? 1000 : 4000;
  std::vector<kernel> fk = {{"error code, every call fails", kern(all_fail, run_error_code)},
                            {"exception, every call fails", kern(all_fail, run_exception)}};
  auto f = measure_calls(t, "every call fails", {{"calls", static_cast<std::int64_t>(fail_calls)}},
                         fk, fail_calls, "error code, every call fails", 3);
  probe.entry[kParse] = reinterpret_cast<const void*>(&parse_or_throw);
  probe.entry[kParseCode] = reinterpret_cast<const void*>(&parse_or_code);
  probe.entry[kParseOr] = reinterpret_cast<const void*>(&parse_or_empty);
  t.add(call_shape("error code", shape::direct,
                   probe_calls({kParseCode}, [&] { run_error_code(rare.data(), 64); })));
  t.add(call_shape("std::optional", shape::direct,
                   probe_calls({kParseOr}, [&] { run_optional(rare.data(), 64); })));
  t.add(call_shape("exception", shape::direct,
                   probe_calls({kParse}, [&] { run_exception(rare.data(), 64); })));
  t.add(work_done(format("every loop's sum and failure count against a plain evaluation (%.0f "
                         "failures planted per %.0f calls)",
                         double(planted), double(calls)),
                  work.wrong, work.runs));

  double throw_ns = f[1].median - f[0].median;
  t.figure(throw_ns * 1e-3, "throw and catch one frame up, beyond an error return");
  t.set({{"throw_us", throw_ns * 1e-3},
         {"throw_cycles", throw_ns / cyc},
         {"nofail", s[1].median / s[0].median},
         {"rare", s[3].median / s[2].median}});
  t.set("code_cycles", s[0].median / cyc);
  t.set({{"study_nofail", s[6].median / s[5].median}, {"optional", s[4].median / s[0].median}});
  t.set("optional_cycles", s[4].median / cyc);
  t.set("break_even", throw_ns / s[0].median);
}

verdict exceptions_verdict(const trial& t) {
  std::string why =
      format(
          "a throw caught one frame up costs %.2f us (%.0f cycles) beyond an error return; at "
          "1 failure in 4096 calls the exception loop takes %.2fx the error-code loop's time "
          "(study 6.2x, which its figures put at about 8.6 us per throw)",
          t.get("throw_us"), t.get("throw_cycles"), t.get("rare")) +
      format(
          ", with no failure %.2fx (study 1.32x; the study's own loops, parsers inlined and "
          "the optional dereferenced without a test, %.2fx here)",
          t.get("nofail"), t.get("study_nofail")) +
      format(
          "; returning std::optional from a call costs %.1fx a bool and out-parameter here "
          "(%.0f cycles per call)",
          t.get("optional"), t.get("optional_cycles")) +
      format("; a throw costs as much as %.0f error-checked calls", t.get("break_even"));
  if (t.get("rare") >= 2) return {verdict_kind::confirmed, why};
  if (t.get("rare") < 1.5)
    return {verdict_kind::contradicted,
            "at the study's failure rate a throw is not dramatically slower here: " + why};
  return {verdict_kind::inconclusive, why};
}

const registration kExceptions("exceptions", exceptions, exceptions_verdict);

}  // namespace
}  // namespace simdex::lab_bench
