"""simdex.bloom on nested columns: struct fields that some files of a dataset lack, Datasets
whose schema lacks a column its files hold, and leaves inside lists and maps. Every answer is
checked against pyarrow's own reading of the files (and DuckDB's for lists and maps)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pyarrow.parquet as pq
import pytest

from simdex import bloom


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "simdex", "bloom", *args, "--no-progress"],
                          capture_output=True, text=True)


def _struct(**fields):
    return pa.struct(list(fields.items()))


# Per shape: the column, a's type in the files that hold it, and in the file that lacks it
# (None: no column a at all), and how a row's a is made from its key k.
_SHAPES = {
    "a.b": ("a.b", _struct(x=pa.int64(), b=pa.int64()), _struct(x=pa.int64()),
            lambda k: {"x": -k, "b": k}),
    "a.b-no-struct": ("a.b", _struct(x=pa.int64(), b=pa.int64()), None, lambda k: {"x": -k, "b": k}),
    "a.b.c-lacks-c": ("a.b.c", _struct(x=pa.int64(), b=_struct(d=pa.int64(), c=pa.int64())),
                      _struct(x=pa.int64(), b=_struct(d=pa.int64())), lambda k: {"x": -k, "b": {"d": 1, "c": k}}),
    "a.b.c-lacks-b": ("a.b.c", _struct(x=pa.int64(), b=_struct(c=pa.int64())), _struct(x=pa.int64()),
                      lambda k: {"x": -k, "b": {"c": k}}),
}


def _fields_of(row: dict, typ) -> dict:
    """The row's struct value restricted to the fields of ``typ`` (recursively)."""
    return {f.name: _fields_of(row[f.name], f.type) if pa.types.is_struct(f.type) else row[f.name] for f in typ}


def _nested_files(root, shape: str, lacking: int, n: int = 3):
    """n files p0.. of rid and a (4 rows, row groups of 2, pyarrow's filters on the leaf); file
    ``lacking`` has a without the column's field (or no a)."""
    column, full, short, make = _SHAPES[shape]
    root.mkdir()
    files = []
    for i in range(n):
        ks = [10 * i + j for j in range(1, 5)]
        cols = {"rid": pa.array([100 * i + j for j in range(4)], pa.int64())}
        if i != lacking:
            cols["a"] = pa.array([make(k) for k in ks], full)
        elif short is not None:
            cols["a"] = pa.array([_fields_of(make(k), short) for k in ks], short)
        cols["y"] = pa.array([f"r{i}.{j}" for j in range(4)])
        path = str(root / f"p{i}.parquet")
        opts = {"bloom_filter_options": {column: {"ndv": 8, "fpp": 0.01}}} if i != lacking else {}
        pq.write_table(pa.table(cols), path, row_group_size=2, **opts)
        files.append(path)
    return column, files


@pytest.mark.parametrize("lacking", [0, 1, 2], ids=["first-lacks", "middle-lacks", "last-lacks"])
@pytest.mark.parametrize("shape", list(_SHAPES))
def test_a_struct_field_some_files_lack(tmp_path, shape, lacking):
    """A dotted column whose field the FIRST file's struct lacks raised "no column 'a.b' in the
    dataset's schema" though later files hold it. The field (from the first file that has it)
    is now added to the first file's struct, and pyarrow.dataset given that schema returns the
    same rows: the file without it holds nulls there, wherever it is."""
    column, files = _nested_files(tmp_path / "ds", shape, lacking)
    schemas = [pq.read_schema(f) for f in files]
    want_schema = schemas[0] if lacking else pa.unify_schemas([schemas[0], schemas[1]])
    ref = pds.dataset(files, schema=want_schema)
    key = pc.field(*column.split("."))
    present = 10 * ((lacking + 1) % 3) + 3  # in a file that holds the field
    for values in ([present], [present, 10 * lacking + 2, 999], [999], [None], [None, present]):
        want = ref.to_table(filter=key.isin(pa.array(values, pa.int64())))
        for source in (str(tmp_path / "ds"), files):
            got, report = bloom.lookup(source, column, values, return_report=True)
            assert got.schema == want_schema and got.equals(want), (values, got, want)
            assert report.files_without_column == 1
        kept = {p for p, _ in bloom.prune(files, column, values)}
        assert (files[lacking] in kept) == (None in values), values
    # Statistics and filters rule out the other row groups.
    assert len(bloom.prune(files, column, [present])) == 1
    r = _cli("lookup", str(tmp_path / "ds"), "--column", column, "--value", str(present), "--columns", "rid,y")
    assert r.returncode == 0, r.stderr
    i = (lacking + 1) % 3
    assert r.stdout.splitlines() == ["rid\ty", f"{100 * i + 2}\tr{i}.2"]


