// The tree's node arena: 2 MiB regions carved into pages and inner nodes, with free lists.
#include "simdex/btree/detail.h"

namespace simdex::btree_detail {

std::byte* arena::carve() {
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

std::byte* arena::alloc_page() { return free_pages_ ? pop(free_pages_) : carve(); }
void arena::free_page(std::byte* p) noexcept { push(free_pages_, p); }

std::byte* arena::alloc_inner() {
  static_assert(kPageBytes % kInnerBytes == 0);
  if (free_inners_ == nullptr) {
    std::byte* page = alloc_page();
    for (std::size_t off = kPageBytes; off > 0; off -= kInnerBytes)
      push(free_inners_, page + off - kInnerBytes);
  }
  return pop(free_inners_);
}
void arena::free_inner(std::byte* p) noexcept { push(free_inners_, p); }

void arena::release() noexcept {
  regions_.clear();
  used_in_last_ = kRegionBytes;
  free_pages_ = free_inners_ = nullptr;
}

std::size_t arena::huge_bytes() const {
  std::size_t n = 0;
  for (const page_buffer& r : regions_) n += r.huge_bytes();
  return n;
}

}  // namespace simdex::btree_detail
