"""simdex.bloom over datasets: prune/lookup return exactly what a full pyarrow scan returns (with
and without filters, with nulls, every physical type); add_filters keeps data bytes, and pyarrow,
DuckDB and simdex read the result; bad input is refused or warned about, never answered wrong."""

from __future__ import annotations

import datetime as dt
import decimal
import os
import struct
import warnings
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pyarrow.parquet as pq
import pytest

from simdex import bloom

ROWS, RG = 3000, 500  # six row groups per file


def _table(seed: int) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = ROWS
    nulls = rng.random(n) < 0.05
    ints = rng.integers(-1000, 1000, n)
    base = dt.datetime(2024, 1, 1)
    cols = {
        "b": pa.array([bool(x % 2) for x in ints], mask=nulls),                       # BOOLEAN
        "i32": pa.array(ints.astype(np.int32), mask=nulls),                           # INT32
        "i64": pa.array(ints * 7919 + seed, mask=nulls),                              # INT64
        "f32": pa.array((ints / 4).astype(np.float32), mask=nulls),                   # FLOAT
        "f64": pa.array(np.where(ints == 3, -0.0, ints / 8), mask=nulls),             # DOUBLE (+ -0.0)
        "s": pa.array([f"key-{x}" for x in ints], mask=nulls),                        # BYTE_ARRAY
        "fb": pa.array([struct.pack(">i", int(x)) for x in ints], pa.binary(4), mask=nulls),  # FLBA
        "dec": pa.array([decimal.Decimal(int(x)) / 100 for x in ints], pa.decimal128(25, 2), mask=nulls),  # FLBA
        "ts": pa.array([base + dt.timedelta(seconds=int(x)) for x in ints], pa.timestamp("ns"), mask=nulls),  # INT96
        "d": pa.array([dt.date(2024, 1, 1) + dt.timedelta(days=int(x)) for x in ints], pa.date32(), mask=nulls),
        "payload": pa.array(rng.random(n)),
    }
    return pa.table(cols)


COLUMNS = ["b", "i32", "i64", "f32", "f64", "s", "fb", "dec", "ts", "d"]
# Columns whose filters pyarrow writes itself (Arrow C++ writes none for BOOLEAN and INT96).
PYARROW_FILTERS = ["i32", "i64", "f32", "f64", "s", "fb", "dec", "d"]


def _write(path, table, filters):
    opts = {c: {"ndv": RG, "fpp": 0.01} for c in PYARROW_FILTERS} if filters else None
    pq.write_table(table, path, row_group_size=RG, use_deprecated_int96_timestamps=True,
                   bloom_filter_options=opts)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("ds")
    plain, pyarrow_f = root / "plain", root / "pyarrow"
    plain.mkdir()
    pyarrow_f.mkdir()
    tables = [_table(s) for s in range(3)]
    for i, t in enumerate(tables):
        _write(plain / f"part-{i}.parquet", t, False)
        _write(pyarrow_f / f"part-{i}.parquet", t, True)
    (plain / "_SUCCESS").write_text("")  # skipped, as pyarrow.dataset skips it
    added = root / "added"
    bloom.add_filters(plain, COLUMNS, out=added)
    return {"plain": plain, "pyarrow": pyarrow_f, "added": added, "table": pa.concat_tables(tables)}


def _values_for(table, column, rng):
    col = table.column(column).drop_null()
    present = [col[int(i)].as_py() for i in rng.integers(0, len(col), 3)]
    absent = {
        "b": [], "i32": [5000, -5000], "i64": [10**12, -(10**12)], "f32": [1e9, 0.3],
        "f64": [0.0, 1e9, float("nan")], "s": ["nope", ""], "fb": [b"\xff\xff\xff\xff"],
        "dec": [decimal.Decimal("99999.99")], "ts": [dt.datetime(1999, 1, 1)], "d": [dt.date(1999, 1, 1)],
    }[column]
    return present, absent


def _scan(source, column, values):
    """The reference: a full pyarrow.dataset scan with the same isin predicate."""
    ds = pds.dataset(str(source), format="parquet")
    typ = ds.schema.field(column).type
    return ds.to_table(filter=pc.field(column).isin(pa.array(values, typ)))


def _same_rows(a: pa.Table, b: pa.Table):
    assert a.schema == b.schema
    key = [(c, "ascending") for c in ("payload",)]
    assert a.sort_by(key).equals(b.sort_by(key))


@pytest.mark.parametrize("variant", ["plain", "pyarrow", "added"])
@pytest.mark.parametrize("column", COLUMNS)
def test_lookup_equals_full_scan(datasets, variant, column):
    rng = np.random.default_rng(hash((variant, column)) % 2**32)
    present, absent = _values_for(datasets["table"], column, rng)
    src = datasets[variant]
    for values in (present[:1], present, absent, present + absent, present + [None]):
        if not values:
            continue
        got, rep = bloom.lookup(src, column, values, return_report=True)
        _same_rows(got, _scan(src, column, values))
        assert rep.row_groups == rep.skipped_by_statistics + rep.skipped_by_filters + rep.read
        assert rep.rows == got.num_rows
        assert rep.matched <= rep.read


