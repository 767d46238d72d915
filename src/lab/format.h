// printf into a std::string: check details, notes and verdict reasons across the lab (src/lab
// and the experiments in bench/lab), written once.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

namespace simdex::lab {

[[gnu::format(printf, 1, 2)]] inline std::string format(const char* f, ...) {
  va_list ap, again;
  va_start(ap, f);
  va_copy(again, ap);
  int n = std::vsnprintf(nullptr, 0, f, ap);
  va_end(ap);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, f, again);
  va_end(again);
  return out;
}

}  // namespace simdex::lab
