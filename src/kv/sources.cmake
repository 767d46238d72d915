simdex_add_sources(DIR src/kv FILES store.cc tree.cc)
