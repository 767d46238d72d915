"""Parquet split-block bloom filters (SBBF), bit-exact with Parquet writers and readers.

Hashes are XXH64 (seed 0) of each value's Parquet PLAIN bytes, so the physical type matters:
the same number hashed as INT32 and as INT64 gives different hashes. Filters loaded from a
Parquet file remember their column's physical type and use it by default.

    >>> import numpy as np
    >>> from simdex.bloom import BloomFilter
    >>> f = BloomFilter(ndv=1000, fpp=0.01)
    >>> f.insert(np.arange(1000))          # int64 -> INT64
    >>> f.check([5, 5000])
    array([ True, False])

Datasets (many files): ``prune(source, column, values)`` lists the row groups that may hold a
value (statistics, then filters; footers and filter blocks only), ``lookup(...)`` reads just
those, ``add_filters(files, column, out=...)`` adds filters to files written without them;
``simdex.bloom.dask`` (the ``dask`` extra) runs the three on a Dask cluster.
"""

from __future__ import annotations

import operator
import threading

import numpy as np

from . import _bloom_values as _values
from ._simdex import bloom as _native

__all__ = ["BloomFilter", "hash_values", "from_parquet", "check_filters", "check_filters_many", "read_footer", "PHYSICAL_TYPES",
           "arrow_num_bytes", "model_num_bytes", "model_fpp", "model_bits_per_value",
           "prune", "lookup", "add_filters", "PruneReport", "Pruned", "FilterWarning"]

PHYSICAL_TYPES = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                  "FIXED_LEN_BYTE_ARRAY")

arrow_num_bytes = _native.arrow_num_bytes
model_num_bytes = _native.model_num_bytes
model_fpp = _native.model_fpp
model_bits_per_value = _native.model_bits_per_value
read_footer = _native.read_footer

# Datasets: pruned lookups over many files, and filters added to files that lack them.
from ._bloom_add import add_filters  # noqa: E402
from ._bloom_dataset import FilterWarning, Pruned, PruneReport, lookup, prune  # noqa: E402


def __getattr__(name):
    # simdex.bloom.dask needs the optional dask extra: imported on first use only.
    if name == "dask":
        import importlib

        return importlib.import_module("simdex._bloom_dask")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _normalize_type(physical_type):
    if physical_type is None:
        return None
    t = str(physical_type).upper()
    if t not in PHYSICAL_TYPES:
        raise ValueError(f"unknown physical type {physical_type!r}; expected one of {', '.join(PHYSICAL_TYPES)}")
    return t


def _as_values(values):
    """One value -> a 1-element sequence that keeps its type (np.int32 stays INT32)."""
    if isinstance(values, np.generic):
        return np.asarray([values])
    if isinstance(values, np.ndarray) and values.ndim == 0:
        return values.reshape(1)
    return [values] if not _values.is_pyarrow_scalar(values) else values


def _typed_hashes(values, physical_type, type_length, logical_type):
    t = _normalize_type(physical_type)
    if values is None:
        raise ValueError(_values.NULL_MESSAGE)
    if isinstance(values, (set, frozenset, dict)):
        raise TypeError(f"values must be one value, a sequence (list, tuple), a numpy array or a pyarrow "
                        f"array, not a {type(values).__name__}: the answers follow the values' order")
    if not isinstance(values, np.ndarray) and not _values.is_pyarrow(values) and not hasattr(values, "__len__"):
        values = list(values)  # a generator or other iterator
    if t is None:
        probe = values if isinstance(values, np.ndarray) or not _values.is_pyarrow(values) else None
        if probe is None:
            raise ValueError("pyarrow values need a physical_type (or a filter that knows its column)")
        t = _values.infer_type(probe)
    return _values.hash_values(values, t, logical_type or "", type_length)


def _hash64(h) -> int:
    """h as an unsigned 64-bit hash; ValueError for an int outside [0, 2**64) (the native call
    answered with its overload listing)."""
    v = operator.index(h)
    if not 0 <= v < 1 << 64:
        raise ValueError(f"a hash is an int in [0, 2**64), got {v}")
    return v


