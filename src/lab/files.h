// What a write through a shared file mapping left in the file (bench_lab's mmap_write). Internal
// to the lab.
#pragma once

#include <cstddef>
#include <cstdint>

#include "simdex/lab/validity.h"

namespace simdex::lab {

// Check "persisted", for a file whose first `bytes` were written as pattern_word(seed, i)
// through a MAP_SHARED mapping, then msync(MS_SYNC) and munmap. Reading the file back alone
// proves nothing: the page cache holds a mapping's writes whether msync ran or not. So the
// file's pages are dropped first (POSIX_FADV_DONTNEED drops only clean, unmapped pages),
// mincore counts those that stayed, and pread then reads from storage. Fails when a page stayed
// (dirty: msync did not write it back) or a word read back differs; warns where the file lives
// in memory (tmpfs, ramfs: there is no storage below the page cache). The read leaves the file
// cached again.
check persisted(int fd, std::size_t bytes, std::uint64_t seed);

}  // namespace simdex::lab