def test_filters_prune_and_report(datasets):
    t = datasets["table"]
    v = t.column("i64").drop_null()[17].as_py()
    for variant, expect_filters in (("plain", False), ("pyarrow", True), ("added", True)):
        p = bloom.prune(datasets[variant], "i64", [v])
        rep = p.report
        assert rep.files == 3 and rep.row_groups == 18
        assert (rep.skipped_by_filters > 10) == expect_filters, (variant, rep)
        assert rep.read_without_filter == (rep.read if not expect_filters else 0)
        assert all(isinstance(rg, int) for _, rg in p)
        assert str(rep).startswith("files")
    # Statistics: a value below every minimum needs no filter at all.
    rep = bloom.prune(datasets["added"], "i32", [-10**6]).report
    assert rep.skipped_by_statistics == 18 and rep.filter_reads == 0


def test_value_kinds(datasets):
    src = datasets["added"]
    t = datasets["table"]
    vals = t.column("i64").drop_null()[:5]
    ref = _scan(src, "i64", vals.to_pylist())
    for v in (vals, vals.to_numpy(), vals.to_pylist(), pa.chunked_array([vals])):
        _same_rows(bloom.lookup(src, "i64", v), ref)
    _same_rows(bloom.lookup(src, "i64", vals[0]), _scan(src, "i64", [vals[0].as_py()]))
    _same_rows(bloom.lookup(src, "i64", np.int64(vals[0].as_py())), _scan(src, "i64", [vals[0].as_py()]))
    # A list of paths and a pyarrow Dataset, with a column selection.
    files = sorted(str(p) for p in src.glob("*.parquet"))
    _same_rows(bloom.lookup(files, "i64", vals, columns=["i64", "payload"]), ref.select(["i64", "payload"]))
    got = bloom.lookup(pds.dataset(files, format="parquet"), "i64", vals, columns=["payload", "i64"])
    _same_rows(got, ref.select(["payload", "i64"]))


def test_nulls_match_null_rows(datasets):
    src = datasets["added"]
    got = bloom.lookup(src, "s", [None])
    assert got.num_rows == datasets["table"].column("s").null_count
    _same_rows(got, _scan(src, "s", [None]))


def test_bad_input(datasets, tmp_path):
    src = datasets["added"]
    with pytest.raises(FileNotFoundError):
        bloom.lookup(tmp_path / "missing.parquet", "i64", [1])
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"not parquet at all, not at all")
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        bloom.prune(junk, "i64", [1])
    with pytest.raises(ValueError, match=r"no column 'nope'.*i64"):
        bloom.lookup(src, "nope", [1])
    with pytest.raises(ValueError, match="do not fit"):
        bloom.lookup(src, "i64", ["text"])
    # 2**40 is in no INT32 row: absent, as pyarrow.dataset answers (test_bloom_multifile has more).
    assert bloom.lookup(src, "i32", [2**40]).num_rows == 0
    with pytest.raises(ValueError, match="do not fit"):
        bloom.lookup(src, "d", [1.5])
    with pytest.raises(ValueError, match=r"no column\(s\) 'zz'"):
        bloom.lookup(src, "i64", [1], columns=["zz"])
    enc = tmp_path / "enc.parquet"
    data = bytearray((src / "part-0.parquet").read_bytes())
    data[-4:] = b"PARE"
    enc.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="encrypted"):
        bloom.prune(enc, "i64", [1])
    with pytest.raises(ValueError, match="encrypted"):
        bloom.add_filters(enc, "i64", out=tmp_path / "x.parquet")


def test_corrupt_filter_is_ignored_with_a_warning(datasets, tmp_path):
    src = datasets["added"] / "part-0.parquet"
    bad = tmp_path / "bad.parquet"
    data = bytearray(src.read_bytes())
    chunk = pq.ParquetFile(src).metadata.row_group(2).column(2)  # i64 of row group 2
    off = chunk.bloom_filter_offset
    data[off:off + 3] = b"\x15\x01\x00"  # numBytes = -1: a header no reader accepts
    bad.write_bytes(bytes(data))
    v = pq.read_table(src).column("i64").slice(2 * RG, RG).drop_null()[0].as_py()
    with pytest.warns(bloom.FilterWarning, match="row group 2.*ignored"):
        got, rep = bloom.lookup(bad, "i64", [v, 10**12], return_report=True)
    assert rep.filter_errors == 1 and rep.matched >= 1
    _same_rows(got, _scan(bad, "i64", [v, 10**12]))


def _data_bytes(path):
    md = pq.ParquetFile(path).metadata
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<I", data[-8:-4])[0]
    return data[: len(data) - 8 - n], md


