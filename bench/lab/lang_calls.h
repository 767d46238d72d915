// Proof of a call's shape. A benchmark that claims to time a virtual call, a call through a
// function pointer or a call the compiler could not inline must show that the machine code does
// what it claims: compilers devirtualise, fold constant function pointers and inline freely.
//
// Every measured callee stores the return address it was called with: SIMDEX_LAB_CALLED(k) in a
// function meant to be called (an unconditional store: no branch that could change how the
// caller's branches are predicted), SIMDEX_LAB_INLINED(k) in a body meant to be inlined (a store
// only while the probe is switched on: the compiler hoists the test out of the loop and keeps a
// probe-free copy of the loop for the timed runs; inlining is decided before a loop is copied,
// so both copies make the same calls). Every loop that calls one is SIMDEX_LAB_NOINLINE and
// starts with SIMDEX_LAB_LOOP(), which stores the loop's own return address. After the timed
// runs the loop runs once more with the probe on, and the addresses say what the code did:
//   - the callee saw the loop's own return address: its body was inlined into the loop;
//   - the instruction before the return address is `call rel32` (E8) to the callee: a direct
//     call;
//   - it is `call r/m64` (FF /2), or one return address was seen by two different callees
//     (one call instruction that reached two targets can only be an indirect call): indirect.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "lab/enum_names.h"
#include "simdex/lab/validity.h"

#if defined(__GNUC__) && !defined(__clang__)
// noipa: besides not inlining, GCC may not clone, merge or specialise the function, nor assume
// anything about it from its body.
#define SIMDEX_LAB_NOINLINE __attribute__((noinline, noipa))
#else
#define SIMDEX_LAB_NOINLINE __attribute__((noinline))
#endif

namespace simdex::lab_bench::lang {

constexpr int kProbeSlots = 16;

struct call_probe {
  bool on = false;
  const void* loop = nullptr;           // the running loop's own return address
  const void* seen[kProbeSlots] = {};   // per callee: the return address it was called with
  const void* entry[kProbeSlots] = {};  // per callee: its address, where the caller knows it
};
inline call_probe probe;

}  // namespace simdex::lab_bench::lang

#define SIMDEX_LAB_LOOP() (::simdex::lab_bench::lang::probe.loop = __builtin_return_address(0))
#define SIMDEX_LAB_CALLED(k) \
  (::simdex::lab_bench::lang::probe.seen[k] = __builtin_return_address(0))
#define SIMDEX_LAB_INLINED(k)                                                 \
  do {                                                                        \
    if (__builtin_expect(::simdex::lab_bench::lang::probe.on, 0))             \
      ::simdex::lab_bench::lang::probe.seen[k] = __builtin_return_address(0); \
  } while (0)

