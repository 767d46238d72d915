// Page-backed memory with an explicit page size choice, for structures whose speed depends
// on TLB reach (btree arenas, large bloom filters, the machine probe). Part of the cpu
// component, the foundation every other one builds on: implemented in src/cpu/memory.cc.
#pragma once

#include <cstddef>
#include <string>

namespace simdex {

enum class page_size {
  small,  // 4 KiB pages: transparent huge pages refused for this range (MADV_NOHUGEPAGE)
  huge,   // 2 MiB transparent huge pages asked for (MADV_HUGEPAGE), 2 MiB-aligned
};

const char* page_size_name(page_size p) noexcept;  // "4k" / "2m"

// An anonymous mapping rounded up to 2 MiB, zero-filled, released on destruction.
class page_buffer {
 public:
  page_buffer() = default;
  page_buffer(std::size_t bytes, page_size pages);  // throws std::bad_alloc
  page_buffer(page_buffer&& other) noexcept;
  page_buffer& operator=(page_buffer&& other) noexcept;
  page_buffer(const page_buffer&) = delete;
  page_buffer& operator=(const page_buffer&) = delete;
  ~page_buffer();

  std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return size_; }
  page_size pages() const noexcept { return pages_; }

  // Bytes of this range the kernel currently backs with huge pages (reads /proc/self/smaps;
  // slow, for reporting only). Touch the memory first.
  std::size_t huge_bytes() const;

 private:
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  page_size pages_ = page_size::small;
};

// The system's THP policy: "always", "madvise", "never" or "unknown".
std::string thp_mode();

}  // namespace simdex
