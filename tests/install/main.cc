#include <cstdio>

#include "simdex/cpu.h"
#include "simdex/primitives.h"
#if __has_include("simdex/bloom.h")
#include "simdex/bloom.h"
#endif

// The C++20 the headers need comes from simdex::simdex, not from this project.
static_assert(__cplusplus >= 202002L);

int main() {
  const std::uint8_t sorted[] = {1, 3, 5, 7, 9};
  std::size_t i = simdex::primitives::lower_bound(sorted, 5, 6);
  std::printf("installed simdex works: isa %s, lower_bound -> %zu\n",
              simdex::isa_name(simdex::active_isa()), i);
  bool ok = i == 3;
#if __has_include("simdex/bloom.h")
  // XXH64("", seed 0): xxHash is compiled into the library, so linking needs nothing else.
  const bool hash_ok = simdex::bloom::hash_bytes("", 0) == 0xef46db3751d8e999ull;
  std::printf("bloom hash_bytes(\"\") %s\n", hash_ok ? "matches XXH64" : "WRONG");
  ok = ok && hash_ok;
#endif
  return ok ? 0 : 1;
}
