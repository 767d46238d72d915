// The callees of the language experiments. Their bodies live in exp_language_callees.cc, a
// translation unit of their own: the loops that call them cannot see the bodies, so only the
// calls the experiments claim (and prove, lang_calls.h) can happen.
#pragma once

#include <bit>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace simdex::lab_bench::lang {

// Probe slots (lang_calls.h), one per callee.
enum slot : int {
  kStep = 0,      // inlining: step()
  kApply,         // dispatch: apply()
  kApplyVirtual,  // dispatch: monomorphic virtual apply
  kShape0,        // dispatch: the four polymorphic implementations (function and virtual)
  kShape1,
  kShape2,
  kShape3,
  kMix,        // callables: mix()
  kParse,      // exceptions: parse_or_throw()
  kParseCode,  // exceptions: parse_or_code()
  kParseOr,    // exceptions: parse_or_empty()
  kOp0,        // variant vs virtual: the four operations
  kOp1,
  kOp2,
  kOp3,
};

// --- inlining ---------------------------------------------------------------------------------
// One step of a linear congruential generator with a random input mixed in (32-bit, so an
// inlined loop of them can be vectorised with SSE2).
inline std::uint32_t step_body(std::uint32_t x, std::uint32_t v) {
  return (x ^ v) * 1664525u + 1013904223u;
}
std::uint32_t step(std::uint32_t x, std::uint32_t v);  // step_body, never inlined
using step_fn = std::uint32_t (*)(std::uint32_t, std::uint32_t);
step_fn step_pointer();  // &step, through a call the compiler cannot see into

// --- dispatch
// -------------------------------------------------------------------------------------
struct payload {
  std::uint64_t x, y;
};
inline std::uint64_t apply_body(const payload& p) { return p.x * 3 + p.y * 7; }
std::uint64_t apply(const payload& p);
using apply_fn = std::uint64_t (*)(const payload&);
apply_fn apply_pointer();

struct applier {
  virtual ~applier() = default;
  virtual std::uint64_t apply(const payload& p) const = 0;
};
std::unique_ptr<applier> make_applier();  // apply_body behind a virtual call

// Four implementations (k = 0..3) as functions and as classes, for dispatch among several.
inline std::uint64_t shape_body(int k, const payload& p) {
  switch (k) {
    case 0:
      return p.x * 3 + p.y * 7;
    case 1:
      return p.x * 5 + p.y;
    case 2:
      return (p.x ^ p.y) * 9;
    default:
      return p.x + p.y * 11;
  }
}
apply_fn shape_pointer(int k);
std::unique_ptr<applier> make_shape(int k);

// --- callables
// ------------------------------------------------------------------------------------
inline std::uint64_t mix_body(std::uint64_t x) { return (x * 13) ^ (x >> 7); }
std::uint64_t mix(std::uint64_t x);
using mix_fn = std::uint64_t (*)(std::uint64_t);
mix_fn mix_pointer();
std::function<std::uint64_t(std::uint64_t)> mix_function();  // a lambda in a std::function

// --- exceptions
// ----------------------------------------------------------------------------------- 0 is the
// invalid input: parse_or_throw throws std::runtime_error, parse_or_code returns false,
// parse_or_empty returns an empty optional.
inline std::uint64_t parse_body(std::uint32_t v) { return static_cast<std::uint64_t>(v) * 3; }
std::uint64_t parse_or_throw(std::uint32_t v);
bool parse_or_code(std::uint32_t v, std::uint64_t* out);
std::optional<std::uint64_t> parse_or_empty(std::uint32_t v);

// --- variant vs virtual
// ------------------------------------------------------------------------------ Four operations on
// an accumulator, k = 0..3, with an operand.
inline std::uint64_t op_body(int k, std::uint64_t acc, std::uint64_t operand) {
  switch (k) {
    case 0:
      return acc + operand;
    case 1:
      return acc * (operand | 1);
    case 2:
      return acc ^ operand;
    default:
      return std::rotl(acc, static_cast<int>(operand & 31));
  }
}
struct operation {
  virtual ~operation() = default;
  virtual std::uint64_t apply(std::uint64_t acc) const = 0;
};
// Constructs operation k with `operand` at `where` (sizeof_operation() bytes, aligned to 16).
operation* construct_operation(void* where, int k, std::uint64_t operand);
std::size_t sizeof_operation();

// --- dynamic_cast vs tag ----------------------------------------------------------------------
// A tagged hierarchy: the tag says which class an object is. `added` is also derived from by a
// class only exp_language_callees.cc sees (`added_again`, tag kind::add), so a dynamic_cast to
// `added` must walk the hierarchy: no compiler can answer it from the tag or one vtable compare.
enum class kind : std::uint8_t { add, mul };
struct node {
  explicit node(kind k) : tag(k) {}
  virtual ~node() = default;
  kind tag;
};
struct added : node {
  explicit added(std::uint64_t v) : node(kind::add), value(v) {}
  std::uint64_t value;
};
struct multiplied : node {
  explicit multiplied(std::uint64_t v) : node(kind::mul), value(v) {}
  std::uint64_t value;
};
// k = 0: added, 1: multiplied, 2: the hidden class derived from added.
std::unique_ptr<node> make_node(int k, std::uint64_t value);

}  // namespace simdex::lab_bench::lang
