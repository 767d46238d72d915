// Memory-order litmus tests on two pinned threads, judged against what the ISA allows.
//
// Message passing (MP): the writer stores data then flag; the reader loads flag then data.
// Seeing the flag but not the data is forbidden by x86-TSO (stores leave in order, loads are
// not reordered with loads) whatever the C++ order, unless the compiler reorders the stores.
// Store buffering (SB): each thread stores its variable then loads the other's. Both loading
// the old value is allowed by x86-TSO (a store waits in the store buffer while the later load
// goes ahead) for relaxed and acquire/release, and forbidden for seq_cst (the compiler fences
// the store).
//
// Each round both threads meet at a barrier, wait a random few cycles and run their part once;
// round r stores the value r + 1, so "saw the other's store" means "loaded r + 1" and nothing
// needs resetting. A harness whose threads never overlap shows only the outcomes of running one
// after the other, which proves nothing about reordering: every result carries the count of
// outcomes that only overlapping threads can produce (the race witness).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simdex/lab/threads.h"
#include "simdex/lab/validity.h"

namespace simdex::lab {

enum class litmus_test { message_passing, store_buffering };
enum class litmus_order { relaxed, acq_rel, seq_cst };
const char* litmus_name(litmus_test t);  // "MP", "SB"
const char* order_name(litmus_order o);  // "relaxed", "acquire/release", "seq_cst"

// Outcome index: bit 0 = the first observation, bit 1 = the second.
//   MP: bit 0 = reader saw the flag, bit 1 = reader saw the data.
//   SB: bit 0 = thread 0 saw thread 1's store, bit 1 = thread 1 saw thread 0's store.
struct litmus_outcomes {
  std::uint64_t counts[4] = {0, 0, 0, 0};
  std::uint64_t rounds = 0;
  litmus_outcomes& operator+=(const litmus_outcomes& o);
};

// The outcome x86-TSO forbids for this test and order, or -1 when it allows all four.
int tso_forbidden(litmus_test t, litmus_order o);
// Outcomes only threads that overlapped in time can produce (MP: data seen, flag not; SB: both
// saw the other, or neither did).
std::uint64_t race_witness(litmus_test t, const litmus_outcomes& r);

// How the harness runs, including deliberately broken ways the tests use to show that the
// checks catch them.
enum class litmus_schedule {
  racing,      // both threads start each round together
  serialized,  // thread 1 runs its part only after thread 0 finished: never races
};
struct litmus_options {
  litmus_schedule schedule = litmus_schedule::racing;
  bool writer_flag_first = false;  // MP writer stores flag before data: a compiler reordering
  int max_delay = 256;             // random spin before each part, in loop iterations
  std::uint64_t seed = 14;
  double budget_ns = 0;  // stop after this long (0: run every round); both threads stop together
  pin_function pin = pin_current_thread;
};

struct litmus_run {
  litmus_outcomes outcomes;
  team_report team;
};
// Runs up to `rounds` rounds on the two CPUs (the same CPU twice is allowed, and rarely races);
// outcomes.rounds says how many ran.
litmus_run run_litmus(litmus_test t, litmus_order o, std::uint64_t rounds,
                      const std::vector<int>& cpus, const litmus_options& opt = {});

// "raced": the outcomes include the race witness, so the harness did make the threads overlap.
check litmus_raced(const std::string& what, litmus_test t, const litmus_outcomes& r);
// "x86_tso": no outcome x86-TSO forbids was observed.
check litmus_allowed(const std::string& what, litmus_test t, litmus_order o,
                     const litmus_outcomes& r);

}  // namespace simdex::lab
