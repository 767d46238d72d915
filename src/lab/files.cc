#include "files.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "format.h"
#include "simdex/lab/streams.h"

namespace simdex::lab {
namespace {

// Pages of [0, bytes) of the file in the page cache, from mincore on a mapping nobody touches;
// -1 when it cannot be read.
long resident_pages(int fd, std::size_t bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return -1;
  std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in((bytes + page - 1) / page);
  long n = -1;
  if (mincore(p, bytes, in.data()) == 0) {
    n = 0;
    for (unsigned char c : in) n += c & 1;
  }
  munmap(p, bytes);
  return n;
}

}  // namespace

check persisted(int fd, std::size_t bytes, std::uint64_t seed) {
  struct statfs fs {};
  const auto type = fstatfs(fd, &fs) == 0 ? static_cast<unsigned long>(fs.f_type) : 0ul;
  const bool in_memory = type == TMPFS_MAGIC || type == RAMFS_MAGIC;
  const std::size_t pages = bytes / static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  int advice = 0;
  long stayed = 0;
  if (!in_memory) {
    advice = posix_fadvise(fd, 0, static_cast<off_t>(bytes), POSIX_FADV_DONTNEED);
    stayed = advice ? -1 : resident_pages(fd, bytes);
  }
  // Read back before judging, so that a short file or a wrong word is named whatever the cache.
  constexpr std::size_t kChunk = std::size_t{1} << 20;
  std::vector<std::uint64_t> chunk(kChunk / 8);
  for (std::size_t off = 0; off < bytes; off += kChunk) {
    std::size_t n = std::min(kChunk, bytes - off);
    if (pread(fd, chunk.data(), n, static_cast<off_t>(off)) != static_cast<ssize_t>(n))
      return {"persisted", check_status::fail,
              format("the file could not be read back at byte %zu: ", off) + std::strerror(errno)};
    for (std::size_t j = 0; j < n / 8; ++j)
      if (chunk[j] != pattern_word(seed, off / 8 + j))
        return {"persisted", check_status::fail,
                format("after msync(MS_SYNC) the file does not hold what was written (byte %zu "
                       "differs)",
                       off + 8 * j)};
  }
  if (in_memory)
    return {"persisted", check_status::warn,
            "the file lives in memory (tmpfs): its pages are its storage, so reading it back "
            "proves only that the mapping's writes reached the file, not that msync wrote them"};
  if (advice || stayed < 0)
    return {"persisted", check_status::warn,
            std::string("the page cache could not be dropped or inspected (") +
                std::strerror(advice ? advice : errno) +
                "): the file was read back from the cache, which holds a mapping's writes "
                "without msync"};
  if (stayed > 0)
    return {"persisted", check_status::fail,
            format("after msync(MS_SYNC), %ld of %zu pages stayed in the page cache through "
                   "POSIX_FADV_DONTNEED, which drops only clean pages: they were not written back",
                   stayed, pages)};
  return {"persisted", check_status::pass,
          format("after msync(MS_SYNC) all %zu pages could be dropped from the page cache "
                 "(clean: written back; mincore shows none left), and the file read back from "
                 "storage holds every written word",
                 pages)};
}

}  // namespace simdex::lab
