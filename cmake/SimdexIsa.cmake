# Compiler flags per ISA level. Only files named after a level get that level's flags; the
# rest of the library is baseline x86-64, so it runs anywhere and dispatches at run time.
set(SIMDEX_FLAGS_scalar "")
set(SIMDEX_FLAGS_sse42 -msse4.2 -mpopcnt)
set(SIMDEX_FLAGS_avx2 -mavx2 -mbmi -mbmi2 -mfma -mlzcnt -mpopcnt)
set(SIMDEX_FLAGS_avx512 ${SIMDEX_FLAGS_avx2} -mavx512f -mavx512bw -mavx512dq -mavx512vl -mavx512cd)
# GCC 12's AVX-512 headers trip -Wuninitialized on their own _mm512_undefined_* (GCC PR 105593,
# fixed in 13); silence it for these files only.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  list(APPEND SIMDEX_FLAGS_avx512 -Wno-uninitialized -Wno-maybe-uninitialized)
endif()
set(SIMDEX_FLAGS_avx512vbmi ${SIMDEX_FLAGS_avx512} -mavx512vbmi -mavx512vbmi2)

# The level identifiers come from SIMDEX_ISA_LEVELS in include/simdex/cpu.h, the one list; each
# needs its SIMDEX_FLAGS_<level> above.
file(READ ${CMAKE_CURRENT_LIST_DIR}/../include/simdex/cpu.h cpu_h)
string(REGEX MATCHALL "\n  X\\([a-z0-9]+, \"" level_entries "${cpu_h}")
set(SIMDEX_ISA_LEVELS "")
foreach(entry IN LISTS level_entries)
  string(REGEX REPLACE "^\n  X\\(([a-z0-9]+),.*" "\\1" level "${entry}")
  if(NOT DEFINED SIMDEX_FLAGS_${level})
    message(FATAL_ERROR "ISA level ${level} (include/simdex/cpu.h) has no SIMDEX_FLAGS_${level}")
  endif()
  list(APPEND SIMDEX_ISA_LEVELS ${level})
endforeach()
if(NOT SIMDEX_ISA_LEVELS)
  message(FATAL_ERROR "no ISA levels found in include/simdex/cpu.h (SIMDEX_ISA_LEVELS)")
endif()

# simdex_add_sources(DIR src/foo FILES dispatch.cc ... ) adds files to the library; a file whose
# name (without extension) is a level (scalar, sse42, avx2, avx512, avx512vbmi), or starts
# with "<level>_", is compiled with that level's flags.
function(simdex_add_sources)
  cmake_parse_arguments(ARG "" "DIR" "FILES" ${ARGN})
  foreach(file IN LISTS ARG_FILES)
    set(path ${CMAKE_CURRENT_SOURCE_DIR}/${ARG_DIR}/${file})
    target_sources(simdex PRIVATE ${path})
    get_filename_component(stem ${file} NAME_WE)
    foreach(level IN LISTS SIMDEX_ISA_LEVELS)
      if(stem STREQUAL level OR stem MATCHES "^${level}_")
        set_source_files_properties(${path} TARGET_DIRECTORY simdex
          PROPERTIES COMPILE_OPTIONS "${SIMDEX_FLAGS_${level}}")
        break()
      endif()
    endforeach()
  endforeach()
endfunction()
