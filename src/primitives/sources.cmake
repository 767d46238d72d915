simdex_add_sources(DIR src/primitives FILES dispatch.cc scalar.cc sse42.cc avx2.cc avx512.cc)
