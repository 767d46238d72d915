"""The built wheels, as a user gets them: what they hold, and each one installed into a clean
venv of another CPython, with no compiler on PATH and libxxhash hidden, running `simdex info`
and wheel_smoke.py.

Opt-in (building wheels takes minutes): `bash scripts/wheels.sh` builds them and runs this file
with SIMDEX_WHEELHOUSE set to their folder. Each Python version is found by scripts/pythons.py;
a version that is not on this machine is skipped, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
WHEELHOUSE = os.environ.get("SIMDEX_WHEELHOUSE")
VERSIONS = os.environ.get("SIMDEX_WHEEL_VERSIONS", "3.9 3.10 3.11 3.12 3.13").split()
# What an extension or program in a manylinux wheel may link: the C and C++ runtimes.
ALLOWED_NEEDED = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "ld-linux-x86-64.so.2",
                  "libpthread.so.0", "libdl.so.2", "librt.so.1"}

pytestmark = pytest.mark.skipif(not WHEELHOUSE, reason="opt-in: bash scripts/wheels.sh builds the wheels and sets SIMDEX_WHEELHOUSE")


def _pythons():
    spec = importlib.util.spec_from_file_location("pythons", ROOT / "scripts" / "pythons.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def wheels() -> list[Path]:
    return sorted(Path(WHEELHOUSE).glob("simdex-*.whl")) if WHEELHOUSE else []


def wheel_for(version: str) -> Path | None:
    """The wheel pip would pick for CPython ``version``: its own cpXY, else the abi3 one."""
    major, minor = (int(x) for x in version.split("."))
    own = [w for w in wheels() if f"-cp{major}{minor}-cp{major}{minor}-" in w.name]
    if own:
        return own[0]
    abi3 = [w for w in wheels() if "-abi3-" in w.name and int(w.name.split("-cp3")[1][:2]) <= minor]
    return abi3[0] if abi3 else None


def test_wheelhouse_has_the_matrix():
    names = [w.name for w in wheels()]
    assert any("-cp312-abi3-" in n for n in names), names
    for n in names:
        assert "manylinux" in n and "linux_x86_64" not in n.replace("manylinux", ""), n


@pytest.mark.parametrize("wheel", wheels(), ids=lambda w: w.name)
def test_wheel_contents(wheel: Path):
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert top <= {"simdex", "simdex.libs"} | {n for n in top if n.endswith(".dist-info")}, top
    assert "simdex.libs" not in top, "auditwheel had to graft outside libraries"
    assert not [n for n in names if n.startswith("simdex/_ext/")], "binding sources shipped"
    for rel in ("simdex/py.typed", "simdex/_simdex/__init__.pyi", "simdex/_simdex/bloom.pyi", "simdex/include/simdex/bloom.h",
                "simdex/lib/libsimdex.a", "simdex/lib/cmake/simdex/simdexConfig.cmake", "simdex/_bin/bench_primitives",
                "simdex/_bin/bench-missing.tsv"):
        assert rel in names, rel
    for n in names:  # no program that needs libraries outside the wheel
        assert not n.startswith(("simdex/_bin/bench_btree", "simdex/_bin/bench_kv", "simdex/_bin/simdex-peer")), n


@pytest.mark.parametrize("wheel", wheels(), ids=lambda w: w.name)
def test_elf_files_need_only_the_c_and_cxx_runtime(wheel: Path, tmp_path: Path):
    if not shutil.which("readelf"):
        pytest.skip("readelf (binutils) not installed")
    zipfile.ZipFile(wheel).extractall(tmp_path)
    checked = 0
    for f in tmp_path.rglob("*"):
        if f.is_file() and f.read_bytes()[:4] == b"\x7fELF":
            out = subprocess.run(["readelf", "-d", str(f)], capture_output=True, text=True, check=True).stdout
            needed = {line.split("[")[1].split("]")[0] for line in out.splitlines() if "(NEEDED)" in line}
            assert needed <= ALLOWED_NEEDED, (f.name, needed - ALLOWED_NEEDED)
            checked += 1
    assert checked >= 2


def _isolated(cmd: list[str], venv: Path, cwd: Path) -> subprocess.CompletedProcess:
    """``cmd`` with only the venv on PATH (no compiler) and, where this user may make a mount
    namespace, every libxxhash hidden behind an empty file."""
    env = {"PATH": str(venv / "bin"), "HOME": str(cwd), "LANG": "C.UTF-8", "SIMDEX_SOURCE": str(ROOT)}
    hide = []
    for lib in Path("/").glob("usr/lib/x86_64-linux-gnu/libxxhash.so*"):
        hide.append(f"mount --bind /dev/null {lib.resolve()} 2>/dev/null || true")
    unshare = shutil.which("unshare")
    if hide and unshare and os.geteuid() == 0:
        script = "; ".join(sorted(set(hide))) + '; exec "$@"'
        cmd = [unshare, "-m", "/bin/sh", "-c", script, "sh", *cmd]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.parametrize("version", VERSIONS)
def test_install_and_smoke(version: str, tmp_path: Path):
    python = _pythons().find(version)
    if python is None:
        pytest.skip(f"CPython {version} not found (scripts/pythons.py: PATH, pyenv, /usr/bin)")
    wheel = wheel_for(version)
    assert wheel is not None, f"no wheel for CPython {version} in {WHEELHOUSE}"
    venv = tmp_path / "venv"
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    r = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--only-binary", ":all:", str(wheel)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    info = _isolated([str(venv / "bin" / "simdex"), "info"], venv, tmp_path)
    assert info.returncode == 0 and "active isa:" in info.stdout, info.stdout + info.stderr
    smoke = _isolated([str(venv / "bin" / "python"), str(Path(__file__).with_name("wheel_smoke.py"))], venv, tmp_path)
    assert smoke.returncode == 0 and "smoke ok" in smoke.stdout, smoke.stdout + smoke.stderr
    suite = next((line for line in smoke.stdout.splitlines() if "test_base64" in line), "")
    print(f"CPython {version} ({python}): {wheel.name}: installed, simdex info and smoke test pass; {suite}")


def test_cmake_package_from_the_wheel(tmp_path: Path):
    """A C++ project finds simdex through `simdex --cmake-dir` of an installed wheel."""
    for tool in ("cmake", "c++"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} not installed")
    # The C++ library and its CMake files are the same in every wheel; prefer this interpreter's.
    wheel = wheel_for(f"{sys.version_info.major}.{sys.version_info.minor}") or next(iter(wheels()), None)
    assert wheel is not None, f"no wheel in {WHEELHOUSE}"
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    cmake_dir = site / "simdex" / "lib" / "cmake" / "simdex"
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(ROOT / "tests" / "install"), "-B", str(build), f"-Dsimdex_DIR={cmake_dir}"],
                   check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True)
    r = subprocess.run([str(build / "consumer")], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
