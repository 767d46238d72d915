"""Report tables for ``bench_kv``: the targets against LMDB and the primitives' system-level
effect (the same store with scalar kernels beside the best level), from one run's JSON.

``python -m simdex.benchmarks.kv RESULTS/kv.json`` prints them as Markdown; ``simdex report``
places them after the kv tables. Every number comes from the file.
"""

from __future__ import annotations

from . import print_from_json

ME, PEER, SCALAR = "simdex", "lmdb", "simdex-scalar"

# The report's summary rows: XXH3 keys, simdex against LMDB only (absl::btree_map and std::map
# are in-memory speed limits without persistence or snapshots, not peers).
_RAND = {"gen": "rand"}
HEADLINE_NOTE = ("LMDB, the persistent store; absl::btree_map and std::map, in the tables, keep nothing "
                 "on disk and are speed limits, not peers.")
HEADLINES = [
    {"workload": w, "params": {**_RAND, **extra}, "simdex": ME, "peers": [PEER], **({"limit": limit} if limit else {})}
    for w, extra, limit in [
        ("insert/tx-per-round", {}, None),
        ("insert/commit-every", {"commit_every": 1}, None),
        ("get/random-hit", {}, "dram"),
        ("get/random-miss", {}, "dram"),
        ("get_many/random-hit", {"batch": 1024}, "dram16"),
        ("lower_bound/random", {}, "dram"),
        ("iterate/full", {}, None),
    ]
]

# (label, workload, extra params, peer workload or None for the same, kind, threshold). kind
# "speedup": simdex / peer >= threshold (rates); "bytes": simdex / peer <= threshold.
_BAR = [
    ("random insert, one transaction per round", "insert/tx-per-round", {}, None, "speedup", 3.0),
    ("insert, commit every operation", "insert/commit-every", {"commit_every": 1}, None, "speedup", 1.0),
    ("random get, hits", "get/random-hit", {}, None, "speedup", 2.0),
    ("random get, misses", "get/random-miss", {}, None, "speedup", 2.0),
    ("get_many (batches of 1024) vs per-key get", "get_many/random-hit", {"batch": 1024}, None, "speedup", 5.0),
    ("lower_bound vs cursor seek", "lower_bound/random", {}, None, "speedup", 2.0),
    ("full iteration vs cursor walk", "iterate/full", {}, None, "speedup", 1.0),
    ("file bytes per key", "bytes-per-key/file", {}, None, "bytes", 1.5),
]

# Workloads whose scalar-vs-SIMD ratio is reported: what the primitives do for the whole store.
_SIMD = ["insert/tx-per-round", "insert/commit-every", "get/insertion-order", "get/random-hit", "get/random-miss",
         "get_many/random-hit", "lower_bound/random", "iterate/full", "remove/random"]


def _fmt(x: float) -> str:
    return f"{x:.3g}" if abs(x) < 100 else f"{x:.0f}"


def _pick(doc: dict, workload: str, contender: str, gen: str, extra: dict) -> dict | None:
    """The result for the largest tree (last round) matching the parameters."""
    best = None
    for r in doc.get("results", []):
        p = r.get("params", {})
        if (r["workload"] != workload or r["contender"] != contender or p.get("gen") != gen
                or any(p.get(k) != v for k, v in extra.items())):
            continue
        if best is None or (p.get("keys", 0), p.get("round", 0)) > (best["params"].get("keys", 0), best["params"].get("round", 0)):
            best = r
    return best


def _noisy(*rs) -> str:
    return "~" if any(r.get("noisy") for r in rs) else ""


