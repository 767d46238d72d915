#!/usr/bin/env bash
# Checks that no externally visible symbol of a per-level object file (one compiled from
# src/<component>/<level>.cc or <level>_*.cc, with that level's flags) is defined in any other
# object of the library. Two definitions would be merged by the linker, which may then run
# code built for AVX-512 on a path meant for a lower level.
#   scripts/check_level_symbols.sh BUILD_DIR   (a build with SIMDEX_BUILD_TESTS=ON)
set -euo pipefail
build="$1"
objdir="$build/CMakeFiles/simdex.dir/src"
read -r -a ids <<<"$("$build/tests/simdex_levels" --ids)"
pattern="^($(IFS='|'; echo "${ids[*]}"))(_.*)?\.cc\.o$"
listing="$(mktemp)"
trap 'rm -f "$listing"' EXIT
levels=0
for obj in "$objdir"/*/*.o; do
  kind=baseline
  [[ "$(basename "$obj")" =~ $pattern ]] && { kind=level; levels=$((levels + 1)); }
  # DW.ref.__gxx_personality_v0 is the unwinder's shared reference, the same in every object.
  nm -g --defined-only "$obj" | awk -v o="${obj#"$objdir"/}" -v k="$kind" \
    '$NF !~ /^DW\.ref\./ {print $NF, k, o}' >>"$listing"
done
((levels > 0)) || { echo "no per-level objects under $objdir" >&2; exit 1; }
clashes="$(sort "$listing" | awk '
  { n[$1]++; where[$1] = where[$1] " " $3; if ($2 == "level") lvl[$1] = 1 }
  END { for (s in n) if (n[s] > 1 && lvl[s]) print s ":" where[s] }')"
if [[ -n "$clashes" ]]; then
  echo "symbols of a per-level object defined in another object too:" >&2
  c++filt <<<"$clashes" >&2
  exit 1
fi
echo "per-level symbols: none shared ($levels per-level objects checked)"
