#include "peer_base85_simd.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cinttypes>
#include <cstdlib>
#include <utility>

namespace simdex::bench::base85_peer {

std::string find_program() {
  if (const char* env = std::getenv("SIMDEX_BASE85_SIMD_PEER")) return env;
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len > 0) {
    std::string dir(self, static_cast<std::size_t>(len));
    std::string beside = dir.substr(0, dir.rfind('/') + 1) + "simdex-peer-base85-simd";
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
#ifdef SIMDEX_BASE85_SIMD_PEER
  if (access(SIMDEX_BASE85_SIMD_PEER, X_OK) == 0) return SIMDEX_BASE85_SIMD_PEER;
#endif
  return "";
}

std::optional<rust_peer> rust_peer::start(const std::string& path, std::string& why) {
  if (path.empty() || access(path.c_str(), X_OK) != 0) {
    why = "base85-simd peer program not built (needs cargo): " + (path.empty() ? "no path" : path);
    return std::nullopt;
  }
  int down[2], up[2];
  if (pipe(down) != 0 || pipe(up) != 0) {
    why = "pipe() failed";
    return std::nullopt;
  }
  int pid = fork();
  if (pid < 0) {
    why = "fork() failed";
    return std::nullopt;
  }
  if (pid == 0) {
    dup2(down[0], 0);
    dup2(up[1], 1);
    close(down[0]), close(down[1]), close(up[0]), close(up[1]);
    execl(path.c_str(), path.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(down[0]), close(up[1]);
  return rust_peer(fdopen(down[1], "w"), fdopen(up[0], "r"), pid);
}

rust_peer::rust_peer(rust_peer&& o) noexcept
    : to_(std::exchange(o.to_, nullptr)),
      from_(std::exchange(o.from_, nullptr)),
      pid_(std::exchange(o.pid_, -1)) {}

rust_peer::~rust_peer() {
  if (to_) std::fclose(to_);  // EOF on its stdin ends the peer
  if (from_) std::fclose(from_);
  if (pid_ > 0) waitpid(pid_, nullptr, 0);
}

double rust_peer::run(const char* op, std::size_t bytes, std::uint64_t iters, std::uint64_t seed) {
  std::fprintf(to_, "%s %zu %" PRIu64 " %" PRIu64 "\n", op, bytes, iters, seed);
  std::fflush(to_);
  unsigned long long ns = 0, sum = 0;
  if (std::fscanf(from_, "%llu %llu", &ns, &sum) != 2) return -1;
  return static_cast<double>(ns);
}

}  // namespace simdex::bench::base85_peer
