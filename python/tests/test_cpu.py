import os
import subprocess
import sys

import numpy as np
import pytest

import simdex

# The levels as the native core lists them (SIMDEX_ISA_LEVELS in include/simdex/cpu.h).
LEVELS = simdex.cpu_info()["levels"]


def run_cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "simdex", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def test_cpu_info_shape():
    info = simdex.cpu_info()
    assert LEVELS[0] == "scalar" and len(set(LEVELS)) == len(LEVELS)
    assert info["detected_isa"] in LEVELS
    assert info["isa"] in LEVELS
    assert LEVELS.index(info["isa"]) <= LEVELS.index(info["detected_isa"])
    assert info["vendor"]
    assert any(k["family"] == "primitives" for k in info["kernels"])
    for k in info["kernels"]:
        assert LEVELS.index(k["isa"]) <= LEVELS.index(info["isa"])


@pytest.mark.parametrize("level", LEVELS)
def test_simdex_isa_caps_every_family(level):
    r = run_cli("info", "--json", env={"SIMDEX_ISA": level})
    assert r.returncode == 0, r.stderr
    import json

    info = json.loads(r.stdout)
    expect = LEVELS[min(LEVELS.index(level), LEVELS.index(info["detected_isa"]))]
    assert info["isa"] == expect
    for k in info["kernels"]:
        assert LEVELS.index(k["isa"]) <= LEVELS.index(expect), k


def test_scalar_info_shows_scalar_kernels_everywhere():
    r = run_cli("info", env={"SIMDEX_ISA": "scalar"})
    assert r.returncode == 0, r.stderr
    kernel_lines = r.stdout.split("kernels:")[1].strip().splitlines()
    assert kernel_lines and all(line.split()[-1] == "scalar" for line in kernel_lines)


BAD_ISA = "SIMDEX_ISA='avx1024' is not a level; use one of " + ", ".join(LEVELS)


def test_unknown_isa_is_a_clear_error():
    r = run_cli("info", env={"SIMDEX_ISA": "avx1024"})
    assert r.returncode == 2
    assert r.stderr == f"simdex: {BAD_ISA}\n"
    code = "import simdex\ntry:\n simdex.cpu_info()\nexcept ValueError as e:\n print('ValueError', e)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "SIMDEX_ISA": "avx1024"})
    assert r.stdout == f"ValueError {BAD_ISA}\n", r.stderr


@pytest.mark.parametrize("args", [["base85", "encode"], ["base85", "decode"], ["lab", "list"],
                                  ["bench", "primitives", "--no-probe", "--out", "unused"]])
def test_unknown_isa_is_a_usage_error_of_every_command(args, tmp_path):
    """`simdex base85 encode` printed a traceback at its first kernel call, and `simdex bench`
    reported its program killed (exit -6) after the work; now every command stops at once."""
    r = subprocess.run([sys.executable, "-m", "simdex", *args], capture_output=True, text=True, input="",
                       cwd=tmp_path, env={**os.environ, "SIMDEX_ISA": "avx1024"})
    assert r.returncode == 2 and r.stderr == f"simdex: {BAD_ISA}\n" and r.stdout == ""
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_unknown_isa_through_the_console_script():
    script = os.path.join(os.path.dirname(sys.executable), "simdex")
    if not os.path.isfile(script):
        pytest.skip("no simdex console script beside this interpreter")
    r = subprocess.run([script, "info"], capture_output=True, text=True, env={**os.environ, "SIMDEX_ISA": "avx1024"})
    assert r.returncode == 2 and r.stderr == f"simdex: {BAD_ISA}\n"


def test_unknown_isa_stops_a_benchmark_program_before_its_run(tmp_path):
    """bench_<component> ran its whole benchmark, then died of the uncaught exception
    (std::terminate) where the JSON reports the kernels."""
    from simdex import bench

    if "base85" not in bench.available():
        pytest.skip(f"bench_base85 not built in {bench.bench_dir()}")
    exe = str(bench.bench_dir() / "bench_base85")
    r = subprocess.run([exe, "--quick", "--reps", "1", "--no-probe", "--out", str(tmp_path / "out")], capture_output=True,
                       text=True, env={**os.environ, "SIMDEX_ISA": "avx1024"}, timeout=60)
    assert r.returncode == 2, r.stderr
    assert r.stderr == f"{exe}: {BAD_ISA}\n" and not (tmp_path / "out").exists()


def test_primitives_bindings():
    a = np.array(sorted(np.random.default_rng(1).integers(0, 256, 100)), dtype=np.uint8)
    for key in range(256):
        assert simdex.primitives.lower_bound(a, key) == int(np.searchsorted(a, key, side="left"))
    with pytest.raises(ValueError):
        simdex.primitives.lower_bound(a, 256)
    v = np.random.default_rng(2).integers(0, 5, 64).astype(np.uint16)
    assert simdex.primitives.find_min_index(v) == int(np.argmin(v))
    assert simdex.primitives.find_min_index(v[:32]) == int(np.argmin(v[:32]))
    with pytest.raises(ValueError):
        simdex.primitives.find_min_index(v[:10])
