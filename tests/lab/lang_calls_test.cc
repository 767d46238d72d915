// The call-shape probe (bench/lab/lang_calls.h): it reports inlined bodies, direct calls and
// indirect calls for what they are, and the call_shape check fails when a loop does not make the
// call it claims: a "virtual" call the compiler devirtualised, a "noinline" body that was
// inlined, a call that never happened.
#include <gtest/gtest.h>

#include <cstring>

#include "lang_calls_test_callees.h"

namespace {

using namespace simdex::lab_bench::lang;
using namespace lang_test;
using simdex::lab::check_status;

[[gnu::always_inline]] inline int inlined(int x) {
  SIMDEX_LAB_INLINED(kInlined);
  return x * 3 + 1;
}

SIMDEX_LAB_NOINLINE int loop_inlined(int n) {
  SIMDEX_LAB_LOOP();
  int s = 0;
  for (int i = 0; i < n; ++i) s += inlined(i);
  return s;
}
SIMDEX_LAB_NOINLINE int loop_direct(int n) {
  SIMDEX_LAB_LOOP();
  int s = 0;
  for (int i = 0; i < n; ++i) s += called(i);
  return s;
}
SIMDEX_LAB_NOINLINE int loop_pointer(int n, fn f) {
  SIMDEX_LAB_LOOP();
  int s = 0;
  for (int i = 0; i < n; ++i) s += f(i);
  return s;
}
SIMDEX_LAB_NOINLINE int loop_pointers(int n, const fn* fs) {
  SIMDEX_LAB_LOOP();
  int s = 0;
  for (int i = 0; i < n; ++i) s += fs[i & 1](i);
  return s;
}
SIMDEX_LAB_NOINLINE int loop_virtual(int n, const base* const* objs) {
  SIMDEX_LAB_LOOP();
  int s = 0;
  for (int i = 0; i < n; ++i) s += objs[i & 1]->apply(i);
  return s;
}

// A class the loop knows to be final: the compiler may (and at -O2 does) call its override
// directly or inline it. Claimed as a virtual call, the check must say it was devirtualised.
struct leaf final : base {
  int apply(int x) const override {
    SIMDEX_LAB_INLINED(kLeaf);
    return x + 11;
  }
};
SIMDEX_LAB_NOINLINE int loop_leaf(int n, const leaf& l) {
  SIMDEX_LAB_LOOP();
  int s = 0;
  for (int i = 0; i < n; ++i) s += l.apply(i);
  return s;
}

template <class F>
observed probe_run(const std::vector<int>& slots, F&& once) {
  probe_on();
  int r = once();
  probe_off();
  EXPECT_NE(r, 12345);  // the result is used
  return observe(slots);
}

TEST(LabCallShape, InlinedBodySeesTheLoopsReturnAddress) {
  auto o = probe_run({kInlined}, [] { return loop_inlined(16); });
  EXPECT_EQ(o.s, shape::inlined) << o.how;
  EXPECT_EQ(call_shape("x", shape::inlined, o).status, check_status::pass);
}

TEST(LabCallShape, DirectCallIsCallRel32ToTheCallee) {
  probe.entry[kCalled] = reinterpret_cast<const void*>(&called);
  auto o = probe_run({kCalled}, [] { return loop_direct(16); });
  EXPECT_EQ(o.s, shape::direct) << o.how;
  EXPECT_NE(o.how.find("callee's address"), std::string::npos) << o.how;
  EXPECT_EQ(call_shape("x", shape::direct, o).status, check_status::pass);
  probe.entry[kCalled] = nullptr;
}

TEST(LabCallShape, CallThroughAnOpaquePointerIsIndirect) {
  fn f = pointer_to(0);
  auto o = probe_run({kCalled}, [&] { return loop_pointer(16, f); });
  EXPECT_EQ(o.s, shape::indirect) << o.how;
  EXPECT_EQ(call_shape("x", shape::indirect, o).status, check_status::pass);
}

TEST(LabCallShape, OneCallSiteReachingTwoCalleesIsIndirect) {
  fn fs[2] = {pointer_to(0), pointer_to(1)};
  auto o = probe_run({kCalled, kOther}, [&] { return loop_pointers(16, fs); });
  EXPECT_EQ(o.s, shape::indirect) << o.how;
  EXPECT_NE(o.how.find("2 different callees"), std::string::npos) << o.how;
  auto a = make_shape(0), b = make_shape(1);
  const base* objs[2] = {a.get(), b.get()};
  o = probe_run({kVirtual, kVirtual2}, [&] { return loop_virtual(16, objs); });
  EXPECT_EQ(o.s, shape::indirect) << o.how;
  EXPECT_EQ(call_shape("virtual", shape::indirect, o).status, check_status::pass);
}

// The deliberately broken variants.

TEST(LabCallShape, DevirtualisedVirtualCallFails) {
  leaf l;
  auto o = probe_run({kLeaf}, [&] { return loop_leaf(16, l); });
  EXPECT_NE(o.s, shape::indirect) << o.how;
  auto c = call_shape("virtual call on a final class", shape::indirect, o);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  EXPECT_NE(c.detail.find("devirtualised"), std::string::npos) << c.detail;
  // What a devirtualised call compiles to, whatever the optimisation level: a direct call, or
  // the body in the loop.
  o = probe_run({kCalled}, [] { return loop_direct(16); });
  c = call_shape("a direct call claimed virtual", shape::indirect, o);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  EXPECT_NE(c.detail.find("devirtualised"), std::string::npos) << c.detail;
  o = probe_run({kInlined}, [] { return loop_inlined(16); });
  c = call_shape("an inlined body claimed virtual", shape::indirect, o);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  EXPECT_NE(c.detail.find("devirtualised"), std::string::npos) << c.detail;
}

TEST(LabCallShape, InlinedNoinlineFails) {
  auto o = probe_run({kInlined}, [] { return loop_inlined(16); });
  auto c = call_shape("noinline", shape::direct, o);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  EXPECT_NE(c.detail.find("inlined"), std::string::npos) << c.detail;
}

TEST(LabCallShape, CalledBodyClaimedInlinedFails) {
  auto o = probe_run({kCalled}, [] { return loop_direct(16); });
  auto c = call_shape("template", shape::inlined, o);
  EXPECT_EQ(c.status, check_status::fail) << c.detail;
  EXPECT_NE(c.detail.find("did not inline"), std::string::npos) << c.detail;
}

TEST(LabCallShape, CalleeThatNeverRanFails) {
  auto o = probe_run({kOther}, [] { return loop_direct(16); });  // calls kCalled, not kOther
  EXPECT_EQ(o.s, shape::not_called) << o.how;
  EXPECT_EQ(call_shape("x", shape::direct, o).status, check_status::fail);
}

// The decoder on hand-made code bytes: what precedes a return address.
const void* after(const unsigned char* code, std::size_t n) { return code + n; }

TEST(LabCallShape, DecodesCallInstructions) {
  unsigned char buf[32] = {};
  // call rel32 to buf + 30 from an instruction ending at buf + 10: rel = 20.
  buf[5] = 0xE8;
  std::int32_t rel = 20;
  std::memcpy(buf + 6, &rel, 4);
  bool to_callee = false;
  EXPECT_EQ(call_before(after(buf, 10), buf + 30, &to_callee), shape::direct);
  EXPECT_TRUE(to_callee);
  EXPECT_EQ(call_before(after(buf, 10), buf + 31, &to_callee), shape::direct);
  EXPECT_FALSE(to_callee);  // a call rel32 elsewhere: a copy or thunk of the callee
  const unsigned char reg[] = {0x90, 0x90, 0x90, 0x90, 0x90, 0xFF, 0xD0};  // call *%rax
  EXPECT_EQ(call_before(after(reg, sizeof reg)), shape::indirect);
  const unsigned char rex[] = {0x90, 0x90, 0x90, 0x90, 0x41, 0xFF, 0xD5};  // call *%r13
  EXPECT_EQ(call_before(after(rex, sizeof rex)), shape::indirect);
  const unsigned char disp8[] = {0x90, 0x90, 0x90, 0x90, 0xFF, 0x50, 0x10};  // call *0x10(%rax)
  EXPECT_EQ(call_before(after(disp8, sizeof disp8)), shape::indirect);
  const unsigned char rip[] = {0x90, 0xFF, 0x15, 0x10, 0x20, 0x00, 0x00};  // call *x(%rip)
  EXPECT_EQ(call_before(after(rip, sizeof rip)), shape::indirect);
  const unsigned char sib[] = {0x90, 0x90, 0x90, 0xFF, 0x54, 0xC5, 0x08};  // call *8(%rbp,%rax,8)
  EXPECT_EQ(call_before(after(sib, sizeof sib)), shape::indirect);
  const unsigned char jmp[] = {0x90, 0x90, 0x90, 0x90, 0x90, 0xFF, 0xE0};  // jmp *%rax: no call
  EXPECT_EQ(call_before(after(jmp, sizeof jmp)), shape::unknown);
  const unsigned char nops[8] = {0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90};
  EXPECT_EQ(call_before(after(nops, sizeof nops)), shape::unknown);
}

}  // namespace