def test_added_file_keeps_data_and_is_read_by_pyarrow_and_duckdb(datasets, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    src = datasets["plain"] / "part-1.parquet"
    out = tmp_path / "with.parquet"
    res = bloom.add_filters(src, ["i64", "s"], out=out)
    assert res[0]["filters_added"] == 12
    before, md0 = _data_bytes(src)
    after, md1 = _data_bytes(out)
    assert after[: len(before)] == before  # every data page, byte for byte
    assert pq.read_table(out).equals(pq.read_table(src))
    t = pq.read_table(src)
    filters = bloom.from_parquet(out, columns=["i64", "s"])
    for col in ("i64", "s"):
        present = t.column(col).drop_null()[:20].to_pylist()
        for v in present + ([10**12, -5] if col == "i64" else ["nope", "zz"]):
            lit = f"'{v}'" if isinstance(v, str) else str(v)
            rows = duckdb.sql(f"SELECT row_group_id, bloom_filter_excludes FROM "
                              f"parquet_bloom_probe('{out}', '{col}', {lit}) ORDER BY row_group_id").fetchall()
            ours = [(rg, not filters[rg][col].check(v)) for rg in range(6)]
            assert rows == ours, (col, v)
    # A DuckDB query skips row groups the filters exclude: their data pages are made unreadable,
    # and the query still answers (it would fail to decode them if it read them).
    v = t.column("i64").drop_null()[RG + 3].as_py()
    excl = [rg for rg, e in duckdb.sql(f"SELECT row_group_id, bloom_filter_excludes FROM "
                                       f"parquet_bloom_probe('{out}', 'i64', {v})").fetchall() if e]
    assert len(excl) >= 4
    broken = tmp_path / "broken.parquet"
    data = bytearray(out.read_bytes())
    md = pq.ParquetFile(out).metadata
    for rg in excl:
        c = md.row_group(rg).column(2)
        start = c.dictionary_page_offset or c.data_page_offset
        data[start:start + c.total_compressed_size] = b"\xff" * c.total_compressed_size
    broken.write_bytes(bytes(data))
    want = duckdb.sql(f"SELECT count(*) FROM read_parquet('{out}') WHERE i64 = {v}").fetchall()[0][0]
    assert want >= 1
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{broken}') WHERE i64 = {v}").fetchall()[0][0] == want
    with pytest.raises(duckdb.Error):  # the pages really are unreadable
        duckdb.sql(f"SELECT sum(i64) FROM read_parquet('{broken}')").fetchall()


def test_footers_of_other_writers_round_trip(datasets, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    from simdex._simdex import bloom as native

    files = [datasets["pyarrow"] / "part-0.parquet", datasets["plain"] / "part-0.parquet"]
    ddb = tmp_path / "duck.parquet"
    duckdb.sql(f"COPY (SELECT * FROM read_parquet('{files[1]}')) TO '{ddb}' (FORMAT parquet, ROW_GROUP_SIZE 1024)")
    files.append(ddb)
    for f in files:
        data = f.read_bytes()
        n = struct.unpack("<I", data[-8:-4])[0]
        footer = data[len(data) - 8 - n: len(data) - 8]
        assert native.set_bloom_locations(footer, []) == footer, f
    # DuckDB's file gets filters for a column DuckDB left without one; pyarrow and DuckDB agree.
    out = tmp_path / "duck_added.parquet"
    bloom.add_filters(ddb, ["payload"], out=out, replace=True)
    assert pq.read_table(out).equals(pq.read_table(ddb))
    v = pq.read_table(ddb).column("payload")[5].as_py()
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{out}') WHERE payload = {v}").fetchall()[0][0] == 1
    _same_rows(bloom.lookup(out, "payload", [v]), _scan(out, "payload", [v]))


def test_add_filters_is_atomic(datasets, tmp_path, monkeypatch):
    import simdex._bloom_add as add

    src = tmp_path / "f.parquet"
    src.write_bytes((datasets["plain"] / "part-2.parquet").read_bytes())
    original = src.read_bytes()
    with pytest.raises(ValueError, match="out"):
        bloom.add_filters(src, "i64")  # neither out nor in_place: the original is never touched

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(add, "_copy_prefix", boom)
    with pytest.raises(OSError, match="disk full"):
        bloom.add_filters(src, "i64", in_place=True)
    assert src.read_bytes() == original
    assert sorted(os.listdir(tmp_path)) == ["f.parquet"]  # no temporary file left behind
    monkeypatch.undo()
    bloom.add_filters(src, "i64", in_place=True)
    assert src.read_bytes()[:1000] == original[:1000]
    assert pq.ParquetFile(src).metadata.row_group(0).column(2).bloom_filter_offset > 0
    # A second run keeps the filters there; replace=True rebuilds them.
    assert bloom.add_filters(src, "i64", in_place=True)[0]["filters_added"] == 0
    assert bloom.add_filters(src, "i64", in_place=True, replace=True)[0]["filters_added"] == 6
    with pytest.raises(ValueError, match="no column 'zz'"):
        bloom.add_filters(src, "zz", in_place=True)


def test_numpy_scalars_hash_like_their_dtype():
    f = bloom.BloomFilter(1024)
    f.insert(np.array([5], np.int32))
    assert np.int32(5) in f and f.check(np.int32(5))
    g = bloom.BloomFilter(1024)
    g.insert(np.array([1.5], np.float32))
    assert np.float32(1.5) in g
    assert bloom.hash_values(np.float32(1.5))[0] == bloom.hash_values([1.5], "FLOAT")[0]
    assert bloom.hash_values(np.float32(1.5))[0] != bloom.hash_values([1.5], "DOUBLE")[0]
    # A list of numpy scalars (list(array), array.tolist() aside) hashes as the array does.
    for a in (np.array([7, 8], np.int32), np.array([0.1], np.float32), np.array([3], np.uint16),
              np.array(["2024-01-31"], "datetime64[D]"), np.array([True])):
        h = bloom.BloomFilter(1024)
        h.insert(a)
        assert h.check(list(a)).all() and h.check(a[0]), a.dtype
        assert (bloom.hash_values(list(a)) == bloom.hash_values(a)).all(), a.dtype


def test_dask_two_workers_match_one_process(datasets, tmp_path):
    pytest.importorskip("distributed", reason="the dask extra (pip install simdex[dask]) is not installed")
    from simdex.bloom import dask as bd

    one = bloom.add_filters(datasets["plain"], ["i64"], out=tmp_path / "one")
    with bd.cluster(n_workers=2) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        two = bd.add_filters(datasets["plain"], ["i64"], out=tmp_path / "two", client=client)
        assert [r["filters_added"] for r in one] == [r["filters_added"] for r in two]
        for a, b in zip(one, two):
            assert Path(a["out"]).read_bytes() == Path(b["out"]).read_bytes()
        keys = datasets["table"].column("i64").drop_null()[:50].to_pylist() + list(range(10**9, 10**9 + 1000)) + [None]
        p1 = bloom.prune(tmp_path / "two", "i64", keys)
        p2 = bd.prune(tmp_path / "two", "i64", keys, client=client)
        assert list(p1) == list(p2)
        # The same through a scheduler address, as `--scheduler tcp://...` does.
        assert list(bd.prune(tmp_path / "two", "i64", keys, scheduler=client.scheduler.address)) == list(p1)
        assert p1.report.skipped_by_filters == p2.report.skipped_by_filters
        t1 = bloom.lookup(tmp_path / "two", "i64", keys)
        t2 = bd.lookup(tmp_path / "two", "i64", keys, client=client)
        assert t1.equals(t2)


@pytest.mark.parametrize("a", [np.array([], np.int64), np.array([7], np.int32), np.array([3, 1, 3, 2, 1], np.int8),
                               np.array([True, False, True]), np.array([2**64 - 1, 0, 2**64 - 1, 5], np.uint64),
                               np.random.default_rng(5).integers(-50, 50, 1000), np.array([0.0, -0.0, 1.5, 1.5]),
                               np.array([np.nan, 1.0, np.nan, -np.inf]), np.array(["b", "a", "b"])])
def test_unique_sorted_matches_numpy(a):
    from simdex._unique import unique_sorted

    got, want = unique_sorted(a), np.unique(a)
    assert got.dtype == a.dtype and len(got) == len(want)
    assert np.array_equal(got, want, equal_nan=a.dtype.kind == "f")


@pytest.mark.parametrize("values", [
    [3, 1, 3, 2**63, 2**64 - 1, -2**63, 0],          # past int64: the unsigned reading
    [1, True, 1.0, 1, None, True],                     # equal under == but different values
    [0.0, -0.0, 0.0, float("nan"), float("nan")],
    ["b", "a", "b", "", "é", None, "a"],
    [b"x\x00", b"x", b"x\x00", b""],
    [np.int64(5), 5, np.int32(5)],
])
def test_list_fast_paths_keep_every_distinct_value(values):
    """Lists of one plain type (int, str, bytes) are deduplicated and converted in C; mixed
    lists keep the per-value loop. Both must keep exactly the distinct values, in first-seen
    order, keyed by type and by float bits, and give the loop's physical values."""
    import struct

    from simdex import _bloom_dataset, _bloom_values

    def key(v):
        return (type(v), struct.pack("<d", v) if isinstance(v, float) else v)

    want, seen = [], set()
    for v in values:
        if v is not None and key(v) not in seen:
            seen.add(key(v))
            want.append(v)
    got = _bloom_dataset.Values(values)
    assert got.has_null == (None in values)
    assert [key(v) for v in got.values] == [key(v) for v in want]
    kinds = {type(v) for v in want}
    if kinds == {int}:  # against the per-value loop, forced by a numpy scalar in front
        fast = _bloom_values.physical_values(got.values, "INT64").data
        loop = _bloom_values.physical_values([np.int64(0)] + got.values, "INT64").data[1:]
        assert fast.dtype == np.int64 and fast.tolist() == loop.tolist()
    if kinds in ({str}, {bytes}):
        fast = _bloom_values.physical_values(got.values, "BYTE_ARRAY").data
        assert fast == [v.encode() if isinstance(v, str) else v for v in want]


def test_int_list_out_of_range_is_refused_as_before():
    from simdex import _bloom_values

    for bad in ([1, 2**64], [1, -2**63 - 1]):
        with pytest.raises(ValueError, match="out of range"):
            _bloom_values.physical_values(bad, "INT64")
    with pytest.raises(ValueError, match="out of range"):
        _bloom_values.physical_values([1, 2**32], "INT32")
    assert _bloom_values.physical_values([2**32 - 1, -1], "INT32").data.tolist() == [-1, -1]


def test_dask_values_go_to_the_workers_as_one_object():
    """Dask walks lists item by item when it scatters them (a list of a million ints took two
    minutes to reach two workers): the checked values travel as one pickled object, nulls
    included, and a task uses them as they are."""
    import pickle

    from simdex import _bloom_dask, _bloom_dataset

    sent = []

    class Client:
        def scatter(self, data, broadcast=False, hash=True):
            sent.append(data)
            return ["future"]

    for values in ([3, 1, 2, 3], [5, None, 7], np.arange(10, dtype=np.int64), pa.array([4, None, 4])):
        vals = _bloom_dataset.Values(values)
        assert _bloom_dask._share(Client(), vals) == "future"
        (obj,) = sent[-1]
        assert not isinstance(obj, (list, tuple, dict, set))
        back = _bloom_dask._values(pickle.loads(pickle.dumps(obj)))
        assert isinstance(back, _bloom_dataset.Values) and back.has_null == vals.has_null
        assert sorted(np.asarray(back.values).tolist()) == sorted(np.asarray(vals.values).tolist())
        assert len(back) == len(vals)
    assert list(_bloom_dask._values([2, 1, 2]).values) == [2, 1]


def test_warnings_are_not_raised_for_good_files(datasets):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bloom.lookup(datasets["pyarrow"], "s", ["key-1", "key-2"])


def _cli(*args, stdin=None):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "simdex", "bloom", *args], input=stdin,
                          capture_output=True, text=True)


