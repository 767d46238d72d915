#!/usr/bin/env bash
# Builds simdex's wheels and checks them as a user would get them:
#   - one stable-ABI wheel (cp312-abi3) for CPython 3.12 and later, one per version for 3.9-3.11;
#   - each built by pip from a read-only view of this checkout (build trees outside it), then
#     repaired and tagged by auditwheel (manylinux for this machine's glibc);
#   - python/tests/test_wheel.py: contents, shared-library needs, a C++ project through
#     `simdex --cmake-dir`, and an install into a clean venv of every CPython found here, with no
#     compiler on PATH and libxxhash hidden, running `simdex info` and a smoke test.
#   bash scripts/wheels.sh [--out DIR] [VERSION...]      (default: dist/, 3.9 3.10 3.11 3.12 3.13)
# Interpreters come from scripts/pythons.py (PATH, pyenv, /usr/bin); a version not found is
# reported and skipped. Build trees are kept in DIR/build for incremental rebuilds; a wheel
# built before for a version not asked for this time stays in DIR and is checked too.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
install_apt
install_venv
export PATH="$SIMDEX_ROOT/.venv/bin:$PATH"

OUT="$SIMDEX_ROOT/dist"
VERSIONS=()
while (($#)); do
  case "$1" in
    --out) OUT="$(realpath -m "$2")"; shift 2 ;;
    -h|--help) sed -n '2,13p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) VERSIONS+=("$1"); shift ;;
  esac
done
((${#VERSIONS[@]})) || VERSIONS=(3.9 3.10 3.11 3.12 3.13)

python -m pip install -q $(python - <<'EOF'
import tomllib
print(" ".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]["wheels"]))
EOF
)

declare -A PY=()
while read -r v path; do PY[$v]="$path"; done < <(python scripts/pythons.py "${VERSIONS[@]}")
for v in "${VERSIONS[@]}"; do
  [[ -n "${PY[$v]:-}" ]] || log "CPython $v: not found on this machine, skipped (scripts/pythons.py says where it looks)"
done

# Which interpreters build: each of 3.9-3.11 its own wheel; the oldest 3.12+ one the abi3 wheel.
BUILDERS=()
for v in 3.9 3.10 3.11; do [[ -n "${PY[$v]:-}" ]] && BUILDERS+=("$v"); done
for v in 3.12 3.13 3.14; do
  if [[ -n "${PY[$v]:-}" ]]; then BUILDERS+=("$v"); break; fi
done
((${#BUILDERS[@]})) || { log "no CPython to build with"; exit 1; }

mkdir -p "$OUT/build" "$OUT/raw"

# The library and the benchmark programs do not depend on the Python version: with ccache they
# compile once for every wheel (paths below $OUT are hashed relative to the build folder).
LAUNCHER=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$OUT"
  LAUNCHER=(--config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

# A read-only view of the checkout, where this user may make a mount namespace: proof that a
# build from a path writes nothing into it.
build_wheel() {  # python
  local py="$1" src="$SIMDEX_ROOT"
  local cmd=(nice -n 10 "$py" -m pip wheel --no-deps -q -w "$OUT/raw" --config-settings=build-dir="$OUT/build/{wheel_tag}"
             "${LAUNCHER[@]}")
  if [[ $(id -u) -eq 0 ]] && command -v unshare >/dev/null; then
    local view="$OUT/src-ro"
    mkdir -p "$view"
    unshare -m /bin/sh -c 'mount --bind "$1" "$2" && mount -o remount,bind,ro "$2" && shift 2 && exec "$@"' \
      sh "$src" "$view" "${cmd[@]}" "$view"
  else
    "${cmd[@]}" "$src"
  fi
}

for v in "${BUILDERS[@]}"; do
  log "building the wheel with CPython $v (${PY[$v]})"
  rm -f "$OUT"/raw/simdex-*-cp${v/./}-*.whl "$OUT"/simdex-*-cp${v/./}-*.whl
  build_wheel "${PY[$v]}"
done

log "auditwheel: repair and tag"
for w in "$OUT"/raw/simdex-*.whl; do
  auditwheel show "$w"
  auditwheel repair -w "$OUT" "$w"
done
ls -l "$OUT"/simdex-*.whl

log "checking the wheels (python/tests/test_wheel.py)"
export SIMDEX_WHEELHOUSE="$OUT" SIMDEX_WHEEL_VERSIONS="${VERSIONS[*]}"
# No conftest: these tests need no simdex in .venv, only the wheels.
python -m pytest -q -rs -s -p no:cacheprovider --noconftest python/tests/test_wheel.py
