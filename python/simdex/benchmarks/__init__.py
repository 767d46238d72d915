"""Python-side benchmarks that join a component's native JSON (same schema, same run).

``simdex bench`` runs ``bench_<component>`` first, then ``simdex.benchmarks.<component>.run``
if that module exists: ``run(doc, mode, reps)`` measures Python-level contenders (CPython's
``base64``, sortedcontainers, ...) and adds results to ``doc`` with :func:`group`.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Mapping
from typing import Callable

# Workload-name filters of this run (`simdex bench --only`): a group whose workload contains
# none of them is not measured. Empty: every workload.
ONLY: tuple[str, ...] = ()


def wanted(*workloads: str) -> bool:
    """Whether --only leaves any of these workloads in (to skip a whole setup when not)."""
    return not ONLY or any(o in w for w in workloads for o in ONLY)


def summarize(samples: list[float]) -> dict:
    s = sorted(samples)
    return {
        "samples": samples,
        "median": statistics.median(s),
        "min": s[0],
        "max": s[-1],
        "noisy": bool(s[0] > 0 and s[-1] / s[0] > 1.5),
    }


def group(doc: dict, workload: str, params: Mapping, unit: str, better: str,
          contenders: Mapping[str, tuple[str, Callable[[], float]]], reference: str, reps: int) -> None:
    """Measure ``contenders`` (name -> (version, sample_fn)) ``reps`` times, interleaved, and
    append one result each to ``doc["results"]`` with the ratio against ``reference``; nothing
    when --only leaves the workload out."""
    if not wanted(workload):
        return
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(reps):
        for name, (_, fn) in contenders.items():
            samples[name].append(float(fn()))
    ref = statistics.median(samples[reference]) if reference in samples else 0.0
    for name, (version, _) in contenders.items():
        row = {"workload": workload, "params": dict(params), "contender": name, "version": version,
               "unit": unit, "better": better, **summarize(samples[name])}
        if ref > 0 and row["median"] > 0:
            value = ref / row["median"] if better == "lower" else row["median"] / ref
            row["ratio"] = {"reference": reference, "value": value}
        doc.setdefault("results", []).append(row)


def timed(fn: Callable[[], object], min_seconds: float = 0.02) -> float:
    """Seconds per call of ``fn``, repeating it until ``min_seconds`` have passed."""
    n = 0
    t0 = time.perf_counter()
    while True:
        fn()
        n += 1
        t = time.perf_counter() - t0
        if t >= min_seconds:
            return t / n


def print_from_json(component: str, render: Callable[[dict], str]) -> None:
    """``python -m simdex.benchmarks.<component> RESULTS/<component>.json``: prints ``render``'s
    view of that run's JSON."""
    if len(sys.argv) != 2:
        print(f"usage: python -m simdex.benchmarks.{component} RESULTS/{component}.json", file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as f:
        print(render(json.load(f)))
