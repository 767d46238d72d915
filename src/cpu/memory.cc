// simdex/memory.h: page buffers with a chosen page size (mmap + madvise), and what the
// kernel reports about them.
#include "simdex/memory.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <utility>

namespace simdex {
namespace {
constexpr std::size_t kHuge = std::size_t{2} << 20;
}

const char* page_size_name(page_size p) noexcept { return p == page_size::huge ? "2m" : "4k"; }

page_buffer::page_buffer(std::size_t bytes, page_size pages) : pages_(pages) {
  // Rounding up and the 2 MiB over-map below must not wrap around: a size near SIZE_MAX
  // would otherwise come back as a small buffer instead of failing.
  if (bytes > SIZE_MAX - 2 * kHuge) throw std::bad_alloc();
  size_ = (bytes + kHuge - 1) / kHuge * kHuge;
  if (size_ == 0) size_ = kHuge;
  // Over-map by 2 MiB and trim, so the range starts on a huge-page boundary.
  std::size_t span = size_ + kHuge;
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  auto base = reinterpret_cast<std::uintptr_t>(raw);
  std::uintptr_t aligned = (base + kHuge - 1) & ~(kHuge - 1);
  if (aligned > base) munmap(raw, aligned - base);
  std::size_t tail = (base + span) - (aligned + size_);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + size_), tail);
  data_ = reinterpret_cast<std::byte*>(aligned);
  madvise(data_, size_, pages == page_size::huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
}

page_buffer::page_buffer(page_buffer&& o) noexcept
    : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), pages_(o.pages_) {}

page_buffer& page_buffer::operator=(page_buffer&& o) noexcept {
  if (this != &o) {
    if (data_) munmap(data_, size_);
    data_ = std::exchange(o.data_, nullptr);
    size_ = std::exchange(o.size_, 0);
    pages_ = o.pages_;
  }
  return *this;
}

page_buffer::~page_buffer() {
  if (data_) munmap(data_, size_);
}

std::size_t page_buffer::huge_bytes() const {
  if (!data_) return 0;
  std::ifstream smaps("/proc/self/smaps");
  auto lo = reinterpret_cast<std::uintptr_t>(data_), hi = lo + size_;
  std::string line;
  bool inside = false;
  std::size_t total = 0;
  while (std::getline(smaps, line)) {
    unsigned long a, b;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &a, &b) == 2 && line.find(':') > line.find('-')) {
      inside = a < hi && b > lo;
      continue;
    }
    if (inside && line.rfind("AnonHugePages:", 0) == 0) {
      std::istringstream in(line.substr(14));
      std::size_t kb = 0;
      in >> kb;
      total += kb * 1024;
    }
  }
  return total;
}

std::string thp_mode() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s;
  if (!std::getline(f, s)) return "unknown";
  auto l = s.find('['), r = s.find(']');
  return (l == std::string::npos || r == std::string::npos) ? "unknown"
                                                            : s.substr(l + 1, r - l - 1);
}

}  // namespace simdex
