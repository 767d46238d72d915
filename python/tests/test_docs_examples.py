"""The user documents' examples, run as a reader copies them: every ```python block of README.md,
docs/base85.md and docs/btree.md, and the quick ``simdex`` command lines of README.md and of
``simdex base85 --help``, in a scratch folder that holds the input files they name. An
expression whose comment is a Python literal (``b85encode(b"hello")  # b'Xk~0{Zv'``) must give
that value. Also what the docstrings promise about errors, checked against the behaviour."""

from __future__ import annotations

import ast
import importlib
import inspect
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tokenize
from pathlib import Path

import numpy as np
import pytest

import simdex
from simdex import components

ROOT = Path(__file__).resolve().parents[2]
DOCS = ["README.md", "docs/base85.md", "docs/btree.md"]


def _blocks(doc: str, lang: str) -> list[str]:
    return re.findall(rf"^```{lang}\n(.*?)^```", (ROOT / doc).read_text(), re.S | re.M)


PY_SNIPPETS = [(doc, i, code) for doc in DOCS for i, code in enumerate(_blocks(doc, "python"))]


def _needs(code: str) -> set[str]:
    """The components a snippet uses (a build may leave some out)."""
    names = {"BloomFilter": "bloom", "SortedSet": "btree", "SortedDict": "btree"}
    used = {c for c in ("base85", "bloom", "btree", "kv") if re.search(rf"\b{c}\b", code)}
    return used | {c for n, c in names.items() if n in code}


def _make_inputs(folder: Path, parquet: bool = True, filtered: bool = False) -> None:
    """The files the examples take as given: a binary file, Ascii85 text and, with ``parquet``,
    Parquet files (events/ without bloom filters, data.parquet with them; with ``filtered``
    also events-bloom/, what README's `simdex bloom add` line makes)."""
    rng = np.random.default_rng(7)
    (folder / "data.bin").write_bytes(rng.bytes(10_000))
    (folder / "big.bin").write_bytes(rng.bytes(100_000))
    (folder / "page.a85").write_bytes(b"<~BOu!rDZ~>\n")
    if not parquet or "bloom" not in components.BUILT:
        return
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from simdex import bloom

    (folder / "events").mkdir()
    ids = np.arange(2000, dtype=np.int64)
    for n, part in enumerate((ids[:1000], ids[1000:])):
        pq.write_table(pa.table({"user_id": part, "v": part * 2}), folder / "events" / f"{n}.parquet",
                       row_group_size=500)
    bloom.add_filters(str(folder / "events" / "0.parquet"), ["user_id"], out=str(folder / "data.parquet"),
                      threads=1)
    if filtered:
        bloom.add_filters(str(folder / "events"), ["user_id"], out=str(folder / "events-bloom"), threads=1)


def _literal_comments(code: str) -> dict[int, object]:
    """Line -> value, for comments that are Python literals (what the line should give)."""
    out = {}
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.COMMENT:
            try:
                out[tok.start[0]] = ast.literal_eval(tok.string[1:].strip())
            except (ValueError, SyntaxError):
                pass
    return out


@pytest.mark.parametrize(("doc", "index", "code"), PY_SNIPPETS, ids=[f"{d}#{i}" for d, i, _ in PY_SNIPPETS])
def test_python_snippet_runs(doc, index, code, tmp_path, monkeypatch):
    missing = _needs(code) - set(components.BUILT)
    if missing:
        pytest.skip(f"{doc} python block {index} uses {', '.join(sorted(missing))}, not in this build")
    _make_inputs(tmp_path, parquet="parquet" in code or "events" in code, filtered=True)
    monkeypatch.chdir(tmp_path)
    expected = _literal_comments(code)
    namespace: dict = {"__name__": "__doc_example__"}
    for stmt in ast.parse(code).body:
        where = f"{doc} python block {index}, line {stmt.lineno}"
        if isinstance(stmt, ast.Expr):
            value = eval(compile(ast.Expression(stmt.value), where, "eval"), namespace)
            if stmt.end_lineno in expected:
                assert value == expected[stmt.end_lineno], where
        else:
            exec(compile(ast.Module([stmt], []), where, "exec"), namespace)


