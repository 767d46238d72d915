"""The package's face: what `import simdex` offers, types and docstrings, and the command line."""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import pydoc
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import simdex
from simdex import bench, cli, components

PKG = Path(simdex.__file__).resolve().parent


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "simdex", *args], capture_output=True, text=True)


# --- import simdex ------------------------------------------------------------------------------

def test_top_level_exposes_the_main_classes():
    expected = {"BloomFilter": "bloom", "SortedSet": "btree", "SortedDict": "btree"}
    for name, component in expected.items():
        if component not in components.BUILT:
            continue
        cls = getattr(simdex, name)
        assert cls is getattr(importlib.import_module(f"simdex.{component}"), name)
        assert name in simdex.__all__ and name in dir(simdex)
    for module in ("base85", "bloom", "btree", "kv"):
        if module in components.BUILT:
            assert getattr(simdex, module).__name__ == f"simdex.{module}"
    with pytest.raises(AttributeError):
        simdex.NoSuchThing  # noqa: B018
    assert "SortedSet" in simdex.__doc__ and "simdex.kv" in simdex.__doc__


def test_types_ship_with_the_package():
    assert (PKG / "py.typed").is_file()
    stubs = PKG / "_simdex" / "__init__.pyi"
    if not stubs.is_file():
        pytest.skip(f"no generated stubs beside {PKG} (a development tree, not an installed build)")
    text = stubs.read_text()
    assert "def cpu_info() -> dict" in text
    # One stub per native submodule; a component without bindings (the lab runs as a program)
    # and cpu (bound at the top level) have none.
    from simdex import _simdex

    for c in components.BUILT:
        if isinstance(getattr(_simdex, c, None), types.ModuleType):
            sub = PKG / "_simdex" / f"{c}.pyi"
            assert sub.is_file(), sub
    prim = (PKG / "_simdex" / "primitives.pyi").read_text()
    for k in ("lower_bound", "remap_branches", "rank_table", "find_u32x16", "find_min_index"):
        assert f"def {k}(" in prim, k
    # Every native name the Python modules use (the public classes' bases among them, such as
    # btree's _Set under SortedSet) is in its submodule's stub, or a type checker sees Any there.
    for py in sorted(PKG.glob("*.py")):
        text = py.read_text()
        for sub in re.findall(r"from \._simdex import (\w+) as _native", text):
            stub = (PKG / "_simdex" / f"{sub}.pyi").read_text()
            for name in sorted(set(re.findall(r"_native\.(\w+)", text))):
                assert re.search(rf"^(class|def) {name}\b|^{name}\b", stub, re.M), (py.name, sub, name)


def _public_methods(cls) -> list[str]:
    names = []
    for name, value in inspect.getmembers(cls):
        if name.startswith("_") and name not in ("__contains__", "__or__", "__eq__", "__iter__", "__len__", "__getitem__"):
            continue
        if name in ("__eq__",) and "__eq__" not in cls.__dict__:
            continue
        static = inspect.getattr_static(cls, name)
        if callable(value) or isinstance(static, property):
            names.append(name)
    return names


@pytest.mark.skipif("bloom" not in components.BUILT, reason="bloom not built")
def test_help_on_bloomfilter_documents_every_public_method():
    cls = simdex.BloomFilter
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    for name in _public_methods(cls):
        static = inspect.getattr_static(cls, name)
        doc = static.__doc__ if isinstance(static, property) else inspect.getattr_static(cls, name).__doc__
        if isinstance(static, (classmethod, staticmethod)):
            doc = static.__func__.__doc__
        assert doc and doc.strip(), f"BloomFilter.{name} has no docstring"
        assert name in text


@pytest.mark.skipif("base85" not in components.BUILT, reason="base85 not built")
def test_help_on_base85_documents_every_function_and_method():
    from simdex import base85

    text = pydoc.render_doc(base85, renderer=pydoc.plaintext)
    for name in base85.__all__:
        obj = getattr(base85, name)
        if inspect.isfunction(obj):
            assert obj.__doc__ and obj.__doc__.strip(), name
            assert name in text
        elif inspect.isclass(obj):
            assert obj.__doc__, name
            for m in ("update", "finish"):
                assert getattr(obj, m).__doc__, f"{name}.{m}"


def test_cmake_and_include_dirs():
    try:
        cmake_dir = simdex.get_cmake_dir()
    except FileNotFoundError as e:
        r = run("--cmake-dir")
        assert r.returncode == 1 and "no C++ development files" in r.stderr
        pytest.skip(f"installed without C++ files: {e}")
    assert (Path(cmake_dir) / "simdexConfig.cmake").is_file()
    assert (Path(simdex.get_include()) / "simdex" / "cpu.h").is_file()
    assert run("--cmake-dir").stdout.strip() == cmake_dir
    assert run("--include-dir").stdout.strip() == simdex.get_include()


