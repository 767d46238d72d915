#!/usr/bin/env bash
# The main job: every component's quick benchmark, then the report.
#   bash scripts/bench.sh [--full] [--out DIR] [COMPONENT...]
# Results land in bench-results/ (REPORT.md, report.html, one JSON per component).
set -euo pipefail

# The commit a run measures, as its JSON and report name it: HEAD, with "+dirty" when tracked
# files differ from it (staged or not), since the programs are built from the working tree;
# untracked files count only once a tracked one (a CMakeLists.txt) uses them.
source_commit() {
  local head
  head="$(git -C "$1" rev-parse --short=12 HEAD 2>/dev/null)" || {
    echo unknown
    return
  }
  git -C "$1" diff --quiet HEAD -- 2>/dev/null || head+="+dirty"
  echo "$head"
}

source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
simdex_setup
SIMDEX_COMMIT="$(source_commit .)"
export SIMDEX_COMMIT
simdex info
exec simdex bench "$@"