def hash_values(values, physical_type=None, type_length=None, logical_type=None) -> np.ndarray:
    """XXH64 of each value's PLAIN encoding, as a uint64 array.

    values: a numpy array, a pyarrow array or a sequence (ints -> INT64, floats -> DOUBLE,
    str/bytes -> BYTE_ARRAY, bools -> BOOLEAN unless physical_type says otherwise).
    logical_type ("DECIMAL(9,2)", "DATE", "TIMESTAMP(MICROS,UTC)", "UUID", "INT(32,UNSIGNED)",
    ...; what read_footer reports) turns Decimals, dates, datetimes, datetime64 and UUIDs into the
    stored form. FIXED_LEN_BYTE_ARRAY and INT96 take bytes of the type's width, or a 2-D uint8
    array with one row per value.
    """
    if _values.is_scalar(values) and values is not None:
        values = _as_values(values)  # np.float32(1.5) hashes as FLOAT, like an array of its dtype
    return _typed_hashes(values, physical_type, type_length, logical_type)[0]


class BloomFilter:
    """A Parquet split-block bloom filter.

    BloomFilter(num_bytes) or BloomFilter(ndv=..., fpp=..., sizing="arrow"|"model"). Sizes are
    powers of two in [32 B, 128 MiB], so Arrow, pyarrow and DuckDB can read what is written.

    num_bytes: the bitset's size. ndv, fpp: the number of distinct values to hold and the
    false-positive rate to size for, by Arrow's formula (``sizing="arrow"``, what Arrow and
    DuckDB write) or the exact model (``"model"``); a size past 128 MiB is capped there.
    physical_type ("INT64", ..., see PHYSICAL_TYPES), type_length (FIXED_LEN_BYTE_ARRAY's width)
    and logical_type ("DATE", "DECIMAL(9,2)", ...): the column type that decides how a value is
    hashed; without them insert and check infer it from the values (ints as INT64, floats as
    DOUBLE, str/bytes as BYTE_ARRAY). Raises ValueError for a size that is not a power of two in
    range, neither num_bytes nor ndv, ndv < 0, fpp outside (0, 1), an unknown sizing, physical
    or logical type.
    """

    def __init__(self, num_bytes=None, *, ndv=None, fpp=0.01, sizing="arrow", physical_type=None,
                 type_length=None, logical_type=None):
        if num_bytes is not None:
            if int(num_bytes) < 32:
                raise ValueError(f"num_bytes must be a power of two in [32, 134217728], got {num_bytes}")
            self._f = _native.Filter(int(num_bytes))
        elif ndv is not None:
            if int(ndv) < 0:
                raise ValueError(f"ndv must be 0 or more, got {ndv}")
            self._f = _native.Filter.for_ndv(int(ndv), float(fpp), sizing)
        else:
            raise ValueError("give num_bytes, or ndv (and fpp)")
        self._set_type(physical_type, type_length, logical_type)

    @classmethod
    def _over(cls, native=None, load=None, physical_type=None, type_length=None, logical_type=None):
        """A filter over an existing native filter, or one whose bitset ``load()`` reads on
        first use (kept out of __init__, whose signature help() shows)."""
        self = cls.__new__(cls)
        if load is not None:
            self._load = load  # __getattr__ reads the filter on first use
        else:
            self._f = native
        self._set_type(physical_type, type_length, logical_type)
        return self

    def _set_type(self, physical_type, type_length, logical_type) -> None:
        self.physical_type = _normalize_type(physical_type)
        self.type_length = type_length
        self.logical_type = logical_type or None
        _values.parse_logical(self.logical_type)  # refuse a malformed one now

    def __getattr__(self, name):
        # Only reached while _f is unset: a filter from from_parquet() reads its bitset now.
        # Threads may get here together: the loader gives each the same filter.
        load = self.__dict__.get("_load") if name == "_f" else None
        if load is not None:
            f = self.__dict__.setdefault("_f", load())
            self.__dict__.pop("_load", None)
            return f
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # -- construction / serialization ---------------------------------------------------------
    @classmethod
    def from_bitset(cls, bitset, **kw) -> "BloomFilter":
        """A filter over a copy of a raw bitset (any non-zero multiple of 32 bytes, else
        ValueError); ``kw``: physical_type, type_length, logical_type as for the constructor."""
        return cls._over(_native.Filter.from_bitset(bytes(bitset)), **kw)

    @classmethod
    def from_bytes(cls, data, **kw) -> "BloomFilter":
        """Parse the Parquet form: Thrift BloomFilterHeader + bitset. ValueError with the byte
        offset for a malformed header; ``kw`` as for from_bitset."""
        return cls._over(_native.Filter.parse(bytes(data)), **kw)

    def to_bytes(self) -> bytes:
        """The Parquet form: Thrift BloomFilterHeader + bitset."""
        return self._f.serialize()

    @property
    def bitset(self) -> bytes:
        """The raw bitset (num_bytes bytes), without the Parquet header."""
        return self._f.bitset()

    @property
    def num_bytes(self) -> int:
        """Size of the bitset in bytes: a power of two in [32, 128 MiB]."""
        return self._f.num_bytes

    @property
    def num_blocks(self) -> int:
        """Number of 32-byte blocks (num_bytes // 32); each value sets 8 bits in one block."""
        return self._f.num_blocks

    # -- values -------------------------------------------------------------------------------
    def _hashes(self, values, physical_type):
        if physical_type:  # an explicit physical type overrides the column's logical one
            return _typed_hashes(values, physical_type, self.type_length, None)
        return _typed_hashes(values, self.physical_type, self.type_length, self.logical_type)

    def _plain(self, value, physical_type):
        """One value's PLAIN bytes by the quick path (see _values.plain_bytes), else None."""
        if physical_type is not None:
            return None
        return _values.plain_bytes(value, self.physical_type, self.logical_type)

    def insert(self, values, physical_type=None) -> None:
        """Insert one value or many (numpy array, pyarrow array or sequence), hashed as
        ``physical_type`` (default: the filter's column type, else inferred). None raises
        ValueError (nulls are never in a filter), a set TypeError; a value the type cannot hold
        raises ValueError."""
        plain = self._plain(values, physical_type)
        if plain is not None:
            self._f.insert_hash(_native.hash_bytes(plain))
            return
        if _values.is_scalar(values):
            values = _as_values(values)
        self._f.insert_hashes(self._hashes(values, physical_type)[0])

    def check(self, values, physical_type=None):
        """True if a value may be present (bool for one value, a bool array for many, in their
        order); values and ``physical_type`` as for insert.

        NaN of floating-point types always answers True: NaN has many bit patterns and a filter
        holds only those its writer hashed. A zero answers True when the filter holds 0.0 or
        -0.0: the two are equal to every reader but hash apart, and a writer hashed the one it
        stored. None raises ValueError: nulls are never in a filter."""
        plain = self._plain(values, physical_type)  # never a float NaN or zero
        if plain is not None:
            return self._f.check_hash(_native.hash_bytes(plain))
        one = _values.is_scalar(values)
        out = self._hashes(_as_values(values) if one else values, physical_type).answer(self._f.check_hashes)
        return bool(out[0]) if one else out

    def __contains__(self, value) -> bool:
        """``value in f``: check(value) for one value."""
        return self.check(value)

    # -- hashes -------------------------------------------------------------------------------
    def insert_hash(self, h: int) -> None:
        """Insert one 64-bit XXH64 hash (as hash_values computes them): an int in [0, 2**64),
        else ValueError."""
        self._f.insert_hash(_hash64(h))

    def check_hash(self, h: int) -> bool:
        """True if the value with this 64-bit hash may be present; h as for insert_hash."""
        return self._f.check_hash(_hash64(h))

    def insert_hashes(self, hashes) -> None:
        """Insert many 64-bit hashes (any array-like of uint64) in one call."""
        self._f.insert_hashes(np.ascontiguousarray(hashes, dtype=np.uint64))

    def check_hashes(self, hashes, bitmap: bool = False) -> np.ndarray:
        """Bool array, or with bitmap=True uint64 words (bit i of word i // 64, LSB first)."""
        h = np.ascontiguousarray(hashes, dtype=np.uint64)
        return self._f.check_hashes_bits(h) if bitmap else self._f.check_hashes(h)

    # -- whole-filter operations --------------------------------------------------------------
    def merge(self, other: "BloomFilter") -> "BloomFilter":
        """In-place union with a filter of the same size (ValueError otherwise); returns self."""
        self._f.merge(other._f)
        return self

    def __or__(self, other: "BloomFilter") -> "BloomFilter":
        """``a | b``: a new filter, the union of two filters of the same size (ValueError
        otherwise)."""
        return self.copy().merge(other)

    def copy(self) -> "BloomFilter":
        """An independent copy (bitset and column type)."""
        return type(self)._over(self._f.copy(), physical_type=self.physical_type,
                                type_length=self.type_length, logical_type=self.logical_type)

    def fold_to_fpp(self, target_fpp: float) -> int:
        """Halve the size while the estimated FPP stays <= target; returns the folds done."""
        return self._f.fold_to_fpp(float(target_fpp))

    def fill(self) -> float:
        """Fraction of the bitset's bits that are set."""
        return self._f.fill()

    def estimated_fpp(self) -> float:
        """FPP for values never inserted, from the bitset's per-word fill."""
        return self._f.estimated_fpp()

    def __eq__(self, other) -> bool:
        """Same size and same bits (the column type is not compared)."""
        return isinstance(other, BloomFilter) and self._f == other._f

    def __repr__(self) -> str:
        t = f", physical_type={self.physical_type!r}" if self.physical_type else ""
        return f"BloomFilter(num_bytes={self.num_bytes}{t}, fill={self.fill():.4f})"


