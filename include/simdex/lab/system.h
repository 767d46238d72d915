// What the kernel says about this machine: sysfs and procfs lines, cache geometry.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace simdex::lab {

// The first line of a file, "" when it cannot be read.
std::string first_line(const std::string& path);

// "48K" / "32768K" / "1M" / "123" -> bytes.
std::size_t parse_size(const std::string& text);

struct cache_level {
  int level = 0;
  std::string type;  // "Data", "Unified", "Instruction"
  std::size_t bytes = 0;
  int ways = 0;  // 0 when unknown
  int line = 0;
};
// cpu0's caches from /sys/devices/system/cpu/cpu0/cache, in sysfs order.
std::vector<cache_level> caches();
// Data and unified caches only; the last level's size, or `fallback` when sysfs has none.
std::vector<cache_level> data_caches();
std::size_t last_level_bytes(std::size_t fallback = std::size_t{32} << 20);

}  // namespace simdex::lab
