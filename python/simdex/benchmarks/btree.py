"""Python-side btree benchmark: simdex.btree.SortedSet against sortedcontainers and numpy.

Joins ``bench_btree``'s JSON (same schema). Per-call figures time a Python loop of single calls
(``add``, ``in``) over pre-drawn random keys, the loop overhead included for every contender;
batched figures time one numpy call (``add_many``, ``contains_many``, ``bisect_many``) against
sortedcontainers' loops, its own ``update``, and ``numpy.searchsorted`` on a sorted array (a
static ceiling). Mutating samples put the key set back outside the timed region. Keys are
distinct uniform random integers in [0, 2**62).

``python -m simdex.benchmarks.btree RESULTS.json`` prints the table of targets from a run.
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from . import group

# Keys per structure, by mode; per-call and batched operation counts per sample.
SIZES = {"quick": [1 << 20], "full": [1 << 20, 16 << 20]}
PER_CALL_OPS = {"quick": 20_000, "full": 100_000}
BATCH_OPS = {"quick": 100_000, "full": 1_000_000}


def _version(mod) -> str:
    return str(getattr(mod, "__version__", ""))


def _distinct_keys(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 1 << 62, size=count + count // 8 + 16, dtype=np.int64))
    rng.shuffle(keys)
    return keys[:count]


def _simdex_set(keys: np.ndarray):
    from simdex.btree import SortedSet

    return SortedSet(keys)  # dtype int64, 2 MiB pages (the defaults)


def _seconds_loop(fn, items) -> float:
    t0 = time.perf_counter()
    for k in items:
        fn(k)
    return time.perf_counter() - t0


def _seconds_contains(container, items) -> float:
    t0 = time.perf_counter()
    n = 0
    for k in items:
        n += k in container
    t = time.perf_counter() - t0
    if n < 0:  # keeps the count alive
        print(n)
    return t


def run(doc: dict, mode: str, reps: int) -> None:
    try:
        import simdex.btree  # noqa: F401
    except ImportError as e:  # the extension was built without btree
        doc.setdefault("notes", []).append(f"python btree benchmark skipped: {e}")
        return
    import sortedcontainers
    from sortedcontainers import SortedList
    from sortedcontainers import SortedSet as ScSortedSet

    sc_v, np_v = _version(sortedcontainers), _version(np)
    for n in SIZES.get(mode, SIZES["quick"]):
        q, qb = PER_CALL_OPS.get(mode, 20_000), BATCH_OPS.get(mode, 100_000)
        allk = _distinct_keys(n + qb, seed=n)
        base, fresh = allk[:n], allk[n:]
        base_list, fresh_list = base.tolist(), fresh.tolist()
        sd = _simdex_set(base)
        sl = SortedList(base_list)
        ss = ScSortedSet(base_list)
        sorted_np = np.sort(base)
        rng = np.random.default_rng(n + 1)
        p = {"n": n, "key": "i64", "keys": "sparse", "api": "python"}

        # Per call: add fresh keys one by one, then remove them untimed.
        adds = fresh_list[:q]

        def per_call_add(container, add, remove):
            def sample():
                t = _seconds_loop(add, adds)
                for k in adds:
                    remove(k)
                return t * 1e9 / len(adds)
            return sample

        group(doc, "py_add", {**p, "ops": q}, "ns/op", "lower", {
            "simdex.SortedSet": ("", per_call_add(sd, sd.add, sd.discard)),
            "sortedcontainers.SortedList": (sc_v, per_call_add(sl, sl.add, sl.remove)),
            "sortedcontainers.SortedSet": (sc_v, per_call_add(ss, ss.add, ss.discard)),
        }, "sortedcontainers.SortedList", reps)

        for what, pool in (("hit", base), ("miss", fresh)):
            probes = [pool[rng.integers(0, len(pool), size=q)].tolist() for _ in range(reps)]

            def per_call_in(container):
                calls = [0]

                def sample():
                    items = probes[calls[0] % len(probes)]
                    calls[0] += 1
                    return _seconds_contains(container, items) * 1e9 / len(items)
                return sample

            group(doc, f"py_contains_{what}", {**p, "ops": q}, "ns/op", "lower", {
                "simdex.SortedSet": ("", per_call_in(sd)),
                "sortedcontainers.SortedList": (sc_v, per_call_in(sl)),
                "sortedcontainers.SortedSet (hash set)": (sc_v, per_call_in(ss)),
            }, "sortedcontainers.SortedList", reps)

        # Batched: one numpy call against sortedcontainers' loop and its own update().
        batch = fresh[:qb]
        batch_list = batch.tolist()

        def timed_restore(fn, undo):
            def sample():
                t0 = time.perf_counter()
                fn()
                t = time.perf_counter() - t0
                undo()
                return t * 1e9 / len(batch)
            return sample

        def sl_undo():
            for k in batch_list:
                sl.remove(k)

        group(doc, "py_add_batched", {**p, "ops": qb}, "ns/op", "lower", {
            "simdex.SortedSet.add_many": ("", timed_restore(lambda: sd.add_many(batch), lambda: sd.discard_many(batch))),
            "sortedcontainers.SortedList add loop": (sc_v, timed_restore(lambda: _seconds_loop(sl.add, batch_list), sl_undo)),
            "sortedcontainers.SortedList.update": (sc_v, timed_restore(lambda: sl.update(batch_list), sl_undo)),
        }, "sortedcontainers.SortedList add loop", reps)

        hits = [base[rng.integers(0, n, size=qb)] for _ in range(reps)]
        hits_list = [h.tolist() for h in hits]

        def batched_sample(fn, inputs):
            calls = [0]

            def sample():
                x = inputs[calls[0] % len(inputs)]
                calls[0] += 1
                t0 = time.perf_counter()
                r = fn(x)
                t = time.perf_counter() - t0
                if r is None:
                    raise RuntimeError("no result")
                return t * 1e9 / len(x)
            return sample

        def searchsorted_contains(x):
            i = np.searchsorted(sorted_np, x)
            return sorted_np[np.minimum(i, len(sorted_np) - 1)] == x

        group(doc, "py_contains_hit_batched", {**p, "ops": qb}, "ns/op", "lower", {
            "simdex.SortedSet.contains_many": ("", batched_sample(sd.contains_many, hits)),
            "sortedcontainers.SortedList in loop": (sc_v, batched_sample(lambda x: [k in sl for k in x], hits_list)),
            "numpy.searchsorted (static array)": (np_v, batched_sample(searchsorted_contains, hits)),
        }, "sortedcontainers.SortedList in loop", reps)

        anywhere = [rng.integers(0, 1 << 62, size=qb, dtype=np.int64) for _ in range(reps)]
        anywhere_list = [a.tolist() for a in anywhere]
        group(doc, "py_bisect_left_batched", {**p, "ops": qb}, "ns/op", "lower", {
            "simdex.SortedSet.bisect_many": ("", batched_sample(sd.bisect_many, anywhere)),
            "sortedcontainers.SortedList bisect_left loop": (
                sc_v, batched_sample(lambda x: [sl.bisect_left(k) for k in x], anywhere_list)),
            "numpy.searchsorted (static array)": (np_v, batched_sample(lambda x: np.searchsorted(sorted_np, x), anywhere)),
        }, "sortedcontainers.SortedList bisect_left loop", reps)
        sd = sl = ss = None  # free this size's structures before the next size


# --- the targets, from one run's JSON --------------------------------------------------------

# (workload, extra params, simdex contender, peer contender, kind, threshold)
# kind "speedup": peer median / simdex median >= threshold; "bytes": simdex / peer <= threshold.
_BAR = [
    ("contains_hit", {}, "simdex::btree_set", "absl::btree_set", "speedup", 2.0),
    ("contains_miss", {}, "simdex::btree_set", "absl::btree_set", "speedup", 2.0),
    ("lower_bound", {}, "simdex::btree_set", "absl::btree_set", "speedup", 2.0),
    ("rand_insert", {}, "simdex::btree_set", "absl::btree_set", "speedup", 1.5),
    ("rand_delete", {}, "simdex::btree_set", "absl::btree_set", "speedup", 1.5),
    ("seq_insert", {}, "simdex::btree_set", "absl::btree_set", "speedup", 1.0),
    ("scan", {"len": 10}, "simdex::btree_set", "absl::btree_set", "speedup", 1.0),
    ("scan", {"len": 100}, "simdex::btree_set", "absl::btree_set", "speedup", 1.0),
    ("scan", {"len": 10000}, "simdex::btree_set", "absl::btree_set", "speedup", 1.0),
    ("churn", {}, "simdex::btree_set", "absl::btree_set", "speedup", 1.0),
    ("bytes_per_key", {}, "simdex::btree_set", "absl::btree_set", "bytes", 1.1),
    ("contains_hit_batched", {"batch": 1024}, "simdex::btree_set batch", "absl::btree_set per-key", "speedup", 6.0),
    ("contains_hit_batched", {}, "simdex::btree_set batch", "absl::btree_set per-key", "speedup", 6.0),
    ("contains_hit", {}, "simdex::btree_set", "JudyL", "speedup", 1.0),
    ("rand_insert", {}, "simdex::btree_set", "JudyL", "speedup", 1.0),
]
_PY_BAR = [
    ("py_add", "simdex.SortedSet", "sortedcontainers.SortedList", 3.0),
    ("py_contains_hit", "simdex.SortedSet", "sortedcontainers.SortedList", 3.0),
    ("py_contains_miss", "simdex.SortedSet", "sortedcontainers.SortedList", 3.0),
    ("py_add_batched", "simdex.SortedSet.add_many", "sortedcontainers.SortedList add loop", 100.0),
    ("py_contains_hit_batched", "simdex.SortedSet.contains_many", "sortedcontainers.SortedList in loop", 100.0),
]


def _index(doc: dict) -> dict:
    idx = {}
    for r in doc.get("results", []):
        p = dict(r.get("params", {}))
        key = (r["workload"], r["contender"], json.dumps(p, sort_keys=True))
        idx[key] = r
    return idx


def bar_table(doc: dict) -> str:
    """Markdown table of the target items found in ``doc``: one row per item and
    configuration (N, key, pages), with the medians, the ratio (``~``: either figure noisy,
    max/min > 1.5) and met/missed."""
    rows = ["| item | N | key | pages | simdex | peer | ratio | bar | |", "|---|---|---|---|---|---|---|---|---|"]
    results = doc.get("results", [])
    configs = sorted({(r["params"].get("n"), r["params"].get("key"), r["params"].get("pages"))
                      for r in results if r["params"].get("keys") == "sparse" and "pages" in r["params"]},
                     key=lambda c: (c[0] or 0, str(c[1]), str(c[2])))
    for (w, extra, me, peer, kind, thr) in _BAR:
        for (n, key, pages) in configs:
            def find(contender):
                for r in results:
                    pr = r["params"]
                    if (r["workload"] == w and r["contender"] == contender and pr.get("n") == n and pr.get("key") == key
                            and pr.get("pages") == pages and pr.get("keys") == "sparse"
                            and all(pr.get(k) == v for k, v in extra.items())):
                        if w == "contains_hit_batched" and not extra and pr.get("batch") == 1024:
                            continue
                        return r
                return None
            a, b = find(me), find(peer)
            if not a or not b or not a["median"] or not b["median"]:
                continue
            label = w + "".join(f" {k}={v}" for k, v in extra.items())
            if w == "contains_hit_batched":
                label = f"contains_hit_batched batch={a['params'].get('batch')}"
            if kind == "bytes":
                ratio = a["median"] / b["median"]
                ok, bar = ratio <= thr, f"<= {thr}x"
            else:
                ratio = b["median"] / a["median"]
                ok, bar = ratio >= thr, f">= {thr}x"
            unit = a.get("unit", "")
            noisy = "~" if a.get("noisy") or b.get("noisy") else ""
            rows.append(f"| {label} vs {peer} | {n} | {key} | {pages} | {a['median']:.4g} {unit} | "
                        f"{b['median']:.4g} | {ratio:.2f}{noisy} | {bar} | {'met' if ok else 'MISSED'} |")
    for (w, me, peer, thr) in _PY_BAR:
        for r in results:
            if r["workload"] != w or r["contender"] != me:
                continue
            n = r["params"].get("n")
            b = next((x for x in results if x["workload"] == w and x["contender"] == peer and x["params"].get("n") == n), None)
            if not b or not r["median"]:
                continue
            ratio = b["median"] / r["median"]
            noisy = "~" if r.get("noisy") or b.get("noisy") else ""
            rows.append(f"| {w} vs {peer} | {n} | i64 | - | {r['median']:.4g} {r['unit']} | {b['median']:.4g} | "
                        f"{ratio:.2f}{noisy} | >= {thr}x | {'met' if ratio >= thr else 'MISSED'} |")
    return "\n".join(rows)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: python -m simdex.benchmarks.btree RESULTS/btree.json", file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        print(bar_table(json.load(f)))


# --- the report's view: headline rows and ns/op against N ---------------------------------------

_U64 = {"key": "u64", "keys": "sparse", "pages": "2m"}
_NATIVE_PEERS = ["absl::btree_set", "std::set", "JudyL"]
HEADLINES = [
    {"workload": w, "params": _U64, "simdex": "simdex::btree_set", "peers": _NATIVE_PEERS, "limit": "dram"}
    for w in ("contains_hit", "contains_miss", "lower_bound", "rand_insert", "rand_delete", "seq_insert")
] + [
    {"workload": "scan", "params": {**_U64, "len": 100}, "simdex": "simdex::btree_set", "peers": _NATIVE_PEERS},
    {"workload": "contains_hit_batched", "params": {**_U64, "batch": 1024}, "simdex": "simdex::btree_set batch",
     "peers": ["absl::btree_set"], "limit": "dram16"},
    {"workload": "py_contains_hit", "peers": ["sortedcontainers.SortedSet"]},
    {"workload": "py_contains_miss", "peers": ["sortedcontainers.SortedSet"]},
    {"workload": "py_add", "peers": ["sortedcontainers.SortedSet"]},
]
SCALING = [
    {"workload": w, "x": "n", "params": _U64, "limits": ["dram"], "title": f"{w}: ns per operation against N"}
    for w in ("contains_hit", "rand_insert")
]
