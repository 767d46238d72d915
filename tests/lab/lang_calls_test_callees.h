// The callees lang_calls_test.cc calls across a translation-unit boundary.
#pragma once

#include <memory>

#include "../../bench/lab/lang_calls.h"

namespace lang_test {

enum slot : int { kCalled = 0, kOther, kVirtual, kVirtual2, kInlined, kLeaf };

int called(int x);  // never inlined
int other(int x);
using fn = int (*)(int);
fn pointer_to(int k);  // &called or &other, opaque to the caller

struct base {
  virtual ~base() = default;
  virtual int apply(int x) const = 0;
};
std::unique_ptr<base> make_shape(int k);  // two implementations the caller cannot see

}  // namespace lang_test
