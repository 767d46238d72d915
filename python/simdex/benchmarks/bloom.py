"""The report's view of ``bench_bloom``: its headline rows against Arrow C++ (the filter every
Parquet reader in Python goes through), with the memory-latency limits beside them, and ns per
key against the filter's size. (No Python-side peers.)"""

from __future__ import annotations

# Arrow's bitset lives in its own memory pool on 4 KiB pages: simdex's 4k rows are the equal
# footing ("heap" is the small in-cache filter, allocated the same way for both).
_MISS_4K = {"probe": "miss", "pages": ["heap", "4k"]}
_ARROW = ["arrow"]

HEADLINES = [
    {"workload": "check_single", "params": _MISS_4K, "peers": _ARROW, "limit": "dram"},
    {"workload": "check_bulk", "params": _MISS_4K, "simdex": "simdex-bulk", "peers": _ARROW, "limit": "dram16"},
    {"workload": "hash_check_int64", "params": _MISS_4K, "simdex": "simdex-bulk", "peers": _ARROW, "limit": "dram16"},
    {"workload": "insert", "params": {"pages": ["heap", "4k"]}, "simdex": "simdex-bulk", "peers": _ARROW, "limit": "dram16"},
    # Filters allocated one by one, as from_parquet makes them (the arena rows show what a
    # power-of-two stride costs).
    {"workload": "check_many_filters", "params": {"layout": "filters"}, "peers": _ARROW, "limit": "dram16"},
]

SCALING = [
    {"workload": "check_single", "x": "filter_bytes", "params": _MISS_4K, "limits": ["dram", "dram16"],
     "title": "one key per call (misses): ns per key against the filter's size"},
    {"workload": "check_bulk", "x": "filter_bytes", "params": _MISS_4K, "limits": ["dram", "dram16"],
     "title": "bulk checks (misses): ns per key against the filter's size"},
]
