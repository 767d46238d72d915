// Scalar reference kernels: one group at a time, exact overflow check in 64 bits.
#include "kernels.h"

namespace simdex::base85 {
namespace {
std::size_t encode_scalar(const std::uint8_t* in, std::size_t groups, char* out, const alphabet& a,
                          bool stop_zero, bool stop_spaces) {
  return encode_groups_scalar(in, groups, out, a, stop_zero, stop_spaces);
}
std::size_t decode_scalar(const char* in, std::size_t groups, std::uint8_t* out,
                          const alphabet& a) {
  return decode_groups_scalar(in, groups, out, a);
}
}  // namespace

const kernels kScalarKernels = {.encode = encode_scalar,
                                .decode = decode_scalar,
                                .compact = compact_scalar,
                                .copy_lines = copy_lines_by<move16>};

}  // namespace simdex::base85