def test_cli_probe_build_inspect_errors(tmp_path, datasets):
    out = tmp_path / "ids.bloom"
    r = _cli("build", "--type", "INT64", "-o", str(out), stdin="1\n2\n\n4\n")
    assert r.returncode == 1 and "line 3: blank line" in r.stderr
    r = _cli("build", "--type", "INT64", "-o", str(out), stdin="1\n2\nx\n")
    assert r.returncode == 1 and "line 3" in r.stderr and "not a valid INT64" in r.stderr
    r = _cli("build", "--type", "INT64", "-o", str(out), stdin="1\n2\n3\n")
    assert r.returncode == 0, r.stderr
    assert bloom.BloomFilter.from_bytes(out.read_bytes()).check([1, 2, 3]).all()  # still the Parquet form
    r = _cli("probe", str(out), "2", "99")  # the type comes from the file
    assert r.returncode == 0 and r.stdout.splitlines() == ["2\tmaybe", "99\tabsent"]
    r = _cli("probe", str(out), "--type", "INT32", "2")
    assert r.returncode == 1 and "holds INT64 values" in r.stderr and "absent" not in r.stdout
    foreign = tmp_path / "foreign.bloom"
    foreign.write_bytes(bloom.BloomFilter(64).to_bytes())
    r = _cli("probe", str(foreign), "2")
    assert r.returncode == 1 and "give --type" in r.stderr
    f = datasets["added"] / "part-0.parquet"
    r = _cli("inspect", str(f), "--column", "nope", "--value", "1")
    assert r.returncode == 2 and "it has: b, i32, i64" in r.stderr
    r = _cli("inspect", str(f), "--column", "nope")
    assert r.returncode == 2 and "it has: b, i32, i64" in r.stderr