def test_a_struct_field_under_another_shape_is_an_error_naming_the_file(tmp_path):
    """A file whose a is not a struct (or whose a.b is a struct) beside files with a.b: pyarrow
    cannot read them together. The first file so made the lookup fail with "no column 'a.b' in
    the dataset's schema"; a later one was skipped as a file without the column, and its rows
    never looked at."""
    root = tmp_path / "ds"
    root.mkdir()
    pq.write_table(pa.table({"a": pa.array([1, 2], pa.int64())}), root / "p0.parquet")
    pq.write_table(pa.table({"a": pa.array([{"b": 3}, {"b": 4}])}), root / "p1.parquet")
    for call in (lambda: bloom.lookup(root, "a.b", [3]), lambda: bloom.prune(root, "a.b", [3])):
        with pytest.raises(ValueError, match=r"p0.parquet: 'a' is int64, not a struct, where .*p1.parquet has "
                                             r"the column 'a.b': pyarrow cannot read these files together"):
            call()
    r = _cli("lookup", str(root), "--column", "a.b", "--value", "3")
    assert r.returncode == 1 and "p0.parquet: 'a' is int64, not a struct" in r.stderr, r.stderr
    (root / "p0.parquet").rename(root / "p9.parquet")  # now the last file
    with pytest.raises(ValueError, match=r"p9.parquet: column 'a.b': 'a' is int64 there, not a struct "
                                         r"\(its columns there: a\)"):
        bloom.lookup(root, "a.b", [None])
    pq.write_table(pa.table({"a": pa.array([{"b": {"c": 3}}])}), root / "p9.parquet")
    with pytest.raises(ValueError, match=r"p9.parquet: column 'a.b': 'a.b' is struct<c: int64> there, not a "
                                         r"column of values \(its columns there: a.b.c\)"):
        bloom.prune(root, "a.b", [3])


def test_a_dataset_whose_schema_lacks_the_column_says_what_to_do(tmp_path):
    """A Dataset keeps its own schema, as pyarrow.dataset does (its scanner refuses a column
    the schema lacks). A lookup of a column (or struct field) its files hold but its schema
    lacks failed with "no column 'k' in the dataset's schema" after pruning; it now says so
    first, naming a file that holds it and what to do; given a schema that has it, the lookup
    returns pyarrow's rows."""
    column, files = _nested_files(tmp_path / "ds", "a.b", 0)
    inferred = pds.dataset(files)  # the first file's schema: a without b
    with pytest.raises(pa.ArrowInvalid, match="No match for FieldRef"):
        inferred.to_table(filter=pc.field("a", "b").isin([13]))
    for call in (bloom.lookup, bloom.prune):
        with pytest.raises(ValueError, match=r"the Dataset's schema has no column 'a.b' \(rid, a, y\), but "
                                             r".*p1.parquet holds it: .*schema="):
            call(inferred, column, [13])
    unified = pds.dataset(files, schema=pa.unify_schemas([pq.read_schema(f) for f in files]))
    want = unified.to_table(filter=pc.field("a", "b").isin([13]))
    got = bloom.lookup(unified, column, [13])
    assert want.num_rows == 1 and got.equals(want)
    # A column no file holds is still the error listing the columns there are.
    with pytest.raises(ValueError, match=r"no column 'a.q' in any of the 3 files"):
        bloom.lookup(inferred, "a.q", [1])