def test_python_snippets_are_found():
    assert {d for d, _, _ in PY_SNIPPETS} == set(DOCS)


# Files a document names as optional ("tests/kv/extra.cmake may add to it").
OPTIONAL_PATHS = {"tests/kv/extra.cmake"}


def test_paths_the_documents_name_exist():
    """A source path in the documents names a file of the tree (docs/btree.md named
    src/btree/impl.h, split into generic.h and four headers since). Placeholders (<c>) are
    skipped, globs must match something."""
    docs = ["README.md", "docs/btree.md", "docs/base85.md", "docs/lab.md", "docs/packaging.md", "docs/architecture.md"]
    pattern = re.compile(r"(?<![\w/.<>-])((?:src|include|python|bench|tests|fuzz|scripts|cmake|docs|\.ci)/[\w./*<>-]*)")
    missing = []
    for doc in docs:
        for path in pattern.findall((ROOT / doc).read_text()):
            path = path.rstrip(".,:;")
            if "<" not in path and path not in OPTIONAL_PATHS and not list(ROOT.glob(path)):
                missing.append(f"{doc}: {path}")
    assert not missing


# --- command lines -------------------------------------------------------------------------------

# Quick enough for a test; the others (bench, report, a lab run, scripts) are run by hand.
QUICK = re.compile(r"^(?:\w+=\S+ )*simdex (info|base85|bloom (?:inspect|add|lookup)|lab list)\b")


def _command_lines(text: str) -> list[str]:
    """The quick `simdex` lines of a shell block, without their trailing comments."""
    lines = [re.sub(r"\s+#\s.*$", "", raw.strip()) for raw in text.splitlines()]
    return [line for line in lines if QUICK.match(line)]


def _runnable_here(line: str) -> bool:
    from simdex import bench

    command = QUICK.match(line).group(1).split()[0]
    if command == "lab":
        return "lab" in bench.available()
    return command == "info" or command in components.BUILT


