// The persisted check of mmap_write: reading a file back through the page cache proves nothing
// about msync (the cache holds a shared mapping's writes either way), so the check drops the
// cached pages first and reads from storage.
#include "lab/files.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "simdex/lab/streams.h"

namespace {

using namespace simdex::lab;

constexpr std::size_t kBytes = std::size_t{4} << 20;

// A file of kBytes written with pattern `seed` through a MAP_SHARED mapping, msync'ed or not,
// then unmapped; the name is gone, the descriptor open.
int written_file(std::uint64_t seed, bool sync) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "simdex-lab-test-XXXXXX").string();
  int fd = mkstemp(tmpl.data());
  if (fd < 0) return -1;
  unlink(tmpl.c_str());
  if (ftruncate(fd, kBytes) != 0) return -1;
  void* m = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (m == MAP_FAILED) return -1;
  fill_words(m, kBytes, seed);
  if (sync) msync(m, kBytes, MS_SYNC);
  munmap(m, kBytes);
  return fd;
}

bool temp_dir_in_memory() {
  struct statfs fs {};
  return statfs(std::filesystem::temp_directory_path().c_str(), &fs) == 0 &&
         (fs.f_type == 0x01021994 || fs.f_type == static_cast<decltype(fs.f_type)>(0x858458f6));
}

TEST(LabPersisted, PassesAfterMsync) {
  int fd = written_file(41, true);
  ASSERT_GE(fd, 0);
  auto k = persisted(fd, kBytes, 41);
  EXPECT_EQ(k.name, "persisted");
  EXPECT_EQ(k.status, temp_dir_in_memory() ? check_status::warn : check_status::pass) << k.detail;
  close(fd);
}

// The writes are in the page cache but were never written back: a read-back through the cache
// (what the check did) passed; dropping the cache first shows the pages are still dirty.
TEST(LabPersisted, DoesNotPassWithoutMsync) {
  int fd = written_file(42, false);
  ASSERT_GE(fd, 0);
  auto k = persisted(fd, kBytes, 42);
  EXPECT_NE(k.status, check_status::pass) << k.detail;
  if (!temp_dir_in_memory()) {
    EXPECT_EQ(k.status, check_status::fail);
    EXPECT_NE(k.detail.find("not written back"), std::string::npos) << k.detail;
  }
  close(fd);
}

TEST(LabPersisted, FailsWhenTheFileHoldsSomethingElse) {
  int fd = written_file(43, true);
  ASSERT_GE(fd, 0);
  auto k = persisted(fd, kBytes, 44);  // another seed than the one written
  EXPECT_EQ(k.status, check_status::fail);
  EXPECT_NE(k.detail.find("does not hold what was written"), std::string::npos) << k.detail;
  close(fd);
}

}  // namespace