def test_cli_lookup_of_a_hive_folder_whose_first_file_lacks_the_column(tmp_path):
    """`simdex bloom lookup DIR` reads a hive-partitioned folder as a Dataset, whose schema
    pyarrow infers from the first file: a column (or struct field) that file lacks failed with
    "no column ... in the dataset's schema". The CLI makes that Dataset with the column added,
    as lookups of paths add it."""
    root = tmp_path / "events"
    for year, a in ((2023, pa.array([{"x": 1}, {"x": 2}])), (2024, pa.array([{"x": 3, "b": 7}, {"x": 4, "b": 8}]))):
        (root / f"year={year}").mkdir(parents=True)
        pq.write_table(pa.table({"a": a, "k": [10 * year, 10 * year + 1]}), root / f"year={year}" / "part-0.parquet")
    for column, value, line in (("a.b", "8", "20241\t2024"), ("k", "20230", "20230\t2023")):
        r = _cli("lookup", str(root), "--column", column, "--value", value, "--columns", "k,year")
        assert r.returncode == 0 and r.stdout.splitlines() == ["k\tyear", line], r.stderr


def test_cli_lookup_of_a_hive_folder_returns_columns_its_first_file_lacks(tmp_path):
    """`--columns` naming a column or struct field the hive folder's first file lacks: the CLI's
    Dataset got only the looked-up column added, so the lookup refused the Dataset's schema.
    The result is pyarrow.dataset's with the files' unified schema (nulls where a file lacks it)."""
    root = tmp_path / "events"
    for year, a, extra in ((2023, pa.array([{"x": 1}, {"x": 2}]), None),
                           (2024, pa.array([{"x": 3, "b": 7}, {"x": 4, "b": 8}]), [5, 6])):
        (root / f"year={year}").mkdir(parents=True)
        cols = {"a": a, "k": [10 * year, 10 * year + 1]}
        if extra is not None:
            cols["e"] = extra
        pq.write_table(pa.table(cols), root / f"year={year}" / "part-0.parquet")
    files = sorted(str(p) for p in root.rglob("*.parquet"))
    schema = pa.unify_schemas([pq.read_schema(f) for f in files] + [pa.schema([("year", pa.int32())])])
    want = pds.dataset(str(root), partitioning="hive", schema=schema).to_table(
        filter=pc.field("k").isin([20230, 20241]), columns=["k", "e", "a.b"]).to_pylist()
    r = _cli("lookup", str(root), "--column", "k", "--value", "20230", "--value", "20241", "--columns", "k,e,a.b")
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert rows[0] == list(want[0])  # a struct field's column is named as pyarrow names it
    got = sorted(tuple(row) for row in rows[1:])
    assert got == sorted(tuple("" if v is None else str(v) for v in w.values()) for w in want) == [
        ("20230", "", ""), ("20241", "6", "8")]


# ---- leaves inside lists and maps ----------------------------------------------------------------

_NESTED_LEAVES = {  # leaf path -> (its top-level column, its values' Arrow type)
    "l.list.element": ("l", pa.int64()),
    "ls.list.element": ("ls", pa.string()),
    "m.key_value.key": ("m", pa.string()),
    "m.key_value.value": ("m", pa.int64()),
    "lst.list.element.v": ("lst", pa.int64()),
}


def _elements(col, leaf: str):
    """(the row of each element, the elements) of one row group's nested column."""
    if pa.types.is_map(col.type):  # list_parent_indices takes lists only (a map aborts pyarrow 26)
        col = col.cast(pa.list_(pa.field("entries", col.values.type, nullable=False)))
    parents = pc.list_parent_indices(col).to_numpy(zero_copy_only=False)
    flat = pc.list_flatten(col)
    if leaf.startswith("m."):
        flat = flat.field("key" if leaf.endswith("key") else "value")
    elif leaf.startswith("lst."):
        flat = flat.field("v")
    return parents, flat


