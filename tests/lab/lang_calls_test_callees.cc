// Callees for lang_calls_test.cc, in a translation unit of their own so that the test's loops
// cannot see their bodies (as the lab's experiments cannot see exp_language_callees.cc).
#include "lang_calls_test_callees.h"

namespace lang_test {

SIMDEX_LAB_NOINLINE int called(int x) {
  SIMDEX_LAB_CALLED(kCalled);
  return x * 3 + 1;
}
SIMDEX_LAB_NOINLINE int other(int x) {
  SIMDEX_LAB_CALLED(kOther);
  return x * 5 + 2;
}

fn pointer_to(int k) {
  // Through a volatile: the caller cannot know which function it gets.
  static fn volatile table[2] = {&called, &other};
  return table[k & 1];
}

namespace {
struct impl final : base {
  int apply(int x) const override {
    SIMDEX_LAB_CALLED(kVirtual);
    return x + 7;
  }
};
struct impl2 final : base {
  int apply(int x) const override {
    SIMDEX_LAB_CALLED(kVirtual2);
    return x - 7;
  }
};
}  // namespace

std::unique_ptr<base> make_shape(int k) {
  if (k == 0) return std::make_unique<impl>();
  return std::make_unique<impl2>();
}

}  // namespace lang_test
