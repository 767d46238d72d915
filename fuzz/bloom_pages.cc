// Fuzzes the column-chunk page walker: the input's first byte picks the row count and whether
// rows may be null, the rest is read as a chunk's pages (headers, dictionary, V1/V2 data pages)
// and matched against two keys. Anything is refused with parse_error or answered with one entry
// per row, never read past.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "simdex/bloom.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace simdex::bloom;
  if (size < 1) return 0;
  const std::size_t rows = data[0] >> 1;
  const int max_def = data[0] & 1;
  ++data;
  --size;
  static const std::uint8_t key_data[] = {'1', '7', 'a'};
  static const std::int64_t key_offsets[] = {0, 2, 3};
  try {
    page_matcher m(key_data, sizeof(key_data), key_offsets, 2, max_def);
    for (const page_header& h : parse_page_headers(data, size, rows)) {
      const std::uint8_t* body = data + h.body;
      if (h.kind == kPageDictionary)
        m.dictionary(h, body, h.compressed);
      else if (h.kind == kPageData)
        m.data_page_v1(h, body, h.compressed);
      else if (h.kind == kPageDataV2)
        m.data_page_v2(h, body + h.level_bytes - h.def_bytes, h.def_bytes, body + h.level_bytes,
                       h.compressed - h.level_bytes);
    }
    std::size_t hits = 0;
    for (std::int32_t k : m.rows()) {
      if (k < -1 || k > 1) __builtin_trap();
      hits += k >= 0;
    }
    if (m.rows().size() != rows || hits != m.hits()) __builtin_trap();
  } catch (const parse_error&) {
  }
  return 0;
}
