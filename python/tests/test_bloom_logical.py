"""simdex.bloom under the values real users type and hostile files: logical types (CLI and
Python), unsigned ranges, NaN as parquet-java writes it, errors that say where, and memory that
stays bounded by what is asked. Files are produced by pyarrow inside the tests."""

import datetime as dt
import decimal
import json
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

from simdex import bloom
from simdex.bloom import BloomFilter
from simdex.commands.bloom import _varint  # the Thrift varint the command writes too

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

D = decimal.Decimal
UID = uuid.UUID("12345678-1234-5678-1234-567812345678")
TS = dt.datetime(2024, 1, 31, 12, 0, 0, 123456, tzinfo=dt.timezone.utc)
TSN = 1706702400123456789  # 2024-01-31T12:00:00.123456789


def _write(path, table, **kw):
    pq.write_table(table, path, bloom_filter_options={c: {"ndv": 16, "fpp": 0.01} for c in table.column_names},
                   **kw)
    return path


@pytest.fixture(scope="module")
def logical_file(tmp_path_factory):
    t = pa.table({
        "d": pa.array([D("1.50"), D("-2.25")], pa.decimal128(9, 2)),
        "dd": pa.array([D("12345678901234.5"), D("-0.1")], pa.decimal128(20, 1)),
        "date": pa.array([dt.date(2024, 1, 31), dt.date(1969, 12, 31)]),
        "tsu": pa.array([TS, TS], pa.timestamp("us", "UTC")),
        "tsn": pa.array([TSN, TSN], pa.timestamp("ns")),
        "tms": pa.array([dt.time(12, 34, 56, 789000)] * 2, pa.time32("ms")),
        "u8": pa.array([200, 5], pa.uint8()),
        "u32": pa.array([3000000000, 5], pa.uint32()),
        "u64": pa.array([2**64 - 1, 5], pa.uint64()),
        "uu": pa.array([UID.bytes] * 2, pa.uuid()),
        "s": pa.array(["1.50", "héllo"]),
        "i": pa.array([-5, -100000]),
        "f": pa.array([1.5, -2.0], pa.float32()),
    })
    return _write(tmp_path_factory.mktemp("lt") / "logical.parquet", t)


def _inspect(path, column, value, *extra):
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "inspect", str(path), "--column", column,
                        "--value", value, "--json", *extra], check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return [not row["excludes"] for row in json.loads(r.stdout)]


# ---- item 1: the CLI parses values by the column's logical type ---------------------------------

@pytest.mark.parametrize("column,value", [
    ("d", "1.50"), ("d", "1.5"), ("d", "-2.25"), ("dd", "12345678901234.5"), ("dd", "-0.1"),
    ("date", "2024-01-31"), ("date", "1969-12-31"),
    ("tsu", "2024-01-31T12:00:00.123456Z"), ("tsu", "2024-01-31T13:00:00.123456+01:00"),
    ("tsu", "2024-01-31 12:00:00.123456"), ("tsn", "2024-01-31T12:00:00.123456789"),
    ("tms", "12:34:56.789"), ("u8", "200"), ("uu", str(UID)), ("s", "1.50"), ("s", "héllo"),
    ("i", "-5"), ("i", "-100000"), ("i", "-0x186a0"), ("f", "-2"),
])
def test_cli_value_by_logical_type_is_found(logical_file, column, value):
    assert _inspect(logical_file, column, value) == [True]


@pytest.mark.parametrize("column,value", [
    ("d", "1.51"), ("date", "2024-02-01"), ("tsu", "2024-01-31T12:00:00.123456+01:00"),
    ("uu", str(uuid.UUID(int=5))), ("i", "-6"),
])
def test_cli_other_values_are_excluded(logical_file, column, value):
    assert _inspect(logical_file, column, value) == [False]


def test_cli_decimal_text_of_the_fixed_width_is_not_raw_bytes(logical_file):
    # "1.50" is 4 characters and d is FIXED_LEN_BYTE_ARRAY(4): it must still mean 1.50.
    assert _inspect(logical_file, "d", "1.50") == [True]
    raw = (150).to_bytes(4, "big", signed=True).hex()
    assert _inspect(logical_file, "d", raw, "--hex") == [True]
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "inspect", str(logical_file), "--column", "d",
                        "--value", "1.505"], check=False, capture_output=True, text=True)
    assert r.returncode == 1 and "decimal places" in r.stderr


