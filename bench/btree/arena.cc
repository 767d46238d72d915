#include "arena.h"

#include <algorithm>
#include <fstream>
#include <new>
#include <string>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SIMDEX_ARENA_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SIMDEX_ARENA_ASAN 1
#endif
#ifdef SIMDEX_ARENA_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace simdex::bench::btree {

namespace {
constexpr std::size_t kFirstChunk = 4u << 20, kMaxChunk = 64u << 20;

// Under ASan: freed blocks are poisoned (use-after-free shows up), handed-out blocks are
// unpoisoned (containers such as Abseil's btree poison their own unused slots), and every
// region is unpoisoned before it is unmapped so that a later mapping at the same address
// starts clean.
#ifdef SIMDEX_ARENA_ASAN
void poison(void* p, std::size_t n) { ASAN_POISON_MEMORY_REGION(p, n); }
void unpoison(void* p, std::size_t n) { ASAN_UNPOISON_MEMORY_REGION(p, n); }
#else
void poison(void*, std::size_t) {}
void unpoison(void*, std::size_t) {}
#endif
}  // namespace

void* arena::carve(std::size_t bytes) {
  if (static_cast<std::size_t>(end_ - cur_) < bytes) {
    // Chunks grow geometrically so a 1M-key run maps little and a 64M-key run maps few regions.
    std::size_t size =
        chunks_.empty() ? kFirstChunk : std::min(kMaxChunk, chunks_.back().size() * 2);
    chunks_.emplace_back(size, pages_);
    cur_ = chunks_.back().data();
    end_ = cur_ + chunks_.back().size();
  }
  void* p = cur_;
  cur_ += bytes;
  return p;
}

void* arena::allocate(std::size_t bytes) {
  std::size_t r = rounded(bytes ? bytes : 1);
  live_ += r;
  if (r > kSmallMax) {
    page_buffer b(r, pages_);
    void* p = b.data();
    large_.emplace(p, std::move(b));
    return p;
  }
  void*& head = free_[r / kGrain];
  if (head) {
    void* p = head;
    unpoison(p, r);
    head = *static_cast<void**>(p);
    return p;
  }
  void* p = carve(r);
  unpoison(p, r);
  return p;
}

void arena::deallocate(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  std::size_t r = rounded(bytes ? bytes : 1);
  live_ -= r;
  if (r > kSmallMax) {
    unpoison(p, r);
    large_.erase(p);
    return;
  }
  unpoison(p, r);
  *static_cast<void**>(p) = free_[r / kGrain];
  free_[r / kGrain] = p;
  poison(static_cast<std::byte*>(p) + sizeof(void*), r - sizeof(void*));
}

void arena::reset() {
  for (auto& c : chunks_) unpoison(c.data(), c.size());
  for (auto& [p, b] : large_) unpoison(b.data(), b.size());
  chunks_.clear();
  large_.clear();
  cur_ = end_ = nullptr;
  std::fill(free_.begin(), free_.end(), nullptr);
  live_ = 0;
}

std::size_t process_huge_bytes() {
  std::ifstream f("/proc/self/smaps_rollup");
  std::string key;
  std::size_t kb = 0;
  while (f >> key) {
    if (key == "AnonHugePages:") {
      f >> kb;
      return kb * 1024;
    }
  }
  return 0;
}

}  // namespace simdex::bench::btree
