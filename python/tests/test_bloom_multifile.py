"""simdex.bloom over datasets of several files that differ: partition folders, schemas that
differ between files, the CLI's progress bar and Dask options. Each answer is checked against
pyarrow's own reading of the files."""

from __future__ import annotations

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
