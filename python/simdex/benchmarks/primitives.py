"""The report's view of ``bench_primitives``: every kernel at the level this process runs,
against the scalar reference, beside the length of one core cycle. (No Python-side peers.)"""

from __future__ import annotations

HEADLINES = [{"workload": w, "limit": "cycle"} for w in
             ("lower_bound", "remap_branches", "rank_table", "find_u32x16", "find_min_index")]
