#include "simdex/lab/branch.h"

namespace simdex::lab {

std::uint64_t branch_sum(const std::uint8_t* v, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i)
    asm("test %1, %1\n\t"
        "jz 1f\n\t"
        "add $3, %0\n\t"
        "jmp 2f\n"
        "1:\n\t"
        "add $1, %0\n"
        "2:"
        : "+r"(sum)
        : "r"(static_cast<std::uint32_t>(v[i]))
        : "cc");
  return sum;
}

std::uint64_t plain_sum(const std::uint8_t* v, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (v[i])
      sum += 3;
    else
      sum += 1;
  }
  return sum;
}

std::uint64_t branchless_sum(const std::uint8_t* v, std::size_t n) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += 1 + 2 * static_cast<std::uint64_t>(v[i] != 0);
  return sum;
}

}  // namespace simdex::lab
