"""The components this build has, in dependency order, and their optional Python parts.

The list comes from CMake's ``SIMDEX_COMPONENTS`` through the extension module, so adding a
component to that list is all the Python side needs: ``simdex.commands.<component>``
(``register(subparsers)``), ``simdex.benchmarks.<component>`` (``run(doc, mode, reps)`` and the
report hooks ``markdown_section(doc)`` / ``html_section(doc)``) are found when they exist.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ._simdex import all_components as _all
from ._simdex import bench_components as _benched
from ._simdex import components as _built

# Every component there is, those this build compiled in, and those with a benchmark program
# (built or not; cpu has none); all in SIMDEX_COMPONENTS order.
ALL: tuple[str, ...] = tuple(_all)
BUILT: tuple[str, ...] = tuple(_built)
BENCHED: tuple[str, ...] = tuple(_benched)


def part(kind: str, component: str) -> ModuleType | None:
    """``simdex.<kind>.<component>`` (kind: ``commands`` or ``benchmarks``), or None where the
    component has no such part. An import error inside an existing module is raised."""
    name = f"simdex.{kind}.{component}"
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name == name:
            return None
        raise
