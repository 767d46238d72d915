simdex_add_sources(DIR src/kv FILES alloc.cc store.cc tree.cc)