def test_cli_lookup_and_add(tmp_path, datasets):
    src = datasets["plain"]
    t = datasets["table"]
    v = t.column("i64").drop_null()[10].as_py()
    r = _cli("add", str(src), "--column", "i64", "--out", str(tmp_path / "out"))
    assert r.returncode == 0 and r.stdout.count("6 filters added") == 3, r.stderr
    r = _cli("lookup", str(tmp_path / "out"), "--column", "i64", "--value", str(v), "--explain", "--columns", "i64,payload")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    want = _scan(src, "i64", [v])
    assert lines[0] == "i64\tpayload" and len(lines) == 1 + want.num_rows
    assert "skipped by bloom filters" in r.stderr and "rows returned" in r.stderr
    vf = tmp_path / "values.txt"
    vf.write_text(f"{v}\n-5\n")
    r = _cli("lookup", str(tmp_path / "out"), "--column", "i64", "--values-file", str(vf), "-o", str(tmp_path / "rows.parquet"))
    assert r.returncode == 0, r.stderr
    _same_rows(pq.read_table(tmp_path / "rows.parquet"), _scan(src, "i64", [v, -5]))
    vf.write_text(f"{v}\n\n")
    r = _cli("lookup", str(src), "--column", "i64", "--values-file", str(vf))
    assert r.returncode == 1 and "line 2: blank line" in r.stderr
    r = _cli("lookup", str(src), "--column", "nope", "--value", "1")
    assert r.returncode == 1 and "no column 'nope'" in r.stderr and "i64" in r.stderr
    r = _cli("add", str(src / "part-0.parquet"), "--column", "i64")
    assert r.returncode == 2  # neither --out nor --in-place


# ---- Matcher: the native matching a lookup does after pruning ----------------------------------

def _matcher_cases():
    rng = np.random.default_rng(5)
    ints = rng.integers(-50, 50, 4000)
    cases = []
    for t in (pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint32(), pa.uint64(),
              pa.date32(), pa.timestamp("us", tz="UTC"), pa.time64("ns"), pa.duration("ms")):
        # The values' bits, in the type's width (uint64 with the top bit set).
        bits = ints.astype(f"u{t.bit_width // 8}")
        if t == pa.uint64():
            bits ^= np.uint64(1 << 63)
        cases.append(pa.Array.from_buffers(t, len(bits), [None, pa.py_buffer(bits.tobytes())]))
    words = ["", "a", "ab", "\x00", "\xff", "zz", "a\x00b", "longer string here"]
    strs = [words[i % len(words)] + str(i % 7) * (i % 3) for i in rng.integers(0, 100, 4000)]
    for t in (pa.string(), pa.large_string(), pa.binary(), pa.large_binary()):
        cases.append(pa.array(strs).cast(t))
    cases.append(pa.array(rng.random(4000)))  # doubles: is_in itself
    return cases


