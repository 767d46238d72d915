# Script mode (cmake -DSOURCE_DIR=... -DOUTPUT=... -P SimdexCommit.cmake), run at every build:
# writes the source tree's commit into a header, touching it only when the commit changed, so a
# build directory configured long ago still stamps the commit its programs were built from.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit unknown)
endif()
file(CONFIGURE OUTPUT ${OUTPUT} CONTENT "#define SIMDEX_GIT_COMMIT \"@commit@\"\n" @ONLY)
