"""Python-side btree benchmark: simdex.btree.SortedSet and SortedDict against sortedcontainers
and numpy.

Joins ``bench_btree``'s JSON (same schema). Every row names the real counterpart: simdex's
``SortedSet`` is a set, so the reference is ``sortedcontainers.SortedSet`` (whose ``in`` is a
hash-set lookup); ``sortedcontainers.SortedList`` (``in`` by bisection) runs beside it.
``SortedDict`` rows (``py_dict_*``) are referenced to ``sortedcontainers.SortedDict``, a dict
subclass whose lookups are the dict's own; a plain ``dict`` runs beside it for context.

Per-call figures time a Python loop of single calls (``add``, ``in``, ``discard``, ``d[k]``,
``d.get(k)``, ``d[k] = v``, ``d.pop(k)``, ``d.setdefault(k, v)``) over pre-drawn random keys, the
loop overhead included for every contender.
Batched figures time one numpy call (``add_many``, ``contains_many``, ``bisect_many``) against
the same work done through sortedcontainers' API: its per-key loop, and for inserts also its
own ``update``; plus ``numpy.searchsorted`` on a sorted array (a static ceiling). Mutating samples put the key set
back outside the timed region. Keys are distinct uniform random integers in [0, 2**62).

``python -m simdex.benchmarks.btree RESULTS.json`` prints the table of targets from a run.
"""

from __future__ import annotations

import json
import time

import numpy as np

from . import group, print_from_json, wanted

# Keys per structure, by mode; per-call and batched operation counts per sample.
SIZES = {"quick": [1 << 20], "full": [1 << 20, 16 << 20]}
PER_CALL_OPS = {"quick": 20_000, "full": 100_000}
BATCH_OPS = {"quick": 100_000, "full": 1_000_000}

# Contender names, one per row.
SIMDEX = "simdex.SortedSet"
SC_SET = "sortedcontainers.SortedSet"
SC_LIST = "sortedcontainers.SortedList"
NUMPY = "numpy.searchsorted (static sorted array)"
SIMDEX_DICT = "simdex.SortedDict"
SC_DICT = "sortedcontainers.SortedDict"
PLAIN_DICT = "dict"
PLAIN_SET = "set"


def _version(mod) -> str:
    return str(getattr(mod, "__version__", ""))


