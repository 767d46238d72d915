// An enumerator's display name from a list of names in declaration order: the one place that
// answers "?" for a value past the list instead of reading out of bounds.
#pragma once

#include <cstddef>

namespace simdex::lab {

template <class E, std::size_t N>
constexpr const char* enum_name(E e, const char* const (&names)[N]) {
  auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : "?";
}

}  // namespace simdex::lab
