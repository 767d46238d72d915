// Interposes libJudy's allocator hooks: libJudy.so calls JudyMalloc/JudyFree through its PLT,
// so these definitions in the executable replace its malloc-backed ones.
#include "peers_judy.h"

#include <cstdlib>

namespace simdex::bench::btree {
arena* g_judy_arena = nullptr;
}

using simdex::bench::btree::g_judy_arena;

extern "C" {
Word_t JudyMalloc(Word_t words) {
  if (!g_judy_arena) return reinterpret_cast<Word_t>(std::malloc(words * sizeof(Word_t)));
  try {
    return reinterpret_cast<Word_t>(g_judy_arena->allocate(words * sizeof(Word_t)));
  } catch (...) {
    return 0;  // Judy reports JU_ERRNO_NOMEM
  }
}
void JudyFree(Pvoid_t p, Word_t words) {
  if (!g_judy_arena) return std::free(p);
  g_judy_arena->deallocate(p, words * sizeof(Word_t));
}
Word_t JudyMallocVirtual(Word_t words) { return JudyMalloc(words); }
void JudyFreeVirtual(Pvoid_t p, Word_t words) { JudyFree(p, words); }
}
