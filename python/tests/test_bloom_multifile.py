"""simdex.bloom over datasets of several files that differ: partition folders, schemas that
differ between files, the CLI's progress bar and Dask options. Each answer is checked against
pyarrow's own reading of the files."""

from __future__ import annotations

import datetime as dt
import io
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
    return subprocess.run([sys.executable, "-m", "simdex", "bloom", *args], capture_output=True, text=True)


def _partitioned(root):
    """Two hive partitions holding files of the same name (as Spark and pyarrow name them)."""
    for k in (1, 2):
        (root / f"k={k}").mkdir(parents=True)
        pq.write_table(pa.table({"id": np.arange(100) + 1000 * k, "v": np.full(100, k)}),
                       root / f"k={k}" / "part-0.parquet", row_group_size=25)
    return root


@pytest.mark.parametrize("how", ["api", "dataset", "cli"])
def test_add_keeps_partition_folders(tmp_path, how):
    """add DIR --out OUT wrote every file straight into OUT: partitions' same-named files were
    refused as colliding, and distinct names lost the folders (and the partition columns)."""
    src, out = _partitioned(tmp_path / "src"), tmp_path / "out"
    if how == "cli":
        r = _cli("add", str(src), "--column", "id", "--out", str(out), "--no-progress")
        assert r.returncode == 0, r.stderr
        assert f"{out / 'k=2' / 'part-0.parquet'}: 4 filters added" in r.stdout
    else:
        source = src if how == "api" else pds.dataset(src, partitioning="hive")
        got = bloom.add_filters(source, ["id"], out=out)
        assert [r["out"] for r in got] == [str(out / "k=1" / "part-0.parquet"), str(out / "k=2" / "part-0.parquet")]
    ds = pds.dataset(out, partitioning="hive")
    want = pds.dataset(src, partitioning="hive").to_table()
    assert ds.to_table().sort_by("id").equals(want.sort_by("id"))
    table, report = bloom.lookup(ds, "id", [2005], return_report=True)
    assert table.to_pylist() == [{"id": 2005, "v": 2, "k": 2}]
    assert report.skipped_by_filters + report.skipped_by_statistics == 7


def _mixed(root):
    """a.parquet: id int64, x; b.parquet: id int32, x, y (an extra column, a narrower type)."""
    root.mkdir()
    pq.write_table(pa.table({"id": pa.array(np.arange(100), pa.int64()), "x": [f"a{i}" for i in range(100)]}),
                   root / "a.parquet", row_group_size=30)
    pq.write_table(pa.table({"id": pa.array(np.arange(100, 200), pa.int32()), "x": [f"b{i}" for i in range(100)],
                             "y": np.ones(100)}), root / "b.parquet", row_group_size=30)
    bloom.add_filters(root, ["id"], in_place=True)
    return root


def test_lookup_schema_does_not_depend_on_the_values(tmp_path):
    """The schema came from the first file that survived pruning: a value found only in b gave
    b's columns (y) and types (int32), one also found in a dropped y from b's rows."""
    src = _mixed(tmp_path / "mixed")
    ref = pds.dataset(src)  # pyarrow infers a directory's schema from its first file
    for values in ([150], [5, 150], [5], [-1]):
        got = bloom.lookup(src, "id", values)
        want = ref.to_table(filter=pc.field("id").isin(pa.array(values, pa.int64())))
        assert got.schema == ref.schema
        assert got.sort_by("id").equals(want.sort_by("id"))


def test_progress_bar_leaves_stdout_to_its_reader(monkeypatch):
    """With the bar on a terminal, rich sent what was printed meanwhile (`add`'s line per file)
    to stderr, so `simdex bloom add ... > log` left the log empty."""
    from simdex.commands._bloom_datasets import _progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    out, err = io.StringIO(), Tty()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with _progress(True, "adding filters") as progress:
        assert progress is not None
        progress(0, 2)
        print("a.parquet: 4 filters added", flush=True)
        progress(1, 2)
    assert out.getvalue() == "a.parquet: 4 filters added\n"
    assert "a.parquet" not in err.getvalue()