@pytest.mark.parametrize("arr", _matcher_cases(), ids=lambda a: str(a.type))
def test_matcher_agrees_with_is_in(arr):
    from simdex._bloom_dataset import Matcher

    rng = np.random.default_rng(len(arr))
    nulls = pa.array(rng.random(len(arr)) < 0.1)
    with_nulls = pc.if_else(nulls, pa.nulls(len(arr), arr.type), arr)
    for col in (arr, with_nulls, with_nulls.slice(37, 3001),
                pa.chunked_array([with_nulls.slice(0, 1000), with_nulls.slice(1000)])):
        for k in (0, 1, 5, 60):
            keys = col.drop_null()
            keys = keys.take(pa.array(rng.integers(0, len(keys), k))) if k else keys.slice(0, 0)
            if isinstance(keys, pa.ChunkedArray):
                keys = keys.combine_chunks()
            for vs in (keys, pa.concat_arrays([keys, pa.nulls(1, arr.type)])):
                want = pc.is_in(col, value_set=vs).fill_null(False)
                want = np.asarray(want.to_numpy(zero_copy_only=False) if not isinstance(want, pa.ChunkedArray)
                                  else want.combine_chunks().to_numpy(zero_copy_only=False))
                got = Matcher(vs).rows(col)
                assert got.dtype == bool and got.shape == want.shape
                assert (got == want).all(), (arr.type, k, vs.null_count)


def test_native_match_refuses_bad_offsets():
    from simdex._simdex import bloom as native

    data = np.frombuffer(b"abc", dtype=np.uint8)
    keys = np.frombuffer(b"a", dtype=np.uint8)
    key_offsets = np.array([0, 1], dtype=np.int64)
    with pytest.raises(ValueError, match="offsets"):
        native.match_binary(data, np.array([0, 2, 9], dtype=np.int32).view(np.uint8), 4, keys, key_offsets)
    with pytest.raises(ValueError, match="offsets"):
        native.match_binary(data, np.array([0, 2, 1], dtype=np.int64).view(np.uint8), 8, keys, key_offsets)
    with pytest.raises(ValueError):
        native.match_fixed(np.zeros(7, dtype=np.uint8), 2, np.zeros(2, dtype=np.uint8))


@pytest.mark.parametrize("t, phys", [(pa.int32(), "INT32"), (pa.uint32(), "INT32"), (pa.int64(), "INT64"),
                                     (pa.uint64(), "INT64")])
def test_column_hashes_from_integer_buffers_match_value_hashing(t, phys):
    """add_filters hashes plain integer columns straight from their buffers: the same hashes
    as value by value, sliced and with nulls."""
    from simdex import _bloom_values
    from simdex._bloom_add import column_hashes

    rng = np.random.default_rng(11)
    raw = rng.integers(0, 2**(t.bit_width) - 1, 3000, dtype=np.uint64).astype(f"u{t.bit_width // 8}")
    arr = pa.Array.from_buffers(t, len(raw), [None, pa.py_buffer(raw.tobytes())])
    arr = pc.if_else(pa.array(rng.random(len(arr)) < 0.2), pa.nulls(len(arr), t), arr).slice(7, 2500)
    got = column_hashes(arr, phys, "", None)
    want = _bloom_values.hash_values(arr.drop_null(), phys, "", None)[0]
    assert got.dtype == np.uint64 and len(got) == len(arr) - arr.null_count
    assert np.array_equal(got, want)


# ---- cases found by an audit against pyarrow and DuckDB (2026-11-28) --------------------------

def _isin_rows(path, column, values) -> int:
    t = pq.read_table(path)
    return pc.sum(pc.is_in(t.column(column), value_set=values)).as_py() or 0


def test_nan_is_never_ruled_out_by_a_filter_that_left_it_out(tmp_path):
    """A writer may leave NaN out of its filters; BloomFilter.check answers "maybe" for NaN, and
    prune and lookup must too (they asked the filter and lost the NaN rows)."""
    from simdex.bloom import BloomFilter

    path = str(tmp_path / "nan.parquet")
    pq.write_table(pa.table({"c": [1.0, 2.0, np.nan, 3.0]}), path,
                   bloom_filter_options={"c": {"ndv": 100, "fpp": 0.01}})
    cc = pq.ParquetFile(path).metadata.row_group(0).column(0)
    off, length = cc.bloom_filter_offset, cc.bloom_filter_length
    data = Path(path).read_bytes()
    old = BloomFilter.from_bytes(data[off:off + length])
    javalike = BloomFilter(old.num_bytes)
    javalike.insert(np.array([1.0, 2.0, 3.0]))
    new = javalike.to_bytes()
    assert len(new) == length
    with open(path, "wb") as f:
        f.write(data[:off] + new + data[off + length:])
    assert list(bloom.prune(path, "c", [float("nan")])) == [(path, 0)]
    got = bloom.lookup(path, "c", [float("nan")])
    assert got.num_rows == 1 == _isin_rows(path, "c", pa.array([np.nan]))


def test_dates_against_a_timestamp_column_are_their_midnight(tmp_path):
    """A date looked up in a TIMESTAMP column was hashed as a day count read as microseconds: a
    wrong "absent". pyarrow and DuckDB compare a date with a timestamp at its midnight."""
    import duckdb

    path = str(tmp_path / "ts.parquet")
    for tz in (None, "UTC"):
        pq.write_table(pa.table({"ts": pa.array([dt.datetime(2024, 1, 1), dt.datetime(2024, 1, 2, 5)],
                                                pa.timestamp("us", tz))}), path, bloom_filter_options={"ts": True})
        f = bloom.from_parquet(path)[0]["ts"]
        assert f.check(dt.date(2024, 1, 1))
        assert list(bloom.prune(path, "ts", [dt.date(2024, 1, 1)])) == [(path, 0)]
        for v in ([dt.date(2024, 1, 1)], pa.array([dt.date(2024, 1, 1)], pa.date32())):
            assert bloom.lookup(path, "ts", v).num_rows == 1
        assert bloom.lookup(path, "ts", [dt.date(2024, 1, 2)]).num_rows == 0
    assert duckdb.sql(f"select count(*) from '{path}' where ts = DATE '2024-01-01'").fetchall() == [(1,)]


