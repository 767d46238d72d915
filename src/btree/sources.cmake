simdex_add_sources(DIR src/btree FILES arena.cc membership.cc tree.cc validate.cc dispatch.cc scalar.cc avx2.cc avx512.cc)