def test_cli_dask_lookup_passes_no_filters_and_no_statistics(tmp_path, monkeypatch):
    """--dask ignored --no-filters and --no-statistics: the cluster pruned with both."""
    from simdex import _bloom_dask
    from simdex.cli import main

    src = _mixed(tmp_path / "mixed")
    seen = {}

    def fake_lookup(source, column, values, columns=None, **kw):
        seen.update(kw)
        return bloom.lookup(source, column, values, columns, use_filters=kw["use_filters"],
                            use_statistics=kw["use_statistics"], return_report=True)

    monkeypatch.setattr(_bloom_dask, "lookup", fake_lookup)
    rc = main(["bloom", "lookup", str(src), "--column", "id", "--value", "5", "--dask", "2",
               "--no-filters", "--no-statistics"])
    assert rc == 0
    assert seen["use_filters"] is False and seen["use_statistics"] is False


def test_inspect_value_in_a_file_without_row_groups(tmp_path):
    """A file with no row groups (a writer closed before any row) has no chunks, which inspect
    --value took for a missing column: 'no column 'id' ...; it has: id', exit 2."""
    path = tmp_path / "empty.parquet"
    pq.ParquetWriter(path, pa.schema([("id", pa.int64())])).close()
    r = _cli("inspect", str(path), "--column", "id", "--value", "5", "--json")
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr
    r = _cli("inspect", str(path), "--column", "nope", "--value", "5")
    assert r.returncode == 2 and "no column 'nope'" in r.stderr and "it has: id" in r.stderr


def test_a_dotted_path_naming_two_columns_is_refused(tmp_path):
    """A top-level column "a.b" (INT32) beside a struct "a" with a field "b" (INT64): both leaves
    have the path "a.b". prune typed the value by the first (INT64), probed the INT32 column's
    filters with INT64 hashes, and ruled out the row group holding a.b = 2: lookup returned no
    row where pyarrow returns one."""
    path = tmp_path / "amb.parquet"
    t = pa.table({"a": pa.array([{"b": 100}, {"b": 200}, {"b": 300}], pa.struct([("b", pa.int64())])),
                  "a.b": pa.array([1, 2, 3], pa.int32())})
    pq.write_table(t, path, row_group_size=1, bloom_filter_options={"a.b": True})
    assert pds.dataset(path).to_table(filter=pds.field("a.b").isin([2])).num_rows == 1
    for call in (lambda: bloom.prune(path, "a.b", [2]), lambda: bloom.lookup(path, "a.b", [2]),
                 lambda: bloom.from_parquet(path), lambda: bloom.from_parquet(path, columns=["a.b"]),
                 lambda: bloom.add_filters(path, ["a.b"], out=tmp_path / "out.parquet")):
        with pytest.raises(ValueError, match="'a.b' names 2 columns"):
            call()
    r = _cli("inspect", str(path), "--column", "a.b", "--value", "2")
    assert r.returncode == 1 and "names 2 columns" in r.stderr, r.stdout
    assert not (tmp_path / "out.parquet").exists()


@pytest.mark.parametrize("bad", ["not-parquet", "no-column"])
def test_add_checks_every_file_before_writing_any(tmp_path, bad):
    """A file the filters cannot go into stopped `add --in-place` part way: the files before it
    replaced, the rest not."""
    src = _partitioned(tmp_path / "src")
    if bad == "not-parquet":
        (src / "k=2" / "part-1.parquet").write_bytes(b"not parquet at all")
    else:
        pq.write_table(pa.table({"other": [1]}), src / "k=2" / "part-1.parquet")
    before = {p: p.read_bytes() for p in src.rglob("*.parquet")}
    with pytest.raises(ValueError, match="part-1.parquet"):
        bloom.add_filters(src, ["id"], in_place=True)
    assert {p: p.read_bytes() for p in src.rglob("*.parquet")} == before
    r = _cli("add", str(src), "--column", "id", "--out", str(tmp_path / "out"), "--no-progress")
    assert r.returncode == 1 and "part-1.parquet" in r.stderr and r.stdout == ""
    assert not (tmp_path / "out").exists()


