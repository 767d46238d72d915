# libzmq (Debian libzmq3-dev) for the Z85 differential test; without it the test skips.
find_package(PkgConfig)
if(PkgConfig_FOUND)
  pkg_check_modules(SIMDEX_TEST_ZMQ IMPORTED_TARGET libzmq)
endif()
if(SIMDEX_TEST_ZMQ_FOUND)
  target_link_libraries(test_base85 PRIVATE PkgConfig::SIMDEX_TEST_ZMQ)
  target_compile_definitions(test_base85 PRIVATE SIMDEX_TEST_HAVE_ZMQ=1)
endif()
