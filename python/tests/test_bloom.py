"""simdex.bloom: Python API, and interop with filters written by pyarrow and DuckDB (files made
inside the tests): byte-identical bitsets, zero false negatives, FPP consistent with the model."""

import datetime
import subprocess
import sys

import numpy as np
import pytest

from simdex import bloom
from simdex.bloom import BloomFilter

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

N = 5000
RNG = np.random.default_rng(42)


def _int96(ts: datetime.datetime) -> bytes:
    # Parquet INT96: 8 bytes nanoseconds of the day, 4 bytes Julian day, little-endian.
    day = ts.date().toordinal() - datetime.date(1970, 1, 1).toordinal() + 2440588
    nanos = (ts - datetime.datetime.combine(ts.date(), datetime.time())) // datetime.timedelta(microseconds=1) * 1000
    return nanos.to_bytes(8, "little") + day.to_bytes(4, "little")


@pytest.fixture(scope="module")
def pyarrow_file(tmp_path_factory):
    ts = [datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=int(s)) for s in RNG.integers(0, 10**8, N)]
    cols = {
        "i32": RNG.integers(-2**31, 2**31, N).astype(np.int32),
        "i64": RNG.integers(-2**63, 2**63 - 1, N, dtype=np.int64),
        "f32": RNG.standard_normal(N).astype(np.float32),
        "f64": RNG.standard_normal(N),
        "s": [f"value-{i}-é" for i in RNG.integers(0, 10**9, N)],
        "b": [bytes(RNG.integers(0, 256, int(k), dtype=np.uint8)) for k in RNG.integers(0, 40, N)],
        "fl": [bytes(RNG.integers(0, 256, 16, dtype=np.uint8)) for _ in range(N)],
        "ts": ts,
    }
    table = pa.table({
        "i32": pa.array(cols["i32"]), "i64": pa.array(cols["i64"]), "f32": pa.array(cols["f32"]),
        "f64": pa.array(cols["f64"]), "s": pa.array(cols["s"]), "b": pa.array(cols["b"], pa.binary()),
        "fl": pa.array(cols["fl"], pa.binary(16)), "ts": pa.array(ts, pa.timestamp("us")),
    })
    cols["ts"] = [_int96(t) for t in ts]
    path = tmp_path_factory.mktemp("pa") / "pyarrow.parquet"
    opts = {c: {"ndv": N, "fpp": 0.01} for c in table.column_names}
    pq.write_table(table, path, bloom_filter_options=opts, row_group_size=2000,
                   use_deprecated_int96_timestamps=True)
    return path, cols


TYPES = {"i32": "INT32", "i64": "INT64", "f32": "FLOAT", "f64": "DOUBLE", "s": "BYTE_ARRAY",
         "b": "BYTE_ARRAY", "fl": "FIXED_LEN_BYTE_ARRAY", "ts": "INT96"}


def test_pyarrow_bitsets_are_byte_identical(pyarrow_file):
    path, cols = pyarrow_file
    filters = bloom.from_parquet(path)
    assert sorted(filters) == [0, 1, 2]
    meta = pq.ParquetFile(path).metadata
    for rg, by_col in filters.items():
        assert sorted(by_col) == sorted(TYPES)
        lo = rg * 2000
        for name, theirs in by_col.items():
            assert theirs.physical_type == TYPES[name]
            cc = meta.row_group(rg).column(list(TYPES).index(name))
            assert cc.bloom_filter_offset is not None
            values = cols[name][lo:lo + 2000]
            ours = BloomFilter(theirs.num_bytes)
            ours.insert(values, TYPES[name])
            assert ours.bitset == theirs.bitset, (rg, name)
            assert theirs.check(values).all()  # typed by the column's physical type


def test_pyarrow_serialized_form_round_trips(pyarrow_file):
    path, _ = pyarrow_file
    meta = pq.ParquetFile(path).metadata
    cc = meta.row_group(0).column(1)
    raw = path.read_bytes()[cc.bloom_filter_offset:cc.bloom_filter_offset + cc.bloom_filter_length]
    f = BloomFilter.from_bytes(raw)
    assert f.to_bytes() == raw  # header written exactly as Arrow writes it
    assert f == bloom.from_parquet(path)[0]["i64"]


