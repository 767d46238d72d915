simdex_add_sources(DIR src/base85 FILES tables.cc dispatch.cc encoder.cc decoder.cc codec.cc
  scalar.cc sse42.cc avx2.cc avx512.cc avx512vbmi.cc)
