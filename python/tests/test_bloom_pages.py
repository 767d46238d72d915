"""Filters added from a string column's pages match the ones built from decoded values, for
every page layout pyarrow writes; layouts the page walker does not take fall back to decoding."""

from __future__ import annotations

import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from simdex._simdex import bloom as native

from simdex import _bloom_add, _bloom_pages, bloom

LAYOUTS = {
    "dictionary, snappy": {},
    "plain": {"use_dictionary": False},
    "gzip": {"compression": "gzip"},
    "zstd": {"compression": "zstd"},
    "brotli": {"compression": "brotli"},
    "lz4": {"compression": "lz4"},
    "uncompressed": {"compression": "none"},
    "data page v2": {"data_page_version": "2.0"},
    "v2 plain zstd": {"data_page_version": "2.0", "use_dictionary": False, "compression": "zstd"},
    "delta encodings": {"use_dictionary": False, "column_encoding": {"s": "DELTA_BYTE_ARRAY",
                                                                     "b": "DELTA_LENGTH_BYTE_ARRAY"}},
    "small pages, dictionary fallback": {"data_page_size": 1000, "dictionary_pagesize_limit": 2000},
}


# Layouts whose string chunks the page walker must take itself (the rest may fall back).
WALKED = {"dictionary, snappy", "plain", "gzip", "zstd", "uncompressed", "data page v2", "v2 plain zstd",
          "small pages, dictionary fallback", "delta encodings"}


def _table(n=6000, seed=3):
    rng = np.random.default_rng(seed)
    vals = [None if i % 7 == 0 else ("x" * (i % 13)) + str(int(rng.integers(0, 500))) for i in range(n)]
    return pa.table({"s": pa.array(vals, pa.string()),
                     "b": pa.array([None if v is None else v.encode() for v in vals], pa.binary()),
                     "r": pa.array([str(i) * (i % 3) for i in range(n)], pa.string())})


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_page_hashes_match_decoded_values(tmp_path, layout):
    path = tmp_path / "t.parquet"
    pq.write_table(_table(), path, row_group_size=2500, **LAYOUTS[layout])
    pf = pq.ParquetFile(path)
    fd = os.open(path, os.O_RDONLY)
    try:
        for rg in range(pf.num_row_groups):
            for c, name in enumerate(pf.schema_arrow.names):
                ref = _bloom_add.column_hashes(pf.read_row_group(rg, columns=[name]).column(0),
                                               "BYTE_ARRAY", "", None)
                try:
                    got = _bloom_pages.chunk_hashes(fd, pf.metadata.row_group(rg).column(c),
                                                    pf.schema.column(c).max_definition_level, 0)
                except _bloom_pages.Unsupported:
                    assert layout not in WALKED, (layout, rg, name)
                    continue  # decoded by pyarrow instead
                assert set(got.tolist()) == set(ref.tolist()), (layout, rg, name)
                assert native.count_distinct_hashes(got) == len(set(ref.tolist()))
    finally:
        os.close(fd)
    # Whatever path each chunk takes, the added filters answer for every value in the data.
    out = tmp_path / "added.parquet"
    bloom.add_filters(path, ["s", "b", "r"], out=out)
    for name in ("s", "r"):
        vals = pc.unique(pq.read_table(path, columns=[name]).column(0)).drop_null().to_pylist()
        assert len(bloom.prune(out, name, vals)) == pf.num_row_groups