def _fpr(f, absent_hashes):
    return float(f.check_hashes(absent_hashes).mean())


def test_pyarrow_fpp_matches_model(tmp_path):
    n = 20000
    vals = RNG.permutation(np.arange(10**6, dtype=np.int64))[:n]
    pq.write_table(pa.table({"x": vals}), tmp_path / "f.parquet",
                   bloom_filter_options={"x": {"ndv": n, "fpp": 0.05}})
    f = bloom.from_parquet(tmp_path / "f.parquet")[0]["x"]
    assert f.check(vals).all()  # no false negatives
    absent = bloom.hash_values(np.arange(2 * 10**6, 2 * 10**6 + 400000, dtype=np.int64))
    measured, model = _fpr(f, absent), bloom.model_fpp(n, f.num_bytes)
    assert abs(measured - model) < 0.15 * model + 0.001, (measured, model, f.num_bytes)
    assert abs(f.estimated_fpp() - measured) < 0.15 * measured + 0.001


@pytest.fixture(scope="module")
def duckdb_file(tmp_path_factory):
    duckdb = pytest.importorskip("duckdb")
    path = tmp_path_factory.mktemp("dd") / "duck.parquet"
    con = duckdb.connect()
    # DuckDB writes a filter for dictionary-encoded chunks: 3000 distinct values repeated.
    con.execute(f"""COPY (SELECT ((range % 3000) * 7919)::BIGINT AS i, ('s' || (range % 3000)) AS s,
                  (range % 3000)::INTEGER AS i32, ((range % 3000) * 0.5)::DOUBLE AS d
                  FROM range(20000)) TO '{path}' (FORMAT parquet)""")
    return path, con


def test_duckdb_filters_zero_false_negatives(duckdb_file):
    path, _ = duckdb_file
    filters = bloom.from_parquet(path)
    assert filters, "DuckDB wrote no bloom filters"
    keys = np.arange(3000)
    for cols in filters.values():
        assert set(cols) == {"i", "s", "i32", "d"}
        assert cols["i"].check(keys * 7919).all()
        assert cols["s"].check([f"s{k}" for k in keys]).all()
        assert cols["i32"].check(keys.astype(np.int32)).all()
        assert cols["d"].check(keys * 0.5).all()
        f = cols["i"]
        absent = bloom.hash_values(np.arange(10**9, 10**9 + 200000, dtype=np.int64))
        measured, model = _fpr(f, absent), bloom.model_fpp(3000, f.num_bytes)
        assert abs(measured - model) < 0.2 * model + 0.002, (measured, model, f.num_bytes)


def test_duckdb_probe_agrees_with_inspect(duckdb_file, tmp_path):
    path, con = duckdb_file
    for value in ["7919", "5", "23757"]:
        theirs = con.execute(f"SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('{path}', 'i', {value})").fetchall()
        out = subprocess.run([sys.executable, "-m", "simdex", "bloom", "inspect", str(path), "--column", "i",
                              "--value", value, "--json"], capture_output=True, text=True, check=True)
        import json
        ours = [(r["row_group"], r["excludes"]) for r in json.loads(out.stdout)]
        assert ours == theirs, value


def test_duckdb_serialized_form_round_trips(duckdb_file):
    path, _ = duckdb_file
    c = bloom.read_footer(str(path))["chunks"][0]
    raw = path.read_bytes()[c["bloom_filter_offset"]:c["bloom_filter_offset"] + c["bloom_filter_length"]]
    assert BloomFilter.from_bytes(raw).to_bytes() == raw  # our header is byte-for-byte DuckDB's


