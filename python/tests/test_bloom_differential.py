"""simdex.bloom.lookup against pyarrow.dataset over random small datasets: schemas that change
between files (the key column added, dropped or retyped within its family: integers of every
width and sign, strings, floats, dates and timestamps (INT96 too), booleans), nulls, hive
partition folders, and files written by pyarrow without filters, with its own filters, with
filters `add` put in, and by DuckDB. Every lookup's rows must be pyarrow's; where pyarrow
refuses (a file's column it cannot cast to the first file's type), simdex may answer or
refuse; where pyarrow answers, simdex gives the same rows and schema. Seeded;
`_run_cases(path, seed, n)` runs more."""

from __future__ import annotations

import datetime as dt
import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as pds
import pyarrow.parquet as pq

from simdex import bloom

FAMILIES = {
    "int": [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()],
    "string": [pa.string(), pa.large_string(), pa.dictionary(pa.int32(), pa.string())],
    "float": [pa.float32(), pa.float64()],
    "time": [pa.timestamp("ms"), pa.timestamp("us"), pa.timestamp("ns"), pa.date32()],
    "bool": [pa.bool_()],
}
try:
    import duckdb
except ImportError:  # DuckDB's writer is one of four; the others still run
    duckdb = None
WRITERS = ["plain", "pyarrow", "add"] + (["duckdb"] if duckdb is not None else [])
_EPOCH = dt.datetime(2024, 1, 1)


def _ints(typ, rng, n):
    info = np.iinfo(typ.to_pandas_dtype())
    edges = [int(info.min), int(info.max), 0, 1, -1, 2**31 - 1, 2**31, 2**32 - 1, -(2**31)]
    pool = [v for v in edges if info.min <= v <= info.max] + [rng.randint(max(info.min, -300), min(info.max, 300))
                                                              for _ in range(8)]
    return [rng.choice(pool) for _ in range(n)]


def _column(family, typ, rng, n):
    """n values of the family (a null now and then), and the array of type typ."""
    if family == "int":
        vals = _ints(typ, rng, n)
    elif family == "string":
        vals = [rng.choice(["", "a", "b", "key-1", "key-22", "é", "x" * 40]) for _ in range(n)]
    elif family == "bool":
        vals = [rng.random() < 0.3 for _ in range(n)]
    elif family == "float":
        vals = [rng.choice([0.0, -0.0, 1.5, 0.1, -2.25, 1e30, float("nan"), 3.0]) for _ in range(n)]
    else:
        vals = [_EPOCH + dt.timedelta(days=rng.randint(-3, 3)) + (dt.timedelta(milliseconds=rng.randint(0, 2))
                                                                  if rng.random() < 0.5 else dt.timedelta())
                for _ in range(n)]
        if pa.types.is_date(typ):
            vals = [v.date() for v in vals]
    vals = [None if rng.random() < 0.15 else v for v in vals]
    if pa.types.is_dictionary(typ):
        return vals, pa.array(vals, pa.string()).dictionary_encode()
    return vals, pa.array(vals, typ)


def _write(path, table, writer, rng, key_present):
    rg = rng.choice([3, 7, 20])
    if writer == "duckdb":
        con = duckdb.connect()
        con.register("t", table)
        con.execute(f"COPY (SELECT * FROM t) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE {rg})")
        con.close()
        return
    boolean = key_present and pa.types.is_boolean(table.schema.field("key").type)
    opts = {"key": {"ndv": 8, "fpp": 0.05}} if writer == "pyarrow" and key_present and not boolean else None
    pq.write_table(table, path, row_group_size=rg, bloom_filter_options=opts,
                   use_dictionary=rng.random() < 0.7, data_page_version=rng.choice(["1.0", "2.0"]),
                   use_deprecated_int96_timestamps=rng.random() < 0.3)
    if writer == "add" and key_present:
        bloom.add_filters(path, ["key"], in_place=True, fpp=rng.choice([0.01, 0.3]))


