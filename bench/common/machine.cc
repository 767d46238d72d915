#include "machine.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <vector>

#include "json.h"
#include "simdex/cpu.h"
#include "simdex/memory.h"

#ifndef SIMDEX_GIT_COMMIT
#define SIMDEX_GIT_COMMIT "unknown"
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

constexpr std::size_t kLine = 64;

// Eight dependent adds per iteration: the loop runs at one add latency (1 cycle) per add.
double add_chain_ns() {
  const std::uint64_t iters = 20'000'000;
  std::uint64_t x = 0;
  std::uint64_t t0 = now_ns();
  for (std::uint64_t i = 0; i < iters; ++i) {
    asm volatile(
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
        "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0"
        : "+r"(x));
  }
  std::uint64_t t1 = now_ns();
  do_not_optimize(x);
  return static_cast<double>(t1 - t0) / static_cast<double>(iters * 8);
}

// One random cycle through all lines (Sattolo), so every chain visits every line once.
std::vector<std::uint32_t> random_cycle(std::size_t lines) {
  std::vector<std::uint32_t> next(lines);
  for (std::size_t i = 0; i < lines; ++i) next[i] = static_cast<std::uint32_t>(i);
  rng r(42);
  for (std::size_t i = lines - 1; i > 0; --i) std::swap(next[i], next[r.below(i)]);
  return next;
}

template <int Chains>
double chase_ns(const page_buffer& buf, std::size_t lines, std::size_t steps) {
  const auto* base = reinterpret_cast<const std::uint64_t*>(buf.data());
  std::uint64_t p[Chains];
  for (int c = 0; c < Chains; ++c) p[c] = static_cast<std::uint64_t>(c) * (lines / Chains);
  std::uint64_t t0 = now_ns();
  for (std::size_t s = 0; s < steps; ++s)
    for (int c = 0; c < Chains; ++c) p[c] = base[p[c] * (kLine / 8)];
  std::uint64_t t1 = now_ns();
  for (int c = 0; c < Chains; ++c) do_not_optimize(p[c]);
  return static_cast<double>(t1 - t0) / static_cast<double>(steps * Chains);
}

std::string read_first_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

std::string stats_json(const stats& s) {
  std::vector<std::string> xs;
  for (double x : s.samples) xs.push_back(json::num(x));
  return json::object({{"median", json::num(s.median)},
                       {"min", json::num(s.min)},
                       {"max", json::num(s.max)},
                       {"noisy", s.noisy ? "true" : "false"},
                       {"samples", json::array(xs)}});
}

}  // namespace

double measure_cycle_ns() {
  double best = add_chain_ns();
  for (int r = 1; r < 5; ++r) best = std::min(best, add_chain_ns());  // the least disturbed
  return best;
}

machine_limits probe_machine(const options& opts) {
  machine_limits m;
  m.cycle_ns = measure_cycle_ns();
  m.probe_bytes = opts.full() ? (std::size_t{1} << 30) : (std::size_t{256} << 20);
  int reps = opts.repetitions();

  {  // memcpy between the two halves of a buffer, counted once per byte copied; 4k and 2m alternate
    page_buffer small(m.probe_bytes, page_size::small), huge(m.probe_bytes, page_size::huge);
    std::vector<double> gib[2];
    page_buffer* bufs[2] = {&small, &huge};
    for (page_buffer* b : bufs) std::memset(b->data(), 1, b->size());
    for (int r = 0; r < reps; ++r) {
      for (int k = 0; k < 2; ++k) {
        std::byte* d = bufs[k]->data();
        std::size_t half = bufs[k]->size() / 2;
        std::uint64_t t0 = now_ns();
        std::memcpy(d + (r % 2 ? 0 : half), d + (r % 2 ? half : 0), half);
        clobber_memory();
        std::uint64_t t1 = now_ns();
        gib[k].push_back(static_cast<double>(half) / (1 << 30) /
                         (static_cast<double>(t1 - t0) * 1e-9));
      }
    }
    m.memcpy_4k_gib_s = summarize(gib[0]);
    m.memcpy_2m_gib_s = summarize(gib[1]);
  }

  std::size_t lines = m.probe_bytes / kLine;
  auto cycle = random_cycle(lines);
  page_buffer small(m.probe_bytes, page_size::small), huge(m.probe_bytes, page_size::huge);
  for (page_buffer* b : {&small, &huge}) {
    auto* base = reinterpret_cast<std::uint64_t*>(b->data());
    for (std::size_t i = 0; i < lines; ++i) base[i * (kLine / 8)] = cycle[i];
  }
  m.huge_bytes_2m = huge.huge_bytes();
  std::size_t steps = opts.full() ? 2'000'000 : 500'000;
  std::vector<double> s1, s16, h1, h16;
  for (int r = 0; r < reps; ++r) {  // interleaved: 4k and 2m alternate
    s1.push_back(chase_ns<1>(small, lines, steps));
    h1.push_back(chase_ns<1>(huge, lines, steps));
    s16.push_back(chase_ns<16>(small, lines, steps / 4));
    h16.push_back(chase_ns<16>(huge, lines, steps / 4));
  }
  m.latency_1chain_4k_ns = summarize(s1);
  m.latency_1chain_2m_ns = summarize(h1);
  m.latency_16chain_4k_ns = summarize(s16);
  m.latency_16chain_2m_ns = summarize(h16);
  return m;
}

std::string machine_json(const machine_limits& m) {
  return json::object({
      {"cycle_ns", json::num(m.cycle_ns)},
      {"ghz_estimate", json::num(m.cycle_ns > 0 ? 1.0 / m.cycle_ns : 0)},
      {"probe_bytes", json::num(static_cast<long long>(m.probe_bytes))},
      {"memcpy_gib_s", json::object({{"4k", stats_json(m.memcpy_4k_gib_s)},
                                     {"2m", stats_json(m.memcpy_2m_gib_s)}})},
      {"latency_ns", json::object({
                         {"4k", json::object({{"chains_1", stats_json(m.latency_1chain_4k_ns)},
                                              {"chains_16", stats_json(m.latency_16chain_4k_ns)}})},
                         {"2m", json::object({{"chains_1", stats_json(m.latency_1chain_2m_ns)},
                                              {"chains_16", stats_json(m.latency_16chain_2m_ns)}})},
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
    std::string level = read_first_line(dir + "level");
    if (level.empty()) break;
    caches.push_back(json::object({{"level", json::num(std::atoll(level.c_str()))},
                                   {"type", json::str(read_first_line(dir + "type"))},
                                   {"size", json::str(read_first_line(dir + "size"))}}));
  }
  utsname u{};
  uname(&u);
  const char* commit_env = std::getenv("SIMDEX_COMMIT");
  long long mem = static_cast<long long>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  return json::object({
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
      {"simdex_commit", json::str(commit_env && *commit_env ? commit_env : SIMDEX_GIT_COMMIT)},
      {"isa_detected", json::str(isa_name(detected_isa()))},
      {"isa_active", json::str(isa_name(active_isa()))},
      {"kernels", json::array(kernels)},
  });
}

}  // namespace simdex::bench
