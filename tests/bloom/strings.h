// Byte strings in Arrow's large_binary layout (data and int64 offsets), as the matchers take
// their keys; for the bloom tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct strings {
  std::vector<std::uint8_t> data;
  std::vector<std::int64_t> offsets{0};
  void add(const std::string& s) {
    data.insert(data.end(), s.begin(), s.end());
    offsets.push_back(static_cast<std::int64_t>(data.size()));
  }
  std::string at(std::size_t i) const {
    return std::string(data.begin() + offsets[i], data.begin() + offsets[i + 1]);
  }
};
