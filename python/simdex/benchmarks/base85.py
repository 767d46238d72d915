"""Python-level base85: simdex.base85 against CPython's own base64 functions (pure Python
up to 3.14), same inputs, interleaved repetitions; GiB/s of binary data."""

from __future__ import annotations

import base64
import platform
import random

from .. import __version__
from . import group, timed, wanted

_GIB = float(1 << 30)


def run(doc: dict, mode: str, reps: int) -> None:
    from .. import base85 as ours

    if not wanted(*(f"python_{c}{op}" for c in ("b85", "a85", "z85") for op in ("encode", "decode"))):
        return

    sizes = [1 << 20] if mode == "quick" else [1 << 10, 1 << 16, 1 << 20]
    cpy = f"CPython {platform.python_version()}"
    pairs = [("b85", base64.b85encode, base64.b85decode, ours.b85encode, ours.b85decode),
             ("a85", base64.a85encode, base64.a85decode, ours.a85encode, ours.a85decode)]
    if hasattr(base64, "z85encode"):
        pairs.append(("z85", base64.z85encode, base64.z85decode, ours.z85encode, ours.z85decode))
    else:
        doc.setdefault("notes", []).append(
            f"python z85: base64.z85encode/z85decode need Python 3.13+ ({cpy} here); not compared")
    # Each contender is timed on its own inputs, drawn from the same generator, so that no
    # call is repeated on data it has just seen (a pool of distinct inputs per size).
    for n in sizes:
        rng = random.Random(n)
        pool = [rng.randbytes(n) for _ in range(4)]
        for name, c_enc, c_dec, s_enc, s_dec in pairs:
            texts = [s_enc(b) for b in pool]
            assert all(c_dec(t) == b for t, b in zip(texts, pool))
            for op, c_fn, s_fn, inputs in (("encode", c_enc, s_enc, pool), ("decode", c_dec, s_dec, texts)):
                state = {"cpython": 0, "simdex": 0}

                # One call a sample on each side, each on the next input of the pool: simdex
                # was repeated on one input for 10 ms (its input warm in L2) where CPython's
                # single call read its input once.
                def sampler(key, fn):
                    def sample():
                        i = state[key] = (state[key] + 1) % len(inputs)
                        return n / timed(lambda: fn(inputs[i]), 0.0) / _GIB
                    return sample

                group(doc, f"python_{name}{op}", {"variant": name, "bytes": n}, "GiB/s", "higher",
                      {"CPython base64": (cpy, sampler("cpython", c_fn)),
                       "simdex.base85": (__version__, sampler("simdex", s_fn))},
                      "CPython base64", reps)


# The report's view: each codec at its largest size against the best peer, memcpy beside it,
# and GiB/s against the input size.
HEADLINE_NOTE = ("b85 rows compare simdex with its output allocated per call ('simdex alloc') with "
                 "base85-simd, whose API allocates per call, at 1 MiB (at 64 MiB both mostly take page "
                 "faults); the tables also show simdex writing into a reused buffer.")
# b85 against base85-simd: simdex with its output allocated per call, as the peer's API must,
# at 1 MiB (the preallocated-buffer figure stays in the tables; without the peer the default).
HEADLINES = [{"workload": f"{v}_{op}", "limit": "memcpy",
              **({"simdex": "simdex alloc", "params": {"bytes": 1 << 20}} if v == "b85" else {})}
             for v in ("b85", "z85", "a85") for op in ("encode", "decode")]
HEADLINES += [{"workload": f"python_b85{op}"} for op in ("encode", "decode")]

SCALING = [{"workload": f"b85_{op}", "x": "bytes", "limits": ["memcpy"],
            "title": f"b85 {op}: GiB/s of binary data against the input size"} for op in ("encode", "decode")]