def test_api_basics():
    f = BloomFilter(ndv=1000, fpp=0.01)
    assert f.num_bytes == bloom.arrow_num_bytes(1000, 0.01)
    vals = np.arange(1000)
    f.insert(vals)
    assert f.check(vals).all()
    assert 5 in f and f.check(5) is True
    h = bloom.hash_values(vals)
    assert h.dtype == np.uint64 and f.check_hashes(h).all()
    bits = f.check_hashes(h[:100], bitmap=True)
    assert bits.dtype == np.uint64 and bits[0] == 2**64 - 1 and bits[1] == 2**36 - 1
    g = BloomFilter(f.num_bytes)
    g.insert(["a", "b"])
    u = f | g
    assert u.check(["a", "b"]).all() and u.check(vals).all()
    big = BloomFilter(1 << 20)
    big.insert(vals)
    k = big.fold_to_fpp(0.01)
    assert k > 0 and big.estimated_fpp() <= 0.01 and big.check(vals).all()
    assert BloomFilter.from_bytes(f.to_bytes()) == f
    assert BloomFilter.from_bitset(f.bitset) == f
    assert bloom.check_filters([f, g, BloomFilter(32)], 7).tolist() == [True, False, False]
    assert BloomFilter(ndv=1000, fpp=0.01, sizing="model").num_bytes >= f.num_bytes
    assert abs(bloom.model_bits_per_value(0.01) - 10.5) < 0.05


def test_check_filters_many_agrees_with_one_value_at_a_time():
    rng = np.random.default_rng(8)
    filters = []
    for i in range(9):
        f = BloomFilter(32 << (i % 5), physical_type="INT64")
        f.insert(rng.integers(0, 50, 20 + i))
        filters.append(f)
    values = list(range(-5, 60))
    got = bloom.check_filters_many(filters, values)
    assert got.shape == (len(filters), len(values)) and got.dtype == bool
    for j, v in enumerate(values):
        assert got[:, j].tolist() == bloom.check_filters(filters, v).tolist()
    assert bloom.check_filters_many(filters, np.array(values)).tolist() == got.tolist()
    assert bloom.check_filters_many(filters, 7).tolist() == [[x] for x in bloom.check_filters(filters, 7)]
    assert bloom.check_filters_many(filters, []).shape == (len(filters), 0)
    assert bloom.check_filters_many([], values, physical_type="INT64").shape == (0, len(values))


def test_check_filters_types_the_value_per_filter():
    """Filters of different column types (an INT32 column in one file, INT64 in another) each
    hash the value their own way: typed by the first filter, the INT64 one said "absent" for a
    value it holds."""
    fs = []
    for t in ("INT32", "INT64", "DOUBLE", "INT32", "BYTE_ARRAY"):
        f = BloomFilter(1024, physical_type=t)
        f.insert(["7"] if t == "BYTE_ARRAY" else [7])
        fs.append(f)
    assert bloom.check_filters(fs[:4], 7).tolist() == [True] * 4
    assert bloom.check_filters_many(fs[:4], [7, 8]).tolist() == [[True, False]] * 4
    with pytest.raises(ValueError, match="expected an integer"):
        bloom.check_filters(fs, "7")  # a string for the INT32 filters: refused, not "absent"
    # An explicit type applies to every filter, as before.
    assert bloom.check_filters(fs[:2], 7, physical_type="INT32").tolist() == [True, False]
    d = BloomFilter(64, physical_type="DOUBLE")
    d.insert([1.5])
    assert bloom.check_filters_many([d], [1.5, float("nan"), 2.5]).tolist() == [[True, True, False]]


def test_typed_hashing():
    assert bloom.hash_values([1], "INT32")[0] != bloom.hash_values([1], "INT64")[0]
    assert bloom.hash_values(np.array([-0.0]))[0] != bloom.hash_values(np.array([0.0]))[0]
    assert bloom.hash_values(["ab"])[0] == bloom.hash_values([b"ab"])[0]
    assert bloom.hash_values(np.array([1, 2], np.uint32))[1] == bloom.hash_values([2], "INT32")[0]
    assert bloom.hash_values([True, False]).tolist() == bloom.hash_values([True, False], "BOOLEAN").tolist()
    fl = np.arange(32, dtype=np.uint8).reshape(2, 16)
    assert bloom.hash_values(fl, "FIXED_LEN_BYTE_ARRAY", 16).tolist() == \
        bloom.hash_values([bytes(fl[0]), bytes(fl[1])], "FIXED_LEN_BYTE_ARRAY").tolist()


