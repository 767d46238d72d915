#include "machine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "json.h"
#include "simdex/cpu.h"
#include "simdex/lab/system.h"
#include "simdex/memory.h"
#include "simdex_commit.h"

#ifndef SIMDEX_SOURCE_DIR
#define SIMDEX_SOURCE_DIR ""
#endif
#ifndef SIMDEX_CXX_FLAGS
#define SIMDEX_CXX_FLAGS ""
#endif
#ifndef SIMDEX_BUILD_TYPE
#define SIMDEX_BUILD_TYPE ""
#endif
#ifndef SIMDEX_VERSION
#define SIMDEX_VERSION "0"
#endif

namespace simdex::bench {
namespace {

std::string stats_json(const stats& s) {
  std::vector<std::string> xs;
  for (double x : s.samples) xs.push_back(json::num(x));
  return json::object({{"median", json::num(s.median)},
                       {"min", json::num(s.min)},
                       {"max", json::num(s.max)},
                       {"noisy", s.noisy ? "true" : "false"},
                       {"samples", json::array(xs)}});
}

// HEAD of the source tree this program was built from, or "" where that tree is gone (an
// installed wheel) or is no git checkout.
std::string source_head() {
  std::string dir = SIMDEX_SOURCE_DIR;
  if (dir.empty() || access((dir + "/bench/common/machine.cc").c_str(), R_OK) != 0) return "";
  std::string quoted = "'";
  for (char c : dir) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE* p = popen(("git -C " + quoted + " rev-parse --short=12 HEAD 2>/dev/null").c_str(), "r");
  if (!p) return "";
  char buf[64] = {};
  std::string head = std::fgets(buf, sizeof buf, p) ? buf : "";
  pclose(p);
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.pop_back();
  return head;
}

// The commit the measured code came from: SIMDEX_COMMIT if set, else the one stamped at build
// time. A program older than its source tree's HEAD says so on stderr and in the JSON, since
// its figures are not those of the code now checked out.
std::vector<std::pair<std::string, std::string>> commit_fields() {
  const char* env = std::getenv("SIMDEX_COMMIT");
  if (env && *env) return {{"simdex_commit", json::str(env)}};
  std::vector<std::pair<std::string, std::string>> out{
      {"simdex_commit", json::str(SIMDEX_GIT_COMMIT)}};
  std::string head = source_head();
  std::string built = SIMDEX_GIT_COMMIT;  // "+dirty" marks a build of a changed tree, same HEAD
  if (built.ends_with("+dirty")) built.resize(built.size() - 6);
  if (!head.empty() && head != built) {
    std::fprintf(stderr,
                 "warning: this program was built from commit %s but %s is now at %s; rebuild "
                 "it to measure the checked-out code\n",
                 SIMDEX_GIT_COMMIT, SIMDEX_SOURCE_DIR, head.c_str());
    out.emplace_back("source_head", json::str(head));
  }
  return out;
}

}  // namespace

machine_limits probe_machine(const options& opts) {
  std::size_t bytes = opts.full() ? (std::size_t{1} << 30) : (std::size_t{256} << 20);
  return lab::measure_memory_limits(bytes, opts.repetitions(), opts.full() ? 2'000'000 : 500'000);
}

std::string machine_json(const machine_limits& m) {
  return json::object({
      {"cycle_ns", json::num(m.cycle_ns)},
      {"ghz_estimate", json::num(m.cycle_ns > 0 ? 1.0 / m.cycle_ns : 0)},
      {"probe_bytes", json::num(static_cast<long long>(m.bytes))},
      {"memcpy_gib_s",
       json::object({{"4k", stats_json(m.memcpy_4k)}, {"2m", stats_json(m.memcpy_2m)}})},
      {"latency_ns", json::object({
                         {"4k", json::object({{"chains_1", stats_json(m.latency_1_4k)},
                                              {"chains_16", stats_json(m.latency_16_4k)}})},
                         {"2m", json::object({{"chains_1", stats_json(m.latency_1_2m)},
                                              {"chains_16", stats_json(m.latency_16_2m)}})},
                     })},
      {"huge_bytes_in_2m_probe", json::num(static_cast<long long>(m.huge_bytes_2m))},
  });
}

std::string environment_json() {
  const auto& f = features();
  std::vector<std::string> flags, kernels, caches;
  for (const auto& n : f.flag_names()) flags.push_back(json::str(n));
  for (const auto& k : kernel_report())
    kernels.push_back(
        json::object({{"family", json::str(k.family)}, {"isa", json::str(isa_name(k.level))}}));
  for (int i = 0; i < 8; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string level = lab::first_line(dir + "level");
    if (level.empty()) break;
    caches.push_back(json::object({{"level", json::num(std::atoll(level.c_str()))},
                                   {"type", json::str(lab::first_line(dir + "type"))},
                                   {"size", json::str(lab::first_line(dir + "size"))}}));
  }
  utsname u{};
  uname(&u);
  long long mem = static_cast<long long>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  std::vector<std::pair<std::string, std::string>> fields{
      {"cpu_model", json::str(f.brand)},
      {"cpu_vendor", json::str(f.vendor)},
      {"cpu_flags", json::array(flags)},
      {"caches", json::array(caches)},
      {"cores", json::num(static_cast<long long>(sysconf(_SC_NPROCESSORS_ONLN)))},
      {"memory_bytes", json::num(mem)},
      {"kernel", json::str(std::string(u.sysname) + " " + u.release + " " + u.machine)},
      {"thp", json::str(thp_mode())},
      {"hypervisor", f.hypervisor ? "true" : "false"},
      {"compiler", json::str(
#if defined(__clang__)
                       std::string("clang ") + __clang_version__
#else
                       std::string("gcc ") + __VERSION__
#endif
                       )},
      {"cxx_flags", json::str(SIMDEX_CXX_FLAGS)},
      {"build_type", json::str(SIMDEX_BUILD_TYPE)},
      {"simdex_version", json::str(SIMDEX_VERSION)},
  };
  for (auto& field : commit_fields()) fields.push_back(std::move(field));
  fields.insert(fields.end(), {{"isa_detected", json::str(isa_name(detected_isa()))},
                               {"isa_active", json::str(isa_name(active_isa()))},
                               {"kernels", json::array(kernels)}});
  return json::object(fields);
}

}  // namespace simdex::bench
