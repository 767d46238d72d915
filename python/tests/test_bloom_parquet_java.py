"""Bloom filter interop with parquet-java 1.18.1, the Java reference implementation (what
Spark writes and reads), both ways.

The Java side is tests/bloom/parquet-java, built by scripts/setup.sh into build/parquet-java/:
``write`` makes a file with parquet-java's writer and its filters, ``probe`` prints where each
chunk's filter lies and what parquet-java's reader answers for given values (straight from the
filter, and through filter2's row-group filter, the path Spark prunes by), and ``scan`` reads
every row back with parquet-java and asks each value of the chunk's filter. Values travel as
text that each side turns into the stored form by the column's logical type with its own code
(java.time, BigDecimal and UUID there, simdex's conversions here), so a type that simdex maps
differently from a JVM writer shows up as a wrong answer, not as the same bytes fed to both.

Without Java or the jar this module is skipped, except under scripts/test.sh, which sets
SIMDEX_REQUIRE_PARQUET_JAVA=1: there it fails.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
import os
import shutil
import struct
import subprocess
import uuid
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from simdex import bloom
from simdex.cli import main as simdex_main

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ROOT / "tests" / "bloom" / "parquet-java"
BUILD = Path(os.environ.get("SIMDEX_PARQUET_JAVA_DIR", ROOT / "build" / "parquet-java"))
JAR = BUILD / "parquet-java-bloom.jar"
REQUIRED = os.environ.get("SIMDEX_REQUIRE_PARQUET_JAVA") == "1"

ROWS, RPG = 96, 24  # four row groups of 24 rows
UTC = dt.timezone.utc
PLUS1 = dt.timezone(dt.timedelta(hours=1))


def _java_problem() -> str | None:
    java = shutil.which("java")
    if java is None:
        return "no java on PATH (Debian: openjdk-17-jdk-headless; scripts/setup.sh installs it)"
    if not JAR.is_file() or not (BUILD / "lib").is_dir():
        return f"{JAR} not built (scripts/setup.sh builds it: mvn -f {SOURCES / 'pom.xml'} package)"
    newest = max(p.stat().st_mtime for p in SOURCES.rglob("*") if p.is_file())
    if newest > JAR.stat().st_mtime:
        return f"{JAR} is older than its sources in {SOURCES}: rerun scripts/setup.sh"
    return None


@pytest.fixture(scope="module")
def java():
    problem = _java_problem()
    if problem:
        if REQUIRED:
            pytest.fail(f"parquet-java interop tests cannot run: {problem}", pytrace=False)
        pytest.skip(problem)

    def run(*args) -> str:
        cmd = ["java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", f"{JAR}{os.pathsep}{BUILD / 'lib'}/*",
               "simdex.interop.ParquetJavaBloom", *map(str, args)]
        r = subprocess.run(cmd, capture_output=True, text=True, encoding="utf-8", timeout=300)
        assert r.returncode == 0, f"parquet-java {args[0]} failed ({r.returncode}):\n{r.stderr[-6000:]}"
        return r.stdout

    return run


# ---- the columns ---------------------------------------------------------------------------------

@dataclasses.dataclass
class Col:
    name: str
    decl: str                 # parquet-java schema type, e.g. "int32 (INTEGER(8,false))"
    edges: list               # values every file holds
    gen: object               # rng -> one more value
    absent: list              # candidates for values no row holds (those some row holds are dropped)
    hex: bool = False         # the value is raw bytes (passed as hex)
    values: list = dataclasses.field(default_factory=list)  # filled in by _data


def _f32(x) -> np.float32:
    return np.float32(x)


def _dec(places):
    return lambda rng: (Decimal(int(rng.integers(-10**7, 10**7))) / 10**places).quantize(Decimal(1).scaleb(-places))


def _columns() -> list[Col]:
    day0, t0 = dt.date(2000, 1, 1), dt.datetime(2024, 1, 1)
    return [
        Col("i32", "int32", [-2**31, 2**31 - 1, 0, -1, 1], lambda r: int(r.integers(-10**6, 10**6)), [2**30 + 5, -2**30 - 5, 7]),
        Col("i8", "int32 (INTEGER(8,true))", [-128, 127, 0], lambda r: int(r.integers(-128, 128)), list(range(-128, 128, 3))),
        Col("i16", "int32 (INTEGER(16,true))", [-32768, 32767], lambda r: int(r.integers(-32768, 32768)), [5, -5, 1000]),
        Col("u8", "int32 (INTEGER(8,false))", [0, 255, 128, 127], lambda r: int(r.integers(0, 256)), list(range(0, 256, 5))),
        Col("u16", "int32 (INTEGER(16,false))", [0, 65535, 32768], lambda r: int(r.integers(0, 65536)), [1, 40000, 65534]),
        Col("u32", "int32 (INTEGER(32,false))", [0, 2**31, 2**32 - 1, 2**31 - 1], lambda r: int(r.integers(0, 2**32)),
            [2**32 - 2, 2**31 + 1, 3]),
        Col("date", "int32 (DATE)", [dt.date(1970, 1, 1), dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1969, 12, 31)],
            lambda r: day0 + dt.timedelta(days=int(r.integers(-5000, 5000))), [dt.date(1900, 1, 1), dt.date(2200, 2, 2)]),
        Col("dec9", "int32 (DECIMAL(9,2))", [Decimal("-9999999.99"), Decimal("9999999.99"), Decimal("0.00"), Decimal("1.50")],
            _dec(2), [Decimal("0.01"), Decimal("-1.50"), Decimal("123.45")]),
        Col("time_ms", "int32 (TIME(MILLIS,true))", [dt.time(0), dt.time(23, 59, 59, 999000)],
            lambda r: dt.time(int(r.integers(24)), int(r.integers(60)), int(r.integers(60)), int(r.integers(1000)) * 1000),
            [dt.time(12, 0, 0, 1000)]),
        Col("i64", "int64", [-2**63, 2**63 - 1, 0, -1], lambda r: int(r.integers(-10**15, 10**15)), [2**40, -(2**40), 5]),
        Col("u64", "int64 (INTEGER(64,false))", [0, 2**63, 2**64 - 1, 2**63 - 1], lambda r: int(r.integers(0, 2**63)) * 2 + 1,
            [2**64 - 2, 2**63 + 2, 4]),
        Col("ts_ms", "int64 (TIMESTAMP(MILLIS,true))",
            [dt.datetime(1970, 1, 1, tzinfo=UTC), dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC),
             dt.datetime(2024, 1, 31, 12, 0, tzinfo=PLUS1)],
            lambda r: (t0 + dt.timedelta(milliseconds=int(r.integers(-10**11, 10**11)))).replace(tzinfo=UTC),
            [dt.datetime(2024, 1, 31, 12, 0, tzinfo=UTC), dt.datetime(1999, 1, 1, tzinfo=UTC)]),
        Col("ts_us", "int64 (TIMESTAMP(MICROS,false))",
            [dt.datetime(1, 1, 1), dt.datetime(1850, 6, 1, 0, 0, 0, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)],
            lambda r: t0 + dt.timedelta(microseconds=int(r.integers(-10**14, 10**14))), [dt.datetime(1999, 1, 1, 0, 0, 0, 1)]),
        Col("ts_ns", "int64 (TIMESTAMP(NANOS,true))",
            [np.datetime64("1700-01-01T00:00:00.000000001", "ns"), np.datetime64("2262-04-11T23:47:16.854775807", "ns"),
             np.datetime64("1969-12-31T23:59:59.999999999", "ns")],
            lambda r: np.datetime64(int(r.integers(-10**18, 10**18)), "ns"), [np.datetime64("2024-01-01T00:00:00.000000001", "ns")]),
        Col("dec18", "int64 (DECIMAL(18,4))", [Decimal("-99999999999999.9999"), Decimal("99999999999999.9999"), Decimal("0.0001")],
            _dec(4), [Decimal("-0.0001"), Decimal("1.0000")]),
        Col("time_us", "int64 (TIME(MICROS,false))", [dt.time(12, 34, 56, 789012), dt.time(0)],
            lambda r: dt.time(int(r.integers(24)), int(r.integers(60)), int(r.integers(60)), int(r.integers(10**6))),
            [dt.time(23, 59, 59, 999999)]),
        Col("f32", "float", [_f32(-0.0), _f32(0.0), _f32("nan"), _f32("inf"), _f32("-inf"), _f32(1.4e-45), _f32(1.17549435e-38),
                             _f32(3.4028235e38), _f32(0.1), _f32(-2.5)],
            lambda r: _f32(round(float(r.normal()) * 100, 2)), [_f32(1e30), _f32(-1.4e-45), _f32(0.2)]),
        Col("f64", "double", [-0.0, 0.0, math.nan, math.inf, -math.inf, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                              0.1],
            lambda r: float(r.normal()) * 1e3, [-5e-324, 1e300, 0.3]),
        Col("s", "binary (STRING)", ["", "a", "héllo", "日本語", "🎉 emoji", "tab\there", "line\nbreak", " lead", "trail ",
                                     "x" * 300, "back\\slash"],
            lambda r: f"key-{int(r.integers(0, 60))}", ["nope", "A", "key-", "héllo "]),
        Col("enum", "binary (ENUM)", ["RED", "GREEN"], lambda r: ["BLUE", "RED", "CYAN"][int(r.integers(3))], ["red", "PINK"]),
        Col("raw", "binary", [b"", b"\x00", b"\xff\xfe\x00\x01", bytes(range(256))],
            lambda r: r.bytes(int(r.integers(1, 12))), [b"\x01", b"\x00\x00"], hex=True),
        Col("decbin", "binary (DECIMAL(30,5))",
            [Decimal("0.00000"), Decimal("-0.00001"), Decimal("0.00127"), Decimal("0.00128"), Decimal("-0.00128"),
             Decimal("-0.00129"), Decimal("1234567890123456789012345.12345"), Decimal("-9999999999999999999999999.99999")],
            _dec(5), [Decimal("0.00255"), Decimal("-0.00256"), Decimal("1.00000")]),
        Col("uuid", "fixed_len_byte_array(16) (UUID)", [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)],
            lambda r: uuid.UUID(bytes=r.bytes(16)), [uuid.UUID(int=1), uuid.UUID("12345678-1234-5678-1234-567812345678")]),
        Col("decfix", "fixed_len_byte_array(12) (DECIMAL(25,3))",
            [Decimal("0.000"), Decimal("-0.001"), Decimal("9999999999999999999999.999"), Decimal("-9999999999999999999999.999")],
            _dec(3), [Decimal("0.001"), Decimal("-1.000")]),
        Col("fix4", "fixed_len_byte_array(4)", [b"\x00" * 4, b"\xff" * 4], lambda r: r.bytes(4), [b"\x01\x02\x03\x04"], hex=True),
        Col("i96", "int96", [dt.datetime(1970, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(1, 1, 1),
                             dt.datetime(2024, 2, 29, 12, 0, 0, 123456)],
            lambda r: t0 + dt.timedelta(microseconds=int(r.integers(-10**14, 10**14))), [dt.datetime(1999, 1, 1)]),
        Col("flag", "boolean", [True, False], lambda r: bool(r.integers(2)), []),
    ]


def _key(v):
    """A value's identity in a filter: floats by their bits (-0.0 is not 0.0), NaN is one value."""
    if isinstance(v, np.float32):
        return ("f32", struct.pack("<f", v))
    if isinstance(v, float):
        return ("f64", struct.pack("<d", v))
    return (type(v).__name__, v)


