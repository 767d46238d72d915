#include <cstdio>

#include "simdex/cpu.h"
#include "simdex/primitives.h"

int main() {
  const std::uint8_t sorted[] = {1, 3, 5, 7, 9};
  std::size_t i = simdex::primitives::lower_bound(sorted, 5, 6);
  std::printf("installed simdex works: isa %s, lower_bound -> %zu\n",
              simdex::isa_name(simdex::active_isa()), i);
  return i == 3 ? 0 : 1;
}