def test_decimals_stored_as_integers(tmp_path):
    t = pa.table({"d4": pa.array([D("1.50")], pa.decimal128(9, 2)),
                  "d8": pa.array([D("-123456789012.34")], pa.decimal128(18, 2))})
    path = _write(tmp_path / "di.parquet", t, store_decimal_as_integer=True)
    assert [c["physical_type"] for c in bloom.read_footer(str(path))["columns"]] == ["INT32", "INT64"]
    assert _inspect(path, "d4", "1.50") == [True] and _inspect(path, "d4", "1.51") == [False]
    assert _inspect(path, "d8", "-123456789012.34") == [True]
    f = bloom.from_parquet(path)[0]
    assert f["d4"].check(D("1.5")) is True and f["d8"].check(pq.read_table(path).column("d8")).all()


def test_decimals_past_the_context_precision(tmp_path):
    # Decimal arithmetic rounds to the context's precision (28 digits by default): a 38-digit
    # value scaled that way hashed as another number and every path answered "absent".
    big = [D("-99999999999999999999999999999999999.99"), D("1234567890123456789012345678.91")]
    t = pa.table({"x": pa.array(big, pa.decimal128(38, 2)),
                  "y": pa.array([D("1234567890123456.78"), D("1")], pa.decimal128(18, 2))})
    path = _write(tmp_path / "d38.parquet", t)
    f = bloom.from_parquet(path)[0]
    for v in big:
        assert f["x"].check(v) is True, v
        assert list(bloom.prune(path, "x", [v])) == [(str(path), 0)]
        assert bloom.lookup(path, "x", [v]).num_rows == 1
        assert _inspect(path, "x", str(v)) == [True]
    assert f["x"].check(D("-99999999999999999999999999999999999.98")) is False
    with decimal.localcontext() as c:
        c.prec = 6  # a user's own low precision changes nothing
        assert f["y"].check(D("1234567890123456.78")) is True
        assert f["x"].check(big[0]) is True
    with pytest.raises(ValueError, match="decimal places"):
        f["x"].check(D("1.001"))
    with pytest.raises(ValueError, match="does not fit"):
        f["x"].check(D("1E+38"))
    with pytest.raises(ValueError, match="does not fit"):
        f["x"].check(D("1E+999999999"))  # refused at once, not built as an integer
    with pytest.raises(ValueError, match="decimal places"):
        f["x"].check(D("1E-999999999"))
    assert f["x"].check(D("0E-999999999")) is False  # zero at any exponent is 0
    g = BloomFilter(1024, physical_type="INT64")
    with pytest.raises(ValueError, match="out of range"):
        g.check(D("1E+999999999"))


def test_cli_int96_from_timestamp_text(tmp_path):
    t = pa.table({"ts": pa.array([dt.datetime(2024, 1, 31, 12, 0, 0, 123456)] * 2, pa.timestamp("us"))})
    path = _write(tmp_path / "i96.parquet", t, use_deprecated_int96_timestamps=True)
    assert bloom.read_footer(str(path))["columns"][0]["physical_type"] == "INT96"
    assert _inspect(path, "ts", "2024-01-31T12:00:00.123456") == [True]
    assert _inspect(path, "ts", "2024-01-31T12:00:00.123457") == [False]


def test_cli_probe_leading_minus_and_logical_type(tmp_path):
    out = tmp_path / "f.bloom"
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "build", "--type", "INT64", "-o", str(out)],
                       input="-100000\n-5\n", check=False, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "probe", str(out), "--type", "INT64",
                        "-5", "-1e5", "-0x186a0"], check=False, capture_output=True, text=True)
    assert r.returncode == 1 and "-1e5" in r.stderr  # a value (not an option) that is no INT64
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "probe", str(out), "--type", "INT64",
                        "-5", "-0x186a0"], check=False, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["-5", "maybe", "-0x186a0", "maybe"], r.stderr


# ---- item 2: unsigned logical types take their whole range --------------------------------------