def test_dictionary_columns_are_looked_up_by_their_values(tmp_path):
    path = str(tmp_path / "dict.parquet")
    pq.write_table(pa.table({"c": pa.array(["a", "b", "a", "c"]).dictionary_encode(),
                             "i": pa.array([1, 2, 1, 3]).dictionary_encode()}), path,
                   bloom_filter_options={"c": True, "i": True})
    assert bloom.lookup(path, "c", ["a"]).num_rows == 2
    assert bloom.lookup(path, "i", [1]).num_rows == 2
    assert bloom.lookup(path, "c", ["zz"]).num_rows == 0


def test_numpy_floats_against_a_decimal_column(tmp_path):
    path = str(tmp_path / "dec.parquet")
    pq.write_table(pa.table({"c": pa.array([decimal.Decimal("1.50")], pa.decimal128(7, 2))}), path,
                   bloom_filter_options={"c": True})
    f = bloom.from_parquet(path)[0]["c"]
    for v in (1.5, np.float64(1.5), np.array([1.5]), pa.array([1.5])):
        assert np.all(f.check(v))
        assert list(bloom.prune(path, "c", v)) == [(path, 0)]


def test_datetime64_outside_the_nanosecond_range(tmp_path):
    """datetime64[ns] holds 1677-2262: the conversion goes through Python ints, not that cast."""
    path = str(tmp_path / "far.parquet")
    pq.write_table(pa.table({"ts": pa.array([dt.datetime(2300, 1, 1), dt.datetime(1600, 6, 1)], pa.timestamp("us"))}),
                   path, bloom_filter_options={"ts": True})
    f = bloom.from_parquet(path)[0]["ts"]
    for v in (np.datetime64("2300-01-01"), np.datetime64("2300-01-01T00:00:00.000000"), np.datetime64("1600-06-01", "D")):
        assert f.check(v) and np.all(f.check([v]))
        assert list(bloom.prune(path, "ts", v)) == [(path, 0)]
        assert bloom.lookup(path, "ts", [v]).num_rows == 1
    with pytest.raises(ValueError, match="null"):
        f.check(np.datetime64("NaT"))


def test_cli_lookup_takes_timestamp_and_time_text(tmp_path):
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"ts": pa.array([dt.datetime(2024, 1, 31, 12)], pa.timestamp("us")),
                             "tm": pa.array([dt.time(12, 34, 56)], pa.time64("us"))}), path,
                   bloom_filter_options={"ts": True, "tm": True})
    for column, text in (("ts", "2024-01-31T12:00:00"), ("tm", "12:34:56")):
        r = _cli("lookup", path, "--column", column, "--value", text)
        assert r.returncode == 0, r.stderr
        assert "2024-01-31 12:00:00" in r.stdout and "12:34:56" in r.stdout
        r = _cli("lookup", path, "--column", column, "--value", text.replace("12", "13", 1))
        assert r.returncode == 0, r.stderr
        assert "2024-01-31 12:00:00" not in r.stdout


def test_add_filters_on_nested_leaves_and_durations(tmp_path):
    """Struct fields, list elements, map keys and values and durations (pyarrow writes filters
    for all of them): every value the leaf stores is in the filter simdex adds."""
    src, out = str(tmp_path / "nested.parquet"), str(tmp_path / "out.parquet")
    rows = 50
    table = pa.table({
        "s": pa.array([None if i % 7 == 0 else {"a": None if i % 5 == 0 else i, "b": f"x{i}"} for i in range(rows)]),
        "l": pa.array([None if i % 6 == 0 else [i * 10 + j if j != 1 else None for j in range(i % 4)]
                       for i in range(rows)], pa.list_(pa.int64())),
        "ls": pa.array([[{"v": i}, {"v": -i}] for i in range(rows)]),
        "m": pa.array([[(f"k{i}", i * 3)] for i in range(rows)], pa.map_(pa.string(), pa.int64())),
        "d": pa.array([i * 1000 for i in range(rows)], pa.duration("us")),
    })
    pq.write_table(table, src)
    leaves = {"s.a": [i for i in range(rows) if i % 7 and i % 5], "s.b": [f"x{i}" for i in range(rows) if i % 7],
              "l.list.element": [i * 10 + j for i in range(rows) if i % 6 for j in range(i % 4) if j != 1],
              "ls.list.element.v": [v for i in range(rows) for v in (i, -i)],
              "m.key_value.key": [f"k{i}" for i in range(rows)], "m.key_value.value": [i * 3 for i in range(rows)],
              "d": [i * 1000 for i in range(rows)]}
    names = [c["path"] for c in bloom.read_footer(src)["columns"]]
    assert set(leaves) <= set(names), names
    bloom.add_filters(src, list(leaves), out=out)
    filters = bloom.from_parquet(out)[0]
    for path, values in leaves.items():
        assert filters[path].check(values).all(), path
    assert pq.read_table(out).equals(table)