def test_broken_pages_are_left_to_the_decoder(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(_table(), path, row_group_size=2500)
    md = pq.ParquetFile(path).metadata.row_group(0).column(0)
    start = md.dictionary_page_offset or md.data_page_offset
    good = path.read_bytes()
    for cut in (1, 7, 40, md.total_compressed_size // 2):
        bad = bytearray(good)
        # Garble bytes inside the first page header or body: the walker gives up, never crashes.
        for i in range(start + cut, min(start + cut + 16, len(bad))):
            bad[i] ^= 0x5A
        broken = tmp_path / f"b{cut}.parquet"
        broken.write_bytes(bytes(bad))
        fd = os.open(broken, os.O_RDONLY)
        try:
            _bloom_pages.chunk_hashes(fd, md, 1, 0)
        except _bloom_pages.Unsupported:
            pass
        finally:
            os.close(fd)
    with pytest.raises(ValueError):
        native.hash_byte_array_values(0, np.frombuffer(b"\x05\x00\x00\x00abc", np.uint8), 1)


def test_lookup_stops_decoding_after_the_last_match(tmp_path):
    n = 50000
    t = pa.table({"k": pa.array(np.arange(n, dtype=np.int64)),
                  "s": pa.array([f"row {i}" for i in range(n)]), "v": pa.array(np.arange(n) * 0.5)})
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, row_group_size=n)
    for keys in ([3], [3, 9000], [20000, 49999], [8191, 8192, 8193]):
        got = bloom.lookup(path, "k", keys)
        assert got.equals(t.filter(pc.field("k").isin(keys))), keys


def _keys(values):
    k = pa.array(values, pa.large_binary())
    return np.frombuffer(k.buffers()[2] or b"", np.uint8), np.frombuffer(k.buffers()[1], np.int64)[:len(k) + 1]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_page_matches_are_isin(tmp_path, layout):
    path = tmp_path / "t.parquet"
    pq.write_table(_table(), path, row_group_size=2500, **LAYOUTS[layout])
    pf = pq.ParquetFile(path)
    rng = np.random.default_rng(7)
    fd = os.open(path, os.O_RDONLY)
    try:
        for rg in range(pf.num_row_groups):
            for c, name in enumerate(pf.schema_arrow.names):
                col = pf.read_row_group(rg, columns=[name]).column(0)
                present = pc.unique(col).drop_null().to_pylist()
                picks = [present[i] for i in rng.choice(len(present), min(5, len(present)), replace=False)]
                as_bytes = [v.encode() if isinstance(v, str) else v for v in picks]
                keys = as_bytes + [b"absent", b"", as_bytes[0]]  # a miss, the empty string, a repeat
                try:
                    which = _bloom_pages.chunk_matches(fd, pf.metadata.row_group(rg).column(c),
                                                       pf.schema.column(c).max_definition_level, 0, *_keys(keys))
                except _bloom_pages.Unsupported:
                    assert layout not in WALKED, (layout, rg, name)
                    continue
                want = pc.is_in(col.cast(pa.binary()), value_set=pa.array(keys, pa.binary())).fill_null(False)
                assert ((which >= 0) == want.to_numpy(zero_copy_only=False)).all(), (layout, rg, name)
                values = col.cast(pa.binary()).to_pylist()
                for row in np.flatnonzero(which >= 0):
                    assert keys[which[row]] == values[row]
    finally:
        os.close(fd)


def test_page_matcher_refuses_what_does_not_add_up():
    kd, ko = _keys([b"ab"])
    m = native.PageMatcher(kd, ko, 1)
    dict_page = np.frombuffer(b"\x02\x00\x00\x00ab\x01\x00\x00\x00c", np.uint8)
    m.dictionary(2, 0, dict_page)
    assert m.dictionary_holds_key
    # v1: levels length 2, RLE run of 4 defined rows; indices width 1, bit-packed 8: 0,1,0,1...
    page = np.frombuffer(b"\x02\x00\x00\x00\x08\x01" + b"\x01\x03\x0a", np.uint8)
    m.data_page_v1(4, 8, 3, page)
    rows, hits = m.result()
    assert rows.tolist() == [0, -1, 0, -1] and hits == 2
    bad = {
        "index past the dictionary": b"\x02\x00\x00\x00\x08\x01" + b"\x02\x03\x0e",
        "levels past the page": b"\x09\x00\x00\x00\x08\x01",
        "bit width above 32": b"\x02\x00\x00\x00\x08\x01" + b"\x21\x03\x00",
        "run past the end": b"\x02\x00\x00\x00\x08\x01" + b"\x08\x03\x00",
        "empty run": b"\x02\x00\x00\x00\x00\x01" + b"\x01\x00",
    }
    for what, raw in bad.items():
        with pytest.raises(ValueError):
            m2 = native.PageMatcher(kd, ko, 1)
            m2.dictionary(2, 0, dict_page)
            m2.data_page_v1(4, 8, 3, np.frombuffer(raw, np.uint8))
            pytest.fail(what)
    with pytest.raises(ValueError):
        native.page_headers(np.frombuffer(b"\x15\x00", np.uint8), 1)
    # A PLAIN page claiming more values than its bytes can hold is refused before its rows are
    # made (it filled 4 bytes a claimed row first: 1 GiB here, 8 GiB at the header's maximum).
    m3 = native.PageMatcher(kd, ko, 0)
    with pytest.raises(ValueError, match="claims 268435456 PLAIN values in 6 bytes"):
        m3.data_page_v1(1 << 28, 0, 3, np.frombuffer(b"\x02\x00\x00\x00ab", np.uint8))


@pytest.mark.parametrize("version", ["V1", "V2"])
def test_duckdb_written_strings_match_in_pages(tmp_path, version):
    duckdb = pytest.importorskip("duckdb")
    src = tmp_path / "src.parquet"
    pq.write_table(_table(20000), src)
    out = tmp_path / f"duck_{version}.parquet"
    try:
        duckdb.sql(f"COPY (SELECT * FROM read_parquet('{src}')) TO '{out}' "
                   f"(FORMAT parquet, ROW_GROUP_SIZE 4096, PARQUET_VERSION {version})")
    except duckdb.Error as e:
        pytest.skip(f"this DuckDB cannot write {version}: {e}")
    pf = pq.ParquetFile(out)
    fd = os.open(out, os.O_RDONLY)
    try:
        for rg in range(pf.num_row_groups):
            for c in range(pf.metadata.num_columns):
                md = pf.metadata.row_group(rg).column(c)
                if md.physical_type == "BYTE_ARRAY":  # V2 strings: DELTA_LENGTH_BYTE_ARRAY
                    level = pf.schema.column(c).max_definition_level
                    _bloom_pages.chunk_matches(fd, md, level, 0, *_keys([b"x1"]))
                    _bloom_pages.chunk_hashes(fd, md, level, 0)
    finally:
        os.close(fd)
    t = pq.read_table(out)
    vals = pc.unique(t.column("s")).drop_null().to_pylist()[:40] + ["no such value"]
    for name, keys in (("s", vals), ("b", [v.encode() for v in vals])):
        want = t.filter(pc.field(name).isin(keys))
        got = bloom.lookup(out, name, keys)
        assert got.num_rows == want.num_rows > 0
        assert got.equals(want)


def test_a_chunk_the_file_cannot_hold_is_refused_before_reading(tmp_path):
    path = tmp_path / "t.parquet"
    pq.write_table(_table(), path, row_group_size=2500)
    md = pq.ParquetFile(path).metadata.row_group(0).column(0)

    class Claims:  # what a hostile footer could say about the chunk
        physical_type, compression, has_dictionary_page, dictionary_page_offset = "BYTE_ARRAY", "SNAPPY", False, 0
        data_page_offset, total_compressed_size, num_values = md.data_page_offset, 1 << 40, md.num_values

    fd = os.open(path, os.O_RDONLY)
    try:
        for walk in (lambda: _bloom_pages.chunk_hashes(fd, Claims, 1, 0),
                     lambda: _bloom_pages.chunk_matches(fd, Claims, 1, 0, *_keys([b"x"]))):
            with pytest.raises(_bloom_pages.Unsupported, match="past the end"):
                walk()
    finally:
        os.close(fd)


def _varint(v: int) -> bytes:
    out = bytearray()
    while v >= 0x80:
        out.append(v & 0x7F | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _constant_after_first(count: int, first: int, second: int) -> bytes:
    """DELTA_BINARY_PACKED of first, then `count - 1` times second: blocks of one 128-value
    miniblock, the first block's deltas 64 bits wide, the others 0 bits (two bytes a block)."""
    out = _varint(128) + _varint(1) + _varint(count) + _varint(2 * first)
    for at in range(1, count, 128):
        if at == 1:
            out += _varint(0) + bytes([64]) + ((second - first) % 2**64).to_bytes(8, "little") + bytes(8 * 127)
        else:
            out += _varint(0) + bytes([0])
    return out


def test_delta_byte_array_values_far_longer_than_their_page():
    # A hostile page: one 1 MiB value, then values each sharing all of it and adding a byte of
    # their own (zero-width prefix lengths): 1.2 MB that decode to 2 * 10^11 bytes. Hashing or
    # matching each value whole took minutes (`bloom add`, `lookup`); both now cost the page.
    long, count = 1 << 20, 200_000
    tail = bytes(i * 7 % 256 for i in range(1, count))
    page = (_constant_after_first(count, 0, long) + _constant_after_first(count, long, 1)
            + b"x" * long + tail)
    page = np.frombuffer(page, np.uint8)
    got = native.hash_byte_array_values(7, page, count)
    want = bloom.hash_values([b"x" * long + bytes([b]) for b in range(256)], "BYTE_ARRAY")
    assert got[0] == bloom.hash_values([b"x" * long], "BYTE_ARRAY")[0]
    assert (got[1:] == want[np.frombuffer(tail, np.uint8)]).all()
    m = native.PageMatcher(*_keys([b"x", b"x" * 300]), 0)
    m.data_page_v1(count, 7, 3, page)
    rows, hits = m.result()
    assert len(rows) == count and hits == 0


def test_redundant_delta_byte_array_strings_from_pyarrow(tmp_path):
    # Real pages whose values decode to thousands of times their size (a page of 4,000 copies of
    # one 20 KB string: 80 MB from 20 KB), read from their pages and looked up exactly.
    vals = (["z" * 20_000] * 4000 + ["p" * 2048 + chr(65 + i % 26) for i in range(4000)]
            + [f"https://example.com/{'a' * 180}/item/{i:08d}" for i in range(4000)])
    t = pa.table({"s": pa.array(vals, pa.string())})
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, use_dictionary=False, column_encoding={"s": "DELTA_BYTE_ARRAY"})
    md = pq.ParquetFile(path).metadata.row_group(0).column(0)
    assert "DELTA_BYTE_ARRAY" in md.encodings
    fd = os.open(path, os.O_RDONLY)
    try:
        got = _bloom_pages.chunk_hashes(fd, md, 1, 0)
        keys = [vals[0].encode(), vals[4005].encode(), vals[-1].encode(), b"p" * 2048]
        which = _bloom_pages.chunk_matches(fd, md, 1, 0, *_keys(keys))
    finally:
        os.close(fd)
    assert (got == bloom.hash_values(vals, "BYTE_ARRAY")).all()
    assert np.flatnonzero(which == 0).tolist() == list(range(4000))
    assert np.flatnonzero(which == 1).tolist() == list(range(4005, 8000, 26))
    assert np.flatnonzero(which == 2).tolist() == [len(vals) - 1]
    out = tmp_path / "added.parquet"
    bloom.add_filters(path, ["s"], out=out)
    assert bloom.lookup(out, "s", [vals[4005], "absent"]).column("s").to_pylist() == [vals[4005]] * 154
