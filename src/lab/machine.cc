#include "simdex/lab/machine.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

namespace simdex::lab {

std::size_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("MemAvailable:", 0) != 0) continue;
    std::istringstream fields(line.substr(13));
    std::size_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

std::size_t capped_bytes(std::size_t want, double share, std::size_t unit) {
  std::size_t avail = available_memory_bytes();
  if (avail > 0)
    want = std::min(want, static_cast<std::size_t>(static_cast<double>(avail) * share));
  return std::max(unit, want / unit * unit);
}

}  // namespace simdex::lab
