// What the machine experiments share (bandwidth across threads, loaded latency, core-to-core):
// thread counts that double up to the CPUs, working sets sized from the caches and capped by
// memory, streaming in chunks with a heartbeat between them, and the verdict an experiment of
// no study gives once its checks passed.
#pragma once

#include <vector>

#include "concurrency_util.h"
#include "memory_util.h"
#include "simdex/lab/machine.h"

namespace simdex::lab_bench::machine {

using lab::format;
using mem::MiB;

// Between two heartbeats a streaming thread reads one chunk: 256 KiB is 10-30 us of DRAM
// bandwidth, far inside the heartbeat's 200 us window.
constexpr std::size_t kChunk = 256 * 1024;

// 1, 2, 4, ... up to `most`, and `most` itself.
inline std::vector<int> doubling(int most) {
  std::vector<int> out;
  for (int n = 1; n < most; n *= 2) out.push_back(n);
  if (most >= 1) out.push_back(most);
  return out;
}

// A streaming working set far beyond the last-level cache: 4x it, at least 256 MiB quick and
// 1 GiB full, at most a quarter of the memory available, in whole chunks per thread.
inline std::size_t stream_bytes(const trial& t, int threads) {
  std::size_t want = std::max(4 * lab::last_level_bytes(), t.quick() ? 256 * MiB : 1024 * MiB);
  return lab::capped_bytes(want, 0.25, kChunk * static_cast<std::size_t>(threads));
}

// Sum of the words of [p, p + bytes), a chunk at a time with a heartbeat after each.
inline std::uint64_t read_beating(const std::byte* p, std::size_t bytes, lab::heartbeat& hb,
                                  int me) {
  std::uint64_t s = 0;
  for (std::size_t off = 0; off < bytes; off += kChunk) {
    s += lab::sum_words(p + off, std::min(kChunk, bytes - off));
    hb.beat(me);
  }
  return s;
}

// "overlap" of the teams of several threads (team_book's rule: heartbeats, since these threads
// never block); with one allowed CPU there is no such team, and nothing had to overlap.
inline lab::check several_overlap(const conc::team_book& book,
                                  const std::vector<std::string>& labels) {
  if (labels.empty())
    return {"overlap", lab::check_status::pass,
            "one allowed CPU: every team was one thread, nothing had to run side by side"};
  return book.overlap(labels);
}

// placement, wall_clock, run_queue (every team, `alone` the one-thread ones) and overlap (the
// teams of several threads, by heartbeats), with the steal time noted.
inline void streaming_team_checks(trial& t, const conc::team_book& book,
                                  const std::vector<std::string>& several,
                                  std::vector<std::string> alone) {
  conc::ran_as_placed(t, book);
  alone.insert(alone.end(), several.begin(), several.end());
  t.add(book.run_queue(alone));
  t.add(several_overlap(book, several));
  t.note(book.steal());
}

// The verdict of an experiment that answers no study claim: its figure stands once every check
// passed (run_experiment judges only then).
inline verdict measured(std::string why) { return {verdict_kind::measured, std::move(why)}; }

}  // namespace simdex::lab_bench::machine
