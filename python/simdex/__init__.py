"""simdex: SIMD-accelerated building blocks for data systems.

The native core picks the fastest code path for this CPU at import; ``SIMDEX_ISA`` caps it
(scalar, sse4.2, avx2, avx512, avx512vbmi).
"""

from ._simdex import cpu_info, primitives

__version__ = "0.1.0"

__all__ = ["cpu_info", "primitives", "__version__"]