def _evolved(root):
    """a: id int64, u uint32, s int8; b: no id at all; c: id int32, u int64 (a column dropped,
    one retyped both ways: pyarrow.dataset reads every file as the first file's schema, with
    nulls where a file lacks a column)."""
    root.mkdir()
    pq.write_table(pa.table({"id": pa.array([1, 2, 3, 2**40], pa.int64()), "x": [1, 2, 3, 4],
                             "u": pa.array([0, 2**31, 2**32 - 1, 7], pa.uint32()),
                             "s": pa.array([-128, 0, 127, 1], pa.int8())}), root / "a.parquet", row_group_size=2)
    pq.write_table(pa.table({"x": [5, 6, 7]}), root / "b.parquet")
    pq.write_table(pa.table({"id": pa.array([4, 5, -(2**31), 2**31 - 1], pa.int32()), "x": [8, 9, 10, 11],
                             "u": pa.array([3, 2**31 + 1, 2**32 - 2, 8], pa.int64())}),
                   root / "c.parquet", row_group_size=2)
    bloom.add_filters(root / "a.parquet", ["id", "u", "s"], in_place=True)
    bloom.add_filters(root / "c.parquet", ["id", "u"], in_place=True)
    return root


def _reference(source, column, values):
    """pyarrow's answer: values the column's type cannot hold go in as int64 (isin casts)."""
    ds = pds.dataset(source)
    try:
        vs = pa.array(values, ds.schema.field(column).type)
    except (OverflowError, pa.ArrowInvalid):
        vs = pa.array(values, pa.int64())
    return ds.to_table(filter=pc.field(column).isin(vs))


def test_a_file_without_the_column_holds_only_nulls_there(tmp_path):
    """b.parquet has no id: prune and lookup raised "no column 'id'" for the whole dataset,
    where pyarrow.dataset reads nulls there (a value is absent in b, None matches its rows). A
    column no file has is still an error naming the columns."""
    src = _evolved(tmp_path / "ev")
    for values in ([2, 4], [None], [7, None], [99]):
        got = bloom.lookup(src, "id", values)
        assert got.sort_by("x").equals(_reference(src, "id", values).sort_by("x")), values
    pruned = bloom.prune(src, "id", [2, 4])
    assert not any(p.endswith("b.parquet") for p, _ in pruned)
    assert pruned.report.files_without_column == 1 and "without the column" in str(pruned.report)
    assert [rg for p, rg in bloom.prune(src, "id", [None]) if p.endswith("b.parquet")] == [0]
    with pytest.raises(ValueError, match=r"no column 'idd' in any of the 3 files; .*the file has: id, x"):
        bloom.lookup(src, "idd", [2])
    r = _cli("lookup", str(src), "--column", "id", "--value", "4", "--columns", "id,x", "--no-progress")
    assert r.returncode == 0 and r.stdout.splitlines()[1:] == ["4\t8"], r.stderr
    r = _cli("lookup", str(src), "--column", "idd", "--value", "4", "--no-progress")
    assert r.returncode == 1 and "no column 'idd' in any of the 3 files" in r.stderr


@pytest.mark.parametrize("column, values", [
    ("id", [2**40, 5]),           # INT64 in a, INT32 in c: 2**40 is in a only
    ("id", [2**31, -(2**31) - 1, 2**31 - 1]),  # a signed INT32 cannot hold 2**31 (it hashed as -2**31)
    ("u", [-1, 2**32, 2**31, 2**32 - 1, 2**32 - 2]),  # INT(32,UNSIGNED) in a, INT64 in c
    ("s", [128, -129, -128, 127]),           # INT(8,SIGNED) in a, missing in c
])
def test_integers_a_column_cannot_hold_are_absent_there(tmp_path, column, values):
    """A value outside a file's integer type raised ("out of range for INT32") for the whole
    dataset, or was hashed as another value's bit pattern (2**31 as -2**31 on a signed INT32
    column: a "maybe" and then an error from the read); pyarrow's dataset finds no row there."""
    src = _evolved(tmp_path / "ev")
    alone = [f for f in sorted(src.glob("*.parquet")) if column in pq.read_schema(f).names]
    for source in alone + [src]:  # each file by itself too, then the dataset
        for vs in [values] + [[v] for v in values]:
            want = _reference(source, column, vs)
            got = bloom.lookup(source, column, vs)
            assert got.sort_by("x").equals(want.sort_by("x")), (source, vs)
    r = _cli("lookup", str(src), "--column", column, *[f"--value={v}" for v in values], "--no-progress")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.splitlines()) - 1 == _reference(src, column, values).num_rows


