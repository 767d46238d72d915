"""The hashes of a BYTE_ARRAY column chunk, read straight from its pages.

Decoding a string column into Arrow arrays (dictionary indices resolved, offsets built) costs
more than everything else adding a filter does. A filter only needs each distinct value's hash,
so for flat BYTE_ARRAY chunks this walks the chunk's pages instead: the dictionary page's values
and PLAIN data pages' values are hashed where they lie (after decompression with pyarrow's
codecs); dictionary-encoded data pages are skipped, their values being the dictionary's. A
dictionary entry no row uses would only add a false positive, never lose a row.

Anything else (other encodings, nested columns, unknown codecs, a page that does not add up)
raises Unsupported, and the caller decodes the chunk with pyarrow instead.
"""

from __future__ import annotations

import os

import numpy as np

from ._simdex import bloom as _native

# Parquet's CompressionCodec names (as pyarrow's metadata spells them) -> pyarrow.Codec names.
_CODECS = {"SNAPPY": "snappy", "GZIP": "gzip", "ZSTD": "zstd", "BROTLI": "brotli", "LZ4_RAW": "lz4_raw"}
_PLAIN, _PLAIN_DICTIONARY, _RLE, _RLE_DICTIONARY = 0, 2, 3, 8
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3


class Unsupported(Exception):
    """This chunk is not one the page walker handles; decode it with pyarrow."""


# ---- Thrift compact protocol: just enough for a PageHeader ----------------------------------------