namespace simdex::lab_bench::lang {

enum class shape { inlined, direct, indirect, not_called, unknown };

inline const char* shape_name(shape s) {
  return lab::enum_name(s, {"inlined", "direct call", "indirect call", "never reached", "unknown"});
}

// Clears what the last probe run saw and switches the probe on (off again with probe_off()).
inline void probe_on() {
  probe.loop = nullptr;
  for (auto& s : probe.seen) s = nullptr;
  probe.on = true;
}
inline void probe_off() { probe.on = false; }

// Length of an x86-64 ModRM operand (ModRM byte, SIB, displacement) starting at `m`.
inline int modrm_length(const unsigned char* m) {
  int mod = m[0] >> 6, rm = m[0] & 7;
  if (mod == 3) return 1;
  int len = 1;
  if (rm == 4) {  // a SIB byte follows; base 5 with mod 0 means a 32-bit displacement
    len += 1;
    if (mod == 0 && (m[1] & 7) == 5) len += 4;
  } else if (mod == 0 && rm == 5) {
    len += 4;  // rip-relative
  }
  if (mod == 1) len += 1;
  if (mod == 2) len += 4;
  return len;
}

// What the call instruction that returns to `ra` was: `call rel32` to `callee` (when known) is a
// direct call; `call r/m64` ending at `ra` an indirect one; `call rel32` elsewhere a direct
// call to a copy or thunk of the callee. Reads the caller's code bytes (text pages are readable).
inline shape call_before(const void* ra, const void* callee = nullptr, bool* to_callee = nullptr) {
  if (to_callee) *to_callee = false;
#if defined(__x86_64__)
  const auto* p = static_cast<const unsigned char*>(ra);
  bool rel32 = p[-5] == 0xE8;
  if (rel32 && callee != nullptr) {
    std::int32_t rel;
    std::memcpy(&rel, p - 4, 4);
    if (static_cast<const void*>(p + rel) == callee) {
      if (to_callee) *to_callee = true;
      return shape::direct;
    }
  }
  for (int len : {2, 3, 4, 6, 7}) {
    const unsigned char* q = p - len;
    if (q[0] == 0xFF && ((q[1] >> 3) & 7) == 2 && 1 + modrm_length(q + 1) == len)
      return shape::indirect;
  }
  return rel32 ? shape::direct : shape::unknown;
#else
  (void)ra;
  (void)callee;
  return shape::unknown;
#endif
}

// The shape of the calls from the loop to the callees in `slots`, from what the last probe run
// saw. `entry[k]` is callee k's address where the caller has it (nullptr otherwise).
struct observed {
  shape s = shape::unknown;
  std::string how;  // the evidence, for the check's detail
};

inline observed observe(const std::vector<int>& slots) {
  std::vector<const void*> ras;  // the distinct return addresses the callees saw
  int reached = 0, inlined = 0;
  for (int k : slots) {
    const void* ra = probe.seen[k];
    if (ra == nullptr) continue;
    ++reached;
    inlined += ra == probe.loop;
    if (std::find(ras.begin(), ras.end(), ra) == ras.end()) ras.push_back(ra);
  }
  if (reached == 0) return {shape::not_called, "no callee ran while the probe was on"};
  if (inlined == reached)
    return {shape::inlined,
            "the callee saw the loop's own return address: its body is in the loop"};
  if (inlined > 0)
    return {shape::unknown, "some callees were inlined into the loop and others called"};
  // One call instruction that reached several different callees: only an indirect call can.
  for (const void* ra : ras) {
    int targets = 0;
    for (int k : slots) targets += probe.seen[k] == ra;
    if (targets >= 2)
      return {shape::indirect,
              "one call instruction reached " + std::to_string(targets) + " different callees"};
  }
  std::vector<shape> each;
  for (int k : slots)
    if (probe.seen[k] != nullptr) each.push_back(call_before(probe.seen[k], probe.entry[k]));
  bool all_direct =
      std::all_of(each.begin(), each.end(), [](shape x) { return x == shape::direct; });
  if (ras.size() > 1)
    return all_direct ? observed{shape::direct,
                                 "each callee was reached from its own call rel32: the dispatch "
                                 "became tests and direct calls"}
                      : observed{shape::unknown, "each callee was reached from its own call"};
  if (each[0] == shape::direct) {
    int k = -1;
    for (int j : slots)
      if (probe.seen[j] != nullptr) k = j;
    bool to_callee = false;
    call_before(probe.seen[k], probe.entry[k], &to_callee);
    return {shape::direct, to_callee ? "the instruction before the return address is call rel32 "
                                       "to the callee's address"
                                     : "the instruction before the return address is call rel32"};
  }
  if (each[0] == shape::indirect)
    return {shape::indirect, "the instruction before the return address is call r/m64 (FF /2)"};
  return {shape::unknown,
          "the instruction before the return address is neither call rel32 nor call r/m64"};
}

// The check: `what` claims `want`; the probe saw `got`.
inline lab::check call_shape(const std::string& what, shape want, const observed& got) {
  lab::check c{"call_shape", lab::check_status::pass, ""};
  std::string claim = what + ": claimed " + shape_name(want) + ", ";
  if (got.s == want) {
    c.detail = claim + "confirmed (" + got.how + ")";
    return c;
  }
  c.status = lab::check_status::fail;
  std::string verdict = std::string("measured ") + shape_name(got.s) + " (" + got.how + ")";
  if (want == shape::indirect && (got.s == shape::inlined || got.s == shape::direct))
    verdict += ": the compiler devirtualised the call, so the figure is not an indirect call's";
  else if (want == shape::direct && got.s == shape::inlined)
    verdict += ": the compiler inlined the callee, so the figure is not a call's";
  else if (want == shape::inlined && got.s != shape::not_called)
    verdict += ": the compiler did not inline it, so the figure is a call's";
  c.detail = claim + verdict;
  return c;
}

}  // namespace simdex::lab_bench::lang
