simdex_add_sources(DIR src/kv FILES alloc.cc check.cc read.cc store.cc write.cc)
