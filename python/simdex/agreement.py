"""Do the lab's memory figures agree with the machine limits the other benchmark programs
record? They run the same code (``simdex::lab::measure_memory_limits``), so a gap wider than
the machine's own run-to-run noise means one of the runs was disturbed, or the code paths
have drifted apart. The report shows the comparison whenever a lab run sits beside at least
one other component's run."""

from __future__ import annotations

import statistics

TOLERANCE = 0.10  # the largest gap between the lab and the other runs still read as agreement

# (label, key into the machine block, the lab experiment that measures the same thing)
FIGURES = (
    ("memcpy, 4 KiB pages (GiB/s)", ("memcpy_gib_s", "4k"), None),
    ("memcpy, 2 MiB pages (GiB/s)", ("memcpy_gib_s", "2m"), None),
    ("DRAM latency, 1 chain, 4 KiB pages (ns)", ("latency_ns", "4k", "chains_1"),
     ("pointer_chase.latency", "1 chain, 4k pages")),
    ("DRAM latency, 1 chain, 2 MiB pages (ns)", ("latency_ns", "2m", "chains_1"),
     ("pointer_chase.latency", "1 chain, 2m pages")),
)

HEAD = ["figure", "lab", "other runs: median (min-max)", "apart", f"within {TOLERANCE:.0%}"]


def _machine_figure(doc: dict, path: tuple) -> float | None:
    node = doc.get("machine") or {}
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
    value = node.get("median") if isinstance(node, dict) else None
    return float(value) if value else None


def _lab_figure(doc: dict, path: tuple, experiment: tuple | None) -> tuple[float | None, str]:
    """The lab's own experiment where it has one (pointer_chase), else the lab program's probe."""
    if experiment is not None:
        workload, contender = experiment
        for r in doc.get("results", []):
            if r.get("workload") == workload and r.get("contender") == contender and r.get("median"):
                return float(r["median"]), workload.split(".")[0]
    return _machine_figure(doc, path), "probe"


def _fmt(x: float) -> str:
    return f"{x:.3g}" if x < 100 else f"{x:.0f}"


def rows(docs: list[dict]) -> list[list[str]]:
    """One row per figure: the lab's value, the other runs' median and range, the gap relative
    to that median, and whether it is within TOLERANCE. Empty without a lab run and another."""
    labs = [d for d in docs if d.get("component") == "lab"]
    others = [d for d in docs if d.get("component") != "lab" and d.get("machine")]
    if not labs or not others:
        return []
    out = []
    for label, path, experiment in FIGURES:
        mine, source = _lab_figure(labs[0], path, experiment)
        theirs = [v for v in (_machine_figure(d, path) for d in others) if v is not None]
        if mine is None or not theirs:
            continue
        mid = statistics.median(theirs)
        gap = abs(mine - mid) / mid
        out.append([f"{label} [{source}]", _fmt(mine),
                    f"{_fmt(mid)} ({_fmt(min(theirs))}-{_fmt(max(theirs))}, {len(theirs)} runs)",
                    f"{gap:.1%}", "yes" if gap <= TOLERANCE else "no"])
    return out


NOTE = (f"The lab measures memory with the same code as every program's machine probe, so its figures "
        f"should sit within {TOLERANCE:.0%} of the other runs' median; a gap beyond that means the runs "
        "met a different machine (other load, other page placement) and the two should be rerun side by side.")
