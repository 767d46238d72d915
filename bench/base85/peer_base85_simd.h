// The base85-simd crate (Rust, crates.io) as a benchmark contender: a child process built from
// bench/peers/base85_simd that times encode/decode requests sent over a pipe, so its samples
// interleave with the C++ contenders. Its timings include allocating the output (its API).
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace simdex::bench::base85_peer {

// $SIMDEX_BASE85_SIMD_PEER, else simdex-peer-base85-simd beside this program (an installed
// package), else where this build's CMake put it; "" if none is there.
std::string find_program();

class rust_peer {
 public:
  // Starts the program at `path`; nullopt (with `why`) if it cannot run.
  static std::optional<rust_peer> start(const std::string& path, std::string& why);
  rust_peer(rust_peer&& o) noexcept;
  rust_peer(const rust_peer&) = delete;
  ~rust_peer();
  // Nanoseconds for `iters` operations on the peer's random input of `bytes` binary bytes
  // (same generator and seed as ours); -1 on failure.
  double run(const char* op, std::size_t bytes, std::uint64_t iters, std::uint64_t seed);

 private:
  rust_peer(std::FILE* to, std::FILE* from, int pid) : to_(to), from_(from), pid_(pid) {}
  std::FILE* to_ = nullptr;
  std::FILE* from_ = nullptr;
  int pid_ = -1;
};

}  // namespace simdex::bench::base85_peer
