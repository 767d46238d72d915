// Branch kernels: the same sum written three ways, to tell a real branch from one the compiler
// removed. Each adds 3 for a nonzero byte and 1 for a zero byte.
#pragma once

#include <cstddef>
#include <cstdint>

namespace simdex::lab {

// A conditional jump per byte, written in asm: no compiler can turn it into a select.
std::uint64_t branch_sum(const std::uint8_t* v, std::size_t n);
// `if (v[i]) sum += 3; else sum += 1;` as C++ (what the study measured): compilers at -O2/-O3
// usually make it branch-free or vectorize it.
std::uint64_t plain_sum(const std::uint8_t* v, std::size_t n);
// Arithmetic only (1 + 2 * (v != 0)): never a branch on the data.
std::uint64_t branchless_sum(const std::uint8_t* v, std::size_t n);

}  // namespace simdex::lab
