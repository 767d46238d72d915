// A counting, page-backed allocator for the peers' nodes. Every contender's memory comes from
// page_buffer regions of the page size under test (4 KiB with THP refused, or 2 MiB THP), so
// "2m" and "4k" mean the same thing for std::set, Abseil, JudyL and simdex, and bytes per key
// is counted at the allocator (bytes handed out, not RSS).
#pragma once

#include <cstddef>
#include <memory>
#include <unordered_map>
#include <vector>

#include "simdex/memory.h"

namespace simdex::bench::btree {

class arena {
 public:
  explicit arena(page_size pages) : pages_(pages) {}
  ~arena() { reset(); }
  arena(const arena&) = delete;
  arena& operator=(const arena&) = delete;

  void* allocate(std::size_t bytes);  // 16-byte aligned; throws std::bad_alloc
  void deallocate(void* p, std::size_t bytes) noexcept;
  void reset();  // drops every region (all pointers die)

  std::size_t live_bytes() const { return live_; }  // handed out and not returned
  page_size pages() const { return pages_; }

 private:
  static constexpr std::size_t kGrain = 16;
  static constexpr std::size_t kSmallMax = 64 * 1024;  // larger blocks get their own mapping
  static std::size_t rounded(std::size_t bytes) { return (bytes + kGrain - 1) & ~(kGrain - 1); }
  void* carve(std::size_t bytes);

  page_size pages_;
  std::vector<page_buffer> chunks_;
  std::byte* cur_ = nullptr;
  std::byte* end_ = nullptr;
  std::vector<void*> free_ = std::vector<void*>(kSmallMax / kGrain + 1, nullptr);  // per size
  std::unordered_map<void*, page_buffer> large_;
  std::size_t live_ = 0;
};

// Stateful standard allocator over an arena (containers keep the pointer).
template <class T>
struct arena_alloc {
  using value_type = T;
  arena* a;
  explicit arena_alloc(arena* ar) noexcept : a(ar) {}
  template <class U>
  arena_alloc(const arena_alloc<U>& o) noexcept : a(o.a) {}
  T* allocate(std::size_t n) { return static_cast<T*>(a->allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { a->deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const arena_alloc<U>& o) const noexcept {
    return a == o.a;
  }
};

// Anonymous memory the kernel backs with huge pages in this whole process
// (/proc/self/smaps_rollup AnonHugePages); deltas around one build attribute it to a contender.
std::size_t process_huge_bytes();

}  // namespace simdex::bench::btree