def test_errors(tmp_path):
    with pytest.raises(ValueError, match="power of two"):
        BloomFilter(100)
    with pytest.raises(ValueError):
        BloomFilter(ndv=10, fpp=1.5)
    with pytest.raises(ValueError, match="at byte"):
        BloomFilter.from_bytes(BloomFilter(64).to_bytes()[:30])
    with pytest.raises(ValueError, match="multiple of 32"):
        BloomFilter.from_bitset(b"x" * 33)
    with pytest.raises(ValueError, match="equal sizes"):
        BloomFilter(64).merge(BloomFilter(128))
    with pytest.raises(ValueError, match="out of range"):
        bloom.hash_values([2**40], "INT32")
    with pytest.raises(ValueError, match="unknown physical type"):
        bloom.hash_values([1], "INT8")
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1" + b"\x00" * 20 + b"PAR1")
    with pytest.raises(ValueError, match="PAR1|footer"):
        bloom.from_parquet(bad)
    with pytest.raises(OSError):
        bloom.from_parquet(tmp_path / "missing.parquet")


def test_malformed_footers_never_crash(pyarrow_file, tmp_path):
    path, _ = pyarrow_file
    data = bytearray(path.read_bytes())
    flen = int.from_bytes(data[-8:-4], "little")
    start = len(data) - 8 - flen
    rng = np.random.default_rng(1)
    for _ in range(300):
        d = bytearray(data)
        for _ in range(3):
            d[start + int(rng.integers(0, flen))] = int(rng.integers(0, 256))
        p = tmp_path / "m.parquet"
        p.write_bytes(bytes(d))
        try:
            bloom.from_parquet(p)
        except ValueError:
            pass


def _cli(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "simdex", "bloom", *args], input=stdin,
                          capture_output=True, text=True)


def test_cli_build_probe(tmp_path):
    out = tmp_path / "ids.bloom"
    r = _cli("build", "--type", "INT64", "--fpp", "0.01", "-o", str(out), stdin="\n".join(map(str, range(500))))
    assert r.returncode == 0, r.stderr
    f = BloomFilter.from_bytes(out.read_bytes())
    assert f.check(np.arange(500)).all()
    r = _cli("probe", str(out), "--type", "INT64", "7", "123456789")
    assert r.returncode == 0 and r.stdout.splitlines() == ["7\tmaybe", "123456789\tabsent"]
    r = _cli("probe", str(out), "--type", "INT64", "x")
    assert r.returncode == 1 and "not a valid INT64" in r.stderr
    r = _cli("build", "--type", "INT32", "--bytes", "100", "-o", str(out), stdin="")
    assert r.returncode == 2 and "power of two" in r.stderr  # a usage error, before any input