def test_unsigned_full_range(logical_file):
    assert _inspect(logical_file, "u32", "3000000000") == [True]
    assert _inspect(logical_file, "u64", str(2**64 - 1)) == [True]
    f = bloom.from_parquet(logical_file)[0]
    assert f["u32"].check(3000000000) is True
    assert f["u32"].check(np.uint32(3000000000)) is True
    assert f["u32"].check(np.array([3000000000, 5], np.uint32)).all()
    assert f["u64"].check([2**64 - 1, 5]).all()
    assert f["u8"].check(200) is True
    with pytest.raises(ValueError, match="out of range"):
        f["u32"].check(-1)
    with pytest.raises(ValueError, match="out of range"):
        f["u8"].check(256)
    # Without a logical type an INT32 filter takes both readings of 32 bits.
    g = BloomFilter(64, physical_type="INT32")
    g.insert(np.array([3000000000], np.uint32))
    assert g.check(3000000000) is True and g.check(3000000000 - 2**32) is True


# ---- item 3: NaN is never "absent" ----------------------------------------------------------------

def _splice_bitset(path, column, values):
    """Rewrites a column's filter in place with one holding `values` only, as parquet-java
    writes float filters, with no NaN in them."""
    c = next(c for c in bloom.read_footer(str(path))["chunks"] if c["path"] == column)
    data = bytearray(path.read_bytes())
    old = bloom.from_parquet(path)[0][column]
    mine = BloomFilter(old.num_bytes, physical_type=c["physical_type"])
    mine.insert(values)
    hdr = len(old.to_bytes()) - old.num_bytes
    off = c["bloom_filter_offset"] + hdr
    data[off:off + old.num_bytes] = mine.bitset
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("typ", [pa.float32(), pa.float64()])
def test_nan_probe_is_maybe_in_parquet_java_style_filter(tmp_path, typ):
    path = _write(tmp_path / "nan.parquet", pa.table({"x": pa.array([1.5, float("nan"), 2.5], typ)}))
    _splice_bitset(path, "x", np.array([1.5, 2.5], typ.to_pandas_dtype()))
    f = bloom.from_parquet(path)[0]["x"]
    assert f.check(1.5) is True
    assert not f._f.check_hashes(bloom.hash_values([float("nan")], f.physical_type))[0]  # NaN-free
    assert f.check(float("nan")) is True
    assert f.check(np.array([np.nan, 7.25], typ.to_pandas_dtype())).tolist()[0] is True
    assert bloom.check_filters([f], float("nan")).tolist() == [True]
    assert _inspect(path, "x", "nan") == [True]
    assert _inspect(path, "x", "-nan") == [True]
    out = tmp_path / "f.bloom"
    out.write_bytes(f.to_bytes())
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "probe", str(out), "--type",
                        f.physical_type, "nan"], check=False, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("nan\tmaybe"), r.stdout + r.stderr


# ---- item 4: the Python API takes logical values ---------------------------------------------------

def test_python_logical_values(logical_file):
    f = bloom.from_parquet(logical_file)[0]
    assert f["d"].logical_type == "DECIMAL(9,2)"
    assert f["d"].check(D("1.50")) is True and f["d"].check(D("1.5")) is True
    assert f["d"].check(D("1.51")) is False
    assert f["dd"].check([D("12345678901234.5"), D("-0.1")]).all()
    assert f["date"].check(dt.date(2024, 1, 31)) is True
    assert f["date"].check(np.array(["2024-01-31", "1969-12-31"], "datetime64[D]")).all()
    assert f["tsu"].check(TS) is True
    assert f["tsu"].check(TS.astimezone(dt.timezone(dt.timedelta(hours=5)))) is True
    assert f["tsu"].check(np.array(["2024-01-31T12:00:00.123456"], "datetime64[us]")).all()
    assert f["tsn"].check(np.array([TSN], "datetime64[ns]")).all()
    assert f["tms"].check(dt.time(12, 34, 56, 789000)) is True
    assert f["uu"].check(UID) is True and f["uu"].check(uuid.UUID(int=5)) is False
    table = pq.read_table(logical_file)
    for name in ["d", "dd", "date", "tsu", "tsn", "tms", "u32", "u64", "uu", "s", "i", "f"]:
        col = table.column(name)
        assert f[name].check(col).all(), name                  # ChunkedArray
        assert f[name].check(col.chunk(0)).all(), name         # Array
        assert f[name].check(col[0]) is True, name             # Scalar


