// Helpers the kv test files share.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "simdex/kv.h"

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

// The view holds exactly the model's pairs, walking forward and backward.
inline void expect_same(const simdex::kv::view& v, const std::map<std::string, std::string>& m) {
  ASSERT_EQ(v.size(), m.size());
  simdex::kv::cursor c = v.make_cursor();
  auto it = m.begin();
  for (bool ok = c.first(); ok; ok = c.next(), ++it) {
    ASSERT_NE(it, m.end());
    ASSERT_EQ(c.key(), it->first);
    ASSERT_EQ(c.value(), it->second);
  }
  ASSERT_EQ(it, m.end());
  auto rit = m.rbegin();
  for (bool ok = c.last(); ok; ok = c.prev(), ++rit) {
    ASSERT_NE(rit, m.rend());
    ASSERT_EQ(c.key(), rit->first);
  }
  ASSERT_EQ(rit, m.rend());
}

}  // namespace kvt