def _hive(root):
    for year in (2023, 2024):
        for region in ("eu", "us"):
            d = root / f"year={year}" / f"region={region}"
            d.mkdir(parents=True)
            ids = np.arange(10) + year * 100 + (50 if region == "us" else 0)
            pq.write_table(pa.table({"id": ids, "v": np.full(10, 0.5)}), d / "part-0.parquet", row_group_size=5)
    bloom.add_filters(root, ["id"], in_place=True)
    return root


@pytest.mark.parametrize("column, value", [("id", "202455"), ("year", "2024"), ("region", "eu")])
def test_cli_lookup_of_a_hive_directory_has_its_partition_columns(tmp_path, column, value):
    """`simdex bloom lookup DIR` printed rows without the year=/region= folders' columns, and
    a lookup on one of them failed (no file holds the column), where pyarrow.dataset with
    partitioning="hive" (and pyarrow.parquet.read_table, and DuckDB) gives both."""
    src = _hive(tmp_path / "events")
    ds = pds.dataset(src, partitioning="hive")
    want = ds.to_table(filter=pc.field(column).isin(pa.array([value]).cast(ds.schema.field(column).type)))
    r = _cli("lookup", str(src), "--column", column, "--value", value, "-o", str(tmp_path / "rows.parquet"),
             "--no-progress")
    assert r.returncode == 0, r.stderr
    got = pq.read_table(tmp_path / "rows.parquet")
    assert got.schema == ds.schema and ds.schema.names == ["id", "v", "year", "region"]
    assert got.sort_by("id").equals(want.sort_by("id"))
    pruned = bloom.prune(ds, column, want.column(column)[0])
    assert len(pruned) == (want.num_rows + 4) // 5  # only the row groups holding a match


def test_dask_lookup_of_a_partitioned_dataset_and_of_files_lacking_the_column(tmp_path):
    """simdex.bloom.dask.lookup refused a hive-partitioned Dataset (so `lookup DIR --dask`
    could not give the partition columns the plain lookup gives); and a Dask batch whose files
    all lack the column must not be taken for a column no file has, nor read in its own schema."""
    pytest.importorskip("distributed", reason="the dask extra (pip install simdex[dask]) is not installed")
    from simdex.bloom import dask as bd

    hive = pds.dataset(_hive(tmp_path / "events"), partitioning="hive")
    src = _evolved(tmp_path / "ev")
    with bd.cluster(n_workers=2) as client:
        for column, values in (("year", [2024]), ("id", [202455, 202301])):
            got = bd.lookup(hive, column, values, client=client)
            assert got.equals(bloom.lookup(hive, column, values)), column
            assert got.sort_by("id").equals(hive.to_table(filter=pc.field(column).isin(values)).sort_by("id"))
        files = [str(src / n) for n in ("a.parquet", "b.parquet", "c.parquet")]
        assert list(bd.prune(files, "id", [2, 4], client=client, tasks_per_worker=2)) == list(bloom.prune(files, "id", [2, 4]))
        with pytest.raises(ValueError, match="no column 'idd' in any of the 3 files"):
            bd.prune(files, "idd", [2], client=client)
        # Each batch reads in the whole source's schema: here the first file lacks the column.
        later = _added_later(tmp_path / "later", (2, 3))
        got = bd.lookup(later, "k", [22, 32, None], client=client, tasks_per_worker=2)
        assert got.equals(bloom.lookup(later, "k", [22, 32, None])) and got.column_names == ["rid", "x", "k"]


