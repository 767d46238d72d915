"""The report at a glance: per component, its headline workloads with simdex's figure, the best
peer's, their ratio, and the machine limit that bounds them; and the scaling plots it asks for.

A component names these in ``simdex.benchmarks.<component>`` (both optional)::

    HEADLINES = [
        {"workload": "b85_encode",       # required
         "params": {"variant": "b85"},   # the row must have these (a list: any of them); of the
                                         # rows that do, the last in the file (the largest) is shown
         "limit": "memcpy",              # the machine figure beside it (see LIMITS)
         "simdex": "simdex-bulk",        # the simdex contender to show (default: see below)
         "peers": ["arrow"]},            # names (or name prefixes) of the contenders that count
                                         # as peers (default: every contender not simdex's)
    ]
    SCALING = [
        {"workload": "check_bulk", "x": "filter_bytes",         # the figure against this param
         "params": {"probe": "miss"}, "limits": ["dram16"]},     # fixed params; limit lines
    ]

A contender whose name starts with "simdex" or is an ISA level (``scalar`` ... ``avx512vbmi``) is
simdex's; ``memcpy`` is a machine limit, never a peer; every other contender is a peer. By
default the simdex figure is what a default call runs: the highest ISA level in the row at or
below the run's active one, else the contender named ``simdex``, else the best simdex
contender. Where a row has no peer, the
ratio is against the row's own reference (simdex's scalar code, say) and says so. Without
``HEADLINES`` a component shows the first six workloads measured in time or throughput, each
against the peer its benchmark names as the reference of its ratios.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Optional

from . import components

ISA_LEVELS = ("scalar", "sse4.2", "avx2", "avx512", "avx512vbmi")
LIMIT_CONTENDERS = ("memcpy",)
DEFAULT_COUNT = 6

# limit name -> (label, unit, path into the run's "machine" object; "{pages}" is 4k or 2m)
LIMITS = {
    "memcpy": ("memcpy", "GiB/s", ("memcpy_gib_s", "{pages}", "median")),
    "dram": ("DRAM latency, 1 chain", "ns", ("latency_ns", "{pages}", "chains_1", "median")),
    "dram16": ("DRAM, 16 chains", "ns/access", ("latency_ns", "{pages}", "chains_16", "median")),
    "cycle": ("one cycle", "ns", ("cycle_ns",)),
}


@dataclass
class Figure:
    contender: str
    median: float
    noisy: bool = False
    below_one_cycle: bool = False   # a time under one core cycle: hoisted or elided work


@dataclass
class Headline:
    component: str
    workload: str
    params: dict
    unit: str
    better: str
    simdex: Figure
    peer: Optional[Figure]          # None: nothing to compare with in this row
    peer_is_reference: bool         # no peer: the comparison is with the row's own reference
    ratio: Optional[float]          # > 1: simdex better
    limit: Optional[tuple[str, str, float, bool]] = None  # (label, unit, value, noisy)


def role(contender: str) -> str:
    """'simdex', 'limit' or 'peer'."""
    if contender.lower().startswith("simdex") or contender in ISA_LEVELS:
        return "simdex"
    if contender in LIMIT_CONTENDERS:
        return "limit"
    return "peer"


def declared(component: str, name: str) -> Any:
    mod = components.part("benchmarks", component)
    return getattr(mod, name, None) if mod is not None else None


def rows_by_workload(doc: dict) -> OrderedDict:
    """workload -> list of (params, {contender: result}) in file order."""
    out: OrderedDict[str, list] = OrderedDict()
    for r in doc.get("results", []):
        rows = out.setdefault(r["workload"], [])
        for params, row in rows:
            if params == r["params"]:
                row[r["contender"]] = r
                break
        else:
            rows.append((r["params"], {r["contender"]: r}))
    return out


def _matches(params: dict, want: dict) -> bool:
    """``params`` has every value of ``want``; a list in ``want`` means any of its values."""
    return all(params.get(k) in v if isinstance(v, (list, tuple)) else params.get(k) == v for k, v in want.items())


def _is_speed(unit: str) -> bool:
    return unit.startswith("ns") or unit.endswith("/s")


def default_headlines(doc: dict) -> list[dict]:
    """The first DEFAULT_COUNT workloads in time or throughput; the peer is the one the
    benchmark chose as its ratio reference, when that is a peer."""
    out = []
    for workload, rows in rows_by_workload(doc).items():
        results = [r for _, row in rows for r in row.values()]
        if not _is_speed(results[0]["unit"]):
            continue
        spec = {"workload": workload, "limit": "memcpy" if results[0]["unit"] == "GiB/s" else None}
        ref = next((r["ratio"]["reference"] for r in results if r.get("ratio")), None)
        if ref and role(ref) == "peer":
            spec["peers"] = [ref]
        out.append(spec)
        if len(out) == DEFAULT_COUNT:
            break
    return out


def machine_limit(name: Optional[str], params: dict, machine: Optional[dict]) -> Optional[tuple[str, str, float, bool]]:
    """(label, unit, value, noisy) of the machine figure ``name`` for a row with ``params``."""
    if not name or not machine or name not in LIMITS:
        return None
    label, unit, path = LIMITS[name]
    pages = params.get("pages") if params.get("pages") in ("4k", "2m") else "4k"
    node: Any = machine
    parent: Any = None  # the figure's own object, where its "noisy" is
    for key in path:
        parent, node = node, (node.get(key.format(pages=pages)) if isinstance(node, dict) else None)
    if not isinstance(node, (int, float)) or node <= 0:
        return None
    if "{pages}" in path:
        label += f" ({pages} pages)"
    return label, unit, float(node), parent is not machine and parent.get("noisy") is True


def dispatched(row: dict, active: Optional[str]) -> Optional[str]:
    """The contender a default call runs: the highest ISA level in the row at or below the
    active one, else the one named "simdex"."""
    if active in ISA_LEVELS:
        levels = [c for c in ISA_LEVELS[: ISA_LEVELS.index(active) + 1] if c in row and row[c].get("median")]
        if levels:
            return levels[-1]
    return "simdex" if "simdex" in row and row["simdex"].get("median") else None


def _best(results: list[dict], better: str) -> Optional[dict]:
    results = [r for r in results if r.get("median")]
    if not results:
        return None
    return (min if better == "lower" else max)(results, key=lambda r: r["median"])


def _figure(r: dict) -> Figure:
    return Figure(r["contender"], float(r["median"]), bool(r.get("noisy")), r.get("below_one_cycle") is True)


def headline(component: str, doc: dict, spec: dict, machine: Optional[dict]) -> Optional[Headline]:
    rows = [(p, row) for p, row in rows_by_workload(doc).get(spec["workload"], []) if _matches(p, spec.get("params", {}))]
    rows = [(p, row) for p, row in rows if any(r.get("median") for r in row.values())]
    if not rows:
        return None
    params, row = rows[-1]
    any_r = next(iter(row.values()))
    unit, better = any_r["unit"], any_r["better"]
    ours = [r for c, r in row.items() if role(c) == "simdex"]
    pick = spec.get("simdex")
    if pick not in row:  # none named, or not in this run (a peer-matched contender without its peer)
        pick = dispatched(row, doc.get("environment", {}).get("isa_active"))
    me = row.get(pick) if pick else _best(ours, better)
    if me is None or not me.get("median"):
        return None
    names = spec.get("peers")
    if names is not None:  # names or name prefixes ("arrow" for "arrow-26.0.1")
        peers = [r for c, r in row.items() if any(c.startswith(n) for n in names)]
    else:
        peers = [r for c, r in row.items() if role(c) == "peer"]
    peer = _best(peers, better)
    is_ref = False
    if peer is None:
        ref = me.get("ratio", {}).get("reference") or next((r["ratio"]["reference"] for r in row.values() if r.get("ratio")), None)
        if ref and ref in row and ref != me["contender"] and row[ref].get("median"):
            peer, is_ref = row[ref], True
    ratio = None
    if peer is not None:
        ratio = peer["median"] / me["median"] if better == "lower" else me["median"] / peer["median"]
    return Headline(component, spec["workload"], dict(params), unit, better, _figure(me),
                    _figure(peer) if peer else None, is_ref, ratio, machine_limit(spec.get("limit"), params, machine))


# What tells machines apart in a run's environment: a run copied in from another machine must
# not borrow this one's limits.
MACHINE_KEYS = ("cpu_model", "cores", "memory_bytes", "hypervisor")


def same_machine(a: dict, b: dict) -> bool:
    ea, eb = a.get("environment") or {}, b.get("environment") or {}
    return all(ea.get(k) == eb.get(k) for k in MACHINE_KEYS)


def run_machine(docs: list[dict], like: Optional[dict] = None) -> Optional[dict]:
    """The machine limits of a run: the first document that measured them, on the same machine
    as ``like`` when given."""
    return next((d["machine"] for d in docs if d.get("machine") and (like is None or same_machine(d, like))), None)


def machine_of(doc: dict, docs: list[dict]) -> Optional[dict]:
    """The limits beside ``doc``'s figures: its own, else those another run measured on the same
    machine (a run with --no-probe)."""
    return doc.get("machine") or run_machine(docs, doc)


def headlines(docs: list[dict]) -> list[Headline]:
    out = []
    for doc in docs:
        c = doc["component"]
        specs = declared(c, "HEADLINES")
        for spec in (specs if specs is not None else default_headlines(doc)):
            h = headline(c, doc, spec, machine_of(doc, docs))
            if h is not None:
                out.append(h)
    return out


@dataclass
class Scaling:
    title: str
    x: str
    unit: str
    better: str
    series: dict                    # contender -> [(x, median)]
    limits: list                    # [(label, value, noisy)]
    params: dict


def scalings(doc: dict, machine: Optional[dict]) -> list[Scaling]:
    """The component's SCALING plots that this run has data for (two sizes or more)."""
    out = []
    for spec in declared(doc["component"], "SCALING") or []:
        x, want = spec["x"], spec.get("params", {})
        series: dict[str, list] = {}
        unit = better = ""
        fixed: dict = {}
        for params, row in rows_by_workload(doc).get(spec["workload"], []):
            if x not in params or not _matches(params, want):
                continue
            for c, r in row.items():
                if r.get("median"):
                    series.setdefault(c, []).append((float(params[x]), float(r["median"])))
                    unit, better = r["unit"], r["better"]
            fixed = {k: v for k, v in params.items() if k != x}
        if len({px for s in series.values() for px, _ in s}) < 2:
            continue
        limits = []
        for name in spec.get("limits", []):
            lim = machine_limit(name, fixed, machine)
            if lim is not None:
                limits.append((lim[0], lim[2], lim[3]))
        title = spec.get("title") or f"{spec['workload']}: {unit} against {x}"
        out.append(Scaling(title, x, unit, better, series, limits, want))
    return out
