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

bool bit(unsigned v, int n) { return (v >> n) & 1u; }

cpu_features detect() {
  cpu_features f;
  regs r0 = cpuid(0);
  char vendor[13] = {};
  std::memcpy(vendor + 0, &r0.b, 4);
  std::memcpy(vendor + 4, &r0.d, 4);
  std::memcpy(vendor + 8, &r0.c, 4);
  f.vendor = vendor;
  unsigned max_leaf = r0.a;

  regs r1 = cpuid(1);
  f.sse2 = bit(r1.d, 26);
  f.ssse3 = bit(r1.c, 9);
  f.sse41 = bit(r1.c, 19);
  f.sse42 = bit(r1.c, 20);
  f.popcnt = bit(r1.c, 23);
  f.fma = bit(r1.c, 12);
  f.avx = bit(r1.c, 28);
  f.hypervisor = bit(r1.c, 31);
  bool osxsave = bit(r1.c, 27);
  if (osxsave) {
    std::uint64_t xcr0 = xgetbv0();
    f.os_avx = (xcr0 & 0x6) == 0x6;       // SSE + YMM
    f.os_avx512 = (xcr0 & 0xe6) == 0xe6;  // + opmask, ZMM_Hi256, Hi16_ZMM
  }
  if (max_leaf >= 7) {
    regs r7 = cpuid(7, 0);
    f.bmi1 = bit(r7.b, 3);
    f.avx2 = bit(r7.b, 5);
    f.bmi2 = bit(r7.b, 8);
    f.avx512f = bit(r7.b, 16);
    f.avx512dq = bit(r7.b, 17);
    f.avx512cd = bit(r7.b, 28);
    f.avx512bw = bit(r7.b, 30);
    f.avx512vl = bit(r7.b, 31);
    f.avx512vbmi = bit(r7.c, 1);
    f.avx512vbmi2 = bit(r7.c, 6);
  }
  regs e0 = cpuid(0x80000000u);
  if (e0.a >= 0x80000001u) f.lzcnt = bit(cpuid(0x80000001u).c, 5);
  if (e0.a >= 0x80000004u) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      regs r = cpuid(0x80000002u + i);
      std::memcpy(brand + 16 * i + 0, &r.a, 4);
      std::memcpy(brand + 16 * i + 4, &r.b, 4);
      std::memcpy(brand + 16 * i + 8, &r.c, 4);
      std::memcpy(brand + 16 * i + 12, &r.d, 4);
    }
    std::string s = brand;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    f.brand =
        s.substr(s.find_first_not_of(' ') == std::string::npos ? 0 : s.find_first_not_of(' '));
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