def _list_files(root, files: int = 3, groups: int = 4, rows: int = 40, seed: int = 7):
    """Files of lists, a map and a list of structs, values drawn per row group from its own
    range (so statistics rule some out), with nulls: null lists, null elements, empty lists."""
    rng = np.random.default_rng(seed)
    root.mkdir()
    paths = []
    for f in range(files):
        rows_of: dict = {"l": [], "ls": [], "m": [], "lst": []}
        for g in range(groups):
            base = (f * groups + g) * 1000
            for r in range(rows):
                n = int(rng.integers(0, 4))
                ints = [int(base + rng.integers(0, 500)) for _ in range(n)]
                if r % 9 == 0:
                    for got in rows_of.values():
                        got.append(None)
                    continue
                rows_of["l"].append([None if r % 7 == 0 and j == 0 else v for j, v in enumerate(ints)])
                rows_of["ls"].append([f"s{v}" for v in ints])
                rows_of["m"].append([(f"k{v}", v + 1) for v in dict.fromkeys(ints)])
                rows_of["lst"].append([{"v": v} for v in ints])
        types = {"l": pa.list_(pa.int64()), "ls": pa.list_(pa.string()), "m": pa.map_(pa.string(), pa.int64()),
                 "lst": pa.list_(_struct(v=pa.int64()))}
        table = pa.table({name: pa.array(got, types[name]) for name, got in rows_of.items()})
        path = root / f"p{f}.parquet"
        # pyarrow's own filters on half the files, simdex's on the others.
        opts = {"bloom_filter_options": {leaf: {"ndv": rows * 3, "fpp": 0.01} for leaf in _NESTED_LEAVES}}
        pq.write_table(table, path, row_group_size=rows, **(opts if f % 2 == 0 else {}))
        if f % 2:
            bloom.add_filters(str(path), list(_NESTED_LEAVES), in_place=True)
        paths.append(str(path))
    return paths


def _probe_values(leaf: str, rng, files: int, groups: int):
    """A few values of the leaf's type: some in the data, most not (inside and outside the
    row groups' ranges)."""
    base = [int(rng.integers(0, files * groups)) * 1000 + int(rng.integers(0, 500)) for _ in range(6)]
    base += [int(rng.integers(0, files * groups)) * 1000 + 700, 10**9]
    if leaf == "ls.list.element":
        return [f"s{v}" for v in base]
    if leaf == "m.key_value.key":
        return [f"k{v}" for v in base]
    return [v + 1 for v in base] if leaf == "m.key_value.value" else base


def test_prune_of_leaves_inside_lists_and_maps_misses_no_row_group(tmp_path):
    """prune on a leaf inside a list, a map or a list of structs keeps every row group where an
    element, key or value is one looked up (pyarrow's flattened column, cross-checked with
    DuckDB's list and map functions), with pyarrow's filters and with simdex's, and rules out
    others (the test sees both, so it cannot pass by keeping everything or nothing)."""
    duckdb = pytest.importorskip("duckdb")
    files, groups = 3, 4
    paths = _list_files(tmp_path / "ds", files, groups)
    rng = np.random.default_rng(11)
    con = duckdb.connect()
    ruled_out = hits = by_filters = 0
    for leaf, (col, typ) in _NESTED_LEAVES.items():
        for _ in range(6):
            values = _probe_values(leaf, rng, files, groups)
            vs = pa.array(values, typ)
            truth, rows_with = set(), 0
            for path in paths:
                pf = pq.ParquetFile(path)
                for rg in range(pf.num_row_groups):
                    parents, flat = _elements(pf.read_row_group(rg, columns=[col]).column(0).combine_chunks(), leaf)
                    hit = pc.is_in(flat, value_set=vs).fill_null(False).to_numpy(zero_copy_only=False)
                    if hit.any():
                        truth.add((path, rg))
                    rows_with += len(np.unique(parents[hit]))
            cond = {"l.list.element": "list_has_any(l, $v)", "ls.list.element": "list_has_any(ls, $v)",
                    "m.key_value.key": "list_has_any(map_keys(m), $v)",
                    "m.key_value.value": "list_has_any(map_values(m), $v)",
                    "lst.list.element.v": "list_has_any(list_transform(lst, lambda s: s.v), $v)"}[leaf]
            duck = con.execute(f"SELECT count(*) FROM read_parquet($p) WHERE {cond}", {"p": paths, "v": values})
            assert duck.fetchone()[0] == rows_with, leaf
            for kw in ({}, {"use_statistics": False}, {"use_filters": False}):
                kept = set(bloom.prune(paths, leaf, values, **kw))
                assert truth <= kept, (leaf, values, kw, truth - kept)
                if not kw:
                    ruled_out += len(paths) * groups - len(kept)
                    hits += len(truth)
                elif "use_statistics" in kw:
                    by_filters += len(paths) * groups - len(kept)
    assert ruled_out > 0 and by_filters > 0 and hits > 0


