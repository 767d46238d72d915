"""simdex: SIMD-accelerated building blocks for data systems.

The native core picks the fastest code path for this CPU at import; ``SIMDEX_ISA`` caps it
(scalar, sse4.2, avx2, avx512, avx512vbmi). Any other value makes the first kernel call raise
``ValueError`` naming it and the accepted ones (every ``simdex`` command checks it first and
stops with that message).

Main classes, here and in their modules:

- ``simdex.BloomFilter`` (``simdex.bloom``): Parquet split-block bloom filters, bit-exact
  with Parquet, bulk probes, Parquet file interop.
- ``simdex.SortedSet``, ``simdex.SortedDict`` (``simdex.btree``): sorted containers on a
  SIMD B+ tree with sortedcontainers' names, plus numpy batch calls.

Modules:

- ``simdex.base85``: ``b85encode``/``b85decode``, ``a85encode``/``a85decode``,
  ``z85encode``/``z85decode`` with ``base64``'s signatures, and streaming ``Encoder``/``Decoder``.
- ``simdex.bloom``, ``simdex.btree``: the classes above and their helpers.
- ``simdex.kv``: an ordered, persistent key-value store (``simdex.kv.open``).
- ``simdex.primitives``: the radix-trie node kernels.

``cpu_info()`` tells what the CPU offers and which level each kernel family runs;
``get_include()`` and ``get_cmake_dir()`` locate the C++ headers and CMake package that come
with the wheel (``find_package(simdex)``).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._simdex import components as _built
from ._simdex import cpu_info, primitives

# The native submodule under its public name, so that `import simdex.primitives` and
# `from simdex.primitives import lower_bound` work as for the Python-level components.
primitives.__name__ = f"{__name__}.primitives"
sys.modules.setdefault(primitives.__name__, primitives)

__version__ = "0.1.0"

if TYPE_CHECKING:  # what the lazy names below resolve to (re-exports, for type checkers)
    from . import base85 as base85
    from . import bloom as bloom
    from . import btree as btree
    from . import kv as kv
    from .bloom import BloomFilter as BloomFilter
    from .btree import SortedDict as SortedDict
    from .btree import SortedSet as SortedSet

# Loaded on first use, so that `import simdex` (and the command line) stays quick.
_CLASSES = {"BloomFilter": "bloom", "SortedSet": "btree", "SortedDict": "btree"}
_MODULES = {"base85": "base85", "bloom": "bloom", "btree": "btree", "kv": "kv"}

__all__ = ["cpu_info", "primitives", "get_include", "get_cmake_dir", "__version__"]
__all__ += [name for name, c in {**_CLASSES, **_MODULES}.items() if c in _built]


def __getattr__(name: str) -> Any:
    component = _CLASSES.get(name) or _MODULES.get(name)
    if component is None:
        raise AttributeError(f"module 'simdex' has no attribute {name!r}")
    if component not in _built:
        raise AttributeError(f"simdex.{name}: this simdex was built without the {component} component")
    module = importlib.import_module(f"{__name__}.{component}")
    value = module if name in _MODULES else getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _data_dir(*parts: str) -> Path:
    d = Path(__file__).resolve().parent.joinpath(*parts)
    if not d.is_dir():
        raise FileNotFoundError(f"{d}: this simdex installation has no C++ development files "
                                "(they come with the wheel and with `pip install .`)")
    return d


def get_include() -> str:
    """The folder holding ``simdex/*.h``, for a compiler's ``-I`` (as a str). Raises
    ``FileNotFoundError`` when this installation has no C++ development files."""
    return str(_data_dir("include"))


def get_cmake_dir() -> str:
    """The folder holding ``simdexConfig.cmake`` (as a str): pass it as ``-Dsimdex_DIR=...`` (or
    add it to ``CMAKE_PREFIX_PATH``), then ``find_package(simdex)`` and link ``simdex::simdex``.
    Raises ``FileNotFoundError`` when this installation has no C++ development files."""
    return str(_data_dir("lib", "cmake", "simdex"))
