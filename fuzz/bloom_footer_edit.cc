// Fuzzes set_bloom_locations: any footer is edited or refused with parse_error, never read out
// of bounds; with no locations the output is the input; with a location per chunk the output
// parses, keeps every chunk's path, type and count, and holds exactly the locations written.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "simdex/bloom.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simdex::bloom;
  try {
    if (set_bloom_locations(data, size, {}) != std::vector<std::uint8_t>(data, data + size))
      __builtin_trap();
  } catch (const parse_error&) {
  }
  footer_info before;
  try {
    before = parse_file_metadata(data, size);
  } catch (const parse_error&) {
    return 0;
  }
  std::vector<bloom_location> locs;
  for (const auto& c : before.chunks) {
    bool seen = false;  // a malformed footer may list a chunk position twice
    for (const auto& l : locs) seen |= l.row_group == c.row_group && l.column == c.column;
    if (!seen) locs.push_back({c.row_group, c.column, 1000 + c.row_group, 40 + c.column});
  }
  std::vector<std::uint8_t> out;
  try {
    out = set_bloom_locations(data, size, locs);
  } catch (const parse_error&) {
    return 0;  // e.g. encrypted metadata, or a chunk without meta_data
  }
  footer_info after = parse_file_metadata(out.data(), out.size());
  if (after.chunks.size() != before.chunks.size()) __builtin_trap();
  for (std::size_t i = 0; i < after.chunks.size(); ++i) {
    const auto &a = before.chunks[i], &b = after.chunks[i];
    if (a.path != b.path || a.type != b.type || a.num_values != b.num_values ||
        b.bloom_offset != 1000 + b.row_group || b.bloom_length != 40 + b.column)
      __builtin_trap();
  }
  return 0;
}