def test_one_filter_from_several_threads(tmp_path):
    """Inserts and probes run without the GIL: two threads inserting into one filter could lose
    each other's bits (inserted values then read absent), and a fold freed the bitset under a
    probe (a segfault). Inserts and folds now have the filter alone, probes share it."""
    import threading

    f = BloomFilter(1 << 20)
    parts = [np.arange(i, 4_000_000, 4, dtype=np.int64) for i in range(4)]
    threads = [threading.Thread(target=f.insert, args=(p,)) for p in parts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(f.check(p).all() for p in parts)

    g = BloomFilter(1 << 22)
    g.insert(np.arange(1000))
    stop, seen = threading.Event(), []

    def probe():
        while not stop.is_set():
            seen.append(int(g.check(np.arange(1000)).sum()))

    t = threading.Thread(target=probe)
    t.start()
    for _ in range(8):
        g._f.fold(1)
    stop.set()
    t.join()
    assert seen and set(seen) == {1000} and g.num_bytes == (1 << 22) >> 8


def test_filters_from_a_file_first_used_by_several_threads(tmp_path):
    """A filter from from_parquet() is read on first use; threads using it first together raised
    KeyError('_load') and could read it twice."""
    import threading

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    p = tmp_path / "t.parquet"
    pq.write_table(pa.table({"x": pa.array(range(5000), pa.int64())}), p, bloom_filter_options={"x": {}})
    for _ in range(20):
        f = bloom.from_parquet(p)[0]["x"]
        errors, answers = [], []

        def use(f=f, errors=errors, answers=answers):
            try:
                answers.append(bool(f.check(1234)))
            except Exception as e:  # noqa: BLE001 - any error is the bug
                errors.append(e)

        ts = [threading.Thread(target=use) for _ in range(4)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert not errors and answers == [True] * 4


_ONE_VALUE_EDGES = [0, -1, 7, 2**63 - 1, -2**63, 2**63, 2**64 - 1, 2**64, -2**63 - 1, 10**30, True, False,
                    np.int64(7), np.int32(7), np.uint64(2**64 - 1), 0.0, -0.0, 1.5, float("inf"), float("nan"),
                    np.float64(1.5), np.float32(1.5), "", "x", "héllo", "\ud800", b"", b"x", bytearray(b"x"),
                    memoryview(b"x"), None]


@pytest.mark.parametrize("column", [{}, {"physical_type": "INT64"}, {"physical_type": "DOUBLE"},
                                    {"physical_type": "BYTE_ARRAY"},
                                    {"physical_type": "BYTE_ARRAY", "logical_type": "STRING"},
                                    {"physical_type": "INT32"}])
def test_one_value_answers_like_a_list_of_one(column):
    # insert/check of one plain value take a quick path without numpy; it must hash, answer and
    # refuse exactly as the general path does for the same value in a list.
    edge = _ONE_VALUE_EDGES[:-1]

    class Sub(int):
        pass

    edge.append(Sub(7))
    for v in edge:
        one, many = BloomFilter(1024, **column), BloomFilter(1024, **column)
        try:
            expect = ("ok", many.insert([v]))
        except (TypeError, ValueError, UnicodeError) as e:
            expect = (type(e), str(e))
        try:
            got = ("ok", one.insert(v))
        except (TypeError, ValueError, UnicodeError) as e:
            got = (type(e), str(e))
        assert got == expect, v
        assert one == many, v
        if expect[0] == "ok":
            assert one.check(v) is True and bool(many.check([v])[0]), v
        probe = BloomFilter(1024, **column)
        probe.insert({"DOUBLE": [1.5], "BYTE_ARRAY": [b"x"]}.get(column.get("physical_type"), [7]))
        try:
            want = bool(probe.check([v])[0])
        except (TypeError, ValueError, UnicodeError) as e:
            with pytest.raises(type(e)):
                probe.check(v)
        else:
            assert probe.check(v) is want and (v in probe) is want, v


def test_integer_arrays_of_every_dtype_hash_and_refuse_by_value():
    # An array whose dtype cannot hold a value outside the column's range skips the pass that
    # checks its values; every dtype must still hash each value's bit pattern and refuse (naming
    # the value) exactly the values outside the range.
    from simdex._simdex import bloom as native

    columns = [("INT32", None, -2**31, 2**32), ("INT64", None, -2**63, 2**64),
               ("INT32", "INT(8,SIGNED)", -128, 128), ("INT32", "INT(32,UNSIGNED)", 0, 2**32),
               ("INT64", "INT(64,UNSIGNED)", 0, 2**64), ("INT64", "INT(16,SIGNED)", -2**15, 2**15)]
    dtypes = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, ">i4", "<u8"]
    for dt in dtypes:
        info = np.iinfo(dt)
        values = sorted(v for v in {int(info.min), -1, 0, 1, 127, 128, int(info.max)} if info.min <= v <= info.max)
        for arr in (np.array(values, dtype=dt), np.array(values[:1], dtype=dt), np.array([], dtype=dt)):
            for t, logical, lo, hi in columns:
                width = 4 if t == "INT32" else 8
                got = None
                try:
                    got = bloom.hash_values(arr, t, logical_type=logical).tolist()
                except ValueError as e:
                    got = str(e)
                bad = [int(v) for v in arr if not lo <= int(v) < hi]
                if bad:
                    assert isinstance(got, str) and "out of range" in got, (dt, t, logical)
                    assert str(min(bad)) in got or str(max(bad)) in got
                else:
                    want = [native.hash_bytes((int(v) % (1 << 8 * width)).to_bytes(width, "little")) for v in arr]
                    assert got == want, (dt, t, logical, arr)
    for t, logical, _, _ in columns:  # bool arrays: 0 and 1
        want = [native.hash_bytes(v.to_bytes(4 if t == "INT32" else 8, "little")) for v in (0, 1)]
        assert bloom.hash_values(np.array([False, True]), t, logical_type=logical).tolist() == want


def test_check_filters_of_one_value_answers_like_each_filter():
    # check_filters hashes one plain value without numpy too; per filter (typed by its column,
    # or by the physical_type given) it must answer and refuse as that filter's check([value]).
    columns = [{}, {"physical_type": "INT64"}, {"physical_type": "INT32"}, {"physical_type": "DOUBLE"},
               {"physical_type": "BYTE_ARRAY", "logical_type": "STRING"}]
    fs = []
    for column in columns:
        for fill in ([7, 2**64 - 1, 0], [1.5, -0.0], [b"x", "héllo"]):
            f = BloomFilter(1024, **column)
            try:
                f.insert(fill)
            except (TypeError, ValueError):
                continue
            fs.append(f)

    def outcome(call):
        try:
            return call()
        except (TypeError, ValueError, UnicodeError) as e:
            return type(e)

    for v in _ONE_VALUE_EDGES:
        for given in (None, "INT64", "DOUBLE", "BYTE_ARRAY"):
            each = [outcome(lambda f=f: bool(f.check([v], physical_type=given)[0])) for f in fs]
            got = outcome(lambda: bloom.check_filters(fs, v, physical_type=given))
            if any(isinstance(e, type) for e in each):
                assert got in each, (v, given)
            else:
                assert not isinstance(got, type) and got.tolist() == each, (v, given)
    for bad in ({"logical_type": ["STRING"]}, {"physical_type": ["INT64"]}):  # unhashable: as before
        with pytest.raises(ValueError, match="unknown"):
            bloom.check_filters(fs, 7, **bad)


def test_a_zero_is_maybe_where_the_other_zero_is_held_and_nan_always(tmp_path):
    """-0.0 equals 0.0 to readers (pyarrow's and DuckDB's filters) but hashes apart: a filter of
    0.0s answered "absent" for -0.0, and prune dropped row groups pyarrow's
    read_table(filters=[("x", "==", -0.0)]) reads (a wrong absent). A zero answers "maybe"
    where either zero is held, and NaN always, for FLOAT, DOUBLE and FLOAT16 (whose NaN was not
    treated so either); test_bloom_zeros.py checks that zeros held by neither are ruled out."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for t, dtype in (("DOUBLE", np.float64), ("FLOAT", np.float32)):
        for stored, asked in ((0.0, -0.0), (-0.0, 0.0)):
            f = BloomFilter(1024, physical_type=t)
            f.insert(np.array([stored], dtype=dtype))
            assert f.check(np.array([asked], dtype=dtype)).tolist() == [True]
            if t == "DOUBLE":
                assert f.check(asked) and f.check([asked, 5.0]).tolist() == [True, False]
                assert bloom.check_filters([f], asked).tolist() == [True]
    h = BloomFilter(1024, physical_type="FIXED_LEN_BYTE_ARRAY", type_length=2, logical_type="FLOAT16")
    h.insert([0.0, 1.0])
    assert h.check([-0.0, float("nan"), 2.0]).tolist() == [True, True, False]

    path = str(tmp_path / "z.parquet")
    pq.write_table(pa.table({"x": pa.array([0.0, 1.5, 2.5] * 100)}), str(tmp_path / "raw.parquet"), row_group_size=100)
    bloom.add_filters([str(tmp_path / "raw.parquet")], "x", out=path)
    want = pq.read_table(path, filters=[("x", "==", -0.0)]).num_rows
    assert want == 100
    assert len(bloom.prune(path, "x", [-0.0], use_statistics=False)) == 3
    assert len(bloom.prune(path, "x", [7.0], use_statistics=False)) == 0  # other values still pruned
