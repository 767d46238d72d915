#!/usr/bin/env bash
# Installs what simdex needs on Debian 12 (as root), creates .venv and installs the package
# into it. Sourced by scripts/bench.sh and scripts/test.sh; safe to rerun: it installs only
# what is missing and rebuilds incrementally.
set -euo pipefail

SIMDEX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$SIMDEX_ROOT"

# Build tools, test and peer libraries, all from Debian's archive.
APT_PACKAGES=(
  build-essential cmake ninja-build git pkg-config
  python3 python3-venv python3-dev
  clang-14 libclang-rt-14-dev
  clang-format-14     # scripts/test.sh checks formatting
  libgtest-dev googletest
  libxxhash-dev       # bloom, kv: XXH64, XXH3 (header only, compiled in)
  libzmq3-dev         # base85 peer: zmq_z85_encode/decode
  libabsl-dev         # btree peer: absl::btree_set, flat_hash_set
  libjudy-dev         # btree peer: JudyL
  liblmdb-dev         # kv peer: LMDB
  cargo-web           # base85 peer: base85-simd (skipped when a cargo >= 1.70 is on PATH)
  valgrind            # btree_profile: callgrind markers; cachegrind counts for design work
  ccache              # scripts/wheels.sh: the library compiles once for all Python versions
  openjdk-17-jdk-headless maven  # bloom interop tests against parquet-java (tests/bloom/parquet-java)
  libpython3.11-testsuite  # CPython's own test_base64, run against simdex.base85's drop-ins
  lmdb-utils          # kv CLI tests: mdb_dump / mdb_load interop (python/tests/test_kv_cli.py)
)

log() { printf '\033[1m[simdex]\033[0m %s\n' "$*" >&2; }

# cargo 1.70 and later reach crates.io through its sparse index; Debian 12's own cargo (1.65)
# knows only the git index on github.com, which this network does not reach, so Debian's newer
# cargo-web is installed unless such a cargo is already here (rustup's, say).
have_new_cargo() {
  local c v
  for c in "$HOME/.cargo/bin/cargo" "$(command -v cargo 2>/dev/null || true)"; do
    [[ -n $c && -x $c ]] || continue
    v="$("$c" --version 2>/dev/null | awk '{print $2}')"
    [[ -n $v && "$(printf '%s\n1.70.0\n' "$v" | sort -V | head -1)" == 1.70.0 ]] && return 0
  done
  return 1
}

install_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    [[ "$p" == cargo-web ]] && have_new_cargo && continue
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    log "installing Debian packages: ${missing[*]}"
    local sudo=""
    [[ $(id -u) -ne 0 ]] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

# The Python packages come from pyproject.toml: its build requirements, dependencies and test extra
# (pytest, pyarrow, duckdb, sortedcontainers, ruff) first, since the build looks for pyarrow's
# Arrow C++; then the package itself as simdex[test].
install_venv() {
  if [[ ! -x .venv/bin/python ]]; then
    log "creating .venv"
    python3 -m venv .venv
  fi
  local stamp=.venv/.simdex-pip-stamp want
  want="$(sha256sum pyproject.toml)"
  if [[ ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
    log "installing Python packages into .venv"
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python - <<'EOF' | xargs -d '\n' .venv/bin/python -m pip install -q
import tomllib
p = tomllib.load(open("pyproject.toml", "rb"))
print("\n".join(p["build-system"]["requires"] + p["project"]["dependencies"]
                + p["project"]["optional-dependencies"]["test"]))
EOF
    printf '%s' "$want" >"$stamp"
  fi
}

install_simdex() {
  log "building and installing simdex[test] into .venv (incremental)"
  # No build isolation: the build reuses build/py and finds pyarrow's Arrow C++ for the bloom peer.
  # A source checkout builds the benchmark peers that a wheel leaves out.
  .venv/bin/python -m pip install -q --no-build-isolation --config-settings=build-dir="build/py/{wheel_tag}" \
    --config-settings=cmake.define.SIMDEX_BENCH_PEERS=ON ".[test]"
}

# sortedcontainers' own test suite, which python/tests/test_btree_sortedcontainers.py runs
# against simdex's SortedSet and SortedDict. PyPI's sdist ships no tests; Debian's source
# package of the same release does, so apt-get source fetches it (with a private copy of this
# system's apt sources turned to deb-src) into .venv/cache/sortedcontainers-tests.
fetch_sortedcontainers_tests() {
  local dest=.venv/cache/sortedcontainers-tests tmp
  [[ -f $dest/tests/test_coverage_sortedset.py ]] && return 0
  log "fetching sortedcontainers' test suite (Debian source package)"
  tmp="$(mktemp -d)"
  mkdir -p "$tmp/parts" "$tmp/lists/partial" "$tmp/cache/archives/partial"
  [[ -f /etc/apt/sources.list ]] && sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >"$tmp/sources.list"
  for f in /etc/apt/sources.list.d/*.sources; do
    [[ -f $f ]] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$tmp/parts/$(basename "$f")"
  done
  local apt=(apt-get -qq -o "Dir::Etc::sourcelist=$tmp/sources.list" -o "Dir::Etc::sourceparts=$tmp/parts"
    -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache" -o APT::Sandbox::User=root)
  if "${apt[@]}" update && (cd "$tmp" && "${apt[@]}" source --download-only sortedcontainers >/dev/null); then
    rm -rf "$dest" && mkdir -p "$dest"
    tar xzf "$tmp"/sortedcontainers_*.orig.tar.gz -C "$dest" --strip-components=1 --wildcards '*/tests/*'
  else
    log "warning: could not fetch sortedcontainers' tests; their pytest module will be skipped"
  fi
  rm -rf "$tmp"
}

# parquet-java's side of the bloom filter interop tests (python/tests/test_bloom_parquet_java.py):
# a small Maven project built into build/parquet-java/ (its jar, and its runtime classpath in
# lib/), rebuilt only when a source is newer than the jar. The first build fetches parquet-java
# and a few Hadoop jars from Maven Central into ~/.m2 (about 70 MB with Maven's plugins).
build_parquet_java() {
  local src=tests/bloom/parquet-java jar=build/parquet-java/parquet-java-bloom.jar
  [[ -f $jar && -d ${jar%/*}/lib && -z "$(find "$src" -type f -newer "$jar" -print -quit)" ]] && return 0
  log "building the parquet-java bloom filter interop tool (Maven)"
  mkdir -p build
  if ! mvn -q -B -ntp -f "$src/pom.xml" clean package >build/parquet-java.log 2>&1; then
    tail -30 build/parquet-java.log >&2
    log "warning: could not build $jar; its pytest module fails under scripts/test.sh, is skipped elsewhere"
  fi
}

simdex_setup() {
  install_apt
  install_venv
  fetch_sortedcontainers_tests
  build_parquet_java
  install_simdex
  export PATH="$SIMDEX_ROOT/.venv/bin:$PATH"
  [[ -d "$HOME/.cargo/bin" ]] && export PATH="$PATH:$HOME/.cargo/bin"
  return 0
}