def _is_nan(v) -> bool:
    return isinstance(v, (float, np.floating)) and math.isnan(v)


def _simdex_answers(probes, direct: str) -> np.ndarray:
    """What simdex answers for each probe, from parquet-java's answers ("1"/"0"): NaN "maybe"
    whatever the filter holds; a zero "maybe" when the filter holds 0.0 or -0.0 (equal to
    readers, hashed apart), so both zeros must be among the probes; the rest as parquet-java."""
    want = np.array([ch == "1" for ch in direct])
    out = want.copy()
    for i, v in enumerate(probes):
        if _is_nan(v):
            out[i] = True
        elif isinstance(v, (float, np.floating)) and v == 0:
            other = [k for k, p in enumerate(probes) if k != i and isinstance(p, type(v)) and p == 0]
            assert len(other) == 1, ("both zeros must be probed", probes)
            out[i] = want[i] or want[other[0]]
    return out


def _data(seed: int = 1) -> list[Col]:
    """Each column's ROWS values: its edge values spread over the row groups, the rest drawn from
    gen, about 8 % nulls (never an edge value)."""
    cols = _columns()
    for i, c in enumerate(cols):
        rng = np.random.default_rng(seed * 1000 + i)
        vals = [c.gen(rng) for _ in range(ROWS)]
        slots = rng.permutation(ROWS)
        edge_at = set(int(s) for s in slots[:len(c.edges)])
        for e, s in zip(c.edges, slots[:len(c.edges)]):
            vals[int(s)] = e
        for s in slots[len(c.edges):]:
            if rng.random() < 0.08 and int(s) not in edge_at:
                vals[int(s)] = None
        c.values = vals
    return cols