def test_rows_are_matched_after_the_scan_not_by_pyarrow_statistics(tmp_path):
    """A Dataset (or files whose schemas differ) was read through pyarrow's scanner with the
    isin filter, and the scanner rules row groups out by min/max first: a row group holding
    NaN (statistics leave NaN out) and one whose min and max are -0.0 and 0.0 (looked up as
    0.0) were dropped, with the rows in them, though prune had kept them and a read of the
    dataset shows them."""
    root = tmp_path / "floats"
    root.mkdir()
    pq.write_table(pa.table({"key": [1.0, float("nan")], "rid": [0, 1]}), root / "a.parquet")
    pq.write_table(pa.table({"key": [-0.0, 0.0], "rid": [2, 3]}), root / "b.parquet")
    ds = pds.dataset(root)
    full = ds.to_table()
    for value, rid in ((float("nan"), 1), (0.0, 3)):
        want = full.filter(pc.is_in(full.column("key"), value_set=pa.array([value])))
        assert want.column("rid").to_pylist() == [rid]
        for columns in (None, ["rid"]):
            got = bloom.lookup(ds, "key", [value], columns=columns)
            assert got.column("rid").to_pylist() == [rid], (value, columns)
            assert got.column_names == (["key", "rid"] if columns is None else ["rid"])


def _rows(table):
    return sorted(table.column("rid").to_pylist())


def test_files_read_as_a_coarser_type_are_not_pruned_in_their_own(tmp_path):
    """pyarrow's dataset reads every file as the first file's types and casts timestamps to
    dates and doubles to floats without complaint (a coarser timestamp unit it refuses): the second file's 2024-01-02 12:00 is the
    date 2024-01-02 there, its 0.1000000000000001 is float32(0.1). prune looked for midnight,
    and for the double 0.1, in that file's own filters and statistics, and dropped the rows."""
    for first, second, value in (
            (pa.array([dt.date(2024, 1, 1)]), pa.array([dt.datetime(2024, 1, 2, 12)], pa.timestamp("ms")),
             dt.date(2024, 1, 2)),
            (pa.array([0.5], pa.float32()), pa.array([0.1000000000000001]), 0.1)):
        root = tmp_path / str(first.type).replace("[", "_").replace("]", "")
        root.mkdir()
        pq.write_table(pa.table({"key": first, "rid": [0]}), root / "a.parquet")
        pq.write_table(pa.table({"key": second, "rid": [1]}), root / "b.parquet")
        bloom.add_filters(root, ["key"], in_place=True)
        full = pds.dataset(root).to_table()
        assert full.column("key")[1].equals(pa.scalar(value, first.type)), full  # what a reader sees
        assert _rows(bloom.lookup(root, "key", [value])) == [1], first.type
        assert (str(root / "b.parquet"), 0) in bloom.prune(root, "key", [value])


def test_instants_a_date_or_coarse_timestamp_column_cannot_hold_are_absent(tmp_path):
    """A datetime against a date column, or one finer than a timestamp column's unit, raised
    ("expected a datetime.date", "finer than the column's unit"); a date column holds a
    datetime's midnight (as DuckDB compares them), and no other instant."""
    root = tmp_path / "t"
    root.mkdir()
    pq.write_table(pa.table({"d": pa.array([dt.date(2024, 1, 1), dt.date(2024, 1, 2)]),
                             "ms": pa.array([dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2)], pa.timestamp("ms")),
                             "rid": [0, 1]}), root / "a.parquet", row_group_size=1)
    bloom.add_filters(root, ["d", "ms"], in_place=True)
    for column in ("d", "ms"):
        assert _rows(bloom.lookup(root, column, [dt.datetime(2024, 1, 2)])) == [1]
        assert _rows(bloom.lookup(root, column, np.array(["2024-01-02T00:00"], "datetime64[us]"))) == [1]
        for off in (dt.timedelta(hours=12), dt.timedelta(microseconds=1)):
            instant = dt.datetime(2024, 1, 2) + off
            for values in ([instant], [instant, dt.datetime(2024, 1, 1)], np.array([instant], "datetime64[us]"),
                           pa.array([instant], pa.timestamp("us"))):
                got = bloom.lookup(root, column, values)
                assert _rows(got) == ([0] if len(values) == 2 else []), (column, values)
            assert list(bloom.prune(root, column, [instant])) == []
    r = _cli("lookup", str(root), "--column", "ms", "--value", "2024-01-02T00:00:00.000001", "--no-progress")
    assert r.returncode == 0 and r.stdout.splitlines() == ["d\tms\trid"], r.stderr


