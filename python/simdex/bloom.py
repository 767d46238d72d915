"""Parquet split-block bloom filters (SBBF), bit-exact with Parquet writers and readers.

Hashes are XXH64 (seed 0) of each value's Parquet PLAIN bytes, so the physical type matters:
the same number hashed as INT32 and as INT64 gives different hashes. Filters loaded from a
Parquet file remember their column's physical type and use it by default.

    >>> from simdex.bloom import BloomFilter
    >>> f = BloomFilter(ndv=1000, fpp=0.01)
    >>> f.insert(np.arange(1000))          # int64 -> INT64
    >>> f.check([5, 5000])                # array([ True, False])
"""

from __future__ import annotations

import numpy as np

from ._simdex import bloom as _native

__all__ = ["BloomFilter", "hash_values", "from_parquet", "check_filters", "read_footer", "PHYSICAL_TYPES",
           "arrow_num_bytes", "model_num_bytes", "model_fpp", "model_bits_per_value"]

PHYSICAL_TYPES = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                  "FIXED_LEN_BYTE_ARRAY")

arrow_num_bytes = _native.arrow_num_bytes
model_num_bytes = _native.model_num_bytes
model_fpp = _native.model_fpp
model_bits_per_value = _native.model_bits_per_value
read_footer = _native.read_footer

_NUMPY_KIND = {np.dtype(np.int32): "INT32", np.dtype(np.int64): "INT64",
               np.dtype(np.uint32): "INT32", np.dtype(np.uint64): "INT64",
               np.dtype(np.int8): "INT32", np.dtype(np.int16): "INT32",
               np.dtype(np.uint8): "INT32", np.dtype(np.uint16): "INT32",
               np.dtype(np.float32): "FLOAT", np.dtype(np.float64): "DOUBLE",
               np.dtype(np.bool_): "BOOLEAN"}


def _normalize_type(physical_type):
    if physical_type is None:
        return None
    t = str(physical_type).upper()
    if t not in PHYSICAL_TYPES:
        raise ValueError(f"unknown physical type {physical_type!r}; expected one of {', '.join(PHYSICAL_TYPES)}")
    return t


def _infer_type(values):
    if isinstance(values, np.ndarray):
        if values.dtype in _NUMPY_KIND:
            return _NUMPY_KIND[values.dtype]
        if values.dtype.kind in "SUO":
            return "BYTE_ARRAY"
        raise ValueError(f"cannot infer a Parquet type for dtype {values.dtype}; pass physical_type=")
    first = values[0] if len(values) else 0
    if isinstance(first, (bool, np.bool_)):
        return "BOOLEAN"
    if isinstance(first, (int, np.integer)):
        return "INT64"
    if isinstance(first, (float, np.floating)):
        return "DOUBLE"
    if isinstance(first, (str, bytes, bytearray, memoryview)):
        return "BYTE_ARRAY"
    raise ValueError(f"cannot infer a Parquet type for {type(first).__name__}; pass physical_type=")


def _as_bytes(v):
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, (bytes, bytearray, memoryview, np.bytes_)):
        return bytes(v)
    raise ValueError(f"expected str or bytes for a byte-array value, got {type(v).__name__}")


