"""A flat BYTE_ARRAY (or, for hashes, INT96) column chunk read straight from its pages, for
two jobs.

Decoding a string column into Arrow arrays (dictionary indices resolved, offsets built) costs
more than anything else adding a filter or a lookup does, and neither needs it:

- **hashes** (adding a filter): each distinct value's hash. The dictionary page's values and
  PLAIN data pages' values are hashed where they lie; dictionary-encoded data pages are skipped,
  their values being the dictionary's. A dictionary entry no row uses would only add a false
  positive, never lose a row.
- **matches** (a lookup): which rows equal one of the keys. The dictionary's entries are matched
  once and each row's index looked up; when no entry is a key, the dictionary-encoded pages are
  not even decompressed.

INT96 chunks are hashed from their pages too (PLAIN 12-byte values and dictionaries of them):
pyarrow decodes INT96 into nanosecond timestamps, which wrap silently outside 1677-2262, so a
filter built from its decoded values would miss the values written (year 1, say).

Page headers are parsed natively (``page_headers``), pages decompressed with pyarrow's codecs
and the values walked natively; none of it holds the GIL for long, so several chunks go at once.
Anything else (other encodings, nested columns, unknown codecs, a page that does not add up)
raises Unsupported, and the caller decodes the chunk with pyarrow instead.
"""

from __future__ import annotations

import os

import numpy as np

from ._simdex import bloom as _native

# Parquet's CompressionCodec names (as pyarrow's metadata spells them) -> pyarrow.Codec names.
_CODECS = {"SNAPPY": "snappy", "GZIP": "gzip", "ZSTD": "zstd", "BROTLI": "brotli", "LZ4_RAW": "lz4_raw"}
_PLAIN, _PLAIN_DICTIONARY, _DELTA_LENGTH_BYTE_ARRAY, _DELTA_BYTE_ARRAY, _RLE_DICTIONARY = 0, 2, 6, 7, 8
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3
_DICTIONARY_ENCODINGS = (_PLAIN_DICTIONARY, _RLE_DICTIONARY)
_VALUE_ENCODINGS = (_PLAIN, _DELTA_LENGTH_BYTE_ARRAY, _DELTA_BYTE_ARRAY)  # values where they lie


class Unsupported(Exception):
    """This chunk is not one the page walker handles; decode it with pyarrow."""


# ---- the chunk -----------------------------------------------------------------------------------

_FIELDS = ("kind", "body", "compressed", "uncompressed", "values", "encoding", "def_encoding",
           "nulls", "level_bytes", "def_bytes", "values_compressed")
_COLS = len(_FIELDS)
(_KIND, _BODY, _COMPRESSED, _UNCOMPRESSED, _VALUES, _ENCODING, _DEF_ENCODING, _NULLS,
 _LEVEL_BYTES, _DEF_BYTES, _VALUES_COMPRESSED) = range(_COLS)


class _Chunk:
    """One flat BYTE_ARRAY or INT96 column chunk (pyarrow ColumnChunkMetaData ``meta``) of the
    open file ``fd``: its bytes, read at once, and its page headers."""

    def __init__(self, fd: int, meta, max_definition_level: int, max_repetition_level: int,
                 types=("BYTE_ARRAY",)):
        import pyarrow as pa

        if meta.physical_type not in types or max_repetition_level != 0 or max_definition_level > 1:
            raise Unsupported(f"not a flat {' or '.join(types)} column")
        self.codec = None
        if meta.compression != "UNCOMPRESSED":
            if meta.compression not in _CODECS:
                raise Unsupported(f"codec {meta.compression}")
            self.codec = pa.Codec(_CODECS[meta.compression])
        start = meta.data_page_offset
        if meta.has_dictionary_page and meta.dictionary_page_offset and 0 < meta.dictionary_page_offset < start:
            start = meta.dictionary_page_offset
        size = meta.total_compressed_size
        if start < 0 or size < 0 or start + size > os.fstat(fd).st_size:  # never allocate what a footer claims
            raise Unsupported("column chunk runs past the end of the file")
        buf = os.pread(fd, size, start)
        if len(buf) != size:
            raise Unsupported("column chunk runs past the end of the file")
        self.bytes = np.frombuffer(buf, dtype=np.uint8)
        self.max_definition_level = max_definition_level
        self.num_values = meta.num_values
        try:
            self.pages = _native.page_headers(self.bytes, meta.num_values).reshape(-1, _COLS).tolist()
        except ValueError as e:
            raise Unsupported(str(e)) from None

    def body(self, h) -> np.ndarray:
        """A dictionary or V1 data page's bytes, decompressed."""
        raw = self.bytes[h[_BODY]:h[_BODY] + h[_COMPRESSED]]
        return _inflate(self.codec, raw, h[_UNCOMPRESSED])

    def v2(self, h) -> tuple:
        """A V2 data page's definition levels and its values, decompressed."""
        at, levels = h[_BODY], h[_LEVEL_BYTES]
        defs = self.bytes[at + levels - h[_DEF_BYTES]:at + levels]
        raw = self.bytes[at + levels:at + h[_COMPRESSED]]
        return defs, _inflate(self.codec if h[_VALUES_COMPRESSED] else None, raw, h[_UNCOMPRESSED] - levels)


