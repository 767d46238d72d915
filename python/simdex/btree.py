"""Sorted containers on simdex's SIMD B+ tree: ``SortedSet`` and ``SortedDict``.

Keys are fixed-width numbers chosen by ``dtype``: ``"int64"`` (default), ``"uint64"`` or
``"float64"`` (IEEE totalOrder: -0.0 sorts before +0.0; NaN raises ``ValueError``). Method
names follow sortedcontainers where they apply; positional access (``s[i]``, ``index``,
``bisect_left``/``bisect_right``) is O(log n) because the tree keeps subtree counts. Batch
methods take and return numpy arrays and run in native code.

Not thread-safe. Changing a container while iterating over it raises ``RuntimeError`` at
the next step of the iterator.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from ._simdex import btree as _native

_Yield = _native.Yield  # what an iterator yields: keys, values or items

__all__ = ["SortedSet", "SortedDict"]

_DTYPES = {"int64": "Int64", "uint64": "UInt64", "float64": "Float64"}


def _dtype_name(dtype: Any) -> str:
    try:
        name = np.dtype(dtype).name
    except TypeError as e:
        raise ValueError(f"unsupported dtype {dtype!r}: use int64, uint64 or float64") from e
    if name not in _DTYPES:
        raise ValueError(f"unsupported dtype {name!r}: use int64, uint64 or float64")
    return name


class _Sorted:
    """Methods shared by SortedSet and SortedDict (mixed into the native classes)."""

    __slots__ = ()
    dtype: np.dtype

    def _keys_array(self, values: Any) -> np.ndarray:
        """values as a contiguous 1-d array of the key dtype; refuses lossy conversions."""
        a = np.asarray(values)
        if a.dtype != self.dtype:
            want = self.dtype
            if a.size == 0:
                a = a.astype(want)
            elif want.kind in "iu" and a.dtype.kind in "iub":
                info = np.iinfo(want)
                lo, hi = int(a.min()), int(a.max())
                if lo < info.min or hi > info.max:
                    bad = int(np.argmax((a < info.min) | (a > info.max)) if a.ndim else 0)
                    raise ValueError(f"key out of range for {want.name} at position {bad}")
                a = a.astype(want)
            elif want.kind == "f" and a.dtype.kind in "fiub":
                a = a.astype(want)
            else:
                raise TypeError(f"cannot use {a.dtype.name} values as {want.name} keys")
        return np.ascontiguousarray(a.reshape(-1))

    def __bool__(self) -> bool:
        return len(self) > 0

    def range_by_index(self, start: int, stop: int) -> np.ndarray:
        """Keys at positions [start, stop) as an array."""
        n = len(self)
        start, stop = max(0, min(start, n)), max(0, min(stop, n))
        if stop <= start:
            return np.empty(0, dtype=self.dtype)
        return self._range(self._key_at(start), None)[: stop - start]

    def index(self, value) -> int:
        """Position of value; ValueError if absent."""
        if value not in self:
            raise ValueError(f"{value!r} is not in the container")
        return self.bisect_left(value)

    def irange(self, minimum=None, maximum=None, inclusive=(True, True), reverse=False) -> Iterator:
        """Iterate over keys k with minimum <= k <= maximum (bounds per ``inclusive``)."""
        return self._irange(minimum, maximum, bool(inclusive[0]), bool(inclusive[1]), bool(reverse), _Yield.keys)

    def bisect_many(self, values, side: str = "left") -> np.ndarray:
        """Insertion points for many values at once (int64 array), like numpy.searchsorted."""
        if side not in ("left", "right"):
            raise ValueError("side must be 'left' or 'right'")
        return self._bisect_many(self._keys_array(values), side == "right")

    def range(self, minimum=None, maximum=None) -> np.ndarray:
        """Keys k with minimum <= k < maximum (None: unbounded) as an array."""
        return self._range(minimum, maximum)

    def to_numpy(self) -> np.ndarray:
        return self._range(None, None)

    def validate(self) -> None:
        """Check every structural invariant of the tree; raises AssertionError if broken."""
        why = self._validate()
        if why:
            raise AssertionError(why)


class SortedSet(_Sorted):
    """An ordered set of int64, uint64 or float64 keys (``dtype``), stored in a B+ tree.

    ``pages`` picks the arena's backing: ``"2m"`` (transparent huge pages, default) or ``"4k"``.
    """

    __slots__ = ()

    def __new__(cls, iterable: Iterable | None = None, dtype: Any = "int64", pages: str = "2m"):
        if cls is SortedSet:
            cls = _SET_CLASSES[_dtype_name(dtype)]
        return super().__new__(cls)

    def __init__(self, iterable: Iterable | None = None, dtype: Any = "int64", pages: str = "2m"):
        super().__init__(pages)
        if iterable is not None:
            self.update(iterable)

    def __getitem__(self, index):
        """Key at a position (negative counts from the end) or a slice of keys as an array."""
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return self.range_by_index(start, stop)
            return np.array([self._key_at(i) for i in range(start, stop, step)], dtype=self.dtype)
        return self._key_at(index)

    def remove(self, value) -> None:
        """Remove value; KeyError if absent."""
        if not self._remove(value):
            raise KeyError(value)

    def update(self, iterable: Iterable) -> None:
        a = self._keys_array(iterable if isinstance(iterable, (np.ndarray, list, tuple)) else list(iterable))
        if len(self) == 0:
            self._build(a, False)
        else:
            self.add_many(a)

    def add_many(self, values) -> int:  # type: ignore[override]
        """Insert many keys; returns how many were new."""
        return super().add_many(self._keys_array(values))

    def discard_many(self, values) -> int:  # type: ignore[override]
        """Remove many keys; returns how many were present."""
        return super().discard_many(self._keys_array(values))

    def contains_many(self, values) -> np.ndarray:  # type: ignore[override]
        """Membership of many keys (bool array)."""
        return super().contains_many(self._keys_array(values))

    def pop(self, index: int = -1):
        key = self._key_at(index)
        self._remove(key)
        return key

    def count(self, value) -> int:
        return 1 if value in self else 0

    def copy(self) -> SortedSet:
        s = type(self)(pages=self.pages)
        s._build(self.to_numpy(), True)
        return s

    def __eq__(self, other) -> bool:
        if isinstance(other, SortedSet):
            return len(self) == len(other) and bool(np.array_equal(self.to_numpy(), other.to_numpy()))
        if isinstance(other, (set, frozenset)):
            return len(self) == len(other) and all(k in self for k in other)
        return NotImplemented

    def __repr__(self) -> str:
        head = list(self.irange())[:10] if len(self) <= 10 else list(self.to_numpy()[:10])
        more = ", ..." if len(self) > 10 else ""
        return f"SortedSet([{', '.join(map(repr, head))}{more}], dtype='{self.dtype.name}')"


class SortedDict(_Sorted):
    """An ordered mapping from int64, uint64 or float64 keys (``dtype``) to any Python object."""

    __slots__ = ()

    def __new__(cls, *args, dtype: Any = "int64", pages: str = "2m", **kwargs):
        if cls is SortedDict:
            cls = _DICT_CLASSES[_dtype_name(dtype)]
        return super().__new__(cls)

    def __init__(self, *args, dtype: Any = "int64", pages: str = "2m", **kwargs):
        super().__init__(pages)
        if args or kwargs:
            self.update(*args, **kwargs)

    def update(self, *args, **kwargs) -> None:
        items = dict(*args, **kwargs) if (len(args) != 1 or kwargs or not hasattr(args[0], "items")) else args[0]
        for k, v in items.items():
            self[k] = v

    def __delitem__(self, key) -> None:
        self._pop(key)

    def pop(self, key, *default):
        if key in self or not default:
            return self._pop(key)
        return default[0]

    def setdefault(self, key, default=None):
        if key in self:
            return self[key]
        self[key] = default
        return default

    def keys(self) -> Iterator:
        return iter(self)

    def values(self) -> Iterator:
        return self._irange(None, None, True, True, False, _Yield.values)

    def items(self) -> Iterator:
        return self._irange(None, None, True, True, False, _Yield.items)

    def irange_items(self, minimum=None, maximum=None, inclusive=(True, True), reverse=False) -> Iterator:
        return self._irange(minimum, maximum, bool(inclusive[0]), bool(inclusive[1]), bool(reverse), _Yield.items)

    def peekitem(self, index: int = -1):
        return self._key_at(index), self._value_at(index)

    def popitem(self, index: int = -1):
        key = self._key_at(index)
        return key, self._pop(key)

    def contains_many(self, values) -> np.ndarray:  # type: ignore[override]
        return super().contains_many(self._keys_array(values))

    def __eq__(self, other) -> bool:
        if isinstance(other, (SortedDict, dict)):
            return len(self) == len(other) and all(k in self and self[k] == v for k, v in other.items())
        return NotImplemented

    def __repr__(self) -> str:
        head = [(k, v) for _, (k, v) in zip(range(10), self.items())]
        more = ", ..." if len(self) > 10 else ""
        body = ", ".join(f"{k!r}: {v!r}" for k, v in head)
        return f"SortedDict({{{body}{more}}}, dtype='{self.dtype.name}')"


def _make(base, prefix: str):
    classes = {}
    for name, suffix in _DTYPES.items():
        native = getattr(_native, prefix + suffix)
        cls = type(base.__name__, (base, native), {"__slots__": (), "dtype": np.dtype(name), "__module__": __name__})
        cls.__qualname__ = f"{base.__name__}[{name}]"
        classes[name] = cls
    return classes


_SET_CLASSES = _make(SortedSet, "Set")
_DICT_CLASSES = _make(SortedDict, "Map")
