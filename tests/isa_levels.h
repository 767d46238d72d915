// Helpers for differential tests: every level this process may run, beside scalar.
#pragma once

#include <string>
#include <vector>

#include "simdex/cpu.h"

namespace simdex::testing {

// Levels at or below the active one that have a table of their own.
template <class Table>
std::vector<std::pair<isa, const Table*>> usable_levels(const dispatch::by_level<Table>& tables) {
  std::vector<std::pair<isa, const Table*>> out;
  for (int l = 0; l < kIsaCount; ++l)
    if (const Table* t = dispatch::exact(tables, static_cast<isa>(l)))
      out.emplace_back(static_cast<isa>(l), t);
  return out;
}

}  // namespace simdex::testing