def bar_table(doc: dict, gen: str = "rand") -> str:
    """One row per target: simdex's figure, LMDB's, the ratio, the target, met or missed."""
    rows = ["| target | keys | simdex | LMDB | ratio | target | |", "|---|---|---|---|---|---|---|"]
    for label, w, extra, peer_w, kind, thr in _BAR:
        a, b = _pick(doc, w, ME, gen, extra), _pick(doc, peer_w or w, PEER, gen, extra)
        if not a or not b or not a["median"] or not b["median"]:
            continue
        ratio = a["median"] / b["median"]
        ok = ratio <= thr if kind == "bytes" else ratio >= thr
        bar = f"<= {thr}x" if kind == "bytes" else f">= {thr}x"
        rows.append(f"| {label} | {a['params'].get('keys')} | {_fmt(a['median'])} {a['unit']} | {_fmt(b['median'])} | "
                    f"{ratio:.2f}{_noisy(a, b)} | {bar} | {'met' if ok else 'missed'} |")
    # A reader beside a writer: its rate with the writer over its rate alone, same store.
    for suffix, what in (("", "per reader CPU-second"), ("-wall", "per wall-second")):
        alone = _pick(doc, "concurrent/reader-alone" + suffix, ME, gen, {})
        with_w = _pick(doc, "concurrent/reader-with-writer" + suffix, ME, gen, {})
        peer_alone = _pick(doc, "concurrent/reader-alone" + suffix, PEER, gen, {})
        peer_with = _pick(doc, "concurrent/reader-with-writer" + suffix, PEER, gen, {})
        if not alone or not with_w or not alone["median"]:
            continue
        ratio = with_w["median"] / alone["median"]
        peer = (f"{_fmt(peer_with['median'] / peer_alone['median'])} (LMDB's own)"
                if peer_alone and peer_with and peer_alone["median"] else "–")
        bar, verdict = (">= 0.8x", "met" if ratio >= 0.8 else "missed") if not suffix else ("(shown)", "")
        rows.append(f"| reader with a writer / alone, {what} | {alone['params'].get('keys')} | "
                    f"{_fmt(with_w['median'])} / {_fmt(alone['median'])} Mops/s | {peer} | "
                    f"{ratio:.2f}{_noisy(alone, with_w)} | {bar} | {verdict} |")
    return "\n".join(rows)


def simd_table(doc: dict) -> str:
    """simdex (best primitive level) over simdex-scalar, per generator, largest tree."""
    gens = []
    for r in doc.get("results", []):
        g = r.get("params", {}).get("gen")
        if g and g not in gens:
            gens.append(g)
    rows = ["| workload | " + " | ".join(gens) + " |", "|---|" + "---|" * len(gens)]
    for w in _SIMD:
        extras = [{"commit_every": 1}, {"commit_every": 100}] if w == "insert/commit-every" else [{}]
        for extra in extras:
            cells, any_cell = [], False
            for g in gens:
                a, b = _pick(doc, w, ME, g, extra), _pick(doc, w, SCALAR, g, extra)
                if a and b and a["median"] and b["median"]:
                    cells.append(f"{a['median'] / b['median']:.2f}{_noisy(a, b)}")
                    any_cell = True
                else:
                    cells.append("–")
            if any_cell:
                label = w + "".join(f" {k}={v}" for k, v in extra.items())
                rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(rows)


def markdown_section(doc: dict) -> str:
    e = doc.get("environment", {})
    head = (f"Run {doc.get('started')} – {doc.get('finished')}, {doc.get('mode')} mode, {doc.get('repetitions')} "
            f"repetitions, simdex commit {e.get('simdex_commit', '?')}, {e.get('cpu_model', '?')} "
            f"({e.get('cores', '?')} cores), {e.get('kernel', '?')}, THP {e.get('thp', '?')}.")
    return "\n".join([
        "### Targets (XXH3 keys, the largest tree of the run, sync none)", "", head, "",
        "Ratios are simdex over LMDB (for bytes, lower is better); `~`: a figure is noisy (max/min > 1.5).", "",
        bar_table(doc), "",
        "### The primitives' system-level effect (best level over scalar kernels, same run)", "",
        simd_table(doc),
    ])


if __name__ == "__main__":
    print_from_json("kv", markdown_section)