def hash_values(values, physical_type=None, type_length=None) -> np.ndarray:
    """XXH64 of each value's PLAIN encoding, as a uint64 array.

    values: a numpy array or a sequence (ints -> INT64, floats -> DOUBLE, str/bytes ->
    BYTE_ARRAY, bools -> BOOLEAN unless physical_type says otherwise). FIXED_LEN_BYTE_ARRAY and
    INT96 take bytes of the type's width, or a 2-D uint8 array with one row per value.
    """
    t = _normalize_type(physical_type)
    if t is None:
        t = _infer_type(values)
    if t == "INT32":
        return _native.hash_int32(_int_array(values, np.int32))
    if t == "INT64":
        return _native.hash_int64(_int_array(values, np.int64))
    if t == "FLOAT":
        return _native.hash_float(np.ascontiguousarray(values, dtype=np.float32))
    if t == "DOUBLE":
        return _native.hash_double(np.ascontiguousarray(values, dtype=np.float64))
    if t == "BOOLEAN":
        return np.array([_native.hash_bool(bool(v)) for v in values], dtype=np.uint64)
    if t == "BYTE_ARRAY":
        return _native.hash_bytes_list([_as_bytes(v) for v in values])
    width = 12 if t == "INT96" else type_length
    if isinstance(values, np.ndarray) and values.ndim == 2:
        arr = np.ascontiguousarray(values, dtype=np.uint8)
    else:
        rows = [_as_bytes(v) for v in values]
        if width is None:
            width = len(rows[0]) if rows else 0
        arr = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), width) if rows else np.zeros((0, width or 1), np.uint8)
        if any(len(r) != width for r in rows):
            raise ValueError(f"{t} values must all be {width} bytes long")
    if width is not None and arr.shape[1] != width:
        raise ValueError(f"{t} values must be {width} bytes long, got {arr.shape[1]}")
    return _native.hash_fixed(arr)


def _int_array(values, dtype):
    arr = np.asarray(values)
    if arr.dtype.kind == "u":  # the same bits reinterpreted, as Parquet stores unsigned ints
        return np.ascontiguousarray(arr.astype(np.dtype(dtype).str.replace("i", "u")).view(dtype))
    if arr.dtype.kind not in "ib":
        raise ValueError(f"expected integers for {np.dtype(dtype).name}, got {arr.dtype}")
    info = np.iinfo(dtype)
    if arr.size and (arr.min() < info.min or arr.max() > info.max):
        raise ValueError(f"value out of range for {np.dtype(dtype).name}")
    return np.ascontiguousarray(arr, dtype=dtype)