def _distinct_keys(count: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 1 << 62, size=count + count // 8 + 16, dtype=np.int64))
    rng.shuffle(keys)
    return keys[:count]


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


def _seconds_getitem(container, items) -> float:
    v = None
    t0 = time.perf_counter()
    for k in items:
        v = container[k]
    t = time.perf_counter() - t0
    del v
    return t


def _seconds_get(container, items) -> float:
    # container.get(k) written out, as a loop would: the method lookup is part of the call.
    v = None
    t0 = time.perf_counter()
    for k in items:
        v = container.get(k)
    t = time.perf_counter() - t0
    del v
    return t


def _seconds_setitem(container, items) -> float:
    t0 = time.perf_counter()
    for k in items:
        container[k] = k
    return time.perf_counter() - t0


def _seconds_pop(container, items) -> float:
    v = None
    t0 = time.perf_counter()
    for k in items:
        v = container.pop(k)
    t = time.perf_counter() - t0
    del v
    return t


def _seconds_setdefault(container, items) -> float:
    v = None
    t0 = time.perf_counter()
    for k in items:
        v = container.setdefault(k, None)
    t = time.perf_counter() - t0
    del v
    return t


def _seconds_discard(container, items) -> float:
    t0 = time.perf_counter()
    for k in items:
        container.discard(k)
    return time.perf_counter() - t0


def _delete_each(container, items) -> None:
    for k in items:
        del container[k]


def _assign_each(container, items) -> None:
    for k in items:
        container[k] = k


def _add_each(container, items) -> None:
    for k in items:
        container.add(k)


DICT_WORKLOADS = ("py_dict_getitem_hit", "py_dict_get_hit", "py_dict_get_miss", "py_dict_contains_miss",
                  "py_dict_setitem", "py_dict_pop", "py_dict_setdefault_hit")
WORKLOADS = ("py_add", "py_contains_hit", "py_contains_miss", "py_set_discard", "py_add_batched",
             "py_contains_hit_batched", "py_contains_miss_batched", "py_bisect_left_batched", *DICT_WORKLOADS)


def _per_item(seconds, container, probes):
    """A sampler: each call times seconds(container, items) over the next of probes (in turn)
    and gives nanoseconds per item."""
    calls = [0]

    def sample():
        items = probes[calls[0] % len(probes)]
        calls[0] += 1
        return seconds(container, items) * 1e9 / len(items)
    return sample


def _per_item_restored(seconds, container, items, restore):
    """A sampler for calls that change the key set: times seconds(container, items), then puts
    the keys back with restore(container, items), untimed; nanoseconds per item."""
    def sample():
        t = seconds(container, items)
        restore(container, items)
        return t * 1e9 / len(items)
    return sample


def _dict_rows(doc: dict, params: dict, base: list, fresh: list, q: int, reps: int, seed: int, sc_v: str) -> None:
    """SortedDict single-key calls at len(base) keys (values: distinct ints), each against
    sortedcontainers.SortedDict and a plain dict: d[k], d.get(k) and d.setdefault(k, None) of
    present keys, d.get(k) and ``in`` of absent ones, d[k] = v of new keys (deleted again,
    untimed) and d.pop(k) of distinct present keys (put back, untimed)."""
    if not wanted(*DICT_WORKLOADS):
        return
    from sortedcontainers import SortedDict as ScSortedDict

    from simdex.btree import SortedDict

    values = list(range(len(base)))
    dicts = {SIMDEX_DICT: ("", SortedDict(zip(base, values))), SC_DICT: (sc_v, ScSortedDict(zip(base, values))),
             PLAIN_DICT: ("", dict(zip(base, values)))}
    p = {**params, "simdex_pages": dicts[SIMDEX_DICT][1].pages, "ops": q}
    rng = np.random.default_rng(seed)

    def per_call(seconds, pool):
        probes = [[pool[i] for i in rng.integers(0, len(pool), size=q)] for _ in range(reps)]

        return {name: (v, _per_item(seconds, d, probes)) for name, (v, d) in dicts.items()}

    for workload, seconds, pool in (("py_dict_getitem_hit", _seconds_getitem, base),
                                    ("py_dict_get_hit", _seconds_get, base),
                                    ("py_dict_get_miss", _seconds_get, fresh),
                                    ("py_dict_contains_miss", _seconds_contains, fresh),
                                    ("py_dict_setdefault_hit", _seconds_setdefault, base)):
        if wanted(workload):
            group(doc, workload, p, "ns/op", "lower", per_call(seconds, pool), SC_DICT, reps)

    popped = [base[i] for i in rng.choice(len(base), size=min(q, len(base)), replace=False)]
    for workload, seconds, items, restore in (("py_dict_setitem", _seconds_setitem, fresh[:q], _delete_each),
                                              ("py_dict_pop", _seconds_pop, popped, _assign_each)):
        group(doc, workload, p, "ns/op", "lower",
              {name: (v, _per_item_restored(seconds, d, items, restore)) for name, (v, d) in dicts.items()},
              SC_DICT, reps)


def run(doc: dict, mode: str, reps: int) -> None:
    if not wanted(*WORKLOADS):
        return
    try:
        from simdex.btree import SortedSet
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
        base_list = base.tolist()
        sd = SortedSet(base)  # dtype int64; pages "auto": a build this large starts on 2 MiB pages
        sl = SortedList(base_list)
        ss = ScSortedSet(base_list)
        sorted_np = np.sort(base)
        rng = np.random.default_rng(n + 1)
        p = {"n": n, "key": "i64", "keys": "sparse", "api": "python", "simdex_pages": sd.pages}

        # Per call: add fresh keys one by one, then remove them untimed.
        adds = fresh[:q].tolist()

        def per_call_add(add, remove):
            def sample():
                t = _seconds_loop(add, adds)
                for k in adds:
                    remove(k)
                return t * 1e9 / len(adds)
            return sample

        group(doc, "py_add", {**p, "ops": q}, "ns/op", "lower", {
            SIMDEX: ("", per_call_add(sd.add, sd.discard)),
            SC_SET: (sc_v, per_call_add(ss.add, ss.discard)),
            SC_LIST: (sc_v, per_call_add(sl.add, sl.remove)),
        }, SC_SET, reps)

        for what, pool in (("hit", base), ("miss", fresh)):
            probes = [pool[rng.integers(0, len(pool), size=q)].tolist() for _ in range(reps)]

            group(doc, f"py_contains_{what}", {**p, "ops": q}, "ns/op", "lower", {
                SIMDEX: ("", _per_item(_seconds_contains, sd, probes)),
                SC_SET: (sc_v, _per_item(_seconds_contains, ss, probes)),
                SC_LIST: (sc_v, _per_item(_seconds_contains, sl, probes)),
            }, SC_SET, reps)

        # Batched inserts: one numpy call against sortedcontainers' loops and its update().
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

        def undo_each(remove):
            return lambda: _seconds_loop(remove, batch_list)

        group(doc, "py_add_batched", {**p, "ops": qb}, "ns/op", "lower", {
            f"{SIMDEX}.add_many": ("", timed_restore(lambda: sd.add_many(batch), lambda: sd.discard_many(batch))),
            f"{SC_SET}.add loop": (sc_v, timed_restore(lambda: _seconds_loop(ss.add, batch_list), undo_each(ss.discard))),
            f"{SC_SET}.update": (sc_v, timed_restore(lambda: ss.update(batch_list), undo_each(ss.discard))),
            f"{SC_LIST}.add loop": (sc_v, timed_restore(lambda: _seconds_loop(sl.add, batch_list), undo_each(sl.remove))),
            f"{SC_LIST}.update": (sc_v, timed_restore(lambda: sl.update(batch_list), undo_each(sl.remove))),
        }, f"{SC_SET}.add loop", reps)

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

        # Batched lookups: hits drawn from the keys, misses from keys the set does not hold now
        # (the add_many rows above inserted and removed them).
        for what, pool in (("hit", base), ("miss", fresh)):
            arrays = [pool[rng.integers(0, len(pool), size=qb)] for _ in range(reps)]
            lists = [a.tolist() for a in arrays]
            group(doc, f"py_contains_{what}_batched", {**p, "ops": qb}, "ns/op", "lower", {
                f"{SIMDEX}.contains_many": ("", batched_sample(sd.contains_many, arrays)),
                f"{SC_SET} in loop": (sc_v, batched_sample(lambda x: [k in ss for k in x], lists)),
                f"{SC_LIST} in loop": (sc_v, batched_sample(lambda x: [k in sl for k in x], lists)),
                NUMPY: (np_v, batched_sample(searchsorted_contains, arrays)),
            }, f"{SC_SET} in loop", reps)

        anywhere = [rng.integers(0, 1 << 62, size=qb, dtype=np.int64) for _ in range(reps)]
        anywhere_list = [a.tolist() for a in anywhere]
        group(doc, "py_bisect_left_batched", {**p, "ops": qb}, "ns/op", "lower", {
            f"{SIMDEX}.bisect_many": ("", batched_sample(sd.bisect_many, anywhere)),
            f"{SC_SET}.bisect_left loop": (sc_v, batched_sample(lambda x: [ss.bisect_left(k) for k in x], anywhere_list)),
            f"{SC_LIST}.bisect_left loop": (sc_v, batched_sample(lambda x: [sl.bisect_left(k) for k in x], anywhere_list)),
            NUMPY: (np_v, batched_sample(lambda x: np.searchsorted(sorted_np, x), anywhere)),
        }, f"{SC_SET}.bisect_left loop", reps)

        # Per call: discard distinct present keys, then add them back untimed.
        if wanted("py_set_discard"):
            gone = base[rng.choice(n, size=min(q, n), replace=False)].tolist()
            plain = set(base_list)
            group(doc, "py_set_discard", {**p, "ops": q}, "ns/op", "lower", {
                SIMDEX: ("", _per_item_restored(_seconds_discard, sd, gone, _add_each)),
                SC_SET: (sc_v, _per_item_restored(_seconds_discard, ss, gone, _add_each)),
                SC_LIST: (sc_v, _per_item_restored(_seconds_discard, sl, gone, _add_each)),
                PLAIN_SET: ("", _per_item_restored(_seconds_discard, plain, gone, _add_each)),
            }, SC_SET, reps)
            plain = None

        sd = sl = ss = None  # free the sets before the dicts are built
        _dict_rows(doc, {k: v for k, v in p.items() if k != "simdex_pages"}, base_list, fresh.tolist(), q, reps,
                   n + 2, sc_v)


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
    # The stricter bar for trees built by random inserts and for 8-byte keys (N = 16M, 64M).
    ("fill_random", {}, "simdex::btree_set", "absl::btree_set", "speedup", 1.5),
    ("erase_half", {}, "simdex::btree_set", "absl::btree_set", "speedup", 1.5),
    ("contains_hit", {"key": "u64"}, "simdex::btree_set", "absl::btree_set", "speedup", 3.0),
    ("contains_miss", {"key": "u64"}, "simdex::btree_set", "absl::btree_set", "speedup", 4.0),
    ("contains_miss", {"key": "u32"}, "simdex::btree_set", "absl::btree_set", "speedup", 4.0),
    ("lower_bound", {"key": "u64"}, "simdex::btree_set", "absl::btree_set", "speedup", 2.5),
    ("lower_bound_latency", {}, "simdex::btree_set", "absl::btree_set", "speedup", 1.0),
]
# (workload, simdex contender, peer contenders (the fastest of them is the peer), bar).
_PY_BAR = [
    ("py_add", SIMDEX, (SC_SET,), 1.0),
    ("py_contains_hit", SIMDEX, (SC_SET,), 1.0),
    ("py_contains_miss", SIMDEX, (SC_SET,), 1.0),
    ("py_set_discard", SIMDEX, (SC_SET,), 1.0),
    *((w, SIMDEX_DICT, (SC_DICT,), 1.0) for w in DICT_WORKLOADS),
    ("py_add_batched", f"{SIMDEX}.add_many", (f"{SC_SET}.add loop", f"{SC_SET}.update"), 30.0),
    ("py_contains_hit_batched", f"{SIMDEX}.contains_many", (f"{SC_SET} in loop",), 30.0),
    ("py_contains_miss_batched", f"{SIMDEX}.contains_many", (f"{SC_SET} in loop",), 30.0),
    ("py_add_batched", f"{SIMDEX}.add_many", (f"{SC_LIST}.add loop", f"{SC_LIST}.update"), 100.0),
    ("py_contains_hit_batched", f"{SIMDEX}.contains_many", (f"{SC_LIST} in loop",), 100.0),
    ("py_contains_miss_batched", f"{SIMDEX}.contains_many", (f"{SC_LIST} in loop",), 100.0),
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
    rows = ["| item | N | key | pages | simdex | peer | ratio | target | |", "|---|---|---|---|---|---|---|---|---|"]
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
    for (w, me, peers, thr) in _PY_BAR:
        for r in results:
            if r["workload"] != w or r["contender"] != me or not r["median"]:
                continue
            n = r["params"].get("n")
            theirs = [x for x in results if x["workload"] == w and x["contender"] in peers and x["params"].get("n") == n and x["median"]]
            if not theirs:
                continue
            b = min(theirs, key=lambda x: x["median"])
            ratio = b["median"] / r["median"]
            noisy = "~" if r.get("noisy") or b.get("noisy") else ""
            rows.append(f"| {w} vs {b['contender']} | {n} | i64 | {r['params'].get('simdex_pages', '-')} | {r['median']:.4g} {r['unit']} | "
                        f"{b['median']:.4g} | {ratio:.2f}{noisy} | >= {thr:g}x | {'met' if ratio >= thr else 'MISSED'} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print_from_json("btree", bar_table)


# --- the report's view: headline rows and ns/op against N ---------------------------------------

_U64 = {"key": "u64", "keys": "sparse", "pages": "2m"}
_NATIVE_PEERS = ["absl::btree_set", "std::set", "JudyL"]
HEADLINE_NOTE = ("ordered indexes: absl::btree_set, std::set and JudyL (Python: sortedcontainers.SortedSet); "
                 "absl::flat_hash_set and a sorted vector, in the tables, answer membership without order "
                 "or take no inserts, and are not in the summary.")
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