def _column_types(fs, physical_type, type_length, logical_type):
    """(filter indexes, physical type, type length, logical type) per group of filters that hash
    a value alike: one group when physical_type is given (it applies to every filter) or all
    filters share a column type, else one per type (an INT32 column's filter and an INT64 one's
    hold different hashes of 7)."""
    keys = [None] * len(fs) if physical_type is not None else \
        [(f.physical_type, f.type_length, f.logical_type) for f in fs]
    if keys and keys.count(keys[0]) == len(keys):  # the usual case: one column type
        groups = {None: range(len(fs))}
    else:
        groups = {}
        for i, key in enumerate(keys):
            groups.setdefault(key, []).append(i)
    for idx in groups.values():
        f0 = fs[idx[0]]
        lt = logical_type if (logical_type or physical_type) else f0.logical_type
        yield idx, physical_type or f0.physical_type, type_length or f0.type_length, lt


def check_filters(filters, value, physical_type=None, type_length=None, logical_type=None) -> np.ndarray:
    """One value against many filters at once (row-group skipping): a bool array. The value is
    typed by each filter's own column type unless physical_type says otherwise."""
    fs = list(filters)
    out = np.zeros(len(fs), dtype=bool)
    for idx, t, length, lt in _column_types(fs, physical_type, type_length, logical_type):
        group = [fs[i]._f for i in idx]
        plain = _values.plain_bytes(value, t, lt)  # the quick path of BloomFilter.check
        if plain is not None:
            out[idx] = _native.check_filters(group, _native.hash_bytes(plain))
        else:  # the general path, which answers NaN and zeros as BloomFilter.check does
            hashed = _typed_hashes(_as_values(value), t, length, lt)
            out[idx] = hashed.answer(lambda hs: np.stack([_native.check_filters(group, int(h)) for h in hs], -1))[:, 0]
    return out