class BloomFilter:
    """A Parquet split-block bloom filter.

    BloomFilter(num_bytes) or BloomFilter(ndv=..., fpp=..., sizing="arrow"|"model"). Sizes are
    powers of two in [32 B, 128 MiB], so Arrow, pyarrow and DuckDB can read what is written.
    """

    def __init__(self, num_bytes=None, *, ndv=None, fpp=0.01, sizing="arrow", physical_type=None,
                 type_length=None, _native_filter=None):
        if _native_filter is not None:
            self._f = _native_filter
        elif num_bytes is not None:
            self._f = _native.Filter(int(num_bytes))
        elif ndv is not None:
            self._f = _native.Filter.for_ndv(int(ndv), float(fpp), sizing)
        else:
            raise ValueError("give num_bytes, or ndv (and fpp)")
        self.physical_type = _normalize_type(physical_type)
        self.type_length = type_length

    # -- construction / serialization ---------------------------------------------------------
    @classmethod
    def from_bitset(cls, bitset, **kw) -> "BloomFilter":
        """A filter over a copy of a raw bitset (any non-zero multiple of 32 bytes)."""
        return cls(_native_filter=_native.Filter.from_bitset(bytes(bitset)), **kw)

    @classmethod
    def from_bytes(cls, data, **kw) -> "BloomFilter":
        """Parse the Parquet form: Thrift BloomFilterHeader + bitset."""
        return cls(_native_filter=_native.Filter.parse(bytes(data)), **kw)

    def to_bytes(self) -> bytes:
        """The Parquet form: Thrift BloomFilterHeader + bitset."""
        return self._f.serialize()

    @property
    def bitset(self) -> bytes:
        return self._f.bitset()

    @property
    def num_bytes(self) -> int:
        return self._f.num_bytes

    @property
    def num_blocks(self) -> int:
        return self._f.num_blocks

    # -- values -------------------------------------------------------------------------------
    def _hashes(self, values, physical_type):
        t = physical_type or self.physical_type
        return hash_values(values, t, self.type_length)

    @staticmethod
    def _is_scalar(values):
        return isinstance(values, (int, float, str, bytes, bool, np.generic)) or (
            isinstance(values, np.ndarray) and values.ndim == 0)

    def insert(self, values, physical_type=None) -> None:
        """Insert one value or many (numpy array or sequence)."""
        if self._is_scalar(values):
            values = [values.item() if isinstance(values, np.generic) else values]
        self._f.insert_hashes(self._hashes(values, physical_type))

    def check(self, values, physical_type=None):
        """True if a value may be present (bool for one value, a bool array for many)."""
        if self._is_scalar(values):
            v = values.item() if isinstance(values, np.generic) else values
            return bool(self._f.check_hashes(self._hashes([v], physical_type))[0])
        return self._f.check_hashes(self._hashes(values, physical_type))

    def __contains__(self, value) -> bool:
        return self.check(value)

    # -- hashes -------------------------------------------------------------------------------
    def insert_hash(self, h: int) -> None:
        self._f.insert_hash(int(h))

    def check_hash(self, h: int) -> bool:
        return self._f.check_hash(int(h))

    def insert_hashes(self, hashes) -> None:
        self._f.insert_hashes(np.ascontiguousarray(hashes, dtype=np.uint64))

    def check_hashes(self, hashes, bitmap: bool = False) -> np.ndarray:
        """Bool array, or with bitmap=True uint64 words (bit i of word i // 64, LSB first)."""
        h = np.ascontiguousarray(hashes, dtype=np.uint64)
        return self._f.check_hashes_bits(h) if bitmap else self._f.check_hashes(h)

    # -- whole-filter operations --------------------------------------------------------------
    def merge(self, other: "BloomFilter") -> "BloomFilter":
        """In-place union with a filter of the same size; returns self."""
        self._f.merge(other._f)
        return self

    def __or__(self, other: "BloomFilter") -> "BloomFilter":
        return self.copy().merge(other)

    def copy(self) -> "BloomFilter":
        return BloomFilter(_native_filter=self._f.copy(), physical_type=self.physical_type,
                           type_length=self.type_length)

    def fold_to_fpp(self, target_fpp: float) -> int:
        """Halve the size while the estimated FPP stays <= target; returns the folds done."""
        return self._f.fold_to_fpp(float(target_fpp))

    def fill(self) -> float:
        return self._f.fill()

    def estimated_fpp(self) -> float:
        """FPP for values never inserted, from the bitset's per-word fill."""
        return self._f.estimated_fpp()

    def __eq__(self, other) -> bool:
        return isinstance(other, BloomFilter) and self._f == other._f

    def __repr__(self) -> str:
        t = f", physical_type={self.physical_type!r}" if self.physical_type else ""
        return f"BloomFilter(num_bytes={self.num_bytes}{t}, fill={self.fill():.4f})"


def check_filters(filters, value, physical_type=None, type_length=None) -> np.ndarray:
    """One value against many filters at once (row-group skipping): a bool array."""
    fs = list(filters)
    if not fs:
        return np.zeros(0, dtype=bool)
    t = physical_type or fs[0].physical_type
    h = hash_values([value], t, type_length or fs[0].type_length)[0]
    return _native.check_filters([f._f for f in fs], int(h))


def from_parquet(path) -> dict:
    """Every bloom filter in a Parquet file: {row_group: {column_path: BloomFilter}}.

    Each filter carries its column's physical_type (and type_length for FIXED_LEN_BYTE_ARRAY).
    Raises ValueError for a malformed file (with the byte offset), OSError for I/O errors.
    """
    out: dict = {}
    for info, f in _native.read_filters(str(path)):
        t = info["physical_type"]
        bf = BloomFilter(_native_filter=f, physical_type=t if t in PHYSICAL_TYPES else None,
                         type_length=info["type_length"] or None)
        out.setdefault(info["row_group"], {})[info["path"]] = bf
    return out