def _make_case(root, rng):
    """(the source to give simdex, the same for pyarrow, the values written)."""
    family = rng.choice(sorted(FAMILIES))
    hive = rng.random() < 0.4
    written, rid = [], 0
    for i in range(rng.randint(1, 4)):
        writer = rng.choice(WRITERS)
        # DuckDB writes a filter only for a dictionary-encoded chunk, which it chooses for
        # repeated values; its row groups are multiples of 2,048 rows.
        n = rng.randint(1, 30) if writer != "duckdb" else rng.randint(300, 4500)
        key_present = i == 0 or rng.random() < 0.75  # the first file decides pyarrow's schema
        cols = {"rid": pa.array(range(rid, rid + n), pa.int64())}
        rid += n
        if key_present:
            typ = rng.choice(FAMILIES[family])
            vals, cols["key"] = _column(family, typ, rng, n)
            written += [v for v in vals if v is not None]
        if rng.random() < 0.5:
            cols["extra"] = pa.array([rng.random() for _ in range(n)])
        folder = root / (f"part={rng.choice(['a', 'b'])}" if hive else "")
        folder.mkdir(parents=True, exist_ok=True)
        _write(folder / f"f{i}.parquet", pa.table(cols), writer, rng, key_present)
    ds = pds.dataset(root, format="parquet", partitioning="hive" if hive else None)
    return (ds if hive else root), ds, family, written


def _values(family, written, rng):
    picks = [rng.choice(written) for _ in range(rng.randint(0, 3))] if written else []
    absent = {"int": [2**40, -(2**63), 2**64 - 1, 2**31, -1, 255, 256, 12345],
              "string": ["nope", "key-3", "ee"],
              "float": [2.5, -0.0, 0.1, float("nan")],
              "time": [_EPOCH + dt.timedelta(days=40), _EPOCH + dt.timedelta(microseconds=1)],
              "bool": [True, False]}[family]
    vals = picks + rng.sample(absent, rng.randint(0, 2))
    if rng.random() < 0.2:
        vals.append(None)
    return vals or [absent[0]]


def _reference(ds, values):
    """The rows of a full read of the dataset (each file cast to its schema) whose key is_in
    the values. Not a filtered scan: pyarrow's own row-group pruning drops row groups holding
    NaN (their min/max leave NaN out) or -0.0 and 0.0, so it misses rows that are there."""
    typ = ds.schema.field("key").type
    typ = typ.value_type if pa.types.is_dictionary(typ) else typ
    try:
        vs = pa.array(values, typ)
    except (OverflowError, pa.ArrowInvalid, pa.ArrowTypeError):
        vs = pa.array(values)  # as the user gave them: isin casts
    table = ds.to_table()
    if pa.types.is_temporal(typ):
        # Instants compared as instants, a date as its midnight (as DuckDB and pyarrow's ==
        # compare them: pyarrow.array truncates 00:00:00.000001 into a date or ms value set).
        def instant(v):
            return dt.datetime(v.year, v.month, v.day) if type(v) is dt.date else v

        wanted = {instant(v) for v in values}
        return table.filter(pa.array([instant(k) in wanted for k in table.column("key").to_pylist()]))
    return table.filter(pc.is_in(table.column("key"), value_set=vs).fill_null(False))


def _rids(table):
    return sorted(table.column("rid").to_pylist())


def _run_cases(tmp_path, seed: int, cases: int) -> dict:
    rng = random.Random(seed)
    counts = {"agree": 0, "pyarrow refused": 0, "both refused": 0}
    for case in range(cases):
        root = tmp_path / f"case{seed}-{case}"
        source, ds, family, written = _make_case(root, rng)
        for _ in range(3):
            values = _values(family, written, rng)
            try:
                want = _reference(ds, values)
            except (pa.ArrowException, ValueError, TypeError, OverflowError, KeyError):
                want = None  # pyarrow has no answer: simdex's, if any, is not checked against one
            columns = rng.choice([None, ["rid"], ["key", "rid"]] + ([["rid", "part"]] if source is ds else []))
            try:
                got = bloom.lookup(source, "key", values, columns=columns)
            except ValueError as e:
                assert want is None, (root, family, values, e)  # pyarrow answered: so must simdex
                counts["both refused"] += 1
                continue
            if want is None:
                counts["pyarrow refused"] += 1
                continue
            want = want if columns is None else want.select(columns)
            assert _rids(got) == _rids(want), (root, family, values, columns)
            assert got.schema == want.schema, (root, values, columns)
            counts["agree"] += 1
    return counts


def test_lookup_agrees_with_pyarrow_on_random_datasets(tmp_path):
    counts = _run_cases(tmp_path, seed=20261128, cases=24)
    assert counts["agree"] >= 40, counts

