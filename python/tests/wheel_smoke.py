"""Smoke test of an installed simdex (run by test_wheel.py inside a fresh venv, with no compiler
on PATH and libxxhash hidden): every component answers once, the package carries its types and
C++ files, and a benchmark program runs. Prints "smoke ok" and exits 0, or fails loudly."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import simdex

pkg = Path(simdex.__file__).parent
assert not str(pkg).startswith(os.environ.get("SIMDEX_SOURCE", "/nonexistent")), f"imported from the source tree: {pkg}"

# The package: stubs, py.typed, C++ headers and CMake package inside it; no binding sources.
for rel in ("py.typed", "_simdex/__init__.pyi", "include/simdex/cpu.h", "lib/libsimdex.a",
            "lib/cmake/simdex/simdexConfig.cmake"):
    assert (pkg / rel).exists(), rel
assert not list(pkg.glob("_ext/*.cc")), "binding sources shipped"
assert Path(simdex.get_cmake_dir()) == pkg / "lib" / "cmake" / "simdex"

info = simdex.cpu_info()
assert info["isa"] in info["levels"]

# One call per component.
from simdex import base85  # noqa: E402

data = bytes(range(256)) * 40
for v in ("b85", "a85", "z85"):
    enc, dec = getattr(base85, f"{v}encode"), getattr(base85, f"{v}decode")
    assert dec(enc(data)) == data, v
try:
    base85.b85decode(b"ab\x00cd")
    raise AssertionError("bad input accepted")
except ValueError as e:
    assert "2" in str(e), e

# CPython's own tests of the functions base85 replaces, from this interpreter (which may have
# the z85 ones): each must pass; a missing suite is said, not failed (venvs of any CPython).
import cpython_base64  # noqa: E402  (beside this file)

suite, missing = cpython_base64.load()
if suite is None:
    print(f"note: {missing}")
else:
    suite.base64 = cpython_base64.with_simdex(base85)
    ran = cpython_base64.cases(suite)
    failed = {f"{c.__name__}.{n}": cpython_base64.run(c, n) for c, n in ran}
    failed = {k: v for k, v in failed.items() if v}
    assert ran and not failed, failed
    print(f"CPython's test_base64: {len(ran)} Base85 cases passed")

f = simdex.BloomFilter(ndv=1000, fpp=0.01)
f.insert(np.arange(1000, dtype=np.int64))
assert f.check(np.arange(1000, dtype=np.int64)).all()
assert simdex.BloomFilter.from_bytes(f.to_bytes()) == f

s = simdex.SortedSet([5, 1, 9])
s.add(3)
assert list(s) == [1, 3, 5, 9] and 5 in s and 4 not in s
d = simdex.SortedDict({2: 20, 1: 10})
assert list(d.keys()) == [1, 2]

from simdex import kv  # noqa: E402

db = kv.open(None)
with db.write() as tx:
    tx[b"k"] = b"v"
with db.read() as snap:
    assert snap[b"k"] == b"v"

p = simdex.primitives
assert p.lower_bound(np.array([1, 3, 5], np.uint8), 4) == 2
assert p.find_u32x16(np.array([7, 8, 9], np.uint32), 9) == 2
assert p.rank_table(np.array([1, 0] * 8, np.uint8))[3] == 2
assert p.find_min_index(np.arange(32, 0, -1, dtype=np.uint16)) == 31
assert p.remap_branches(np.array([0x12], np.uint8), np.arange(16, dtype=np.uint8)[::-1].copy())[0] == 0xE2

# The command line: a benchmark program from the wheel runs, and a left-out one says why.
with tempfile.TemporaryDirectory() as out:
    cmd = [sys.executable, "-m", "simdex"]
    r = subprocess.run(cmd + ["bench", "primitives", "--reps", "1", "--no-probe", "--only", "rank_table", "--out", out],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads((Path(out) / "primitives.json").read_text())
    assert {x["workload"] for x in doc["results"]} == {"rank_table"}
    assert (Path(out) / "REPORT.md").read_text().startswith("# simdex benchmark report")
    from simdex import bench

    if "btree" not in bench.available():  # a wheel: its peers are outside shared libraries
        r = subprocess.run(cmd + ["bench", "btree", "--out", out], capture_output=True, text=True)
        assert r.returncode == 2 and "source checkout" in r.stderr, (r.returncode, r.stderr)
    r = subprocess.run(cmd + ["--version"], capture_output=True, text=True)
    assert r.stdout.strip() == f"simdex {simdex.__version__}", r.stdout

print("smoke ok")
