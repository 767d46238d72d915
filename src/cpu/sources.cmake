simdex_add_sources(DIR src/cpu FILES cpu.cc report.cc memory.cc)