class _Reader:
    def __init__(self, buf, pos: int):
        self.buf, self.pos = buf, pos

    def byte(self) -> int:
        if self.pos >= len(self.buf):
            raise Unsupported("page header runs past the chunk")
        b = self.buf[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        out, shift = 0, 0
        while True:
            b = self.byte()
            out |= (b & 0x7F) << shift
            if not b & 0x80:
                return out
            shift += 7
            if shift > 63:
                raise Unsupported("varint too long in a page header")

    def zigzag(self) -> int:
        v = self.varint()
        return (v >> 1) ^ -(v & 1)

    def skip(self, typ: int, depth: int = 0) -> None:
        if depth > 16:
            raise Unsupported("page header nested too deeply")
        if typ in (1, 2):           # bool (in the field header)
            return
        if typ == 3:                # byte
            self.byte()
        elif typ in (4, 5, 6):      # i16, i32, i64
            self.varint()
        elif typ == 7:              # double
            self.take(8)
        elif typ == 8:              # binary
            self.take(self.varint())
        elif typ in (9, 10):        # list, set
            h = self.byte()
            n = h >> 4 if h >> 4 != 15 else self.varint()
            for _ in range(n):
                self.skip(h & 15, depth + 1)
        elif typ == 11:             # map
            n = self.varint()
            if n:
                kv = self.byte()
                for _ in range(n):
                    self.skip(kv >> 4, depth + 1)
                    self.skip(kv & 15, depth + 1)
        elif typ == 12:
            self.struct(lambda fid, t: self.skip(t, depth + 1))
        else:
            raise Unsupported(f"unknown Thrift type {typ} in a page header")

    def take(self, n: int) -> None:
        if n < 0 or self.pos + n > len(self.buf):
            raise Unsupported("page header runs past the chunk")
        self.pos += n

    def struct(self, field) -> None:
        """Calls field(id, type) for each field; field reads the value or skips it."""
        last = 0
        while True:
            h = self.byte()
            if h == 0:
                return
            delta, typ = h >> 4, h & 15
            fid = last + delta if delta else self.zigzag()
            last = fid
            field(fid, typ)


def _ints(r: _Reader, wanted: set) -> dict:
    """A struct's i32/bool fields with ids in `wanted` (bools as 1/0); the rest skipped."""
    out: dict = {}

    def field(fid, typ):
        if fid in wanted and typ == 5:
            out[fid] = r.zigzag()
        elif fid in wanted and typ in (1, 2):
            out[fid] = 1 if typ == 1 else 0
        else:
            r.skip(typ)
    r.struct(field)
    return out


def _page_header(r: _Reader) -> dict:
    h: dict = {}

    def field(fid, typ):
        if fid in (1, 2, 3) and typ == 5:
            h[fid] = r.zigzag()
        elif fid == 5 and typ == 12:
            h["v1"] = _ints(r, {1, 2, 3})          # num_values, encoding, def-level encoding
        elif fid == 7 and typ == 12:
            h["dict"] = _ints(r, {1, 2})           # num_values, encoding
        elif fid == 8 and typ == 12:
            h["v2"] = _ints(r, {1, 2, 4, 5, 6, 7})  # values, nulls, encoding, level bytes, is_compressed
        else:
            r.skip(typ)
    r.struct(field)
    if any(k not in h for k in (1, 2, 3)) or h[2] < 0 or h[3] < 0:
        raise Unsupported("page header without its type and sizes")
    return h


# ---- the chunk -----------------------------------------------------------------------------------

def chunk_hashes(fd: int, meta, max_definition_level: int, max_repetition_level: int) -> np.ndarray:
    """XXH64 of the values of one BYTE_ARRAY column chunk (pyarrow ColumnChunkMetaData ``meta``)
    of the open file ``fd``: each dictionary value and each PLAIN value once per occurrence."""
    import pyarrow as pa

    if meta.physical_type != "BYTE_ARRAY" or max_repetition_level != 0 or max_definition_level > 1:
        raise Unsupported("not a flat BYTE_ARRAY column")
    codec = None
    if meta.compression != "UNCOMPRESSED":
        if meta.compression not in _CODECS:
            raise Unsupported(f"codec {meta.compression}")
        codec = pa.Codec(_CODECS[meta.compression])
    start = meta.data_page_offset
    if meta.has_dictionary_page and meta.dictionary_page_offset and 0 < meta.dictionary_page_offset < start:
        start = meta.dictionary_page_offset
    size = meta.total_compressed_size
    buf = os.pread(fd, size, start)
    if len(buf) != size:
        raise Unsupported("column chunk runs past the end of the file")
    view = memoryview(buf)
    parts, pos, seen, have_dict = [], 0, 0, False
    while pos < size and seen < meta.num_values:
        r = _Reader(buf, pos)
        h = _page_header(r)
        body, pos = r.pos, r.pos + h[3]
        if pos > size:
            raise Unsupported("page runs past the column chunk")
        kind = h[1]
        if kind == _DICTIONARY_PAGE:
            d = h.get("dict")
            if d is None or d.get(2, _PLAIN) not in (_PLAIN, _PLAIN_DICTIONARY) or have_dict:
                raise Unsupported("dictionary page")
            have_dict = True
            data = _inflate(codec, view[body:pos], h[2])
            got = _native.hash_plain_byte_arrays(data, d.get(1, 0))
            if len(got) != d.get(1, 0):
                raise Unsupported("dictionary page holds fewer values than its header says")
            parts.append(got)
        elif kind == _DATA_PAGE:
            v1 = h.get("v1")
            if v1 is None or 1 not in v1 or 2 not in v1:
                raise Unsupported("data page without its header")
            seen += v1[1]
            if v1[2] in (_RLE_DICTIONARY, _PLAIN_DICTIONARY) and have_dict:
                continue  # indices into the dictionary, whose values are hashed already
            if v1[2] != _PLAIN:
                raise Unsupported(f"data page encoding {v1[2]}")
            data = _inflate(codec, view[body:pos], h[2])
            if max_definition_level:
                if v1.get(3, _RLE) != _RLE or len(data) < 4:
                    raise Unsupported("definition levels")
                skip = 4 + int.from_bytes(bytes(data[:4]), "little")
                if skip > len(data):
                    raise Unsupported("definition levels run past the page")
                data = data[skip:]
            parts.append(_native.hash_plain_byte_arrays(data, v1[1]))
        elif kind == _DATA_PAGE_V2:
            v2 = h.get("v2")
            if v2 is None or any(k not in v2 for k in (1, 2, 4)):
                raise Unsupported("data page v2 without its header")
            seen += v2[1]
            if v2[4] in (_RLE_DICTIONARY, _PLAIN_DICTIONARY) and have_dict:
                continue
            if v2[4] != _PLAIN:
                raise Unsupported(f"data page encoding {v2[4]}")
            levels = v2.get(5, 0) + v2.get(6, 0)
            if levels < 0 or levels > h[3] or levels > h[2]:
                raise Unsupported("levels larger than the page")
            raw = view[body + levels:pos]
            data = _inflate(codec if v2.get(7, 1) else None, raw, h[2] - levels)
            want = v2[1] - v2.get(2, 0)
            got = _native.hash_plain_byte_arrays(data, max(want, 0))
            if len(got) != want:
                raise Unsupported("data page v2 holds a different number of values than its header says")
            parts.append(got)
        # index pages and unknown page types carry no values: skipped
    if seen != meta.num_values:
        raise Unsupported("the pages' value counts do not add up to the chunk's")
    if not parts:
        return np.zeros(0, np.uint64)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _inflate(codec, raw, size: int) -> np.ndarray:
    if codec is None:
        if len(raw) != size:
            raise Unsupported("uncompressed page of the wrong size")
        return np.frombuffer(raw, dtype=np.uint8)
    import pyarrow as pa

    try:
        out = codec.decompress(raw, decompressed_size=size)
    except (pa.ArrowException, ValueError, OSError) as e:
        raise Unsupported(f"page does not decompress: {e}") from None
    return np.frombuffer(out, dtype=np.uint8)
