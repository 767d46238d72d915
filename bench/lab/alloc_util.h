// What the allocator experiments share: the study's node, the pools it compared, and one pass
// of the study's shape (allocate n blocks, write each, then read each back and free it in
// allocation order) that proves every block was real, separate memory.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "lang_checks.h"

namespace simdex::lab_bench::alloc {

// The study's node: a 64-byte payload aligned to 64 and a link, 128 bytes in all.
struct node {
  alignas(64) std::uint64_t words[15];
  node* next;
};
static_assert(sizeof(node) == 128 && alignof(node) == 64);

// A free list over nodes made up front (the study's "arena pool").
class free_list {
 public:
  explicit free_list(std::size_t n) : storage_(n) {
    for (auto& x : storage_) release(&x);
  }
  node* take() {
    node* x = head_;
    if (x) head_ = x->next;
    return x;
  }
  void release(node* x) {
    x->next = head_;
    head_ = x;
  }

 private:
  std::vector<node> storage_;
  node* head_ = nullptr;
};

// The study's locked pool: one free list shared by all threads behind a mutex.
class locked_pool {
 public:
  explicit locked_pool(std::size_t n) : list_(n) {}
  node* take() {
    std::lock_guard<std::mutex> g(m_);
    return list_.take();
  }
  void release(node* x) {
    std::lock_guard<std::mutex> g(m_);
    list_.release(x);
  }

 private:
  free_list list_;
  std::mutex m_;
};

// The pattern a pass writes into block i: its first and last words.
constexpr std::uint64_t kPatternMul = 0x9e3779b97f4a7c15ull;
inline std::uint64_t pattern_sum(std::uint64_t seed, std::size_t n) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < n; ++i) s += (seed + i) + 3 * ((seed + i) * kPatternMul);
  return s;
}

// One pass: alloc(i) n times (block i of bytes(i) bytes), the pattern written into each, then
// each block read back and free(p, i) in allocation order. Returns the sum of what was read;
// pattern_sum(seed, n) when every block kept what was written into it.
template <class Bytes, class Alloc, class Free>
std::uint64_t pass(std::size_t n, std::uint64_t seed, std::vector<void*>& slots, Bytes&& bytes,
                   Alloc&& alloc, Free&& release) {
  for (std::size_t i = 0; i < n; ++i) {
    void* p = alloc(i);
    auto* w = static_cast<std::uint64_t*>(p);
    w[0] = seed + i;
    w[bytes(i) / 8 - 1] = (seed + i) * kPatternMul;
    slots[i] = p;
  }
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto* w = static_cast<const std::uint64_t*>(slots[i]);
    sum += w[0] + 3 * w[bytes(i) / 8 - 1];
    release(slots[i], i);
  }
  return sum;
}

// The blocks one pass holds live at once, for blocks_valid (allocated, recorded, then freed).
template <class Bytes, class Alloc, class Free>
std::vector<lang::block> live_blocks(std::size_t n, Bytes&& bytes, Alloc&& alloc, Free&& release) {
  std::vector<lang::block> out;
  std::vector<void*> ps;
  for (std::size_t i = 0; i < n; ++i) {
    ps.push_back(alloc(i));
    out.push_back({ps.back(), bytes(i)});
  }
  for (std::size_t i = 0; i < n; ++i) release(ps[i], i);
  return out;
}

}  // namespace simdex::lab_bench::alloc