def test_a_list_whose_leaf_another_writer_names_otherwise_is_an_error(tmp_path):
    """pyarrow's legacy (non-compliant) lists name the leaf l.list.item where compliant writers
    write l.list.element. A prune of l.list.element over both took the legacy file for one
    without the column and skipped it, holding the value (a wrong absent)."""
    root = tmp_path / "ds"
    root.mkdir()
    pq.write_table(pa.table({"l": pa.array([[1, 2], [3]])}), root / "p0.parquet")
    pq.write_table(pa.table({"l": pa.array([[5], [6, 7]])}), root / "p1.parquet", use_compliant_nested_type=False)
    with pytest.raises(ValueError, match=r"p1.parquet: column 'l.list.element': 'l' is list<item: int64> there, "
                                         r"not a struct \(its columns there: l.list.item\)"):
        bloom.prune(root, "l.list.element", [6])
    assert bloom.prune(root / "p0.parquet", "l.list.element", [2]) == [(str(root / "p0.parquet"), 0)]


@pytest.mark.parametrize("leaf", [*_NESTED_LEAVES, "l.element", "m.key"])
def test_lookup_into_a_list_or_map_says_it_is_not_supported(tmp_path, leaf):
    """lookup returns rows whose column equals a value; a list's elements have no such row.
    It raised "no column 'l.list.element' in the dataset's schema" after pruning (a column the
    user had just seen in the file's column list); it now says what is not supported, before
    any pruning, from the API, Dask's entry point and the CLI, also when the first file lacks
    the list."""
    paths = _list_files(tmp_path / "ds", files=1, groups=1, rows=8)
    col = leaf.split(".")[0]
    msg = rf"column '{leaf}' is inside '{col}' \((list|map)<.*\): lookup matches whole rows by a column's value"
    without = str(tmp_path / "without.parquet")  # a first file without the column: the same
    pq.write_table(pa.table({"z": [1]}), without)
    for source in (paths, [without, *paths]):
        with pytest.raises(ValueError, match=msg):
            bloom.lookup(source, leaf, [1])
    # The CLI types the values by the file's leaf first: Arrow's names for it are no leaf.
    r = _cli("lookup", paths[0], "--column", leaf, "--value", "1")
    said = "lookup matches whole rows" if leaf in _NESTED_LEAVES else f"no column '{leaf}'; the file has: l.list"
    assert r.returncode == 1 and said in r.stderr, r.stderr
    # Dask's lookup runs the same check before starting any task.
    from simdex import _bloom_dataset as bd

    with pytest.raises(ValueError, match=msg):
        bd.column_type(paths, None, leaf, lookup=True)


def test_lookup_into_a_list_a_hive_folders_first_file_lacks_is_refused_up_front(tmp_path, monkeypatch):
    """A hive folder read as a Dataset (pyarrow.dataset(..., partitioning="hive"), as the CLI
    reads a folder) has its first file's schema, without a list column that only later files
    hold. A lookup of a leaf inside that list ended in "no column 'l.list.element' in the
    dataset's schema" after pruning; it is now refused before any pruning, as for a list the
    schema has, saying that prune() answers it; prune's answer is pyarrow's."""
    from simdex import _bloom_dataset as bd

    root = tmp_path / "events"
    for year, cols in ((2023, {"k": [1, 2]}), (2024, {"k": [3, 4], "l": pa.array([[5], [6, 7]])}),
                       (2025, {"k": [5], "l": pa.array([[8, None]])})):
        (root / f"year={year}").mkdir(parents=True)
        pq.write_table(pa.table(cols), root / f"year={year}" / "part-0.parquet")
    ds = pds.dataset(root, partitioning="hive")
    assert ds.schema.get_field_index("l") < 0
    msg = (r"column 'l.list.element' is inside 'l' \(list<element: int64>\): lookup matches whole rows .*"
           r"\(prune\(\) answers which row groups hold the elements\)")

    def pruning(*args, **kwargs):
        raise AssertionError("pruned before the lookup was refused")

    with monkeypatch.context() as m:
        m.setattr(bd, "prune_files", pruning)
        for source in (ds, root):
            with pytest.raises(ValueError, match=msg):
                bloom.lookup(source, "l.list.element", [6])
        with pytest.raises(ValueError, match=msg):  # Dask's lookup checks this before any task
            bd.column_type(bd.resolve(ds)[0], ds, "l.list.element", lookup=True)
    r = _cli("lookup", str(root), "--column", "l.list.element", "--value", "6")
    assert r.returncode == 1 and "lookup matches whole rows" in r.stderr, r.stderr
    for values in ([6], [5, 8], [1]):
        want = set()
        for frag in ds.get_fragments():
            t = pq.read_table(frag.path)
            if "l" in t.column_names and pc.any(pc.is_in(pc.list_flatten(t["l"]), pa.array(values))).as_py():
                want.add((frag.path, 0))
        assert set(bloom.prune(ds, "l.list.element", values)) == want, values


