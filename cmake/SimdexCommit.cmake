# Script mode (cmake -DSOURCE_DIR=... -DOUTPUT=... -P SimdexCommit.cmake), run at every build:
# writes the source tree's commit (with "+dirty" when tracked files changed) into a header,
# touching it only when that changed, so a build directory configured long ago still stamps the
# commit its programs were built from.
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE_DIR}
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT commit)
  set(commit unknown)
else()
  # Tracked files that differ from HEAD (staged or not) are built too: such a program does not
  # measure HEAD, and its JSON says "+dirty" as scripts/bench.sh's SIMDEX_COMMIT does.
  execute_process(COMMAND git diff --quiet HEAD -- WORKING_DIRECTORY ${SOURCE_DIR}
    RESULT_VARIABLE dirty OUTPUT_QUIET ERROR_QUIET)
  if(dirty EQUAL 1)
    string(APPEND commit "+dirty")
  endif()
endif()
file(CONFIGURE OUTPUT ${OUTPUT} CONTENT "#define SIMDEX_GIT_COMMIT \"@commit@\"\n" @ONLY)
