#include "simdex/cpu.h"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace simdex {
namespace {

#define SIMDEX_ISA_NAME(id, name) name,
constexpr const char* kIsaNames[kIsaCount] = {SIMDEX_ISA_LEVELS(SIMDEX_ISA_NAME)};
#undef SIMDEX_ISA_NAME

// "scalar, sse4.2, ...": the accepted values, for the error message.
std::string level_list() {
  std::string s;
  for (const char* n : kIsaNames) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

struct regs {
  unsigned a = 0, b = 0, c = 0, d = 0;
};

regs cpuid(unsigned leaf, unsigned sub = 0) {
  regs r;
  __cpuid_count(leaf, sub, r.a, r.b, r.c, r.d);
  return r;
}

// xgetbv is read only after cpuid reports OSXSAVE, so this never faults.
std::uint64_t xgetbv0() {
  unsigned lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}

// Where each feature flag lives: cpuid leaf (subleaf 0), register, bit (Intel SDM vol. 2A,
// table 3-8 and leaf 7; AMD APM vol. 3, appendix E for 0x80000001).
struct feature_bit {
  bool cpu_features::*flag;
  unsigned leaf;
  unsigned regs::*reg;
  int bit;
};
constexpr unsigned regs::*kB = &regs::b;
constexpr unsigned regs::*kC = &regs::c;
constexpr unsigned regs::*kD = &regs::d;
constexpr feature_bit kFeatureBits[] = {
    {&cpu_features::sse2, 1, kD, 26},
    {&cpu_features::ssse3, 1, kC, 9},
    {&cpu_features::sse41, 1, kC, 19},
    {&cpu_features::sse42, 1, kC, 20},
    {&cpu_features::popcnt, 1, kC, 23},
    {&cpu_features::fma, 1, kC, 12},
    {&cpu_features::avx, 1, kC, 28},
    {&cpu_features::hypervisor, 1, kC, 31},
    {&cpu_features::bmi1, 7, kB, 3},
    {&cpu_features::avx2, 7, kB, 5},
    {&cpu_features::bmi2, 7, kB, 8},
    {&cpu_features::avx512f, 7, kB, 16},
    {&cpu_features::avx512dq, 7, kB, 17},
    {&cpu_features::avx512cd, 7, kB, 28},
    {&cpu_features::avx512bw, 7, kB, 30},
    {&cpu_features::avx512vl, 7, kB, 31},
    {&cpu_features::avx512vbmi, 7, kC, 1},
    {&cpu_features::avx512vbmi2, 7, kC, 6},
    {&cpu_features::lzcnt, 0x80000001u, kC, 5},
};

// The 12 (or 48) characters of a string cpuid returns in the listed registers, in order.
template <std::size_t N>
std::string cpuid_chars(const regs& r, const unsigned regs::*const (&order)[N]) {
  std::string s(4 * N, '\0');
  for (std::size_t i = 0; i < N; ++i) std::memcpy(s.data() + 4 * i, &(r.*order[i]), 4);
  return s;
}

cpu_features detect() {
  cpu_features f;
  const regs r0 = cpuid(0);
  constexpr const unsigned regs::*kVendorOrder[] = {&regs::b, &regs::d, &regs::c};
  f.vendor = cpuid_chars(r0, kVendorOrder);
  const unsigned max_ext = cpuid(0x80000000u).a;
  for (const feature_bit& fb : kFeatureBits) {
    const unsigned max = fb.leaf >= 0x80000000u ? max_ext : r0.a;
    if (fb.leaf <= max) f.*fb.flag = (cpuid(fb.leaf).*fb.reg >> fb.bit) & 1u;
  }
  // xgetbv is legal only when the OS enabled it (OSXSAVE, leaf 1 ecx bit 27).
  if ((cpuid(1).c >> 27) & 1u) {
    const std::uint64_t xcr0 = xgetbv0();
    f.os_avx = (xcr0 & 0x6) == 0x6;       // SSE + YMM
    f.os_avx512 = (xcr0 & 0xe6) == 0xe6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  }
  if (max_ext >= 0x80000004u) {
    constexpr const unsigned regs::*kBrandOrder[] = {&regs::a, &regs::b, &regs::c, &regs::d};
    std::string s;
    for (unsigned i = 0; i < 3; ++i) s += cpuid_chars(cpuid(0x80000002u + i), kBrandOrder);
    s.resize(std::strlen(s.c_str()));
    const std::size_t first = s.find_first_not_of(' ');
    const std::size_t last = s.find_last_not_of(' ');
    f.brand = first == std::string::npos ? "" : s.substr(first, last - first + 1);
  }
  return f;
}

isa highest(const cpu_features& f) {
  bool sse42 = f.sse2 && f.ssse3 && f.sse41 && f.sse42 && f.popcnt;
  bool avx2 = sse42 && f.os_avx && f.avx && f.avx2 && f.bmi1 && f.bmi2 && f.fma && f.lzcnt;
  bool avx512 =
      avx2 && f.os_avx512 && f.avx512f && f.avx512bw && f.avx512dq && f.avx512vl && f.avx512cd;
  bool vbmi = avx512 && f.avx512vbmi && f.avx512vbmi2;
  if (vbmi) return isa::avx512vbmi;
  if (avx512) return isa::avx512;
  if (avx2) return isa::avx2;
  if (sse42) return isa::sse42;
  return isa::scalar;
}

}  // namespace

isa resolve_isa(isa best, const char* env) {
  if (env == nullptr || *env == '\0') return best;
  auto cap = parse_isa(env);
  if (!cap) {
    throw std::invalid_argument(std::string("SIMDEX_ISA='") + env +
                                "' is not a level; use one of " + level_list());
  }
  return static_cast<int>(*cap) < static_cast<int>(best) ? *cap : best;
}

const char* isa_name(isa level) noexcept {
  int i = static_cast<int>(level);
  return (i >= 0 && i < kIsaCount) ? kIsaNames[i] : "unknown";
}

std::optional<isa> parse_isa(std::string_view name) noexcept {
  for (int i = 0; i < kIsaCount; ++i)
    if (name == kIsaNames[i]) return static_cast<isa>(i);
  if (name == "sse42") return isa::sse42;  // the spelling without the dot is common
  return std::nullopt;
}

std::vector<std::string> cpu_features::flag_names() const {
  std::vector<std::string> out;
  auto add = [&](bool on, const char* n) {
    if (on) out.emplace_back(n);
  };
  add(sse2, "sse2");
  add(ssse3, "ssse3");
  add(sse41, "sse4.1");
  add(sse42, "sse4.2");
  add(popcnt, "popcnt");
  add(avx, "avx");
  add(avx2, "avx2");
  add(bmi1, "bmi1");
  add(bmi2, "bmi2");
  add(fma, "fma");
  add(lzcnt, "lzcnt");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512dq, "avx512dq");
  add(avx512vl, "avx512vl");
  add(avx512cd, "avx512cd");
  add(avx512vbmi, "avx512vbmi");
  add(avx512vbmi2, "avx512vbmi2");
  add(os_avx, "os-avx");
  add(os_avx512, "os-avx512");
  add(hypervisor, "hypervisor");
  return out;
}

const cpu_features& features() noexcept {
  static const cpu_features f = detect();
  return f;
}

isa detected_isa() noexcept {
  static const isa level = highest(features());
  return level;
}

isa active_isa() {
  static const isa level = resolve_isa(
      detected_isa(), std::getenv("SIMDEX_ISA"));  // a throw leaves it unset; the next call retries
  return level;
}

bool isa_usable(isa level) { return static_cast<int>(level) <= static_cast<int>(active_isa()); }

}  // namespace simdex