def _files_with_later_columns(root):
    """p0 with k and a struct a of x; p1 also with a.b, a column e and a struct g (k 1, 2, 5 in
    p0 and 3, 4 in p1, a row group each)."""
    root.mkdir()
    pq.write_table(pa.table({"k": pa.array([1, 2, 5], pa.int64()), "a": pa.array([{"x": 1}, {"x": 2}, {"x": 5}])}),
                   root / "p0.parquet")
    pq.write_table(pa.table({"k": pa.array([3, 4], pa.int64()), "a": pa.array([{"x": 3, "b": 30}, {"x": 4, "b": 40}]),
                             "e": ["c", "d"], "g": pa.array([{"h": 7}, {"h": 8}])}), root / "p1.parquet")
    return [str(root / "p0.parquet"), str(root / "p1.parquet")]


@pytest.mark.parametrize("columns", [["k", "e"], ["e", "a.b", "g.h"], "e", ["g", "k"]], ids=str)
def test_columns_the_first_file_lacks_are_added_as_the_looked_up_column_is(tmp_path, columns):
    """lookup(..., columns=) raised "no column(s) 'e' in the dataset's schema" for a column (a
    struct field, a struct) that later files hold and the first file lacks, where the looked-up
    column itself is added to the first file's schema. Now both are added: the rows are
    pyarrow.dataset's given the files' unified schema, nulls where a file lacks the column."""
    files = _files_with_later_columns(tmp_path / "ds")
    ref = pds.dataset(files, schema=pa.unify_schemas([pq.read_schema(f) for f in files]))
    wanted = [columns] if isinstance(columns, str) else columns
    for values in ([1, 3], [2], [4, None]):
        want = ref.to_table(columns=wanted, filter=pc.field("k").isin(pa.array(values, pa.int64())))
        assert want.num_rows
        for source in (str(tmp_path / "ds"), files):
            got = bloom.lookup(source, "k", values, columns=columns)
            assert got.equals(want), (values, got, want)


def test_a_dataset_whose_schema_lacks_a_column_asked_for_says_what_to_do(tmp_path, monkeypatch):
    """A Dataset keeps its schema; a columns= entry that its files hold and its schema lacks
    failed after pruning with "no column(s) 'e' in the dataset's schema"; it now says what to
    do before pruning, as for the looked-up column."""
    from simdex import _bloom_dataset as bd

    files = _files_with_later_columns(tmp_path / "ds")
    monkeypatch.setattr(bd, "prune_files", lambda *a, **k: pytest.fail("pruned before the columns were checked"))
    for column in ("e", "a.b"):
        with pytest.raises(ValueError, match=rf"the Dataset's schema has no column '{column}' \(k, a\), but "
                                             r".*p1.parquet holds it: .*schema="):
            bloom.lookup(pds.dataset(files), "k", [1], columns=["k", column])


def test_a_struct_field_asked_for_when_no_row_group_survives(tmp_path):
    """lookup(..., columns=["a.b"]) of a value that statistics rule out of every row group
    raised KeyError ('Field "a.b" does not exist in schema'): the empty result was selected by
    name. It is now pyarrow.dataset's empty table, the field named as a scan names it."""
    files = _files_with_later_columns(tmp_path / "ds")
    ref = pds.dataset(files, schema=pa.unify_schemas([pq.read_schema(f) for f in files]))
    for columns in (["k", "a.x"], ["k", "a.b"], ["g.h", "e"], None):
        got, report = bloom.lookup(files, "k", [99], columns=columns, return_report=True)
        assert report.read == 0
        if columns is not None:
            assert got.equals(ref.to_table(columns=columns, filter=pc.field("k").isin([99]))), got
        else:
            assert got.num_rows == 0 and got.schema == pq.read_schema(files[0])
