// CPU feature detection and the one dispatch mechanism every simdex kernel family uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simdex {

// The ISA levels, lowest first; each implies every level below it. X(identifier, name): the
// identifier names the enum value, the by_level slot and (in cmake/SimdexIsa.cmake) the files
// compiled for the level; the name is what SIMDEX_ISA accepts and `simdex info` prints. Every
// other list of levels derives from this one (cpu_test --levels prints them for scripts).
#define SIMDEX_ISA_LEVELS(X) \
  X(scalar, "scalar")        \
  X(sse42, "sse4.2")         \
  X(avx2, "avx2")            \
  X(avx512, "avx512")        \
  X(avx512vbmi, "avx512vbmi")

enum class isa : int {
#define SIMDEX_ISA_ENUM(id, name) id,
  SIMDEX_ISA_LEVELS(SIMDEX_ISA_ENUM)
#undef SIMDEX_ISA_ENUM
};
#define SIMDEX_ISA_COUNT(id, name) +1
inline constexpr int kIsaCount = 0 SIMDEX_ISA_LEVELS(SIMDEX_ISA_COUNT);
#undef SIMDEX_ISA_COUNT

// The names of SIMDEX_ISA_LEVELS: the spellings SIMDEX_ISA accepts ("sse42" is accepted too).
const char* isa_name(isa level) noexcept;
std::optional<isa> parse_isa(std::string_view name) noexcept;

struct cpu_features {
  std::string vendor;
  std::string brand;
  bool sse2 = false, ssse3 = false, sse41 = false, sse42 = false, popcnt = false;
  bool avx = false, avx2 = false, bmi1 = false, bmi2 = false, fma = false, lzcnt = false;
  bool avx512f = false, avx512bw = false, avx512dq = false, avx512vl = false, avx512cd = false;
  bool avx512vbmi = false, avx512vbmi2 = false;
  bool os_avx = false;     // XCR0 enables YMM state
  bool os_avx512 = false;  // XCR0 enables opmask + ZMM state
  bool hypervisor = false;
  std::vector<std::string> flag_names() const;  // the detected flags, lower-case
};

// Detected once per process (thread-safe static).
const cpu_features& features() noexcept;

// Highest level this CPU and OS support.
isa detected_isa() noexcept;

// The level the process uses: detected_isa() capped by SIMDEX_ISA. Throws
// std::invalid_argument naming the accepted values if SIMDEX_ISA is not one of them.
isa active_isa();

// The level a process with `detected` hardware runs under a SIMDEX_ISA value (nullptr or
// empty: no cap). Throws std::invalid_argument for an unknown value. active_isa() is this
// applied once to the real hardware and environment.
isa resolve_isa(isa detected, const char* simdex_isa_env);

// True when `level` can run here and is within the SIMDEX_ISA cap.
bool isa_usable(isa level);

namespace dispatch {

// A kernel family's tables by level; nullptr where a level has no variant of its own. Written
// with designated initializers, {.scalar = &kScalarKernels, .avx2 = &kAvx2Kernels}, so a slot
// cannot shift to another level.
template <class Table>
struct by_level {
#define SIMDEX_ISA_SLOT(id, name) const Table* id = nullptr;
  SIMDEX_ISA_LEVELS(SIMDEX_ISA_SLOT)
#undef SIMDEX_ISA_SLOT

  const Table* operator[](isa level) const noexcept {
#define SIMDEX_ISA_MEMBER(id, name) &by_level::id,
    static constexpr const Table* by_level::*kSlots[] = {SIMDEX_ISA_LEVELS(SIMDEX_ISA_MEMBER)};
#undef SIMDEX_ISA_MEMBER
    return this->*kSlots[static_cast<int>(level)];
  }
};

// Best variant at or below active_isa(); the scalar slot must be filled.
template <class Table>
struct choice {
  const Table* table;
  isa level;
};

template <class Table>
choice<Table> pick(const by_level<Table>& tables) {
  for (int l = static_cast<int>(active_isa()); l > 0; --l)
    if (const Table* t = tables[static_cast<isa>(l)]) return {t, static_cast<isa>(l)};
  return {tables.scalar, isa::scalar};
}

// The table of the family whose tables Tables() returns that this process runs: pick()ed on
// the first call, then kept (one static per family).
template <class Table, const by_level<Table>& (*Tables)()>
const Table& active() {
  static const Table* table = pick(Tables()).table;
  return *table;
}

// The level whose own table holds the entry `member` of the table pick() chooses: pick()'s
// level, or a lower one when that table reuses the lower level's kernel. `simdex info` reports
// it, so a reused kernel is not shown as one of its own.
template <class Table, class Entry>
isa home(const by_level<Table>& tables, Entry Table::*member) {
  const auto picked = pick(tables);
  for (int l = 0; l < static_cast<int>(picked.level); ++l)
    if (const Table* t = tables[static_cast<isa>(l)]; t && t->*member == picked.table->*member)
      return static_cast<isa>(l);
  return picked.level;
}

// Variant for exactly `level`, or nullptr if that level has none of its own or cannot run
// here. Tests use it to compare every level against scalar inside one process.
template <class Table>
const Table* exact(const by_level<Table>& tables, isa level) {
  return isa_usable(level) ? tables[level] : nullptr;
}

}  // namespace dispatch

// One line per kernel family: which level's variant this process runs.
struct kernel_choice {
  std::string family;
  isa level;
};
std::vector<kernel_choice> kernel_report();
// A component with kernel families (src/<component>/kernels.h) defines, in its dispatch.cc,
//   void <component>_kernel_report(std::vector<kernel_choice>& out);
// appending one row per family; kernel_report() calls every one of them.

}  // namespace simdex
