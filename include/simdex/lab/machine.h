// What the machine experiments (bandwidth across threads, loaded latency, core-to-core latency)
// need beyond the lab's other kernels: how much memory the working sets may take, and a
// ping-pong transport that bounces exactly one cache line between two threads.
#pragma once

#include <immintrin.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace simdex::lab {

// MemAvailable from /proc/meminfo (what the kernel can hand out without swapping), in bytes;
// 0 when it cannot be read.
std::size_t available_memory_bytes();

// A working set of `want` bytes, at most `share` of the available memory (when that is known),
// rounded down to a multiple of `unit` and never below `unit`.
std::size_t capped_bytes(std::size_t want, double share, std::size_t unit);

// Two threads hand a value back and forth through one cache line: the value and whose turn it
// is share the line, so each hand-off moves that line and nothing else (Chips and Cheese's
// CoherencyLatency bounces one line the same way). send(to, v) gives the turn to `to`; recv(me)
// spins until the turn is `me`'s. Only strictly alternating hand-offs (a ping-pong): a sender
// never overwrites a value its peer has not read, since it sends only after its peer's answer.
class line_box {
 public:
  void send(int to, std::uint64_t v) {
    line_.value = v;
    line_.turn.store(to + 1, std::memory_order_release);
  }
  std::uint64_t recv(int me) {
    while (line_.turn.load(std::memory_order_acquire) != me + 1) _mm_pause();
    return line_.value;
  }

 private:
  struct alignas(64) shared_line {
    std::atomic<int> turn{0};  // 0: nobody's yet; k + 1: thread k's
    std::uint64_t value = 0;
  };
  shared_line line_;
};

}  // namespace simdex::lab
