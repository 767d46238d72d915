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
    good = open(path, "rb").read()
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
        native.hash_plain_byte_arrays(np.frombuffer(b"\x05\x00\x00\x00abc", np.uint8), 4)


def test_lookup_stops_decoding_after_the_last_match(tmp_path):
    n = 50000
    t = pa.table({"k": pa.array(np.arange(n, dtype=np.int64)),
                  "s": pa.array([f"row {i}" for i in range(n)]), "v": pa.array(np.arange(n) * 0.5)})
    path = tmp_path / "t.parquet"
    pq.write_table(t, path, row_group_size=n)
    for keys in ([3], [3, 9000], [20000, 49999], [8191, 8192, 8193]):
        got = bloom.lookup(path, "k", keys)
        assert got.equals(t.filter(pc.field("k").isin(keys))), keys