def _by_row_group(c: Col) -> list[list]:
    return [[v for v in c.values[rg * RPG:(rg + 1) * RPG] if v is not None] for rg in range(ROWS // RPG)]


def _probes(c: Col) -> list:
    """Every distinct value the column holds, then values it does not hold."""
    seen, out = set(), []
    for v in c.values:
        if v is not None and _key(v) not in seen:
            seen.add(_key(v))
            out.append(v)
    return out + [v for v in c.absent if _key(v) not in seen]


# ---- values as text (both sides parse it) ------------------------------------------------------

def _text(v) -> str:
    if isinstance(v, (float, np.floating)):
        x = float(v)  # a float32's exact value: Java's parseFloat gets that float back
        return "NaN" if x != x else "Infinity" if x == math.inf else "-Infinity" if x == -math.inf else repr(x)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dt.date, dt.time)):
        return v.isoformat()
    return str(v)  # ints, Decimal, UUID, str, datetime64


def _escape(s: str) -> str:
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")


def _value_line(v) -> str:
    if v is None:
        return "N"
    if isinstance(v, bytes):
        return f"X\t{v.hex()}"
    return f"S\t{_escape(_text(v))}"


def _write_spec(path: Path, cols: list[Col], options: dict, filters: dict) -> None:
    fields = []
    for c in cols:
        primitive, _, annotation = c.decl.partition(" ")
        fields.append(f"optional {primitive} {c.name} {annotation};".replace(" ;", ";"))
    schema = "message m { required int32 row; " + " ".join(fields) + " }"
    lines = [f"schema\t{schema}", f"rows_per_group\t{RPG}"] + [f"{k}\t{v}" for k, v in options.items()]
    lines += [f"bloom\t{name}\t{how}" for name, how in filters.items()]
    lines += ["column\trow"] + [f"S\t{i}" for i in range(ROWS)]
    for c in cols:
        lines += [f"column\t{c.name}"] + [_value_line(v) for v in c.values]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _write_probes(path: Path, cols: list[Col]) -> None:
    lines = []
    for c in cols:
        lines += [f"column\t{c.name}"] + [_value_line(v) for v in _probes(c)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _parse_probe(out: str):
    """({(rg, column): chunk dict}, {(rg, column): (direct, filter2)}) from `probe`'s lines."""
    chunks, answers = {}, {}
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "chunk":
            chunks[(int(f[1]), f[2])] = {"type": f[3], "offset": int(f[4]), "length": int(f[5]),
                                         "bitset": int(f[6]), "values": int(f[7])}
        elif f[0] == "answer":
            answers[(int(f[1]), f[2])] = (f[3], f[4])
    return chunks, answers


def _parse_scan(out: str):
    scans, rows = {}, None
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "scan":
            scans[(int(f[1]), f[2])] = (int(f[3]), int(f[4]), f[5])
        elif f[0] == "rows":
            rows = int(f[1])
    return scans, rows


# ---- parquet-java writes, simdex reads -----------------------------------------------------------

# Two writer setups. "plain": PARQUET_1_0 pages, no dictionary, a filter sized by ndv on every
# column. "dictionary": PARQUET_2_0 pages (DELTA encodings), snappy, a dictionary page limit
# small enough to fall back mid-chunk, adaptive filters: parquet-java writes no filter for a
# chunk whose data pages are all dictionary-encoded, and simdex must find the same chunks.
VARIANTS = {
    "plain": ({"writer_version": "v1", "dictionary": "off"}, "ndv=200\t0.01"),
    "dictionary": ({"writer_version": "v2", "dictionary": "on", "dictionary_page_size": 256, "codec": "SNAPPY",
                    "adaptive": "on", "max_bloom_bytes": 4096}, "default"),
}


@pytest.fixture(scope="module", params=list(VARIANTS))
def java_file(request, java, tmp_path_factory):
    options, how = VARIANTS[request.param]
    cols = _data()
    d = tmp_path_factory.mktemp(f"java-{request.param}")
    spec, probes, path = d / "spec.txt", d / "probes.txt", d / "java.parquet"
    _write_spec(spec, cols, options, {c.name: how for c in cols})
    java("write", path, spec)
    _write_probes(probes, cols)
    chunks, answers = _parse_probe(java("probe", path, probes))
    return {"variant": request.param, "path": path, "cols": cols, "chunks": chunks, "answers": answers}


def _filtered(jf, c: Col) -> list[int]:
    """The row groups where parquet-java wrote a filter for column c."""
    return [rg for rg in range(ROWS // RPG) if jf["chunks"][(rg, c.name)]["offset"] >= 0]


def test_java_filters_found_where_java_puts_them(java_file):
    """simdex's footer reader finds every filter parquet-java wrote, at the same offset and
    length (1.18.1 writes bloom_filter_length), and reads a bitset of the same size."""
    footer = bloom.read_footer(java_file["path"])
    assert footer["num_row_groups"] == ROWS // RPG and footer["num_rows"] == ROWS
    mine = {(c["row_group"], c["path"]): c for c in footer["chunks"]}
    assert set(mine) == set(java_file["chunks"])
    filters = bloom.from_parquet(java_file["path"])
    with_filter = 0
    for key, j in java_file["chunks"].items():
        m = mine[key]
        assert (m["bloom_filter_offset"], m["num_values"]) == (j["offset"], j["values"]), key
        if j["offset"] < 0:
            assert key[1] not in filters.get(key[0], {}), key
            continue
        with_filter += 1
        assert m["bloom_filter_length"] == j["length"] > j["bitset"], key
        if j["type"] == "BOOLEAN":
            assert key[1] not in filters[key[0]], key  # see test_java_boolean_filters_are_empty_and_unused
        else:
            assert filters[key[0]][key[1]].num_bytes == j["bitset"], key
    if java_file["variant"] == "plain":  # every column but row, every row group
        assert with_filter == len(java_file["cols"]) * ROWS // RPG
    else:  # some chunks all dictionary (no filter), some not: both cases are met
        assert 0 < with_filter < len(java_file["cols"]) * ROWS // RPG


def test_java_filters_hold_every_value(java_file):
    """No wrong "absent": every value parquet-java wrote is "maybe" in its chunk's filter,
    through check, check_filters_many and check_filters."""
    filters = bloom.from_parquet(java_file["path"])
    checked = 0
    for c in java_file["cols"]:
        if c.name == "flag":
            continue
        rgs = _filtered(java_file, c)
        for rg in rgs:
            held = _by_row_group(c)[rg]
            assert filters[rg][c.name].check(held).all(), (c.name, rg)
            checked += len(held)
        if rgs:
            all_values = [v for rg in rgs for v in _by_row_group(c)[rg]]
            grid = bloom.check_filters_many([filters[rg][c.name] for rg in rgs], all_values)
            start = 0
            for i, rg in enumerate(rgs):
                n = len(_by_row_group(c)[rg])
                assert grid[i, start:start + n].all(), (c.name, rg)
                start += n
            v = _by_row_group(c)[rgs[-1]][0]
            assert bloom.check_filters([filters[rg][c.name] for rg in rgs], v)[-1], c.name
    assert checked > (200 if java_file["variant"] == "dictionary" else ROWS * (len(java_file["cols"]) - 1) * 0.9)


def test_java_filters_answer_as_parquet_java(java_file):
    """For every value each column holds and some it does not, simdex's answer in each row
    group is parquet-java's, bit for bit, but for NaN, always "maybe" in simdex (NaN has many bit
    patterns), and zeros, "maybe" in simdex where parquet-java finds 0.0 or -0.0 (equal to
    readers, hashed apart); the filter itself, asked for the hash of the NaN both sides parse, agrees too
    (parquet-java 1.18.1 does put NaN in its filters). filter2 agrees with the filter itself,
    except that it keeps every row group for NaN."""
    filters = bloom.from_parquet(java_file["path"])
    compared = absent_seen = 0
    for c in java_file["cols"]:
        if c.name == "flag":
            continue
        probes = _probes(c)
        nan = np.array([_is_nan(v) for v in probes])
        for rg in range(ROWS // RPG):
            direct, filter2 = java_file["answers"][(rg, c.name)]
            if rg not in _filtered(java_file, c):
                assert set(direct) == {"-"} and set(filter2) == ({"-"} if c.decl == "int96" else {"1"}), (c.name, rg)
                continue
            f = filters[rg][c.name]
            want = np.array([ch == "1" for ch in direct])
            assert set(direct) <= {"0", "1"}, (c.name, rg, direct)
            got, expected = f.check(probes), _simdex_answers(probes, direct)
            assert (got == expected).all(), (c.name, rg, [p for p, g, w in zip(probes, got, expected) if g != w])
            raw = f.check_hashes(bloom.hash_values(probes, f.physical_type, f.type_length, f.logical_type))
            assert (raw == want).all(), (c.name, rg)
            for p, ch in zip(probes, direct):
                if _is_nan(p) and any(_is_nan(v) for v in _by_row_group(c)[rg]):
                    assert ch == "1", (c.name, rg)  # parquet-java 1.18.1 hashes NaN into its filter
            assert filter2 == _filter2(c, nan, direct), (c.name, rg)
            held = {_key(v) for v in _by_row_group(c)[rg]}
            assert all(ch == "1" for p, ch in zip(probes, direct) if _key(p) in held), (c.name, rg)
            compared += len(probes)
            absent_seen += direct.count("0")
    assert compared > 1000 and absent_seen > 500, (compared, absent_seen)


def _filter2(c: Col, nan, direct: str) -> str:
    """What filter2 should answer: the filter's own answers, but every row group kept for NaN;
    nothing for INT96 (FilterApi has no INT96 column)."""
    if c.decl == "int96":
        return "-" * len(direct)
    return "".join("1" if n else d for n, d in zip(nan, direct))


def _inspect(capsys, path, c: Col, v) -> list[dict]:
    argv = ["bloom", "inspect", str(path), "--column", c.name, "--value"]
    argv += [v.hex(), "--hex"] if isinstance(v, bytes) else [_text(v)]
    capsys.readouterr()
    assert simdex_main(argv + ["--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_java_filters_cli_inspect(java_file, capsys):
    """`simdex bloom inspect --column C --value V` parses the value by the column's logical
    type from the same text parquet-java parsed, and excludes exactly the row groups whose
    filter says absent to parquet-java."""
    asked = 0
    for c in java_file["cols"]:
        probes = _probes(c)
        picked = probes[:6] + probes[-len(c.absent):] if c.absent else probes[:6]
        for v in picked:
            i = probes.index(v) if not _is_nan(v) else next(k for k, p in enumerate(probes) if _is_nan(p))
            rows = _inspect(capsys, java_file["path"], c, v)
            assert [r["row_group"] for r in rows] == list(range(ROWS // RPG))
            for r in rows:
                direct = java_file["answers"][(r["row_group"], c.name)][0]
                assert r["has_filter"] == (direct[i] != "-"), (c.name, v, r)
                assert r["excludes"] == (direct[i] == "0" and not _simdex_answers(probes, direct)[i]), (c.name, v, r)
            asked += 1
    assert asked > 150


def test_java_filters_cli_lookup(java_file, capsys):
    """`simdex bloom lookup` on parquet-java's file, values given as the same text: exactly the
    rows holding them."""
    for c in java_file["cols"]:
        if c.name not in ("u64", "u32", "dec9", "dec18", "decbin", "decfix", "ts_ms", "ts_us", "ts_ns", "time_ms",
                          "date", "s", "raw", "uuid", "i96", "f32", "f64"):
            continue
        probes = [v for v in _probes(c) if not _is_nan(v) and not (c.decl == "int96" and not 1678 <= v.year <= 2261)]
        values = probes[:4] + [v for v in c.absent if _key(v) not in {_key(x) for x in c.values if x is not None}]
        argv = ["bloom", "lookup", str(java_file["path"]), "--column", c.name, "--columns", "row", "--format", "csv",
                "--no-progress"] + (["--hex"] if c.hex else [])
        for v in values:
            argv += ["--value", v.hex() if c.hex else _text(v)]
        capsys.readouterr()
        assert simdex_main(argv) == 0, (c.name, capsys.readouterr().err)
        got = sorted(int(x) for x in capsys.readouterr().out.split()[1:])
        keys = {_key(v) for v in values}
        assert got == [i for i, v in enumerate(c.values) if v is not None and _key(v) in keys], c.name


def test_java_filters_prune_and_lookup(java_file):
    """The dataset path (statistics as parquet-java writes them, then filters, blocks read
    alone): prune keeps every row group that holds a value, and lookup returns exactly the
    rows that hold one."""
    path = java_file["path"]
    for c in java_file["cols"]:
        probes = _probes(c)
        for v in probes:
            kept = {rg for _, rg in bloom.prune(path, c.name, [v])}
            holding = {rg for rg, held in enumerate(_by_row_group(c)) if _key(v) in {_key(x) for x in held}}
            assert holding <= kept, (c.name, v, holding, kept)
        wanted = [v for v in probes if not _is_nan(v)]
        if c.decl == "int96":  # pyarrow reads INT96 as timestamp[ns]: lookup refuses years it cannot hold
            wanted = [v for v in wanted if 1678 <= v.year <= 2261]
        keys = {_key(v) for v in wanted}
        got = bloom.lookup(path, c.name, wanted, columns=["row"]).column("row").to_pylist()
        assert sorted(got) == [i for i, v in enumerate(c.values) if v is not None and _key(v) in keys], c.name


def test_java_boolean_filters_are_empty_and_unused(java, tmp_path):
    """parquet-java writes a filter on a BOOLEAN column but hashes no boolean into it (and its
    own reader never asks one): simdex leaves such filters out rather than answer "absent" for
    true and false rows."""
    cols = [c for c in _data() if c.name == "flag"]
    spec, path = tmp_path / "spec.txt", tmp_path / "flag.parquet"
    _write_spec(spec, cols, {"dictionary": "off"}, {"flag": "ndv=100"})
    java("write", path, spec)
    native = bloom._native.ParquetFile(str(path), None, None, False)
    chunks = [c for c in native.footer()["chunks"] if c["path"] == "flag"]
    assert chunks and all(c["bloom_filter_offset"] >= 0 for c in chunks)
    for i, c in enumerate(native.footer()["chunks"]):
        if c["path"] == "flag":
            assert native.read_filter(i).fill() == 0.0  # empty, though the chunk holds both values
    assert all("flag" not in fs for fs in bloom.from_parquet(path).values())
    for v in (True, False):
        holding = {rg for rg, held in enumerate(_by_row_group(cols[0])) if v in held}
        assert {rg for _, rg in bloom.prune(path, "flag", [v])} >= holding
        assert bloom.lookup(path, "flag", [v]).num_rows == sum(1 for x in cols[0].values if x is v)


# ---- simdex writes, parquet-java reads -----------------------------------------------------------

def _pyarrow_columns() -> tuple[pa.Table, list[Col]]:
    """A pyarrow-written table of the Arrow types, with their Parquet logical types, and the
    same values as Cols (for the texts parquet-java parses)."""
    rng = np.random.default_rng(7)
    specs = [  # name, arrow type, edges, gen, absent
        ("i8", pa.int8(), [-128, 127], lambda r: int(r.integers(-128, 128)), list(range(-128, 128, 7))),
        ("u8", pa.uint8(), [0, 255], lambda r: int(r.integers(0, 256)), list(range(0, 256, 7))),
        ("i16", pa.int16(), [-32768, 32767], lambda r: int(r.integers(-32768, 32768)), [3, -3]),
        ("u16", pa.uint16(), [0, 65535], lambda r: int(r.integers(0, 65536)), [3, 65534]),
        ("i32", pa.int32(), [-2**31, 2**31 - 1], lambda r: int(r.integers(-10**6, 10**6)), [2**30 + 3]),
        ("u32", pa.uint32(), [0, 2**32 - 1, 2**31], lambda r: int(r.integers(0, 2**32)), [2**32 - 3]),
        ("i64", pa.int64(), [-2**63, 2**63 - 1], lambda r: int(r.integers(-10**15, 10**15)), [2**50 + 3]),
        ("u64", pa.uint64(), [0, 2**64 - 1, 2**63], lambda r: int(r.integers(0, 2**63)) * 2, [2**64 - 3]),
        ("f32", pa.float32(), [_f32(-0.0), _f32(0.0), _f32("nan"), _f32("inf"), _f32(1.4e-45)],
         lambda r: _f32(round(float(r.normal()), 3)), [_f32(1e20)]),
        ("f64", pa.float64(), [-0.0, 0.0, math.nan, -math.inf, 5e-324], lambda r: float(r.normal()), [1e200]),
        ("s", pa.string(), ["", "héllo", "日本語", "tab\t"], lambda r: f"v{int(r.integers(0, 50))}", ["zzz", "v"]),
        ("bin", pa.binary(), [b"", b"\x00\xff"], lambda r: r.bytes(int(r.integers(0, 6))), [b"\x07" * 9]),
        ("fsb", pa.binary(5), [b"\x00" * 5, b"\xff" * 5], lambda r: r.bytes(5), [b"\x01" * 5]),
        ("dec9", pa.decimal128(9, 2), [Decimal("-9999999.99"), Decimal("0.00")], _dec(2), [Decimal("0.01")]),
        ("dec18", pa.decimal128(18, 3), [Decimal("999999999999999.999")], _dec(3), [Decimal("-0.001")]),
        ("dec30", pa.decimal128(30, 5), [Decimal("-9999999999999999999999999.99999"), Decimal("0.00128")], _dec(5),
         [Decimal("0.00001")]),
        ("date", pa.date32(), [dt.date(1, 1, 1), dt.date(9999, 12, 31)],
         lambda r: dt.date(2000, 1, 1) + dt.timedelta(days=int(r.integers(-9000, 9000))), [dt.date(1000, 1, 1)]),
        ("t32", pa.time32("ms"), [dt.time(0), dt.time(23, 59, 59, 999000)],
         lambda r: dt.time(int(r.integers(24)), int(r.integers(60)), 0, int(r.integers(1000)) * 1000), [dt.time(0, 0, 1)]),
        ("t64", pa.time64("us"), [dt.time(12, 0, 0, 1)],
         lambda r: dt.time(int(r.integers(24)), int(r.integers(60)), 0, int(r.integers(10**6))), [dt.time(0, 0, 2)]),
        ("tsms", pa.timestamp("ms", tz="UTC"), [dt.datetime(1969, 12, 31, 23, 59, 59, 999000, tzinfo=UTC)],
         lambda r: dt.datetime(2024, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=int(r.integers(-10**11, 10**11))),
         [dt.datetime(2030, 1, 1, tzinfo=UTC)]),
        ("tsus", pa.timestamp("us"), [dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)],
         lambda r: dt.datetime(2024, 1, 1) + dt.timedelta(microseconds=int(r.integers(-10**14, 10**14))),
         [dt.datetime(1950, 1, 1)]),
        ("uuid", pa.uuid(), [uuid.UUID(int=0), uuid.UUID(int=2**128 - 1)], lambda r: uuid.UUID(bytes=r.bytes(16)),
         [uuid.UUID(int=5)]),
        ("flag", pa.bool_(), [True, False], lambda r: bool(r.integers(2)), []),
    ]
    cols, arrays = [], {"row": pa.array(range(ROWS), pa.int32())}
    for name, typ, edges, gen, absent in specs:
        c = Col(name, "", edges, gen, absent, hex=typ in (pa.binary(), pa.binary(5)))
        vals = [c.gen(rng) for _ in range(ROWS)]
        for e, s in zip(c.edges, rng.permutation(ROWS)[:len(c.edges)]):
            vals[int(s)] = e
        for s in rng.choice(ROWS, 6, replace=False):
            if vals[int(s)] not in c.edges:
                vals[int(s)] = None
        c.values = vals
        cols.append(c)
        if typ == pa.uuid():
            arrays[name] = pa.array([v.bytes if v is not None else None for v in vals], typ)
        elif pa.types.is_floating(typ):
            arrays[name] = pa.array(np.array([v if v is not None else 0 for v in vals], typ.to_pandas_dtype()),
                                    mask=np.array([v is None for v in vals]))
        else:
            arrays[name] = pa.array(vals, typ)
    return pa.table(arrays), cols


def _check_java_reads(java, path: Path, cols: list[Col], tmp: Path) -> None:
    """parquet-java reads every row of a file with simdex's filters, every value it reads is
    "maybe" in its chunk's filter, the filters lie where simdex's footer says, and parquet-java
    answers as simdex for values present and absent."""
    scans, rows = _parse_scan(java("scan", path))
    assert rows == ROWS
    for c in cols:
        for rg, held in enumerate(_by_row_group(c)):
            seen, absent, first = scans[(rg, c.name)]
            assert absent == 0, (c.name, rg, first)  # a wrong "absent" as parquet-java sees it
            assert seen == (0 if c.name == "flag" else len(held)), (c.name, rg)  # Java has no BOOLEAN hash
    probes_path = tmp / "probes.txt"
    _write_probes(probes_path, cols)
    chunks, answers = _parse_probe(java("probe", path, probes_path))
    mine = {(c["row_group"], c["path"]): c for c in bloom.read_footer(path)["chunks"]}
    filters = bloom.from_parquet(path)
    for c in cols:
        probes = _probes(c)
        nan = np.array([_is_nan(v) for v in probes])
        for rg in range(ROWS // RPG):
            j, m = chunks[(rg, c.name)], mine[(rg, c.name)]
            assert (j["offset"], j["length"]) == (m["bloom_filter_offset"], m["bloom_filter_length"]), (c.name, rg)
            assert j["offset"] >= 0, (c.name, rg)
            direct, filter2 = answers[(rg, c.name)]
            if c.name == "flag":  # parquet-java asks no BOOLEAN filter
                assert set(direct) == {"E"} and set(filter2) == {"1"}
                continue
            f = filters[rg][c.name]
            assert j["bitset"] == f.num_bytes
            assert set(direct) <= {"0", "1"}, (c.name, rg, direct)
            assert (f.check(probes) == _simdex_answers(probes, direct)).all(), (c.name, rg)
            assert filter2 == _filter2(c, nan, direct), (c.name, rg)


def test_simdex_filters_on_pyarrow_file_read_by_parquet_java(java, tmp_path):
    """bloom.add_filters (the Python API) onto a file pyarrow wrote without filters."""
    table, cols = _pyarrow_columns()
    src, out = tmp_path / "pyarrow.parquet", tmp_path / "with-filters.parquet"
    pq.write_table(table, src, row_group_size=RPG, store_decimal_as_integer=True)
    bloom.add_filters(src, [c.name for c in cols], out=out)
    data = src.read_bytes()
    pages = len(data) - 8 - int.from_bytes(data[-8:-4], "little")
    assert out.read_bytes()[:pages] == data[:pages]  # every page as it was
    _check_java_reads(java, out, cols, tmp_path)


def test_simdex_filters_on_java_file_read_by_parquet_java(java, tmp_path, capsys):
    """`simdex bloom add` (the CLI) onto a file parquet-java wrote without filters: V2 pages,
    snappy, dictionaries that fall back to DELTA encodings mid-chunk, INT96."""
    cols = _data(seed=2)
    spec, src, out = tmp_path / "spec.txt", tmp_path / "java.parquet", tmp_path / "with-filters.parquet"
    _write_spec(spec, cols, {"writer_version": "v2", "dictionary": "on", "dictionary_page_size": 256,
                             "codec": "SNAPPY"}, {})
    java("write", src, spec)
    assert all(c["bloom_filter_offset"] < 0 for c in bloom.read_footer(src)["chunks"])
    argv = ["bloom", "add", str(src), "--out", str(out), "--no-progress"]
    for c in cols:
        argv += ["--column", c.name]
    assert simdex_main(argv) == 0, capsys.readouterr().err
    _check_java_reads(java, out, cols, tmp_path)


# ---- the defects these tests found, reproduced without Java ----------------------------------------

def test_boolean_filter_with_nothing_in_it_is_not_used(tmp_path, capsys):
    """A BOOLEAN chunk's filter with no value in it, as parquet-java writes them: never asked."""
    src, out = tmp_path / "flag.parquet", tmp_path / "empty-filter.parquet"
    pq.write_table(pa.table({"flag": [True, False, True]}), src)
    bloom.add_filters(src, ["flag"], out=out)
    c = bloom.read_footer(out)["chunks"][0]
    data = bytearray(out.read_bytes())
    end = c["bloom_filter_offset"] + c["bloom_filter_length"]
    size = bloom.BloomFilter.from_bytes(bytes(data[c["bloom_filter_offset"]:end])).num_bytes
    data[end - size:end] = bytes(size)  # the bitset emptied, its header kept
    out.write_bytes(bytes(data))
    assert "flag" not in bloom.from_parquet(out).get(0, {})
    assert bloom.prune(out, "flag", [True]) == [(str(out), 0)]
    assert bloom.lookup(out, "flag", [True]).num_rows == 2
    assert simdex_main(["bloom", "inspect", str(out), "--column", "flag", "--value", "true", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [{"file": str(out), "row_group": 0, "has_filter": True,
                                                    "excludes": False}]


def test_added_int96_filter_holds_years_outside_nanoseconds(tmp_path):
    """pyarrow decodes INT96 into nanoseconds, which wrap outside 1677-2262 (year 1 reads as
    1754): add_filters hashes INT96 from its pages, so year 1 is in the filter."""
    src, out = tmp_path / "int96.parquet", tmp_path / "with-filters.parquet"
    values = [dt.datetime(1, 1, 1), dt.datetime(2024, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999)]
    for codec in ("NONE", "SNAPPY"):
        pq.write_table(pa.table({"t": pa.array(values * 3, pa.timestamp("us"))}), src, compression=codec,
                       use_deprecated_int96_timestamps=True, use_dictionary=codec == "SNAPPY")
        bloom.add_filters(src, ["t"], out=out)
        assert bloom.from_parquet(out)[0]["t"].check(values).all(), codec


def test_lookup_keeps_float32_zeros_of_both_signs(tmp_path):
    """np.float32(-0.0) == np.float32(0.0): looked up together, both were kept as one value and
    the rows of the other sign were lost."""
    path = tmp_path / "zeros.parquet"
    pq.write_table(pa.table({"x": pa.array([0.0, -0.0, 1.0], pa.float32())}), path)
    got = bloom.lookup(path, "x", [np.float32(0.0), np.float32(-0.0)])
    assert sorted(struct.pack("<f", v).hex() for v in got.column("x").to_pylist()) == ["00000000", "00000080"]
