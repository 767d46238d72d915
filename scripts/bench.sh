#!/usr/bin/env bash
# The main job: every component's quick benchmark, then the report.
#   bash scripts/bench.sh [--full] [--out DIR] [COMPONENT...]
# Results land in bench-results/ (REPORT.md, report.html, one JSON per component).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
simdex_setup
export SIMDEX_COMMIT="$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
simdex info
exec simdex bench "$@"
