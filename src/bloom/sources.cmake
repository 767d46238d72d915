simdex_add_sources(DIR src/bloom FILES dispatch.cc filter.cc hash.cc match.cc pages.cc sizing.cc parquet_io.cc
  parquet_probe.cc footer_writer.cc scalar.cc sse42.cc avx2.cc avx512.cc)
