// simdex_levels: prints, space-separated, the ISA levels this machine runs (scalar up to the
// detected one), for scripts that loop over levels without the Python package. --ids prints
// every level's identifier instead: the file-name stems that get that level's compiler flags.
#include <cstdio>
#include <cstring>
#include <utility>

#include "simdex/cpu.h"

int main(int argc, char** argv) {
  bool ids = argc == 2 && std::strcmp(argv[1], "--ids") == 0;
  if (argc > 2 || (argc == 2 && !ids)) {
    std::fprintf(stderr, "usage: simdex_levels [--ids]\n");
    return 2;
  }
  const char* sep = "";
  if (ids) {
#define SIMDEX_PRINT_ID(id, name) std::printf("%s%s", std::exchange(sep, " "), #id);
    SIMDEX_ISA_LEVELS(SIMDEX_PRINT_ID)
#undef SIMDEX_PRINT_ID
  } else {
    for (int l = 0; l <= static_cast<int>(simdex::detected_isa()); ++l)
      std::printf("%s%s", std::exchange(sep, " "), simdex::isa_name(static_cast<simdex::isa>(l)));
  }
  std::printf("\n");
  return 0;
}
