#include "simdex/lab/limits.h"

#include <cstring>

#include "simdex/lab/chase.h"
#include "simdex/lab/streams.h"
#include "simdex/lab/timing.h"
#include "timed_chase.h"

namespace simdex::lab {

memory_limits measure_memory_limits(std::size_t bytes, int reps, std::size_t steps) {
  memory_limits m;
  m.cycle_ns = cycle_ns();
  m.bytes = bytes;
  {  // memcpy between the halves of a buffer; 4k and 2m alternate
    page_buffer small(bytes, page_size::small), huge(bytes, page_size::huge);
    for (page_buffer* b : {&small, &huge}) std::memset(b->data(), 1, b->size());
    auto s = interleaved(reps, {[&, r = 0]() mutable { return memcpy_gib_s(small, r++); },
                                [&, r = 0]() mutable { return memcpy_gib_s(huge, r++); }});
    m.memcpy_4k = s[0];
    m.memcpy_2m = s[1];
  }
  chain small({.span = bytes, .pages = page_size::small});
  chain huge({.span = bytes, .pages = page_size::huge});
  m.huge_bytes_4k = small.buffer().huge_bytes();
  m.huge_bytes_2m = huge.buffer().huge_bytes();
  // Each sample walks on where the last one on its chain stopped: repeating the same lines
  // would find them cached.
  chain_cursor at_small(small), at_huge(huge);
  auto s = interleaved(
      reps, {[&] { return at_small.sample(1, steps); }, [&] { return at_huge.sample(1, steps); },
             [&] { return at_small.sample(16, steps / 4); },
             [&] { return at_huge.sample(16, steps / 4); }});
  m.latency_1_4k = s[0];
  m.latency_1_2m = s[1];
  m.latency_16_4k = s[2];
  m.latency_16_2m = s[3];
  return m;
}

}  // namespace simdex::lab