def test_lookup_uuid_and_float16_columns(tmp_path):
    """pyarrow's is_in has no kernel for arrow.uuid or float16: lookups compare the uuid's 16
    bytes and float16 widened to float32 (exact), and the CLI prints pyarrow's refusals as
    messages, never tracebacks."""
    import uuid

    path = str(tmp_path / "u.parquet")
    ids = [uuid.UUID(int=7), uuid.UUID(int=2**100)]
    pq.write_table(pa.table({"u": pa.array([u.bytes for u in ids], pa.uuid()),
                             "h": pa.array(np.array([1.5, -0.25], np.float16))}), path,
                   bloom_filter_options={"u": True, "h": True})
    got = bloom.lookup(path, "u", [ids[1], uuid.UUID(int=8)])
    assert got.num_rows == 1 and got.column("h").to_pylist() == [-0.25]
    assert bloom.lookup(path, "h", [1.5]).num_rows == 1
    assert bloom.lookup(path, "h", [1.25]).num_rows == 0
    r = _cli("lookup", path, "--column", "u", "--value", str(ids[0]))
    assert r.returncode == 0 and "1.5" in r.stdout, r.stderr


def test_argument_errors_found_by_the_audit(tmp_path):
    from simdex.bloom import BloomFilter

    path = str(tmp_path / "a.parquet")
    pq.write_table(pa.table({"x": [1, 2, 3]}), path, bloom_filter_options={"x": True})
    # A selection naming nothing there is an error, not an empty answer; an empty one is empty.
    with pytest.raises(ValueError, match=r"no column 'nope'; the file has: x"):
        bloom.from_parquet(path, columns=["nope"])
    with pytest.raises(ValueError, match=r"no row group 99; the file has 1 \(0 to 0\)"):
        bloom.from_parquet(path, row_groups=[99])
    assert bloom.from_parquet(path, columns=[]) == {} and bloom.from_parquet(path, row_groups=[]) == {}
    assert bloom.from_parquet(path, columns=["x"], row_groups=[0])[0]["x"].check(2)
    # Sizes: a clear ValueError, and ndv=0 is a (smallest) filter in the API; the CLI's build
    # refuses --ndv 0 as add does (5000 values in 32 bytes answered "maybe" to everything).
    for kw in ({"num_bytes": -32}, {"num_bytes": 0}, {"ndv": -1}):
        with pytest.raises(ValueError, match="num_bytes|ndv"):
            BloomFilter(**kw)
    assert BloomFilter(ndv=0).num_bytes == 32
    ints = tmp_path / "ints.txt"
    ints.write_text("\n".join(str(i) for i in range(5000)) + "\n")
    r = _cli("build", "--type", "INT64", "--ndv", "0", "-o", str(tmp_path / "f.bloom"), "-i", str(ints))
    assert r.returncode == 2 and "ndv must be at least 1, got 0" in r.stderr, r.stderr
    assert not (tmp_path / "f.bloom").exists()
    # add: the output may not be the input without --in-place; --ndv and --fpp go together.
    with pytest.raises(ValueError, match="the output is the input file"):
        bloom.add_filters(path, ["x"], out=path, replace=True)
    with pytest.raises(ValueError, match="the output is the input file"):
        bloom.add_filters(path, ["x"], out=str(tmp_path), replace=True)
    r = _cli("add", path, "--column", "x", "--out", path, "--replace")
    assert r.returncode == 1 and "--in-place" in r.stderr
    r = _cli("add", path, "--column", "x", "--ndv", "10", "--fpp", "0.001", "--out", str(tmp_path / "b.parquet"))
    assert r.returncode == 0, r.stderr
    assert pq.read_table(tmp_path / "b.parquet").equals(pq.read_table(path))


def test_dotted_top_level_names_and_odd_value_containers(tmp_path):
    from simdex.bloom import BloomFilter

    path = str(tmp_path / "dot.parquet")
    pq.write_table(pa.table({"a.b": [1, 2, 3], "s": pa.array([{"x": 5}, {"x": 6}, None])}), path,
                   bloom_filter_options={"a.b": True, "s.x": True})
    assert bloom.lookup(path, "a.b", [2]).column("a.b").to_pylist() == [2]
    assert bloom.lookup(path, "s.x", [6]).column("a.b").to_pylist() == [2]
    f = BloomFilter(1024, physical_type="INT64")
    f.insert(x for x in range(10))  # any iterator
    assert f.check(x for x in (1, 2)).tolist() == [True, True]
    for bad in ({1, 2}, {1: 2}):
        with pytest.raises(TypeError, match="order"):
            f.check(bad)


def test_cli_add_reports_each_file_as_it_is_done(tmp_path):
    """A failure part way (here a directory where the second output goes) lost the report of
    the files that were already written."""
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    pq.write_table(pa.table({"x": [1, 2, 3]}), src / "a.parquet")
    pq.write_table(pa.table({"x": [4]}), src / "b.parquet")
    (out / "b.parquet").mkdir(parents=True)
    r = _cli("add", str(src), "--column", "x", "--out", str(out), "--no-progress")
    assert r.returncode == 1 and "b.parquet" in r.stderr, r.stderr
    assert f"{out / 'a.parquet'}: 1 filters added" in r.stdout
    assert bloom.from_parquet(out / "a.parquet")[0]["x"].check(2)
