#!/usr/bin/env bash
# Every test: formatting and lint, the C++ tests at every ISA level this machine has (g++), the
# per-level symbol check, the same tests under ASan+UBSan (clang 14), a short run of every fuzz
# target, an install + find_package check, and pytest, which must leave no file in the checkout.
# Installs what is missing first (scripts/setup.sh); safe to rerun.
#   FUZZ_SECONDS=N (default 10) sets each fuzz target's run time.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
simdex_setup

JOBS="$(nproc)"
FUZZ_SECONDS="${FUZZ_SECONDS:-10}"

# Files the run leaves in the checkout (outside ignored build folders) are a bug: a test that
# writes into the current folder. Compared at the end with what was there before.
untracked() { git ls-files --others --exclude-standard 2>/dev/null | sort || true; }
UNTRACKED_BEFORE="$(untracked)"

log "clang-format and ruff"
git ls-files -z '*.cc' '*.h' | xargs -0 clang-format-14 --dry-run -Werror
ruff check python

log "C++ tests, g++ -Werror"
cmake -S . -B build/test -G Ninja -DCMAKE_CXX_COMPILER=g++ -DCMAKE_BUILD_TYPE=Release \
  -DSIMDEX_BUILD_TESTS=ON -DSIMDEX_WERROR=ON >/dev/null
ninja -C build/test
# The levels this machine runs: scalar up to the detected one.
LEVELS="$(build/test/tests/simdex_levels)"
log "ISA levels to test: $LEVELS"
log "per-level object files share no symbol"
scripts/check_level_symbols.sh build/test
for level in $LEVELS; do
  log "C++ tests at SIMDEX_ISA=$level"
  SIMDEX_ISA="$level" ctest --test-dir build/test --output-on-failure -j "$JOBS"
done

log "C++ tests under ASan+UBSan and fuzz targets, clang 14 -Werror"
cmake -S . -B build/asan -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSIMDEX_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS=-fsanitize=fuzzer-no-link \
  -DSIMDEX_BUILD_TESTS=ON -DSIMDEX_BUILD_FUZZ=ON -DSIMDEX_WERROR=ON >/dev/null
ninja -C build/asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for level in $LEVELS; do
  log "ASan+UBSan C++ tests at SIMDEX_ISA=$level"
  SIMDEX_ISA="$level" ctest --test-dir build/asan --output-on-failure -j "$JOBS"
done
for fuzzer in build/asan/fuzz/fuzz_*; do
  [[ -x "$fuzzer" ]] || continue
  name="$(basename "$fuzzer")"
  corpus="build/asan/corpus/$name"
  mkdir -p "$corpus"
  # Inputs that once crashed a target are replayed first, every run.
  if [[ -d "fuzz/regressions/$name" ]]; then
    log "replaying fuzz/regressions/$name"
    "$fuzzer" "fuzz/regressions/$name"/* 2>"build/asan/$name.log" || { tail -50 "build/asan/$name.log"; exit 1; }
  fi
  log "fuzzing $name for ${FUZZ_SECONDS}s"
  "$fuzzer" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=4096 -print_final_stats=0 "$corpus" 2>"build/asan/$name.log" \
    || { tail -50 "build/asan/$name.log"; exit 1; }
done

log "kv crash test: 120 SIGKILLs of a writing child (once, not per level)"
SIMDEX_KV_CRASH_ROUNDS=120 build/test/tests/test_kv --gtest_filter='KvCrash.*'
log "kv power-loss test: 20 rounds of crash images (once, not per level)"
SIMDEX_KV_POWERLOSS_ROUNDS=20 build/test/tests/test_kv --gtest_filter='KvPowerLoss.*'

log "kv and btree concurrency tests under TSan (clang 14, those two test programs only)"
cmake -S . -B build/tsan -G Ninja -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSIMDEX_SANITIZE=thread -DSIMDEX_BUILD_TESTS=ON -DSIMDEX_WERROR=ON \
  -DSIMDEX_ONLY_COMPONENTS="kv;btree" >/dev/null
ninja -C build/tsan test_kv test_btree
TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/test_kv --gtest_filter='KvConcurrency.*:KvSpace.*:KvProcess.*:KvFile.ThreadsCreatingOneFileRace:KvErrors.SecondWriterInOneThreadIsRefused'
TSAN_OPTIONS=halt_on_error=1 build/tsan/tests/test_btree --gtest_filter='BtreeFilter.ThreadsRaceToBuildIt'

log "install + find_package(simdex) from a separate project"
{
  cmake --install build/test --prefix build/install &&
  cmake -S tests/install -B build/install-check -G Ninja -DCMAKE_PREFIX_PATH="$PWD/build/install" &&
  ninja -C build/install-check
} >build/install-check.log 2>&1 || { cat build/install-check.log; exit 1; }
build/install-check/consumer

log "pytest"
# Here the parquet-java and LMDB-tools interop tests and CPython's base64 suite must run
# (setup.sh installed all three): without them they fail instead of skipping.
SIMDEX_REQUIRE_PARQUET_JAVA=1 SIMDEX_REQUIRE_LMDB_UTILS=1 SIMDEX_REQUIRE_CPYTHON_TESTS=1 \
  python -m pytest -q python/tests

new_files="$(comm -13 <(printf '%s\n' "$UNTRACKED_BEFORE") <(untracked))"
if [[ -n "$new_files" ]]; then
  log "the tests left these files in the checkout:"
  printf '%s\n' "$new_files"
  exit 1
fi