def test_python_nulls_empty_and_numpy_scalars(logical_file):
    f = bloom.from_parquet(logical_file)[0]
    with pytest.raises(ValueError, match="nulls are never in a bloom filter"):
        f["i"].check(None)
    with pytest.raises(ValueError, match="nulls are never in a bloom filter"):
        f["s"].check(pa.array(["x", None]))
    assert f["i"].check([]).shape == (0,)
    assert BloomFilter(64).check([]).shape == (0,)
    g = BloomFilter(1024)
    g.insert(np.array([7], np.int32))
    g.insert(np.array([0.1], np.float32))
    assert g.check(np.int32(7)) is True and g.check(np.float32(0.1)) is True
    for v in [np.int32(7), np.int64(7), np.float32(0.1), np.float64(0.1), np.uint16(9)]:
        assert bloom.hash_values(v.reshape(1) if False else np.asarray([v]))[0] == \
            bloom.hash_values(np.array([v], v.dtype))[0]
        assert g.check(v) == bool(g.check(np.array([v], v.dtype))[0]), v.dtype
    assert g.check(np.float64(0.1)) is False  # a DOUBLE 0.1 is not the FLOAT 0.1 inserted
    with pytest.raises(ValueError, match="is 3 bytes long, expected 16"):
        f["uu"].check(b"abc")
    with pytest.raises(ValueError, match="is 2 bytes long, expected 16"):
        f["uu"].check(memoryview(b"ab"))
    with pytest.raises(ValueError, match="expected 16"):
        bloom.hash_values([b"a" * 16, b"b"], "FIXED_LEN_BYTE_ARRAY", 16)


# ---- hand-built files (a tiny Thrift compact writer) -----------------------------------------------

def _zz(v):
    return _varint((v << 1) ^ (v >> 63))


class _Struct:
    """Fields in increasing id order: ("i32"|"i64"|"bin"|"struct"|"list", id, value)."""

    def __init__(self, *fields):
        self.fields = fields

    def encode(self):
        out, last = bytearray(), 0
        types = {"i32": 5, "i64": 6, "bin": 8, "list": 9, "struct": 12}
        for kind, fid, v in self.fields:
            out.append((fid - last) << 4 | types[kind])
            last = fid
            if kind in ("i32", "i64"):
                out += _zz(v)
            elif kind == "bin":
                out += _varint(len(v)) + v
            elif kind == "struct":
                out += v.encode()
            else:  # list of structs or of binaries
                elem_type = 8 if v and isinstance(v[0], bytes) else 12
                out += bytes([len(v) << 4 | elem_type]) if len(v) < 15 else bytes([0xF0 | elem_type]) + _varint(len(v))
                for e in v:
                    out += _varint(len(e)) + e if elem_type == 8 else e.encode()
        return bytes(out + b"\x00")


def _footer(ncols, chunk_list, root_children=None):
    schema = [_Struct(("bin", 4, b"schema"), ("i32", 5, ncols if root_children is None else root_children))]
    schema += [_Struct(("i32", 1, 2), ("bin", 4, f"c{i}".encode())) for i in range(ncols)]
    rg = _Struct(("list", 1, chunk_list), ("i64", 2, 0), ("i64", 3, 1))
    return _Struct(("i32", 1, 2), ("list", 2, schema), ("i64", 3, 1), ("list", 4, [rg])).encode()


def _chunk(i, offset=None, length=None):
    meta = [("i32", 1, 2), ("list", 3, [f"c{i}".encode()]), ("i64", 5, 1)]
    if offset is not None:
        meta += [("i64", 14, offset), ("i32", 15, length)]
    return _Struct(("i64", 2, 0), ("struct", 3, _Struct(*meta)))


def _file(path, body, footer):
    path.write_bytes(b"PAR1" + body + footer + len(footer).to_bytes(4, "little") + b"PAR1")
    return path


# ---- item 5: memory bounded by what is asked ------------------------------------------------------