# --- the command line ---------------------------------------------------------------------------

def test_version():
    r = run("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"simdex {simdex.__version__}"


def test_bare_command_prints_help():
    r = run()
    assert r.returncode == 0
    assert r.stdout.startswith("usage: simdex") and "info" in r.stdout and "bench" in r.stdout


def _all_parsers(parser: argparse.ArgumentParser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _all_parsers(sub)


def test_help_texts_have_no_rst_markup():
    parsers = list(_all_parsers(cli.build_parser()))
    assert len(parsers) >= 4
    for p in parsers:
        text = p.format_help()
        assert "``" not in text and ":func:" not in text and ":class:" not in text, (p.prog, text)


def test_bench_help_lists_the_components():
    r = run("bench", "--help")
    assert r.returncode == 0
    listed = r.stdout.split("components (all by default):", 1)[1]
    for c in components.BENCHED:
        assert f"\n  {c}" in listed, c
    # cpu has no benchmark program of its own (its probe runs inside every one), so it is not
    # listed as a program this installation lacks; a built component with a program is not either.
    assert "\n  cpu" not in listed
    assert "cpu" in components.BUILT and "cpu" not in components.BENCHED
    for c in bench.available():
        assert f"\n  {c}  (not in this installation)" not in listed, c


def test_report_has_help():
    r = run("report", "--help")
    assert r.returncode == 0
    assert "Renders REPORT.md and report.html" in r.stdout and "DIR" in r.stdout
    top = run("--help").stdout
    assert "render REPORT.md and report.html" in top


def test_bench_says_what_is_left_out_and_why(tmp_path, monkeypatch):
    bench_dir = tmp_path / "bin"
    bench_dir.mkdir()
    (bench_dir / "bench-missing.tsv").write_text(
        "btree\tbench_btree\tits peers Abseil and Judy are shared libraries: build from a source checkout\n"
        "base85\tlibzmq\ta shared library outside simdex\n")
    env = {"SIMDEX_BENCH_DIR": str(bench_dir)}
    r = subprocess.run([sys.executable, "-m", "simdex", "bench", "btree", "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, env={**os.environ, **env})
    assert r.returncode == 2
    assert "bench_btree is not in this installation" in r.stderr and "Abseil and Judy" in r.stderr
    h = subprocess.run([sys.executable, "-m", "simdex", "bench", "--help"], capture_output=True, text=True,
                       env={**os.environ, **env})
    assert "without libzmq: a shared library outside simdex" in h.stdout
    assert "btree  (not in this installation)" in h.stdout


def test_docstring_examples_run(tmp_path, monkeypatch):
    """The modules' docstring examples are doctests (simdex.bloom's once kept its answer in a
    comment, so nothing checked it). Run in a scratch folder: simdex.kv's writes data.kv."""
    import doctest
    import importlib

    monkeypatch.chdir(tmp_path)

    for name in ("simdex", "simdex.bloom", "simdex.kv", "simdex.btree", "simdex.base85", "simdex.primitives"):
        try:
            mod = importlib.import_module(name)
        except ImportError:  # a build without that component
            continue
        r = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        assert r.failed == 0, name
        assert r.attempted > 0 or name not in ("simdex.bloom", "simdex.kv"), name  # the examples are found


def test_python_classes_over_native_ones_have_that_base_only():
    """nanobind before 3.0 (what the CPython 3.9 wheel builds with) refuses a Python class with a
    native base and another one ("nb_type_init(): invalid number of bases"), so such a class
    imports here, where a newer nanobind builds the extension, and fails in that wheel: kv's
    Snapshot did (btree's and kv's classes take the other members by a decorator instead)."""
    native = importlib.import_module("simdex._simdex")
    checked = 0
    for name in ["simdex"] + [f"simdex.{c}" for c in components.BUILT]:
        try:
            module = importlib.import_module(name)
        except ImportError:  # a component with no Python module of its own (cpu, lab)
            continue
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if not cls.__module__.startswith("simdex") or cls.__module__.startswith("simdex._simdex"):
                continue
            bases = [b for b in cls.__bases__ if b is not object]
            if any(b.__module__.startswith(native.__name__) for b in bases):
                checked += 1
                assert len(bases) == 1, f"{cls.__module__}.{cls.__qualname__}: bases {bases}"
    assert checked >= 3, checked  # SortedSet, SortedDict, Snapshot, Cursor, ... were seen