def _run_lines(lines: list[str], folder: Path) -> None:
    # `simdex` as the reader's shell finds it: this interpreter's package, with the line's own
    # environment assignments and redirections.
    prelude = f'simdex() {{ {shlex.quote(sys.executable)} -m simdex "$@"; }}\n'
    for line in lines:
        r = subprocess.run(["bash", "-c", prelude + line], cwd=folder, capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
        assert r.returncode == 0, (line, r.stdout, r.stderr)


def test_readme_command_lines_run(tmp_path):
    lines = [line for block in _blocks("README.md", "sh") for line in _command_lines(block)]
    assert sum(line.startswith("simdex base85") for line in lines) == 2, lines
    _make_inputs(tmp_path)
    _run_lines([line for line in lines if _runnable_here(line)], tmp_path)
    if "base85" in components.BUILT:
        assert (tmp_path / "page.bin").read_bytes() == b"hello"


@pytest.mark.skipif("base85" not in components.BUILT, reason="base85 not built")
def test_base85_help_examples_run(tmp_path):
    r = subprocess.run([sys.executable, "-m", "simdex", "base85", "--help"], capture_output=True, text=True)
    lines = _command_lines(r.stdout.split("examples:", 1)[1])
    assert len(lines) == 3, r.stdout
    _make_inputs(tmp_path, parquet=False)
    data = (tmp_path / "data.bin").read_bytes()
    _run_lines(lines, tmp_path)  # the last one decodes data.a85 back over data.bin
    assert (tmp_path / "data.bin").read_bytes() == data
    assert (tmp_path / "data.b85").stat().st_size == 12_500


def test_every_command_help_says_what_it_does():
    """`simdex info --help` and `simdex bloom build|probe|inspect|add|lookup --help` showed only
    their usage and options; probe's and inspect's positional arguments had no text."""
    import argparse

    from simdex import cli

    def walk(parser):
        yield parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in dict.fromkeys(action.choices.values()):
                    yield from walk(sub)

    for parser in walk(cli.build_parser()):
        assert parser.description, parser.prog
        for action in parser._actions:
            if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
                assert action.help, f"{parser.prog} {action.dest}"


def test_lab_no_probe_help_says_what_it_leaves_out(tmp_path):
    """`simdex lab --help` said that without the probe the bandwidth checks had no memcpy figure;
    all but pointer_chase's sample memcpy beside their own figures."""
    from simdex import bench

    if "lab" not in bench.available():
        pytest.skip("bench_lab not in this installation")
    from simdex import cli

    lab = next(a for a in cli.build_parser()._actions if a.dest == "command").choices["lab"]
    text = next(a.help for a in lab._actions if a.dest == "no_probe")
    r = subprocess.run([sys.executable, "-m", "simdex", "lab", "stride", "--no-probe", "--reps", "1",
                        "--no-report", "--out", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "lab.json").read_text())
    checks = [v for e in doc["lab"]["experiments"] for v in e["validity"] if v["name"] == "below_memcpy"]
    assert checks and all("no memcpy figure" not in v["detail"] for v in checks), checks
    assert "pointer_chase" in text and "bandwidth checks then have no memcpy figure" not in text, text


# --- what docstrings promise -------------------------------------------------------------------

def test_a_bad_simdex_isa_fails_where_the_docs_say():
    """README and simdex's docstring: `import simdex` works and the first kernel call raises
    ValueError. active_isa's docstring said that the import itself failed."""
    code = ("import simdex, numpy\n"
            "from simdex._simdex import active_isa\n"
            "print(active_isa.__doc__)\n"
            "try:\n"
            "    simdex.primitives.lower_bound(numpy.zeros(4, numpy.uint8), 1)\n"
            "except ValueError as e:\n"
            "    print('kernel call:', e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, "SIMDEX_ISA": "avx-512"})
    assert r.returncode == 0, r.stderr
    assert "kernel call: SIMDEX_ISA='avx-512' is not a level" in r.stdout
    doc = r.stdout.split("kernel call:")[0]
    assert "ValueError" in doc and not re.search(r"import simdex.{0,3} calls it", doc), doc


PRIMITIVE_MISUSE = {  # a call with an array of another dtype, and one with a wrong length or value
    "lower_bound": ((np.zeros(4, np.int16), 1), (np.zeros(4, np.uint8), 256)),
    "remap_branches": ((np.zeros(4, np.int8), np.zeros(16, np.uint8)), (np.zeros(4, np.uint8), np.zeros(15, np.uint8))),
    "rank_table": ((np.zeros(16, np.int8),), (np.zeros(15, np.uint8),)),
    "find_u32x16": ((np.zeros(16, np.int32), 1), (np.zeros(17, np.uint32), 1)),
    "find_min_index": ((np.zeros(32, np.int16),), (np.zeros(31, np.uint16),)),
}


@pytest.mark.parametrize("name", sorted(PRIMITIVE_MISUSE))
def test_primitives_docstrings_name_the_errors_they_raise(name):
    fn = getattr(simdex.primitives, name)
    bad_type, bad_value = PRIMITIVE_MISUSE[name]
    with pytest.raises(TypeError):
        fn(*bad_type)
    with pytest.raises(ValueError):
        fn(*bad_value)
    assert "TypeError" in fn.__doc__ and "ValueError" in fn.__doc__, fn.__doc__


@pytest.mark.skipif("btree" not in components.BUILT, reason="btree not built")
def test_btree_docstrings_name_the_errors_they_raise():
    from simdex.btree import SortedDict, SortedSet

    cases = [(SortedSet, "pop", (), IndexError), (SortedSet, "remove", (1,), KeyError),
             (SortedSet, "index", (1,), ValueError), (SortedDict, "pop", (1,), KeyError),
             (SortedDict, "popitem", (), KeyError), (SortedDict, "peekitem", (), IndexError)]
    for cls, method, args, error in cases:
        with pytest.raises(error):
            getattr(cls(), method)(*args)
        assert error.__name__ in getattr(cls, method).__doc__, f"{cls.__name__}.{method}"


@pytest.mark.skipif("bloom" not in components.BUILT, reason="bloom not built")
def test_bloomfilter_docstrings_name_the_errors_they_raise():
    from simdex.bloom import BloomFilter

    cases = [(lambda: BloomFilter(48), BloomFilter), (lambda: BloomFilter(ndv=10, fpp=2), BloomFilter),
             (lambda: BloomFilter(64).merge(BloomFilter(32)), BloomFilter.merge),
             (lambda: BloomFilter(64) | BloomFilter(32), BloomFilter.__or__),
             (lambda: BloomFilter.from_bytes(b"xx"), BloomFilter.from_bytes),
             (lambda: BloomFilter.from_bitset(b"x" * 33), BloomFilter.from_bitset),
             (lambda: BloomFilter(64).insert(None), BloomFilter.insert),
             (lambda: BloomFilter(64).check(None), BloomFilter.check)]
    for call, documented in cases:
        with pytest.raises(ValueError):
            call()
        assert "ValueError" in documented.__doc__, documented.__qualname__


@pytest.mark.skipif("bloom" not in components.BUILT, reason="bloom not built")
def test_bloomfilter_signature_shows_no_private_arguments():
    """help(BloomFilter) showed the internal _native_filter and _load keywords; copies, parsed
    and loaded filters still keep their subclass and column type."""
    import inspect

    from simdex.bloom import BloomFilter

    assert not [p for p in inspect.signature(BloomFilter).parameters if p.startswith("_")]

    class Mine(BloomFilter):
        pass

    f = Mine(64, physical_type="INT32")
    f.insert([1, 2])
    for g in (f.copy(), Mine.from_bytes(f.to_bytes(), physical_type="INT32"), f | f):
        assert type(g) is Mine and g.physical_type == "INT32" and g.check(1) and g.to_bytes() == f.to_bytes()


@pytest.mark.skipif("btree" not in components.BUILT, reason="btree not built")
def test_sortedset_help_does_not_offer_item_assignment():
    """help(SortedSet) listed the native slot's __setitem__ as "Set self[key] to value"."""
    from simdex.btree import SortedSet

    assert "not supported" in SortedSet.__setitem__.__doc__.lower()
    s = SortedSet([1, 2, 3])
    with pytest.raises(TypeError, match="add"):
        s[0] = 5
    del s[0]
    del s[:1]
    assert list(s) == [3]


@pytest.mark.skipif("bloom" not in components.BUILT, reason="bloom not built")
def test_a_hash_outside_64_bits_is_a_value_error():
    """check_hash(-1) and insert_hash(2**64) answered with nanobind's overload listing."""
    from simdex.bloom import BloomFilter, hash_values

    f = BloomFilter(64)
    for bad in (-1, 2**64):
        for call in (f.check_hash, f.insert_hash):
            with pytest.raises(ValueError, match=r"\[0, 2\*\*64\)"):
                call(bad)
    with pytest.raises(TypeError):
        f.check_hash(1.5)  # int() truncated it before
    h = hash_values([7])[0]
    f.insert_hash(h)  # a numpy uint64, as hash_values gives
    assert f.check_hash(int(h)) and f.check([7])[0]


def _public_classes():
    mods = {"btree": ("SortedSet", "SortedDict", "SortedKeysView", "SortedValuesView", "SortedItemsView"),
            "bloom": ("BloomFilter",), "base85": ("Encoder", "Decoder")}
    for component, names in mods.items():
        if component in components.BUILT:
            module = importlib.import_module(f"simdex.{component}")
            yield from (getattr(module, n) for n in names)


@pytest.mark.parametrize("cls", list(_public_classes()), ids=lambda c: c.__name__)
def test_every_public_method_has_a_docstring(cls):
    """help() on a class shows a text for each public method (the views' own index and count
    had none)."""
    for name in dir(cls):
        if name.startswith("_"):
            continue
        static = inspect.getattr_static(cls, name)
        if isinstance(static, (classmethod, staticmethod)):
            static = static.__func__
        if not (callable(static) or isinstance(static, property)):
            continue
        assert (static.__doc__ or "").strip(), f"{cls.__name__}.{name}"


def test_data_dir_docstrings_name_their_error():
    for fn in (simdex.get_include, simdex.get_cmake_dir):
        assert "FileNotFoundError" in fn.__doc__, fn.__name__
