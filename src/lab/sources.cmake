simdex_add_sources(DIR src/lab FILES timing.cc stats.cc chase.cc streams.cc counters.cc threads.cc
  validity.cc limits.cc branch.cc system.cc)
