#include "simdex/lab/system.h"

#include <cstdlib>
#include <fstream>

namespace simdex::lab {

std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

std::size_t parse_size(const std::string& text) {
  if (text.empty()) return 0;
  std::size_t n = std::strtoull(text.c_str(), nullptr, 10);
  switch (text.back()) {
    case 'K':
      return n << 10;
    case 'M':
      return n << 20;
    case 'G':
      return n << 30;
  }
  return n;
}

std::vector<cache_level> caches() {
  std::vector<cache_level> out;
  for (int i = 0; i < 16; ++i) {
    std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string level = first_line(dir + "level");
    if (level.empty()) break;
    cache_level c;
    c.level = std::atoi(level.c_str());
    c.type = first_line(dir + "type");
    c.bytes = parse_size(first_line(dir + "size"));
    c.ways = std::atoi(first_line(dir + "ways_of_associativity").c_str());
    c.line = std::atoi(first_line(dir + "coherency_line_size").c_str());
    out.push_back(c);
  }
  return out;
}

std::vector<cache_level> data_caches() {
  std::vector<cache_level> out;
  for (const auto& c : caches())
    if (c.type != "Instruction") out.push_back(c);
  return out;
}

std::size_t last_level_bytes(std::size_t fallback) {
  std::size_t best = 0;
  int level = 0;
  for (const auto& c : data_caches())
    if (c.level >= level) level = c.level, best = c.bytes;
  return best ? best : fallback;
}

}  // namespace simdex::lab