_PEAK = r"""
import sys
from simdex import bloom
from simdex.commands import bloom as cli
import argparse, contextlib, io
def rss(key):
    for line in open("/proc/self/status"):
        if line.startswith(key):
            return int(line.split()[1]) * 1024
open("/proc/self/clear_refs", "w").write("5")  # reset the peak (VmHWM) to the current RSS
base = rss("VmRSS:")
what, path = sys.argv[1], sys.argv[2]
if what == "from_parquet":
    n = sum(len(v) for v in bloom.from_parquet(path).values())
elif what == "one_column":
    n = len(bloom.from_parquet(path, columns=["c3"]))
elif what == "lazy_one":
    n = int(bloom.from_parquet(path)[0]["c3"].check(7))
else:
    args = argparse.Namespace(file=path, column=None if what == "inspect" else "c3",
                              value=None if what == "inspect" else "7", json=True, hex=False)
    with contextlib.redirect_stdout(io.StringIO()):
        n = cli._cmd_inspect(args)
print(rss("VmHWM:") - base, n)
"""


def _peak(what, path):
    r = subprocess.run([sys.executable, "-c", _PEAK, what, str(path)], check=False, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    peak, n = r.stdout.split()
    return int(peak), int(n)


def test_memory_many_chunks_share_one_large_filter(tmp_path):
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("needs Linux /proc/self/clear_refs to measure peak RSS")
    f = BloomFilter(32 << 20)
    f.insert(np.arange(1000))
    blob = f.to_bytes()
    footer = _footer(100, [_chunk(i, 4, len(blob)) for i in range(100)])
    path = _file(tmp_path / "shared.parquet", blob, footer)
    filters = bloom.from_parquet(path)
    assert len(filters[0]) == 100 and filters[0]["c7"].check(np.arange(1000)).all()
    asked = len(blob) + len(footer)
    for what in ("from_parquet", "inspect", "probe", "one_column"):
        peak, _ = _peak(what, path)
        assert peak <= 4 * asked, (what, peak, asked)


def test_memory_lazy_reads_only_the_filters_used(tmp_path):
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("needs Linux /proc/self/clear_refs to measure peak RSS")
    blobs = []
    for i in range(8):
        f = BloomFilter(4 << 20)
        f.insert([i * 1000 + 7])
        blobs.append(f.to_bytes())
    offsets = [4 + sum(len(b) for b in blobs[:i]) for i in range(8)]
    footer = _footer(8, [_chunk(i, offsets[i], len(blobs[i])) for i in range(8)])
    path = _file(tmp_path / "eight.parquet", b"".join(blobs), footer)
    filters = bloom.from_parquet(path)[0]
    assert [filters[f"c{i}"].check(i * 1000 + 7) for i in range(8)] == [True] * 8
    peak, found = _peak("lazy_one", path)
    assert found == 0 and peak <= 4 * (len(blobs[3]) + len(footer)), peak  # c3 holds 3007, not 7


def test_a_wide_file_without_statistics_is_read(tmp_path):
    """The memory budget for a footer (2 bytes per footer byte) refused valid files of about
    10,000 columns and more without statistics (pyarrow writes ~150 footer bytes a chunk):
    "footer describes more schema columns than its size allows". Found by the fuzz campaign."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 12_000
    path = str(tmp_path / "wide.parquet")
    pq.write_table(pa.table({f"c{i}": pa.array([i], pa.int64()) for i in range(n)}), path, write_statistics=False)
    footer = bloom.read_footer(path)
    assert len(footer["chunks"]) == n and footer["chunks"][-1]["path"] == f"c{n - 1}"


def test_memory_footer_claiming_millions_of_chunks(tmp_path):
    if not os.path.exists("/proc/self/clear_refs"):
        pytest.skip("needs Linux /proc/self/clear_refs to measure peak RSS")
    n = 3_000_000
    rg = b"\x19" + bytes([0xFC]) + _varint(n) + b"\x00" * n + b"\x00"  # columns: n empty structs
    footer = (_Struct(("i32", 1, 2), ("list", 2, [_Struct(("bin", 4, b"s"), ("i32", 5, 1)),
                                                  _Struct(("i32", 1, 2), ("bin", 4, b"c3"))]),
                      ("i64", 3, 1)).encode()[:-1] + b"\x19\x1c" + rg + b"\x00")
    path = _file(tmp_path / "huge.parquet", b"", footer)
    with pytest.raises(ValueError, match="footer describes more column chunks than its size allows"):
        bloom.read_footer(str(path))
    for what in ("from_parquet", "one_column", "probe"):
        peak, _ = _peak(what, path)
        assert peak <= 4 * len(footer), (what, peak, len(footer))


# ---- item 6: errors say what and where, once; nothing blocks ------------------------------------------

def test_footer_error_states_offset_once(tmp_path):
    footer = _footer(1, [_chunk(0)])
    path = _file(tmp_path / "t.parquet", b"", footer[:len(footer) // 2])  # truncated thrift
    with pytest.raises(ValueError) as e:
        bloom.from_parquet(path)
    assert str(e.value).count("at byte") == 1, str(e.value)


def test_non_utf8_column_path_is_value_error_with_offset(tmp_path):
    footer = _footer(1, [_chunk(0)]).replace(b"c0", b"\xff\xfe")
    path = _file(tmp_path / "u.parquet", b"", footer)
    for fn in (bloom.from_parquet, lambda p: bloom.read_footer(str(p))):
        with pytest.raises(ValueError, match=r"not valid UTF-8 \(at byte \d+\)"):
            fn(path)


def test_schema_root_claiming_more_children_is_refused(tmp_path):
    path = _file(tmp_path / "r.parquet", b"", _footer(1, [_chunk(0)], root_children=3))
    with pytest.raises(ValueError, match="root claims 3 children"):
        bloom.read_footer(str(path))


def test_bloom_header_error_names_file_and_column(tmp_path):
    blob = bytearray(BloomFilter(64).to_bytes())
    blob[3] = 0x2C  # algorithm union member 2: not BLOCK
    path = _file(tmp_path / "h.parquet", bytes(blob), _footer(2, [_chunk(0), _chunk(1, 4, len(blob))]))
    with pytest.raises(ValueError) as e:
        bloom.from_parquet(path)
    msg = str(e.value)
    assert str(path) in msg and "column 'c1'" in msg and "row group 0" in msg and "algorithm" in msg, msg
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "inspect", str(path)], check=False, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "column 'c1'" in r.stderr


def test_fifo_and_directories_are_refused_without_blocking(tmp_path):
    fifo = tmp_path / "pipe.parquet"
    os.mkfifo(fifo)
    code = f"from simdex import bloom\ntry:\n  bloom.from_parquet({str(fifo)!r})\nexcept OSError as e:\n  print(e)"
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=30)
    assert "not a regular file" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([sys.executable, "-m", "simdex", "bloom", "inspect", str(fifo)], check=False, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 1 and "not a regular file" in r.stderr
    with pytest.raises(OSError, match="not a regular file"):
        bloom.read_footer(str(tmp_path))


def test_lookup_takes_datetime64_arrays(tmp_path):
    # lookup() built its pyarrow value set from the array's elements, which pyarrow refuses for
    # dates and zoned timestamps; check() and prune() took the same values.
    noon = dt.datetime(2024, 1, 31, 12)
    t = pa.table({"d": pa.array([dt.date(2024, 1, 31), dt.date(2024, 2, 1)]),
                  "tz": pa.array([noon, noon], pa.timestamp("us", "UTC")),
                  "ts": pa.array([dt.datetime(2024, 1, 31), noon], pa.timestamp("ms")),
                  "n": pa.array([1, 2])})
    path = _write(tmp_path / "dt64.parquet", t)
    day = np.array(["2024-01-31"], "datetime64[D]")
    for column, values, rows in [("d", day, 1), ("d", np.array(["2024-01", "2024-03"], "datetime64[M]"), 0),
                                 ("tz", np.array(["2024-01-31T12:00"], "datetime64[us]"), 2),
                                 ("ts", day, 1), ("ts", np.array(["2024-01-31T12"], "datetime64[h]"), 1)]:
        f = bloom.from_parquet(path)[0][column]
        assert f.check(values).any() == (rows > 0), (column, values)
        assert bloom.lookup(path, column, values).num_rows == rows, (column, values)
        assert bloom.lookup(path, column, list(values)).num_rows == rows, (column, values)
