#include "registry.h"

#include <algorithm>
#include <exception>
#include <limits>
#include <map>
#include <stdexcept>

#include "common/json.h"
#include "lab/enum_names.h"

namespace simdex::lab_bench {
namespace json = bench::json;

const char* verdict_name(verdict_kind k) {
  return lab::enum_name(k, {"confirmed", "contradicted", "inconclusive", "measured"});
}

std::string study_number_json(const experiment& e) {
  return e.study > 0 ? json::num(static_cast<long long>(e.study)) : "null";
}

verdict by_threshold(double value, double confirm_at, double contradict_below, std::string why,
                     std::string between) {
  if (value >= confirm_at) return {verdict_kind::confirmed, std::move(why)};
  if (value < contradict_below) return {verdict_kind::contradicted, std::move(why)};
  return {verdict_kind::inconclusive, between.empty() ? std::move(why) : std::move(between)};
}

namespace {

std::vector<experiment>& mutable_registry() {
  static std::vector<experiment> all;
  return all;
}

std::string strings_json(const std::vector<std::string>& xs) {
  std::vector<std::string> out;
  for (const auto& x : xs) out.push_back(json::str(x));
  return json::array(out);
}

std::string curve_json(const curve& c) {
  std::vector<std::string> lines, markers;
  for (const auto& l : c.lines) {
    std::vector<std::string> pts;
    for (const auto& p : l.points)
      pts.push_back(
          json::array({json::num(p.x), json::num(p.y), json::num(p.lo), json::num(p.hi)}));
    lines.push_back(json::object({{"label", json::str(l.label)}, {"points", json::array(pts)}}));
  }
  for (const auto& m : c.markers)
    markers.push_back(json::object({{"x", json::num(m.x)}, {"label", json::str(m.label)}}));
  return json::object({{"section", json::str(c.section)},
                       {"title", json::str(c.title)},
                       {"x_label", json::str(c.x_label)},
                       {"y_label", json::str(c.y_label)},
                       {"x_log", c.x_log ? "true" : "false"},
                       {"y_log", c.y_log ? "true" : "false"},
                       {"lines", json::array(lines)},
                       {"markers", json::array(markers)}});
}

std::vector<std::pair<std::string, std::string>> declaration(const experiment& e) {
  return {{"id", json::str(e.id)},
          {"study", study_number_json(e)},
          {"group", json::str(e.group)},
          {"title", json::str(e.title)},
          {"question", json::str(e.question)},
          {"study_figure", json::str(e.study_figure)},
          {"range", json::object({{"lo", json::num(e.range.lo)},
                                  {"hi", json::num(e.range.hi)},
                                  {"unit", json::str(e.range.unit)},
                                  {"basis", json::str(e.range.basis)}})},
          {"checks", strings_json(e.checks)}};
}

}  // namespace

registration::registration(const std::string& id, std::function<void(trial&)> run,
                           std::function<verdict(const trial&)> judge) {
  const auto& rows = declared();
  auto row =
      std::find_if(rows.begin(), rows.end(), [&](const experiment& d) { return d.id == id; });
  if (row == rows.end()) throw std::logic_error("lab: experiment " + id + " is not declared");
  experiment e = *row;
  e.run = std::move(run);
  e.judge = std::move(judge);
  auto& all = mutable_registry();
  for (const auto& x : all)
    if (x.id == e.id) throw std::logic_error("lab: experiment id registered twice: " + e.id);
  all.push_back(std::move(e));
  // Experiments of no study (0) after the study's 37.
  auto order = [](const experiment& x) {
    return x.study > 0 ? x.study : std::numeric_limits<int>::max();
  };
  std::sort(all.begin(), all.end(), [&](const experiment& a, const experiment& b) {
    return order(a) != order(b) ? order(a) < order(b) : a.id < b.id;
  });
}

const std::vector<experiment>& experiments() { return mutable_registry(); }

trial::trial(bench::session& s, const experiment& e, const lab::memory_limits* limits)
    : s_(s), e_(e), limits_(limits) {}

std::vector<lab::summary> trial::measure(const std::string& part, const bench::params& p,
                                         const std::string& unit, bench::better b,
                                         const std::vector<contender>& cs,
                                         const std::string& reference) {
  auto sums = sample(cs);
  double ref = 0;
  for (std::size_t i = 0; i < cs.size(); ++i)
    if (cs[i].first == reference) ref = sums[i].median;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    s_.record(e_.id + "." + part, p, cs[i].first, "", unit, b, sums[i].samples, reference, ref);
    recorded.emplace_back(part + ": " + cs[i].first, sums[i]);
  }
  return sums;
}

std::vector<lab::summary> trial::sample(const std::vector<contender>& cs) {
  std::vector<std::function<double()>> fns;
  for (const auto& c : cs) fns.push_back(c.second);
  return lab::interleaved(reps(), fns);
}

void trial::record(const std::string& part, const bench::params& p, const std::string& name,
                   const std::string& unit, bench::better b, const lab::summary& s) {
  s_.record(e_.id + "." + part, p, name, "", unit, b, s.samples);
  recorded.emplace_back(part + ": " + name, s);
}

void trial::figure(double value, const std::string& label) {
  has_figure = true;
  figure_value = value;
  figure_label = label;
}

void trial::no_figure(const std::string& label, const std::string& why,
                      std::vector<std::pair<std::string, lab::summary>> from) {
  has_figure = false;
  figure_unmeasured = true;
  figure_label = label;
  figure_why = why;
  figure_from = std::move(from);
}