def _hash_int96(encoding: int, data: np.ndarray, count: int) -> np.ndarray:
    """XXH64 of `count` PLAIN INT96 values (12 bytes each) at the start of `data`."""
    if encoding != _PLAIN:
        raise Unsupported(f"INT96 values in encoding {encoding}")
    if count * 12 > len(data):
        raise Unsupported("INT96 values run past their page")
    return _native.hash_fixed(np.ascontiguousarray(data[:count * 12]).reshape(count, 12))


def chunk_hashes(fd: int, meta, max_definition_level: int, max_repetition_level: int) -> np.ndarray:
    """XXH64 of the values of one BYTE_ARRAY or INT96 column chunk (pyarrow ColumnChunkMetaData
    ``meta``) of the open file ``fd``: each dictionary value and each PLAIN value once per
    occurrence."""
    chunk = _Chunk(fd, meta, max_definition_level, max_repetition_level, ("BYTE_ARRAY", "INT96"))
    values = _hash_int96 if meta.physical_type == "INT96" else _native.hash_byte_array_values
    parts, have_dict = [], False
    try:
        for h in chunk.pages:
            kind = h[_KIND]
            if kind == _DICTIONARY_PAGE:
                if h[_ENCODING] not in (_PLAIN, _PLAIN_DICTIONARY) or have_dict:
                    raise Unsupported("dictionary page")
                have_dict = True
                parts.append(values(_PLAIN, chunk.body(h), h[_VALUES]))
            elif kind in (_DATA_PAGE, _DATA_PAGE_V2):
                if h[_ENCODING] in _DICTIONARY_ENCODINGS and have_dict:
                    continue  # indices into the dictionary, whose values are hashed already
                if h[_ENCODING] not in _VALUE_ENCODINGS:
                    raise Unsupported(f"data page encoding {h[_ENCODING]}")
                if kind == _DATA_PAGE:
                    data = chunk.body(h)
                    skip, want = _native.data_page_v1_values(h[_VALUES], h[_DEF_ENCODING],
                                                             max_definition_level, data)
                    data = data[skip:]
                else:
                    data, want = chunk.v2(h)[1], h[_VALUES] - h[_NULLS]
                parts.append(values(h[_ENCODING], data, want))
            # index pages and unknown page types carry no values: skipped
    except ValueError as e:
        raise Unsupported(str(e)) from None
    if not parts:
        return np.zeros(0, np.uint64)
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def chunk_matches(fd: int, meta, max_definition_level: int, max_repetition_level: int,
                  key_data: np.ndarray, key_offsets: np.ndarray) -> np.ndarray:
    """Per row of one flat BYTE_ARRAY column chunk: the index of the key (``key_data`` /
    ``key_offsets``: the keys' bytes and int64 offsets, as in an Arrow large_binary array) that
    the row's value equals, or -1 (nulls included). Only the pages that can hold a key are
    decompressed."""
    chunk = _Chunk(fd, meta, max_definition_level, max_repetition_level)
    m = _native.PageMatcher(key_data, key_offsets, max_definition_level)
    have_dict = False
    try:
        for h in chunk.pages:
            kind, values, encoding = h[_KIND], h[_VALUES], h[_ENCODING]
            if kind == _DICTIONARY_PAGE:
                m.dictionary(values, encoding, chunk.body(h))
                have_dict = True
            elif kind in (_DATA_PAGE, _DATA_PAGE_V2):
                if encoding in _DICTIONARY_ENCODINGS and have_dict and not m.dictionary_holds_key:
                    m.skip(values)
                elif kind == _DATA_PAGE:
                    m.data_page_v1(values, encoding, h[_DEF_ENCODING], chunk.body(h))
                else:
                    m.data_page_v2(values, h[_NULLS], encoding, *chunk.v2(h))
        rows, _ = m.result()
    except ValueError as e:
        raise Unsupported(str(e)) from None
    if len(rows) != chunk.num_values:
        raise Unsupported("the pages' rows do not add up to the chunk's")
    return rows


def _inflate(codec, raw, size: int) -> np.ndarray:
    if codec is None:
        if len(raw) != size:
            raise Unsupported("uncompressed page of the wrong size")
        return raw
    import pyarrow as pa

    try:
        out = codec.decompress(raw, decompressed_size=size)
    except (pa.ArrowException, ValueError, OSError) as e:
        raise Unsupported(f"page does not decompress: {e}") from None
    if out.size != size:
        raise Unsupported("page decompresses to a different size than its header says")
    return np.frombuffer(out, dtype=np.uint8)
