// The tree's node arena: 2 MiB regions carved into pages and inner nodes, with free lists.
#include <new>

#include "simdex/btree/detail.h"

namespace simdex::btree_detail {

namespace {
// Test hook countdown (arena::fail_nth_carve); 0 = off.
thread_local std::size_t carves_to_failure = 0;
}  // namespace

void arena::fail_nth_carve(std::size_t n) noexcept { carves_to_failure = n; }

// The failure hook counts carved pages, not mapped regions: a region holds 512 pages, so
// failing at region granularity would need ~10^5 keys per failure point and leave most edit
// shapes untested, while every carve is a point where a real mapping can fail (the first in a
// region). Carving is already off the reuse path (free-list pops never fail and pay nothing);
// the hook costs it one thread-local load and a predictable branch beside a fresh page's
// first touch.
std::byte* arena::carve() {
  if (carves_to_failure != 0 && --carves_to_failure == 0) throw std::bad_alloc();
  if (regions_.empty() || used_in_last_ + kPageBytes > kRegionBytes) {
    regions_.emplace_back(kRegionBytes, pages_);
    used_in_last_ = 0;
  }
  std::byte* p = regions_.back().data() + used_in_last_;
  used_in_last_ += kPageBytes;
  return p;
}

// Free nodes are chained through their first 8 bytes.
static std::byte* pop(std::byte*& head) noexcept {
  std::byte* p = head;
  std::memcpy(&head, p, sizeof(head));
  return p;
}
static void push(std::byte*& head, std::byte* p) noexcept {
  std::memcpy(p, &head, sizeof(head));
  head = p;
}

std::byte* arena::alloc_page() {
  if (free_pages_ == nullptr) return carve();
  --spare_pages_;
  return pop(free_pages_);
}
void arena::free_page(std::byte* p) noexcept {
  push(free_pages_, p);
  ++spare_pages_;
}

void arena::cut_page_into_inners() {
  static_assert(kPageBytes % kInnerBytes == 0);
  std::byte* page = alloc_page();
  for (std::size_t off = kPageBytes; off > 0; off -= kInnerBytes)
    push(free_inners_, page + off - kInnerBytes);
  spare_inners_ += kPageBytes / kInnerBytes;
}

std::byte* arena::alloc_inner() {
  if (free_inners_ == nullptr) cut_page_into_inners();
  --spare_inners_;
  return pop(free_inners_);
}
void arena::free_inner(std::byte* p) noexcept {
  push(free_inners_, p);
  ++spare_inners_;
}

// Inner nodes first: cutting a page into them may take a page off the free list. Each step
// leaves the arena consistent, so a throw midway only keeps what was already carved.
void arena::refill(std::size_t pages, std::size_t inners) {
  while (spare_inners_ < inners) cut_page_into_inners();
  while (spare_pages_ < pages) free_page(carve());
}

void arena::release() noexcept {
  regions_.clear();
  used_in_last_ = kRegionBytes;
  free_pages_ = free_inners_ = nullptr;
  spare_pages_ = spare_inners_ = 0;
}

std::size_t arena::huge_bytes() const {
  std::size_t n = 0;
  for (const page_buffer& r : regions_) n += r.huge_bytes();
  return n;
}

}  // namespace simdex::btree_detail
