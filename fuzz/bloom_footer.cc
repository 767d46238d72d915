// Fuzzes the Thrift-compact FileMetaData reader: any input parses or throws parse_error, never
// reads out of bounds, recurses without limit or allocates by an unchecked count.
#include <cstddef>
#include <cstdint>

#include "simdex/bloom.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simdex::bloom;
  try {
    footer_info info = parse_file_metadata(data, size);
    for (const auto& c : info.chunks)
      if (c.row_group < 0 || c.row_group >= info.num_row_groups) __builtin_trap();
  } catch (const parse_error&) {
  }
  return 0;
}
