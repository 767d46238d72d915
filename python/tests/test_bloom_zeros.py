"""Float zeros: -0.0 == 0.0 to every reader, but the two hash apart and a writer hashes only the
one it stored. A zero is "maybe" where a filter holds either sign's hash and "absent" only where
it holds neither (as DuckDB's parquet_bloom_probe answers); NaN stays "maybe" always. Checked on
files pyarrow, DuckDB and `add` write, through every path that answers for a value, and against
a read of the column over random float columns."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from simdex import bloom
from simdex.cli import main as simdex_main

# What each file's float columns hold besides 1.5 and 2.5 (the zeros, a NaN, or neither).
CONTENTS = {"pos": [0.0], "neg": [-0.0], "both": [0.0, -0.0], "neither": [], "nan": [float("nan")]}
COLUMNS = {"f64": (pa.float64(), "DOUBLE"), "f32": (pa.float32(), "FLOAT"), "f16": (pa.float16(), "FLOAT16")}


def _table(extra):
    vals = [1.5, 2.5] + extra
    cols = {name: pa.array(np.array(vals, typ.to_pandas_dtype()), typ) for name, (typ, _) in COLUMNS.items()}
    return pa.table({**cols, "rid": np.arange(len(vals))})


def _write(path, writer, extra):
    table = _table(extra)
    if writer == "pyarrow":
        pq.write_table(table, path, bloom_filter_options={c: {"ndv": 16, "fpp": 0.01} for c in COLUMNS})
    elif writer == "add":
        raw = str(path) + ".raw"
        pq.write_table(table, raw)
        bloom.add_filters(raw, list(COLUMNS), out=path, fpp=0.01)
    else:  # DuckDB has no FLOAT16: it writes the others, with filters on dictionary-encoded
        # chunks (not on a few rows: it writes those plain)
        duckdb = pytest.importorskip("duckdb")
        con = duckdb.connect()
        con.register("t", pa.concat_tables([table.drop_columns(["f16"])] * 25))
        con.execute(f"COPY t TO '{path}' (FORMAT parquet)")
    return str(path)


def _holds_zero(extra):
    return any(v == 0 for v in extra)


def _isin_rows(path, col, value):
    """The rows a full read matches with isin (float16 widened: is_in has no kernel for it)."""
    t = pq.read_table(path)
    key = t[col].cast(pa.float32()) if pa.types.is_float16(t[col].type) else t[col]
    return t.filter(pc.is_in(key, value_set=pa.array([value], key.type)))


def _cli(capsys, *args):
    """(exit status, stdout, stderr) of `simdex bloom ARGS`, run in this process."""
    capsys.readouterr()
    rc = simdex_main(["bloom", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.mark.parametrize("writer", ["pyarrow", "add", "duckdb"])
def test_zeros_are_maybe_where_either_sign_is_held_and_absent_where_neither(tmp_path, writer):
    """Every path answered "maybe" for a zero whatever the filter held (never pruned); now it
    answers "maybe" for both zeros where the column holds either, "absent" where it holds none."""
    for name, extra in CONTENTS.items():
        path = _write(tmp_path / f"{name}.parquet", writer, extra)
        filters = bloom.from_parquet(path)[0]
        for col in [c for c in COLUMNS if c in filters]:
            f = filters[col]
            want = _holds_zero(extra)
            dtype = COLUMNS[col][0].to_pandas_dtype()
            where = (writer, name, col)
            zeros = [0.0, -0.0]
            assert [f.check(z) for z in zeros] == [want, want], where
            assert f.check(np.array(zeros, dtype)).tolist() == [want, want], where
            assert f.check(np.array([float("nan"), 2.5, 7.0], dtype)).tolist() == [True, True, False], where
            for z in zeros:
                assert bloom.check_filters([f, f], z).tolist() == [want, want], where
            many = bloom.check_filters_many([f, f], zeros + [float("nan"), 1.5, 7.0])
            assert many.tolist() == [[want, want, True, True, False]] * 2, where
            for z in zeros:
                kept = bloom.prune(path, col, [z], use_statistics=False)
                assert len(kept) == want and len(bloom.prune(path, col, [z])) == want, where
                rows = bloom.lookup(path, col, [z])
                assert rows.equals(_isin_rows(path, col, z)), where
            if writer == "duckdb":  # DuckDB's own probe answers alike
                import duckdb

                sql_t = COLUMNS[col][1]
                for z in ("0.0", "'-0.0'"):
                    got = duckdb.sql(f"SELECT bloom_filter_excludes FROM parquet_bloom_probe('{path}', '{col}', "
                                     f"{z}::{sql_t})").fetchall()
                    assert got == [(not want,)], (where, z)


def test_cli_inspect_probe_and_lookup_answer_for_both_zeros(tmp_path, capsys):
    """`inspect --value` (and `probe`) answered "may be present" for any zero, with the note
    meant for NaN; `lookup` went through prune (above)."""
    for name, extra in CONTENTS.items():
        path = _write(tmp_path / f"{name}.parquet", "pyarrow", extra)
        want = "may be present" if _holds_zero(extra) else "excluded"
        for col in COLUMNS:
            for z in ("0", "-0.0"):
                rc, out, err = _cli(capsys, "inspect", path, "--column", col, "--value", z)
                assert rc == 0 and out.strip() == f"row group 0: {want}", (name, col, z, out, err)
        rc, out, err = _cli(capsys, "lookup", path, "--column", "f64", "--value", "-0.0", "--columns", "rid", "--no-progress")
        assert rc == 0 and len(out.splitlines()) == 1 + _isin_rows(path, "f64", -0.0).num_rows, (name, out, err)
    filt = tmp_path / "z.bloom"
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "build", "--type", "DOUBLE", "-o", str(filt)],
                       input="-0.0\n1.5\n", capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    rc, out, err = _cli(capsys, "probe", str(filt), "0.0", "-0.0", "2.5", "nan")
    assert rc == 0, err
    assert [ln.split("\t")[1].split(" ")[0] for ln in out.splitlines()] == ["maybe", "maybe", "absent", "maybe"]


def _random_floats(rng, n, dtype):
    pool = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 1e-30, -3.75, np.nan, np.inf], dtype)
    return pool[rng.integers(0, len(pool), n)]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_absent_is_confirmed_by_reading_the_column(tmp_path, dtype):
    """Random float columns with zeros of both signs (often only one sign in a row group),
    filters from pyarrow and from `add`: wherever a path answers "absent" for a value, no row
    of that row group equals it (==, so a zero of either sign counts); a NaN is never absent."""
    rng = np.random.default_rng(20261129)
    asked = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 2.5, 1e-30, -3.75, np.nan, np.inf, 7.0], dtype)
    checked_absent = zeros_absent = 0
    schema = pa.schema({"x": pa.from_numpy_dtype(dtype)})
    for case in range(12):
        # One row group per part, of 1 to 11 rows: often one zero's sign only, or none.
        parts = [_random_floats(rng, int(rng.integers(1, 12)), dtype) for _ in range(int(rng.integers(2, 6)))]
        path = str(tmp_path / f"c{case}.parquet")
        opts = {} if case % 2 else {"bloom_filter_options": {"x": {"ndv": 4, "fpp": 0.2}}}
        with pq.ParquetWriter(path + ".raw" if case % 2 else path, schema, **opts) as w:
            for part in parts:
                w.write_table(pa.table({"x": part}, schema=schema))
        if case % 2:  # filters by `add`, at a high FPP too (small filters: answers of both kinds)
            bloom.add_filters(path + ".raw", ["x"], out=path, fpp=0.2)
        pf = pq.ParquetFile(path)
        stored = [pf.read_row_group(rg).column("x").to_numpy() for rg in range(pf.num_row_groups)]
        filters = bloom.from_parquet(path)
        fs = [filters[rg]["x"] for rg in range(pf.num_row_groups)]
        many = bloom.check_filters_many(fs, asked)
        for j, v in enumerate(asked):
            one = bloom.check_filters(fs, v)
            kept = {rg for _, rg in bloom.prune(path, "x", [v], use_statistics=False)}
            kept_stats = {rg for _, rg in bloom.prune(path, "x", [v])}
            for rg, f in enumerate(fs):
                holds = bool(np.isnan(v) or (stored[rg] == v).any())
                answers = [bool(f.check(v)), bool(f.check(np.array([v], dtype))[0]), bool(one[rg]),
                           bool(many[rg, j]), rg in kept]
                if holds:
                    assert all(answers) and rg in kept_stats, (case, rg, v, answers, stored[rg])
                checked_absent += answers.count(False)
                zeros_absent += v == 0 and not answers[0]
                assert len(set(answers)) == 1, (case, rg, v, answers)  # every path gives one answer
        for vs in (asked[~np.isnan(asked)], np.array([0.0, 7.0], dtype), np.array([-0.0, 2.5], dtype)):
            for use_statistics in (True, False):  # several values at once: the candidates by statistics
                kept = {rg for _, rg in bloom.prune(path, "x", vs, use_statistics=use_statistics)}
                for rg in range(len(fs)):
                    holds = bool(np.isin(stored[rg], vs).any())  # isin compares with ==, as the zeros
                    assert rg in kept or not holds, (case, rg, vs, stored[rg])
    assert checked_absent > 0 and zeros_absent > 0  # row groups are ruled out, zeros too