void trial::add(lab::check c) { checks.push_back(std::move(c)); }

std::vector<lab::reading> trial::count(const std::string& label, const std::function<void()>& fn,
                                       bool with_threads) {
  lab::counters c(lab::all_events(), with_threads);
  c.start();
  fn();
  c.stop();
  auto rs = c.read();
  readings.emplace_back(label, rs);
  return rs;
}

void trial::plot(curve c) { curves.push_back(std::move(c)); }

void trial::note(const std::string& text) { notes.push_back(text); }

void trial::set(const std::string& key, double v) {
  for (auto& [k, x] : values_)
    if (k == key) {
      x = v;
      return;
    }
  values_.emplace_back(key, v);
}

void trial::set(std::initializer_list<std::pair<std::string, double>> values) {
  for (const auto& [k, v] : values) set(k, v);
}

void trial::set_cycles(double cycle_ns, std::initializer_list<named_summary> medians) {
  for (const auto& m : medians) set(m.name, m.s.median / cycle_ns);
}

double trial::get(const std::string& key) const {
  for (const auto& [k, x] : values_)
    if (k == key) return x;
  throw std::out_of_range("lab: value '" + key + "' was never set by " + e_.id);
}

std::string run_experiment(bench::session& s, const experiment& e,
                           const lab::memory_limits* limits) {
  trial t(s, e, limits);
  verdict v;
  std::uint64_t t0 = lab::now_ns();
  bool ran = false;
  try {
    e.run(t);
    ran = true;
  } catch (const std::exception& ex) {
    v = {verdict_kind::inconclusive, std::string("the experiment failed: ") + ex.what()};
  }
  double seconds = static_cast<double>(lab::now_ns() - t0) * 1e-9;
  if (ran) {
    for (const auto& name : e.checks) {
      bool seen = std::any_of(t.checks.begin(), t.checks.end(),
                              [&](const lab::check& c) { return c.name == name; });
      if (!seen)
        t.add({name, lab::check_status::fail, "declared check '" + name + "' was never run"});
    }
    t.add(lab::steady(t.recorded));
    if (t.has_figure)
      t.add(lab::in_range(t.figure_label, t.figure_value, e.range.lo, e.range.hi, e.range.unit));
    // The reason names the check that failed: its detail alone may not say which it was.
    std::string invalid = lab::invalid_reason(t.checks);
    if (!invalid.empty()) {
      v = {verdict_kind::inconclusive, invalid};
    } else {
      try {
        v = e.judge(t);
      } catch (const std::exception& ex) {
        v = {verdict_kind::inconclusive, std::string("no verdict: ") + ex.what()};
      }
    }
  }
  std::fprintf(stderr, "  %s: %s: %s\n", e.id.c_str(), verdict_name(v.kind), v.reason.c_str());

  std::vector<std::string> checks, readings, curves;
  for (const auto& c : t.checks)
    checks.push_back(json::object({{"name", json::str(c.name)},
                                   {"status", json::str(lab::status_name(c.status))},
                                   {"detail", json::str(c.detail)}}));
  for (const auto& [label, rs] : t.readings) {
    std::vector<std::string> items;
    for (const auto& r : rs)
      items.push_back(json::object({{"name", json::str(r.name)},
                                    {"value", r.available ? json::num(r.value) : "null"},
                                    {"status", json::str(r.status)}}));
    readings.push_back(
        json::object({{"label", json::str(label)}, {"readings", json::array(items)}}));
  }
  for (const auto& c : t.curves) curves.push_back(curve_json(c));
  std::string figure = "null";
  if (t.has_figure) {
    figure = json::object({{"value", json::num(t.figure_value)},
                           {"unit", json::str(e.range.unit)},
                           {"label", json::str(t.figure_label)}});
  } else if (t.figure_unmeasured) {
    std::vector<std::string> from;
    for (const auto& [label, m] : t.figure_from)
      from.push_back(json::object({{"label", json::str(label)},
                                   {"median", json::num(m.median)},
                                   {"min", json::num(m.min)},
                                   {"max", json::num(m.max)}}));
    figure = json::object({{"value", "null"},
                           {"unit", json::str(e.range.unit)},
                           {"label", json::str(t.figure_label)},
                           {"not_measured", json::str(t.figure_why)},
                           {"measurements", json::array(from)}});
  }
  auto fields = declaration(e);
  fields.insert(fields.end(), {{"figure", figure},
                               {"verdict", json::str(verdict_name(v.kind))},
                               {"reason", json::str(v.reason)},
                               {"validity", json::array(checks)},
                               {"counters", json::array(readings)},
                               {"curves", json::array(curves)},
                               {"notes", strings_json(t.notes)},
                               {"seconds", json::num(seconds)}});
  return json::object(fields);
}

std::string study_json() {
  std::vector<std::string> entries;
  for (const auto& s : declared())
    if (s.study > 0)
      entries.push_back(json::object({{"number", json::num(static_cast<long long>(s.study))},
                                      {"name", json::str(s.title)},
                                      {"group", json::str(s.group)}}));
  return json::array(entries);
}

std::string registry_json() {
  std::vector<std::string> decls;
  for (const auto& e : experiments()) decls.push_back(json::object(declaration(e)));
  return json::object({{"study", study_json()}, {"experiments", json::array(decls)}});
}

}  // namespace simdex::lab_bench
