// Primitives: ns per call at each ISA level, beside the scalar reference. Every call gets a
// different input (random array from an L1-sized pool, random key) and every result is
// consumed, so nothing can be hoisted out of the timing loop.
#include <cstring>
#include <vector>

#include "common/harness.h"
#include "primitives/kernels.h"

using namespace simdex;
using namespace simdex::bench;
using primitives::kernels;

namespace {

constexpr std::size_t kPool = 128;    // inputs per pool: 128 x 320 B stays in L1/L2
constexpr std::size_t kStride = 320;  // 256 bytes of data + 64 of readable padding

struct inputs {
  std::vector<std::uint8_t> bytes;  // kPool arrays of kStride bytes
  std::vector<std::uint32_t> pick;  // per call: pool index << 8 | key byte
};

inputs make_inputs(std::size_t calls, bool sorted, std::uint64_t seed) {
  rng r(seed);
  inputs in;
  in.bytes.resize(kPool * kStride);
  for (auto& b : in.bytes) b = static_cast<std::uint8_t>(r.next());
  if (sorted)
    for (std::size_t p = 0; p < kPool; ++p)
      std::sort(in.bytes.begin() + p * kStride, in.bytes.begin() + p * kStride + 256);
  in.pick.resize(calls);
  for (auto& x : in.pick) x = static_cast<std::uint32_t>((r.below(kPool) << 8) | r.below(256));
  return in;
}

template <class Call>
double ns_per_call(const inputs& in, Call&& call) {
  std::size_t acc = 0;
  std::uint64_t t0 = now_ns();
  for (std::uint32_t x : in.pick)
    acc += call(in.bytes.data() + (x >> 8) * kStride, static_cast<std::uint8_t>(x));
  std::uint64_t t1 = now_ns();
  do_not_optimize(acc);
  return static_cast<double>(t1 - t0) / static_cast<double>(in.pick.size());
}

// One contender per level that has its own table; the reference is "scalar".
template <class MakeCall>
std::vector<contender> per_level(const inputs& in, MakeCall&& make) {
  std::vector<contender> cs;
  add_levels(cs, primitives::kernel_tables(), "", [&](const kernels* t) {
    return [&in, call = make(*t)] { return ns_per_call(in, call); };
  });
  return cs;
}

}  // namespace

int main(int argc, char** argv) {
  session s(parse_options(argc, argv, "primitives"));
  const std::size_t calls = s.opts().quick() ? 200'000 : 2'000'000;
  const std::vector<std::size_t> sizes = {8, 16, 32, 64, 128, 256};
  s.plan(static_cast<int>(2 * sizes.size() + 4 + 1 + 1 + 2));
  s.note(
      "ns per call through the level's kernel table (an indirect call, as the public API "
      "makes); throughput of independent calls; cycle_ns in the machine section converts "
      "to cycles");

  inputs sorted = make_inputs(calls, true, 1), random = make_inputs(calls, false, 2);
  for (const char* w : {"lower_bound", "lower_bound_padded"}) {
    if (!s.opts().wants(w)) continue;
    bool padded = std::strcmp(w, "lower_bound_padded") == 0;
    for (std::size_t n : sizes) {
      auto cs = per_level(sorted, [n, padded](const kernels& t) {
        auto fn = padded ? t.lower_bound_padded : t.lower_bound;
        return [fn, n](const std::uint8_t* a, std::uint8_t k) { return fn(a, n, k); };
      });
      s.group(w, {{"n", static_cast<std::int64_t>(n)}}, "ns/call", better::lower, cs, "scalar");
    }
  }
  if (s.opts().wants("remap_branches")) {
    std::vector<std::uint8_t> out(256);
    for (std::size_t n : {16, 64, 128, 256}) {
      auto cs = per_level(random, [n, &out](const kernels& t) {
        auto fn = t.remap_branches;
        std::uint8_t* o = out.data();
        // The pool array doubles as the LUT (its last 16 bytes), so each call remaps differently.
        // The output is not read back: the call is opaque (through the table), so its stores
        // happen, and a read right after would time store forwarding instead of the kernel.
        return [fn, n, o](const std::uint8_t* a, std::uint8_t) {
          fn(a, o, n, a + 240);
          return n;
        };
      });
      s.group("remap_branches", {{"n", static_cast<std::int64_t>(n)}}, "ns/call", better::lower, cs,
              "scalar");
    }
  }
  if (s.opts().wants("rank_table")) {
    auto cs = per_level(random, [](const kernels& t) {
      auto fn = t.rank_table;
      return [fn](const std::uint8_t* a, std::uint8_t k) {
        std::uint8_t ranks[16];
        fn(a + (k & 0x3f), ranks);
        return static_cast<std::size_t>(ranks[15]);
      };
    });
    s.group("rank_table", {}, "ns/call", better::lower, cs, "scalar");
  }
  if (s.opts().wants("find_u32x16")) {
    auto cs = per_level(random, [](const kernels& t) {
      auto fn = t.find_u32x16;
      return [fn](const std::uint8_t* a, std::uint8_t k) {
        const auto* slots = reinterpret_cast<const std::uint32_t*>(a);
        std::uint32_t needle = slots[k & 15];  // present at a random slot, or absent past size
        return fn(slots, (k >> 4) + 1, needle);
      };
    });
    s.group("find_u32x16", {}, "ns/call", better::lower, cs, "scalar");
  }
  for (int n : {32, 64}) {
    std::string w = "find_min_index";
    if (!s.opts().wants(w)) continue;
    auto cs = per_level(random, [n](const kernels& t) {
      auto fn = n == 32 ? t.find_min_index_32 : t.find_min_index_64;
      return [fn](const std::uint8_t* a, std::uint8_t k) {
        return fn(reinterpret_cast<const std::uint16_t*>(a + (k & 0x3e)));
      };
    });
    s.group(w, {{"n", static_cast<std::int64_t>(n)}}, "ns/call", better::lower, cs, "scalar");
  }
  s.write();
}
