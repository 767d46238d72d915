// Helpers the kv test files share.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace kvt {

inline std::string tmp_path(const std::string& name) {
  const char* dir = std::getenv("TMPDIR");
  std::string p = dir ? dir : "/tmp";
  p += "/simdex_kv_";
  p += std::to_string(getpid());
  p += '_';
  p += name;
  std::remove(p.c_str());
  return p;
}

// "k" + std::to_string(n), written so GCC 12 does not misread it (-Wrestrict, PR 105651).
inline std::string numbered(const char* prefix, std::uint64_t n) {
  std::string s = prefix;
  s += std::to_string(n);
  return s;
}

}  // namespace kvt
