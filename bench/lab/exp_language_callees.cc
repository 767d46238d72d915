// The callees of the language experiments, in a translation unit of their own (lang_callees.h).
// Registers no experiment. Each callee marks itself for the call-shape probe (lang_calls.h).
#include <new>
#include <stdexcept>

#include "lang_callees.h"
#include "lang_calls.h"

namespace simdex::lab_bench::lang {

SIMDEX_LAB_NOINLINE std::uint32_t step(std::uint32_t x, std::uint32_t v) {
  SIMDEX_LAB_CALLED(kStep);
  return step_body(x, v);
}
step_fn step_pointer() { return &step; }

SIMDEX_LAB_NOINLINE std::uint64_t apply(const payload& p) {
  SIMDEX_LAB_CALLED(kApply);
  return apply_body(p);
}
apply_fn apply_pointer() { return &apply; }

namespace {

struct virtual_applier final : applier {
  std::uint64_t apply(const payload& p) const override {
    SIMDEX_LAB_CALLED(kApplyVirtual);
    return apply_body(p);
  }
};

template <int K>
std::uint64_t shape_function(const payload& p) {
  SIMDEX_LAB_CALLED(kShape0 + K);
  return shape_body(K, p);
}

template <int K>
struct shape_applier final : applier {
  std::uint64_t apply(const payload& p) const override {
    SIMDEX_LAB_CALLED(kShape0 + K);
    return shape_body(K, p);
  }
};

template <int K>
struct operation_k final : operation {
  explicit operation_k(std::uint64_t v) : operand(v) {}
  std::uint64_t apply(std::uint64_t acc) const override {
    SIMDEX_LAB_CALLED(kOp0 + K);
    return op_body(K, acc, operand);
  }
  std::uint64_t operand;
};
static_assert(sizeof(operation_k<0>) == 16 && alignof(operation_k<0>) <= 16);

struct added_again final : added {
  explicit added_again(std::uint64_t v) : added(v) {}
};

}  // namespace

std::unique_ptr<applier> make_applier() { return std::make_unique<virtual_applier>(); }

apply_fn shape_pointer(int k) {
  static constexpr apply_fn fns[] = {&shape_function<0>, &shape_function<1>, &shape_function<2>,
                                     &shape_function<3>};
  return fns[k & 3];
}

std::unique_ptr<applier> make_shape(int k) {
  switch (k & 3) {
    case 0:
      return std::make_unique<shape_applier<0>>();
    case 1:
      return std::make_unique<shape_applier<1>>();
    case 2:
      return std::make_unique<shape_applier<2>>();
    default:
      return std::make_unique<shape_applier<3>>();
  }
}

SIMDEX_LAB_NOINLINE std::uint64_t mix(std::uint64_t x) {
  SIMDEX_LAB_CALLED(kMix);
  return mix_body(x);
}
mix_fn mix_pointer() { return &mix; }

std::function<std::uint64_t(std::uint64_t)> mix_function() {
  return [](std::uint64_t x) {
    SIMDEX_LAB_CALLED(kMix);
    return mix_body(x);
  };
}

SIMDEX_LAB_NOINLINE std::uint64_t parse_or_throw(std::uint32_t v) {
  SIMDEX_LAB_CALLED(kParse);
  if (v == 0) throw std::runtime_error("invalid input 0");
  return parse_body(v);
}

SIMDEX_LAB_NOINLINE bool parse_or_code(std::uint32_t v, std::uint64_t* out) {
  SIMDEX_LAB_CALLED(kParseCode);
  if (v == 0) return false;
  *out = parse_body(v);
  return true;
}

SIMDEX_LAB_NOINLINE std::optional<std::uint64_t> parse_or_empty(std::uint32_t v) {
  SIMDEX_LAB_CALLED(kParseOr);
  if (v == 0) return std::nullopt;
  return parse_body(v);
}

operation* construct_operation(void* where, int k, std::uint64_t operand) {
  switch (k & 3) {
    case 0:
      return new (where) operation_k<0>(operand);
    case 1:
      return new (where) operation_k<1>(operand);
    case 2:
      return new (where) operation_k<2>(operand);
    default:
      return new (where) operation_k<3>(operand);
  }
}
std::size_t sizeof_operation() { return sizeof(operation_k<0>); }

std::unique_ptr<node> make_node(int k, std::uint64_t value) {
  if (k == 0) return std::make_unique<added>(value);
  if (k == 1) return std::make_unique<multiplied>(value);
  return std::make_unique<added_again>(value);
}

}  // namespace simdex::lab_bench::lang
