simdex_add_sources(DIR src/lab FILES timing.cc stats.cc chase.cc streams.cc counters.cc threads.cc
  validity.cc limits.cc branch.cc system.cc levels.cc files.cc)
# Concurrency and IPC: co-running and hand-off checks, litmus tests, kernel channels.
simdex_add_sources(DIR src/lab FILES concurrency.cc litmus.cc ipc.cc)
# The machine experiments: working sets capped by memory, a one-line ping-pong.
simdex_add_sources(DIR src/lab FILES machine.cc)
