// libFuzzer target: file bytes at open. A valid database file is built once; each input is a
// list of (offset, byte) patches over it, after which the meta pages' checksums are fixed up
// (when the input's first byte is odd) so damage past the checksum reaches the loader and the
// validator too. Bit 5 of the first byte opens the file read-only. Opening must either fail
// with kv::error or give a database whose validate() passes or throws kv::error; after a passing
// validate every read must work, and (writable) a commit must work and leave a database that
// still validates: docs/kv.md promises that validating first makes a file safe to write to.
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "simdex/kv.h"

namespace {

const std::string& base_file() {
  static const std::string bytes = [] {
    const std::string p = "/tmp/simdex_fuzz_kv_base_" + std::to_string(getpid());
    std::remove(p.c_str());
    {
      auto db = simdex::kv::database::open(p);
      for (int t = 0; t < 3; ++t) {
        auto tx = db.write(t == 2 ? "other" : "");
        for (int i = 0; i < 300; ++i)
          tx.put("key" + std::to_string(i * 7 + t), std::string(i % 3 == 0 ? 100 : i % 20, 'v'));
        if (t == 1)
          for (int i = 0; i < 100; ++i) tx.remove("key" + std::to_string(i * 7));
        tx.commit();
      }
    }
    std::ifstream f(p, std::ios::binary);
    std::string s((std::istreambuf_iterator<char>(f)), {});
    std::remove(p.c_str());
    // The file grows in 2 MiB steps; its zero tail past the last node only slows every input.
    // Cut it a page past the last non-zero byte (no node ends with more zeros than that).
    const std::size_t used = s.find_last_not_of('\0') + 1;
    s.resize(std::min(s.size(), (used + 2 * 4096 - 1) / 4096 * 4096));
    return s;
  }();
  return bytes;
}

// Checksum field: the last 8 bytes of the meta page struct (see store.cc's meta_page).
constexpr std::size_t kMetaStruct = 72 + 32 * 64;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string file = base_file();
  for (std::size_t i = 1; i + 3 <= size; i += 3) {
    const std::size_t off =
        (static_cast<std::size_t>(data[i]) << 8 | data[i + 1]) * 7 % file.size();
    file[off] = static_cast<char>(data[i + 2]);
  }
  if (size && (data[0] & 1)) {
    for (std::size_t page = 0; page < 2; ++page) {
      char* m = file.data() + page * 4096;
      const std::uint64_t sum = XXH3_64bits(m, kMetaStruct);
      std::memcpy(m + kMetaStruct, &sum, 8);
    }
  }
  if (size && (data[0] & 2)) file.resize(file.size() * data[0] / 256);
  const std::string p = "/tmp/simdex_fuzz_kv_" + std::to_string(getpid());
  {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f.write(file.data(), static_cast<std::streamsize>(file.size()));
  }
  const bool read_only = size && (data[0] & 32);
  bool validated = false;
  try {
    simdex::kv::options o;
    o.read_only = read_only;
    auto db = simdex::kv::database::open(p, o);
    db.validate();
    validated = true;
    for (const auto& t : db.trees()) {
      auto s = db.read(t);
      auto c = s.make_cursor();
      std::uint64_t n = 0;
      for (bool ok = c.first(); ok; ok = c.next(), ++n) (void)s.get(c.key());
      if (n != s.size()) __builtin_trap();
      (void)s.count("key1", std::string_view("key5"));
    }
    if (!read_only) {
      // Allocates from the loaded free space and frees nodes: damage that validate() let
      // through would show here as an overwritten live node.
      const auto trees = db.trees();
      auto tx = db.write(trees.empty() ? std::string() : trees.front());
      for (int i = 0; i < 60; ++i) tx.put("fz" + std::to_string(i), std::string(i * 3, 'w'));
      tx.remove_range("key1", std::string_view("key4"));
      tx.commit();
      db.validate();
    }
  } catch (const simdex::kv::error&) {
    if (validated) __builtin_trap();
  }
  std::remove(p.c_str());
  return 0;
}