def _added_later(root, holders, retyped=None):
    """Four files p0..p3 (read in that order) of rid and x; those in ``holders`` have an int64
    column k too (with pyarrow's filters), placed between rid and x; ``retyped``: a file whose
    k is a string instead."""
    root.mkdir()
    for i in range(4):
        cols = {"rid": np.arange(4) + 10 * i}
        if i in holders or i == retyped:
            k = np.array([1, 2, 3, 4]) + 10 * i
            cols["k"] = pa.array([str(v) for v in k]) if i == retyped else pa.array(k, pa.int64())
        cols["x"] = [f"r{i}.{j}" for j in range(4)]
        opts = {"bloom_filter_options": {"k": {"ndv": 8, "fpp": 0.01}}} if "k" in cols else {}
        pq.write_table(pa.table(cols), root / f"p{i}.parquet", row_group_size=2, **opts)
    return root


@pytest.mark.parametrize("holders", [(1, 2, 3), (0, 2, 3), (0, 1, 2), (3,), (1,), (0,)],
                         ids=["first-lacks", "middle-lacks", "last-lacks", "only-last", "only-middle", "only-first"])
def test_a_column_added_later_is_found_whichever_file_lacks_it(tmp_path, holders):
    """The lookup read the files in the first file's schema, so a column the first file lacked
    (one added to the dataset later) raised "no column 'k' in the dataset's schema" though later
    files hold it. Now the column's field is appended to that schema (from the first file that
    has it), and pyarrow.dataset given the same schema returns the same rows: the files without
    it hold nulls there."""
    src = _added_later(tmp_path / "ds", holders)
    files = [str(src / f"p{i}.parquet") for i in range(4)]
    first = pq.read_schema(files[0])
    want_schema = first if "k" in first.names else first.append(pq.read_schema(files[holders[0]]).field("k"))
    ref = pds.dataset(files, schema=want_schema)
    for values in ([12], [32, 2, 99], [99], [None], [None, 22]):
        want = ref.to_table(filter=pc.field("k").isin(pa.array(values, pa.int64())))
        for source in (src, files):
            got, report = bloom.lookup(source, "k", values, return_report=True)
            assert got.schema == want_schema and got.equals(want), (values, got, want)
            assert report.files_without_column == 4 - len(holders)
        pruned = bloom.prune(src, "k", values)
        lacking = {p for p in files if files.index(p) not in holders}
        assert (None in values) or not any(p in lacking for p, _ in pruned), values
    assert bloom.lookup(src, "k", [12], columns=["x", "k"]).to_pylist() == (
        [{"x": "r1.1", "k": 12}] if 1 in holders else [])
    r = _cli("lookup", str(src), "--column", "k", "--value", str(10 * holders[-1] + 3), "--columns", "rid,k",
             "--no-progress")
    assert r.returncode == 0 and r.stdout.splitlines() == ["rid\tk", f"{10 * holders[-1] + 2}\t{10 * holders[-1] + 3}"], r.stderr


def test_a_column_no_file_has_or_one_file_retypes_is_an_error_naming_it(tmp_path):
    src = _added_later(tmp_path / "none", ())
    with pytest.raises(ValueError, match=r"no column 'k' in any of the 4 files; .*p0.parquet: no column 'k'; the file has: rid, x"):
        bloom.lookup(src, "k", [1])
    r = _cli("lookup", str(src), "--column", "k", "--value", "1", "--no-progress")
    assert r.returncode == 1 and "no column 'k' in any of the 4 files" in r.stderr
    # p2's k holds strings: not skipped as a file without k, but refused by name.
    src = _added_later(tmp_path / "retyped", (1, 3), retyped=2)
    with pytest.raises(ValueError, match=r"p2.parquet: column 'k': values do not fit the column \(BYTE_ARRAY STRING\)"):
        bloom.lookup(src, "k", [12])
    with pytest.raises(ValueError, match=r"p2.parquet: column 'k'"):
        bloom.prune(src, "k", [12])
    r = _cli("lookup", str(src), "--column", "k", "--value", "12", "--no-progress")
    assert r.returncode == 1 and "p2.parquet: column 'k'" in r.stderr, r.stderr