def check_filters_many(filters, values, physical_type=None, type_length=None,
                       logical_type=None) -> np.ndarray:
    """Many values against many filters at once: a bool array of shape (filters, values) whose
    [i, j] says filter i may hold value j. Each filter is probed for all the values in turn, so
    its probes go to different blocks: faster than one check_filters call per value when the
    values are many. Values are typed as in check_filters (by each filter's column type unless
    given); NaN and zeros are answered as there."""
    fs = list(filters)
    vals = _as_values(values) if _values.is_scalar(values) and values is not None else values
    if not fs:
        h = _typed_hashes(vals, physical_type, type_length, logical_type)[0]
        return np.zeros((0, len(h)), dtype=bool)
    out = None
    for idx, t, length, lt in _column_types(fs, physical_type, type_length, logical_type):
        group = [fs[i]._f for i in idx]

        def probe(hs):
            hs = np.ascontiguousarray(hs, dtype=np.uint64)
            return _native.check_filters_many(group, hs).reshape(len(group), len(hs))

        hashed = _typed_hashes(vals, t, length, lt)
        if out is None:
            out = np.zeros((len(fs), len(hashed.hashes)), dtype=bool)
        out[idx] = hashed.answer(probe)
    return out


def from_parquet(path, columns=None, row_groups=None) -> dict:
    """The bloom filters of a Parquet file: {row_group: {column_path: BloomFilter}}.

    Bitsets are read lazily, on a filter's first use, and only for the columns / row_groups
    asked for (lists; None: all, []: none; a column or row group the file lacks raises
    ValueError); chunks that point at the same filter share one (so memory is
    what is used plus the footer; inserting into one of those inserts into all). Each filter
    carries its column's physical_type, logical_type and type_length. Filters on BOOLEAN columns
    are left out (parquet-java's are empty: _bloom_values.usable_filter). Raises ValueError for a
    column path that names two columns (a name with a dot beside a nested field), a
    malformed footer or filter header (with the byte offset; headers are checked here), OSError
    for I/O errors and paths that are not regular files.
    """
    if isinstance(columns, str):
        columns = [columns]
    columns = None if columns is None else list(columns)
    row_groups = None if row_groups is None else [int(r) for r in row_groups]
    if columns == [] or row_groups == []:
        return {}  # nothing asked for (None asks for all)
    file = _native.ParquetFile(str(path), columns, row_groups)
    footer = file.footer()
    names = [c["path"] for c in footer["columns"]]
    unknown = [c for c in columns or [] if c not in names]
    if unknown:
        raise ValueError(f"{path}: no column {', '.join(map(repr, unknown))}; the file has: {', '.join(names)}")
    # Keyed by path, two leaves of one path would leave one's filter under the other's name.
    _values.refuse_ambiguous(path, footer, columns if columns is not None else names)
    bad = [r for r in row_groups or [] if not 0 <= r < footer["num_row_groups"]]
    if bad:
        raise ValueError(f"{path}: no row group {', '.join(map(str, bad))}; the file has "
                         f"{footer['num_row_groups']} (0 to {footer['num_row_groups'] - 1})")
    shared: dict = {}  # bloom_filter_offset -> native filter, once read

    reading = threading.Lock()  # one read per filter, also when threads ask at once

    def loader(index, offset):
        def load():
            with reading:
                f = shared.get(offset)
                if f is None:
                    f = shared[offset] = file.read_filter(index)
            return f
        return load

    out: dict = {}
    checked: set = set()
    for i, info in enumerate(footer["chunks"]):
        if not _values.usable_filter(info):
            continue  # as a chunk without a filter
        off = info["bloom_filter_offset"]
        if off not in checked:
            file.locate_filter(i)
            checked.add(off)
        t = info["physical_type"]
        bf = BloomFilter._over(load=loader(i, off), physical_type=t if t in PHYSICAL_TYPES else None,
                         type_length=info["type_length"] or None,
                         logical_type=info["logical_type"] if info["logical_type"] != "OTHER" else None)
        out.setdefault(info["row_group"], {})[info["path"]] = bf
    return out
