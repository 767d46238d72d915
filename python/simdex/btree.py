"""Sorted containers on simdex's SIMD B+ tree: ``SortedSet`` and ``SortedDict``.

Drop-in replacements for ``sortedcontainers.SortedSet`` and ``SortedDict`` when the keys are
numbers and there is no key function. Keys are stored as one fixed-width type, ``dtype``:
``"int64"``, ``"uint64"`` or ``"float64"``; when it is not given it is inferred from the
initial keys (float64 if any is a float, uint64 if an integer needs it, else int64).

Lookups go by value, as with Python numbers: ``2.0 in SortedSet([2])`` is True, and a value
the dtype cannot hold (``2**64``, ``2.5`` or ``None`` in an int64 set, ``"x"``) is simply
absent. Inserting such a value raises ``ValueError`` (out of range, NaN, not exactly
representable) or ``TypeError`` (not a number, or a float for an integer dtype). ``-0.0`` and
``0.0`` are the same key, as in a Python set.

Positional access (``s[i]``, ``del s[i]``, ``index``, ``bisect_left``) is O(log n): the tree
keeps subtree counts. Batch methods (``add_many``, ``contains_many``, ``bisect_many``, ...) take
and return numpy arrays and run in native code. ``pages`` picks the tree's memory: ``"auto"``
(4 KiB pages while small, 2 MiB huge pages once the tree outgrows one 2 MiB region), ``"2m"`` or
``"4k"``.

Not thread-safe. Changing a container while iterating over it raises ``RuntimeError`` at the
next step of the iterator.
"""

from __future__ import annotations

import collections.abc as cabc
import copy as _copy
import operator
import reprlib
from itertools import chain, repeat
from types import GenericAlias
from typing import TYPE_CHECKING, Any

import numpy as np

from ._simdex import btree as _native
from ._unique import unique_sorted

__all__ = ["SortedSet", "SortedDict", "SortedKeysView", "SortedValuesView", "SortedItemsView"]

_DTYPES = ("int64", "uint64", "float64")
_KEYS, _VALUES, _ITEMS = 0, 1, 2  # what a native iterator yields
_INT64_MAX = 2**63 - 1
_EXACT_FLOAT_INT = 2**53  # integers up to this magnitude are exact in float64


def _dtype_name(dtype: Any) -> str:
    if dtype is None:
        return "int64"
    try:
        name = np.dtype(dtype).name
    except TypeError as e:
        raise ValueError(f"unsupported dtype {dtype!r}: use int64, uint64 or float64") from e
    if name not in _DTYPES:
        raise ValueError(f"unsupported dtype {name!r}: use int64, uint64 or float64")
    return name


def _infer_dtype(keys):
    """(dtype, keys) for these keys: float64 if any is a float, uint64 if an integer needs it,
    else int64 (also for no keys, or keys that are not numbers: storing them then fails).
    A list of int64-range integers comes back as an array, converted once."""
    if isinstance(keys, np.ndarray):
        kind = keys.dtype.kind
        if kind == "f":
            return "float64", keys
        if kind == "u" and keys.dtype.itemsize == 8:
            return "uint64", keys
        return ("int64", keys) if kind in "iub" else (_infer_dtype(keys.tolist())[0], keys)
    if isinstance(keys, (SortedSet, SortedDict)):
        return keys._dtype_name, keys
    if isinstance(keys, range):
        fits = max(abs(keys.start), abs(keys.stop)) <= _INT64_MAX
        return ("int64" if fits else _infer_dtype(list(keys))[0]), keys
    if isinstance(keys, list) and len(keys) > 64:
        try:
            a = np.asarray(keys)
        except (ValueError, TypeError, OverflowError):
            a = None
        if a is not None and a.dtype == np.int64 and a.ndim == 1:
            return "int64", a
    name, negative, big = "int64", None, None
    for i, k in enumerate(keys):
        if isinstance(k, (float, np.floating)):
            return "float64", keys
        if isinstance(k, (int, np.integer)):
            if k > _INT64_MAX and big is None:
                name, big = "uint64", (i, k)
            elif k < 0 and negative is None:
                negative = (i, k)
    if negative is not None and big is not None:  # said here, not as "-1 out of range for uint64"
        (i, k), (j, b) = negative, big
        raise ValueError(f"keys {k} (position {i}) and {b} (position {j}) have no 64-bit integer dtype "
                         "in common: int64 stops at 2**63 - 1 and uint64 at 0; pass dtype= and keep "
                         "the keys in its range")
    return name, keys


def _stored_array(a: np.ndarray, want: np.dtype) -> np.ndarray:
    """An array's values as keys of dtype want; raises like a single insert would, naming the
    position of the first value that cannot be stored exactly."""
    a = a.reshape(-1)
    if a.dtype == want:
        return np.ascontiguousarray(a)
    if a.size == 0:  # np.array([]) is float64: no key in it, so nothing to refuse
        return np.empty(0, dtype=want)
    kind = a.dtype.kind
    if kind == "b":
        return a.astype(want)
    if kind in "iu" and want.kind in "iu":
        bad = _int_out_of_range(a, want)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"key {a[i]} out of range for {want.name} at position {i}")
        return a.astype(want)
    if kind in "iu" and want.kind == "f":
        bad = ~_int_exact_in_float(a)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"key {a[i]} is not exactly representable as float64 at position {i}")
        return a.astype(want)
    if kind == "f" and want.kind == "f":
        if a.dtype.itemsize > 8:  # longdouble: refused where float64 would round it, as add() does
            conv = a.astype(want)
            bad = (conv.astype(a.dtype) != a) & ~np.isnan(a)
            if bad.any():
                i = int(np.argmax(bad))
                raise ValueError(f"key {a[i]!r} is not exactly representable as float64 at position {i}")
            return conv
        return a.astype(want)
    if kind == "f":
        raise TypeError(f"{want.name} keys must be integers, got a {a.dtype.name} array")
    raise TypeError(f"cannot use {a.dtype.name} values as {want.name} keys")


def _int_out_of_range(a: np.ndarray, want: np.dtype) -> np.ndarray:
    """Mask of the integers of a that do not fit in the integer dtype want."""
    if a.dtype.kind == "i" and want == np.uint64:
        return a < 0
    if a.dtype == np.uint64 and want == np.int64:
        return a > np.uint64(_INT64_MAX)
    return np.zeros(a.shape, dtype=bool)


def _int_exact_in_float(a: np.ndarray) -> np.ndarray:
    """Mask of the integers of a that float64 holds exactly."""
    ok = (a <= _EXACT_FLOAT_INT) if a.dtype.kind == "u" else (a >= -_EXACT_FLOAT_INT) & (a <= _EXACT_FLOAT_INT)
    if not ok.all():
        for i in np.flatnonzero(~ok):
            x = int(a[i])
            ok[i] = int(float(x)) == x
    return ok


def _lookup_array(a: np.ndarray, want: np.dtype):
    """(keys, mask): the values of a that equal some value of dtype want, as that dtype, and
    the mask of where they are in a (None when all are); None when a needs the slow path."""
    a = a.reshape(-1)
    if a.dtype == want:
        return np.ascontiguousarray(a), None
    kind = a.dtype.kind
    if kind == "b":
        return a.astype(want), None
    if kind in "iu" and want.kind in "iu":
        ok = ~_int_out_of_range(a, want)
    elif kind in "iu":
        ok = _int_exact_in_float(a)
    elif kind == "f" and want.kind == "f":
        if a.dtype.itemsize <= 8:
            return a.astype(want), None
        conv = a.astype(want)  # longdouble: only values float64 holds exactly can equal a key
        ok = conv.astype(a.dtype) == a
        return conv[ok], ok
    elif kind == "f":
        lo, hi = (-(2.0**63), 2.0**63) if want == np.int64 else (0.0, 2.0**64)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(a) & (a == np.floor(a)) & (a >= lo) & (a < hi)
    else:
        return None
    return a[ok].astype(want), ok


class _Sorted:
    """What SortedSet and SortedDict share, over their native bases (copied in by _shared)."""

    @property
    def key(self) -> None:
        """The key function: always None (keys are ordered by value)."""
        return None

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype of the keys."""
        return np.dtype(self._dtype_name)

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def bisect(self, value) -> int:
        """Same as bisect_right."""
        return self.bisect_right(value)

    def index(self, value, start=None, stop=None) -> int:
        """Position of value among the keys; ValueError if absent or outside [start, stop)."""
        n = len(self)
        start = 0 if start is None else max(0, start + n if start < 0 else start)
        stop = n if stop is None else min(n, stop + n if stop < 0 else stop)
        pos = self._find(value)
        if pos < 0 or not start <= pos < stop:
            raise ValueError(f"{value!r} is not in {type(self).__name__}")
        return pos

    def _stable(self, read):
        """read() (several native calls: ranks then keys, keys then values) under one version of
        the key set: retried when another thread changed the set between its calls, so a result
        is never a mix of two states (keys outside the asked range, values under other keys)."""
        for _ in range(64):
            v = self._version
            try:
                out = read()
            except RuntimeError:  # an iterator inside read() saw the change
                if self._version == v:
                    raise
                continue
            if self._version == v:
                return out
        raise RuntimeError(f"{type(self).__name__} kept changing during the call (other threads)")

    def islice(self, start=None, stop=None, reverse=False):
        """Iterate over the keys at positions [start, stop), as slicing would choose them."""
        def read():
            a, b, _ = slice(start, stop).indices(len(self))
            return self._iter(a, max(a, b), bool(reverse), _KEYS)
        return self._stable(read)

    def irange(self, minimum=None, maximum=None, inclusive=(True, True), reverse=False):
        """Iterate over the keys k with minimum <= k <= maximum (each bound is strict when its
        ``inclusive`` flag is False; None leaves that side open)."""
        def read():
            a, b = self._rank_range(minimum, maximum, bool(inclusive[0]), bool(inclusive[1]))
            return self._iter(a, b, bool(reverse), _KEYS)
        return self._stable(read)

    def contains_many(self, values) -> np.ndarray:
        """Membership of many values at once, by value like ``in``: a bool array, of the shape
        of values when that is an array (as numpy.isin), else flat."""
        if isinstance(values, np.ndarray) and values.ndim != 1:
            return self.contains_many(values.reshape(-1)).reshape(values.shape)
        if isinstance(values, np.ndarray):
            found = _lookup_array(values, self.dtype)
            if found is not None:
                keys, mask = found
                hits = self._contains_array(keys)
                if mask is None:
                    return hits
                out = np.zeros(mask.shape, dtype=bool)
                out[mask] = hits
                return out
            values = values.reshape(-1).tolist()
        keys, where, n = self._lookup_keys(values)
        out = np.zeros(n, dtype=bool)
        out[where] = self._contains_array(keys)
        return out

    def bisect_many(self, values, side: str = "left") -> np.ndarray:
        """Insertion points for many values at once (int64 array), like numpy.searchsorted on
        the sorted keys, of the shape of values when that is an array; side is 'left'
        (bisect_left) or 'right' (bisect_right)."""
        if side not in ("left", "right"):
            raise ValueError("side must be 'left' or 'right'")
        if isinstance(values, np.ndarray) and values.ndim != 1:
            return self.bisect_many(values.reshape(-1), side).reshape(values.shape)
        if not isinstance(values, (np.ndarray, cabc.Iterable)):  # one number: a 1-element answer
            values = np.asarray(values)
        if isinstance(values, np.ndarray):
            # Another numeric dtype goes to the native batch when every value converts exactly
            # (int32 into int64, float32 into float64, ...); the rest are placed one by one.
            found = _lookup_array(values, self.dtype) if values.dtype.kind in "biuf" else None
            if found is not None and (found[1] is None or bool(found[1].all())):
                return self._bisect_array(found[0], side == "right")
            items = values.reshape(-1).tolist()
        else:
            # A list goes to the native batch only when numpy keeps every value: it turns
            # [1, 2**64 - 1, 2.0] into float64 (2**64 - 1 becomes 2**64), and ints past 2**53
            # next to a float lose their low bits.
            items = list(values)
            try:
                a = np.asarray(items)
            except (ValueError, TypeError, OverflowError):
                a = None
            if a is not None and a.dtype == self.dtype and a.ndim == 1:
                if a.dtype.kind != "f" or a.tolist() == items:
                    return self._bisect_array(a, side == "right")
        one = self.bisect_right if side == "right" else self.bisect_left
        return np.fromiter((one(x) for x in items), dtype=np.int64, count=len(items))

    def to_numpy(self) -> np.ndarray:
        """Every key, in order, as an array of the dtype."""
        return self._stable(lambda: self._keys_at(0, len(self)))

    def range(self, minimum=None, maximum=None) -> np.ndarray:
        """Keys k with minimum <= k < maximum (None: unbounded) as an array."""
        return self._stable(lambda: self._keys_at(*self._rank_range(minimum, maximum, True, False)))

    def range_by_index(self, start: int, stop: int) -> np.ndarray:
        """Keys at positions [start, stop) as an array (bounds clipped like slicing)."""
        def read():
            a, b, _ = slice(start, stop).indices(len(self))
            return self._keys_at(a, max(a, b))
        return self._stable(read)

    def validate(self) -> None:
        """Check every structural invariant of the tree; raises AssertionError if broken."""
        why = self._validate()
        if why:
            raise AssertionError(why)

    def _stored(self, values) -> np.ndarray:
        """values (an array, one of our containers or any iterable of numbers) as keys to
        store; ValueError / TypeError for the first that cannot be stored."""
        if isinstance(values, np.ndarray):
            if values.dtype.kind in "biuf":
                return _stored_array(values, self.dtype)
            values = values.reshape(-1).tolist()  # object arrays (pandas, big ints): value by value
        if isinstance(values, (SortedSet, SortedDict)) and values._dtype_name == self._dtype_name:
            return values.to_numpy()
        return self._stored_keys(values)

    def _lookups(self, values):
        """(keys, complete): the values that can equal a key, as keys of the dtype, and
        whether that was all of them."""
        if isinstance(values, (SortedSet, SortedDict)) and values._dtype_name == self._dtype_name:
            return values.to_numpy(), True
        if isinstance(values, np.ndarray):
            found = _lookup_array(values, self.dtype)
            if found is not None:
                keys, mask = found
                return keys, mask is None or bool(mask.all())
            values = values.reshape(-1).tolist()
        keys, where, n = self._lookup_keys(values)
        return keys, len(where) == n


def _flag(name: str, value) -> bool:
    """A keyword switch: True or False (numpy's bools too), else TypeError naming it."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be True or False, not {type(value).__name__}")


def _pages(pages) -> str:
    """The pages argument, checked here: the native constructor's type error lists overloads."""
    if not isinstance(pages, str):
        raise TypeError(f"pages must be 'auto', '2m' or '4k', not {type(pages).__name__}")
    return pages


def _shared(cls):
    """Gives cls _Sorted's members, as if _Sorted came first among its bases: nanobind before
    3.0 (what CPython 3.9 builds with) lets a Python class have its native base only."""
    for name, value in vars(_Sorted).items():
        if (not name.startswith("__") or name == "__ne__") and name not in vars(cls):
            setattr(cls, name, value)
    return cls


@_shared
class SortedSet(_native._Set):
    """A sorted set of numbers, stored in a B+ tree (a drop-in for sortedcontainers.SortedSet
    with numeric keys and no key function).

    ``SortedSet(iterable=None, key=None, *, dtype=None, pages="auto", batch_filter=True)``:
    ``key`` must be None; ``dtype`` is ``"int64"``, ``"uint64"`` or ``"float64"`` (inferred
    from iterable when not given); ``pages`` is ``"auto"``, ``"2m"`` or ``"4k"``;
    ``batch_filter=False`` keeps large ``contains_many`` batches of absent keys from building a
    membership filter (1.5 bytes a key; see ``filter_bytes()``).

    It is a set (``in``, ``add``, ``discard``, set algebra and comparisons with any set) and a
    sequence of its keys in order (``s[i]``, ``s[a:b]`` as a list, ``del s[i]``, ``index``,
    ``bisect_left``/``bisect_right``, ``irange``, ``islice``), plus numpy batch methods.
    """

    __hash__ = None  # mutable
    __class_getitem__ = classmethod(GenericAlias)  # SortedSet[int] in annotations, as sortedcontainers

    def __init__(self, iterable=None, key=None, *, dtype=None, pages: str = "auto", batch_filter: bool = True):
        """A set of the keys of iterable (None: empty). dtype: "int64", "uint64" or "float64"
        (None: inferred from the keys, int64 for none); pages: "auto", "2m" or "4k"; key must
        be None (keys are ordered by value); batch_filter: False keeps large contains_many
        batches of absent keys from building a membership filter."""
        if key is not None:
            raise TypeError("simdex SortedSet orders keys by value; key functions are not supported")
        if iterable is not None and not isinstance(iterable, (np.ndarray, list, tuple, range, SortedSet, SortedDict)):
            iterable = list(iterable)
        if dtype is None and iterable is not None:
            dtype, iterable = _infer_dtype(iterable)
        super().__init__(_dtype_name(dtype), _pages(pages), _flag("batch_filter", batch_filter))
        if iterable is not None:
            self.update(iterable)

    def _like(self) -> SortedSet:
        """An empty set of the same class, dtype, page policy and filter switch."""
        s = type(self).__new__(type(self))
        _native._Set.__init__(s, self._dtype_name, self._page_mode, self.batch_filter)
        return s

    if TYPE_CHECKING:  # native fast-call methods, which the generated stub lists untyped
        def add(self, value: object) -> None: ...
        def discard(self, value: object) -> None: ...
        def remove(self, value: object) -> None: ...
        def pop(self, index: int = -1) -> object: ...
        def bisect_left(self, value: object) -> int: ...
        def bisect_right(self, value: object) -> int: ...

    def count(self, value) -> int:
        """1 if value is in the set, else 0."""
        return 1 if value in self else 0

    # Defined here so that help() says so, not the slot's generic "Set self[key] to value".
    def __setitem__(self, index, value):
        """Not supported: a sorted set places its keys itself; raises TypeError (use add())."""
        raise TypeError("SortedSet does not support item assignment; use add()")

    def copy(self) -> SortedSet:
        """A shallow copy (keys are numbers, so also a deep one)."""
        s = self._like()
        s._add_array(self.to_numpy())
        return s

    __copy__ = copy

    def __deepcopy__(self, memo) -> SortedSet:
        s = self.copy()
        if getattr(self, "__dict__", None):
            s.__dict__.update(_copy.deepcopy(self.__dict__, memo))
        return s

    def __reduce__(self):
        state = getattr(self, "__dict__", None) or None
        args = (type(self), self._dtype_name, self._page_mode, self.to_numpy(), self.batch_filter)
        return (_rebuild_set, args, state)

    def __repr__(self) -> str:
        dtype = "" if self._dtype_name == "int64" else f", dtype='{self._dtype_name}'"
        return f"{type(self).__name__}({list(self)!r}{dtype})"

    # -- batches ----------------------------------------------------------------------------

    def add_many(self, values) -> int:
        """Insert many keys (an array or any iterable of numbers); returns how many were new."""
        return self._add_array(self._stored(values))

    def discard_many(self, values) -> int:
        """Remove many keys; returns how many were present."""
        keys, _ = self._lookups(values)
        return self._discard_array(keys)

    # -- set algebra (operands: any iterable) ----------------------------------------------

    def update(self, *iterables) -> SortedSet:
        """Add the values of every iterable; returns the set."""
        for it in iterables:
            self._add_array(self._stored(it))
        return self

    __ior__ = update

    def union(self, *iterables) -> SortedSet:
        """A new set with the keys of this one and of every iterable."""
        return self.copy().update(*iterables)

    __or__ = union
    __ror__ = union

    def difference_update(self, *iterables) -> SortedSet:
        """Remove the values of every iterable; returns the set."""
        for it in iterables:
            self.discard_many(it)
        return self

    def __isub__(self, other) -> SortedSet:
        return self.difference_update(other)

    def difference(self, *iterables) -> SortedSet:
        """A new set with the keys of this one that are in none of the iterables."""
        return self.copy().difference_update(*iterables)

    __sub__ = difference

    def __rsub__(self, other) -> SortedSet:
        if not isinstance(other, cabc.Iterable):
            return NotImplemented
        if isinstance(other, cabc.Iterator):
            other = list(other)
        s = self._like()
        try:
            s.update(other)
        except (TypeError, ValueError):
            # Values this dtype cannot hold ({2.5} - int_set): the result holds none of this
            # set's keys, so its dtype is the one its own values call for.
            kept = [x for x in other if x not in self]
            return type(self)(kept, pages=self._page_mode, batch_filter=self.batch_filter)
        return s.difference_update(self)

    def _common(self, iterables) -> np.ndarray:
        keys, whole = self.to_numpy(), True  # whole: keys are still all of this set's
        for it in iterables:
            other, _ = self._lookups(it)
            other = unique_sorted(other)
            if len(other) < len(keys):  # walk the shorter side (the tree answers for the whole set)
                keys = other[self._contains_array(other) if whole else np.isin(other, keys)]
            else:
                keys = keys[np.isin(keys, other)]
            whole = False
        return keys

    def intersection(self, *iterables) -> SortedSet:
        """A new set with the keys of this one that are in every iterable."""
        s = self._like()
        s._add_array(self._common(iterables))
        return s

    __and__ = intersection
    __rand__ = intersection

    def intersection_update(self, *iterables) -> SortedSet:
        """Keep only the keys that are in every iterable; returns the set."""
        keys = self._common(iterables)
        if len(keys) != len(self):
            self.clear()
            self._add_array(keys)
        return self

    def __iand__(self, other) -> SortedSet:
        return self.intersection_update(other)

    def symmetric_difference_update(self, other) -> SortedSet:
        """Keep the keys in exactly one of this set and other; returns the set."""
        keys = unique_sorted(self._stored(other))
        present = self._contains_array(keys)
        self._discard_array(keys[present])
        self._add_array(keys[~present])
        return self

    def __ixor__(self, other) -> SortedSet:
        return self.symmetric_difference_update(other)

    def symmetric_difference(self, other) -> SortedSet:
        """A new set with the keys in exactly one of this set and other."""
        return self.copy().symmetric_difference_update(other)

    __xor__ = symmetric_difference
    __rxor__ = symmetric_difference

    def isdisjoint(self, iterable) -> bool:
        """True when no value of iterable is in the set."""
        keys, _ = self._lookups(iterable)
        return not self._contains_array(keys).any()

    def issubset(self, iterable) -> bool:
        """True when every key of the set is in iterable."""
        keys, _ = self._lookups(iterable)
        return int(np.count_nonzero(self._contains_array(unique_sorted(keys)))) == len(self)

    def issuperset(self, iterable) -> bool:
        """True when every value of iterable is in the set."""
        keys, complete = self._lookups(iterable)
        return complete and bool(self._contains_array(keys).all())

    # -- comparisons: as sets, with any collections.abc.Set ---------------------------------

    def __eq__(self, other):
        if isinstance(other, SortedSet) and other._dtype_name == self._dtype_name:
            return len(self) == len(other) and bool(np.array_equal(self.to_numpy(), other.to_numpy()))
        if not isinstance(other, cabc.Set):
            return NotImplemented
        return len(self) == len(other) and self.issuperset(other)

    def __le__(self, other):
        if not isinstance(other, cabc.Set):
            return NotImplemented
        return len(self) <= len(other) and self.issubset(other)

    def __lt__(self, other):
        if not isinstance(other, cabc.Set):
            return NotImplemented
        return len(self) < len(other) and self.issubset(other)

    def __ge__(self, other):
        if not isinstance(other, cabc.Set):
            return NotImplemented
        return len(self) >= len(other) and self.issuperset(other)

    def __gt__(self, other):
        if not isinstance(other, cabc.Set):
            return NotImplemented
        return len(self) > len(other) and self.issuperset(other)


def _rebuild_set(cls, dtype, pages, keys, batch_filter=True):
    s = cls.__new__(cls)
    _native._Set.__init__(s, dtype, pages, batch_filter)
    s._add_array(keys)
    return s


def _items_of(args, kwargs):
    """(keys, values) of dict(*args, **kwargs)'s items, in order, repeats kept (last wins)."""
    if len(args) > 1:
        raise TypeError(f"expected at most 1 positional argument, got {len(args)}")
    keys, values = [], []
    if args:
        src = args[0]
        if isinstance(src, SortedDict):
            keys, values = src._keys_and_values()
        elif hasattr(src, "keys"):
            keys = list(src.keys())
            values = [src[k] for k in keys]
        else:
            for i, item in enumerate(src):
                try:
                    k, v = item
                except TypeError as e:  # not a sequence at all
                    raise TypeError(f"item {i} is not a (key, value) pair: {item!r}") from e
                except ValueError as e:  # a sequence of another length: ValueError, as dict says
                    raise ValueError(f"item {i} is not a (key, value) pair: {item!r}") from e
                keys.append(k)
                values.append(v)
    if kwargs:
        keys = list(chain(keys.tolist() if isinstance(keys, np.ndarray) else keys, kwargs))
        values = values + list(kwargs.values())
    return keys, values


@_shared
class SortedDict(_native._Map):
    """A mapping from numbers to any objects, kept in key order in a B+ tree (a drop-in for
    sortedcontainers.SortedDict with numeric keys and no key function).

    ``SortedDict([None,] [mapping or iterable of pairs], *, dtype=None, pages="auto",
    batch_filter=True, **kw)``: a leading key function must be None; ``dtype`` is inferred from
    the keys when not given; ``pages`` and ``batch_filter`` as for ``SortedSet``.
    ``keys()``, ``values()`` and ``items()`` are live views that also index by position.
    """

    __hash__ = None  # mutable
    __class_getitem__ = classmethod(GenericAlias)

    def __init__(self, *args, dtype=None, pages: str = "auto", batch_filter: bool = True, **kwargs):
        """A dict sorted by key, from a mapping or (key, value) pairs and keyword items, as
        dict() takes them; a leading None (sortedcontainers' key function) is accepted, a key
        function is not. dtype, pages and batch_filter as for SortedSet."""
        if args and (args[0] is None or callable(args[0])):
            if args[0] is not None:
                raise TypeError("simdex SortedDict orders keys by value; key functions are not supported")
            args = args[1:]
        keys, values = _items_of(args, kwargs)
        if dtype is None:
            dtype, keys = _infer_dtype(keys)
        super().__init__(_dtype_name(dtype), _pages(pages), _flag("batch_filter", batch_filter))
        if len(keys):
            self._set_many(self._stored(keys), values)

    def _like(self) -> SortedDict:
        d = type(self).__new__(type(self))
        _native._Map.__init__(d, self._dtype_name, self._page_mode, self.batch_filter)
        return d

    if TYPE_CHECKING:  # native fast-call methods, which the generated stub lists untyped
        def get(self, key: object, default: object = None) -> object: ...
        def pop(self, key: object, default: object = ...) -> object: ...
        def setdefault(self, key: object, default: object = None) -> object: ...
        def popitem(self, index: int = -1) -> tuple[object, object]: ...
        def peekitem(self, index: int = -1) -> tuple[object, object]: ...
        def bisect_left(self, value: object) -> int: ...
        def bisect_right(self, value: object) -> int: ...

    def keys(self) -> SortedKeysView:
        """A live view of the keys: a set, and a sequence in key order."""
        return SortedKeysView(self)

    def values(self) -> SortedValuesView:
        """A live view of the values, in key order (indexable)."""
        return SortedValuesView(self)

    def items(self) -> SortedItemsView:
        """A live view of the (key, value) pairs in key order: a set, and indexable."""
        return SortedItemsView(self)

    def irange_items(self, minimum=None, maximum=None, inclusive=(True, True), reverse=False):
        """Like irange, yielding (key, value) pairs."""
        def read():
            a, b = self._rank_range(minimum, maximum, bool(inclusive[0]), bool(inclusive[1]))
            return self._iter(a, b, bool(reverse), _ITEMS)
        return self._stable(read)

    def update(self, *args, **kwargs) -> None:
        """Set items from a mapping or an iterable of pairs, and from keyword arguments."""
        keys, values = _items_of(args, kwargs)
        if len(keys):
            self._set_many(self._stored(keys), values)

    @classmethod
    def fromkeys(cls, iterable, value=None) -> SortedDict:
        """A new SortedDict with the keys of iterable, each mapped to value."""
        keys = list(iterable)
        return cls(zip(keys, repeat(value)))

    def _keys_and_values(self):
        """Every key (array) and value (list), of one state of the dict."""
        return self._stable(lambda: (self._keys_at(0, len(self)), list(self.values())))

    def copy(self) -> SortedDict:
        """A shallow copy: the same value objects under copies of the keys."""
        d = self._like()
        if len(self):
            d._set_many(*self._keys_and_values())
        return d

    __copy__ = copy

    def __deepcopy__(self, memo) -> SortedDict:
        d = self._like()
        memo[id(self)] = d
        if len(self):
            keys, values = self._keys_and_values()
            d._set_many(keys, _copy.deepcopy(values, memo))
        if getattr(self, "__dict__", None):
            d.__dict__.update(_copy.deepcopy(self.__dict__, memo))
        return d

    def __reduce__(self):
        state = getattr(self, "__dict__", None) or None
        args = (type(self), self._dtype_name, self._page_mode, *self._keys_and_values(), self.batch_filter)
        return (_rebuild_dict, args, state)

    def __eq__(self, other):
        if not isinstance(other, cabc.Mapping):
            return NotImplemented
        if len(self) != len(other):
            return False
        missing = object()
        for k, v in self.items():
            w = other.get(k, missing)
            if w is missing or not (w is v or w == v):
                return False
        return True

    def __or__(self, other):
        return self._merged(other, over=False) if isinstance(other, cabc.Mapping) else NotImplemented

    def __ror__(self, other):
        return self._merged(other, over=True) if isinstance(other, cabc.Mapping) else NotImplemented

    def _merged(self, other, over: bool) -> SortedDict:
        """A copy of this map with other's items added; with `over`, this map's items win
        (``other | self``), else other's do (``self | other``), as for dict."""
        d = self.copy()
        for k, v in other.items():
            if not over or k not in d:
                d[k] = v
        return d

    def __ior__(self, other):
        self.update(other)
        return self

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        body = ", ".join(f"{k!r}: {v!r}" for k, v in self.items())
        dtype = "" if self._dtype_name == "int64" else f", dtype='{self._dtype_name}'"
        return f"{type(self).__name__}({{{body}}}{dtype})"


def _rebuild_dict(cls, dtype, pages, keys, values, batch_filter=True):
    d = cls.__new__(cls)
    _native._Map.__init__(d, dtype, pages, batch_filter)
    if len(keys):
        d._set_many(d._stored(keys), values)
    return d


class _PositionalView:
    """Iteration, reversal and indexing by position for the views of a SortedDict."""

    __slots__ = ()
    _what = _KEYS  # what the native iterator yields

    def _at(self, i):
        return self._mapping._key_at(i)

    def __iter__(self):
        return self._mapping._iter(0, len(self._mapping), False, self._what)

    def __reversed__(self):
        return self._mapping._iter(0, len(self._mapping), True, self._what)

    def __getitem__(self, index):
        n = len(self._mapping)
        if isinstance(index, slice):
            return [self._at(i) for i in range(*index.indices(n))]
        i = operator.index(index)
        if not -n <= i < n:  # before the native call, whose index is a machine integer
            raise IndexError(f"{type(self).__name__} index out of range")
        return self._at(i)

    def __delitem__(self, index):
        """Remove the items at a position or slice of positions, as sortedcontainers' views do."""
        m = self._mapping
        n = len(m)
        if isinstance(index, slice):
            for key in [m._key_at(i) for i in range(*index.indices(n))]:
                del m[key]
            return
        i = operator.index(index)
        if not -n <= i < n:
            raise IndexError(f"{type(self).__name__} index out of range")
        m.popitem(i)


class SortedKeysView(_PositionalView, cabc.KeysView, cabc.Sequence):
    """The keys of a SortedDict: a live set that is also a sequence in key order."""

    __slots__ = ()

    @classmethod
    def _from_iterable(cls, it):
        # Results of set operations: a SortedSet when every element is a number.
        items = list(it)
        try:
            return SortedSet(items)
        except (TypeError, ValueError):
            return set(items)

    def index(self, value, start=None, stop=None) -> int:
        """Position of key value; ValueError if absent or outside [start, stop)."""
        return self._mapping.index(value, start, stop)

    def count(self, value) -> int:
        """1 if value is a key, else 0."""
        return 1 if value in self._mapping else 0

    def __xor__(self, other):
        # Set.__xor__ is (self - other) | (other - self): its first part can be a SortedSet of
        # this dtype, whose | then refuses other's values ({3.0} or -1 with int64 keys).
        if not isinstance(other, cabc.Iterable):
            return NotImplemented
        if not isinstance(other, cabc.Set):
            other = set(other)
        return self._from_iterable(
            chain((k for k in self if k not in other), (v for v in other if v not in self._mapping))
        )

    __rxor__ = __xor__


class SortedValuesView(_PositionalView, cabc.ValuesView, cabc.Sequence):
    """The values of a SortedDict, in key order: a live, indexable sequence."""

    __slots__ = ()
    _what = _VALUES

    def _at(self, i):
        return self._mapping._value_at(i)


class SortedItemsView(_PositionalView, cabc.ItemsView, cabc.Sequence):
    """The (key, value) pairs of a SortedDict in key order: a live set, and indexable."""

    __slots__ = ()
    _what = _ITEMS

    def _at(self, i):
        return self._mapping.peekitem(i)

    @classmethod
    def _from_iterable(cls, it):
        return set(it)

    def index(self, item, start=None, stop=None) -> int:
        """Position of the (key, value) pair item; ValueError if it is not an item (or not a
        pair), or its position is outside [start, stop)."""
        try:
            key, value = item
        except (TypeError, ValueError):  # not a pair: absent, as list.index has it
            raise ValueError(f"{item!r} is not in the items") from None
        pos = self._mapping.index(key, start, stop)
        v = self._mapping._value_at(pos)
        if v is value or v == value:
            return pos
        raise ValueError(f"{item!r} is not in the items")

    def count(self, item) -> int:
        """1 if item is one of the (key, value) pairs, else 0."""
        return 1 if item in self else 0


# Both classes are what their abstract bases promise (their methods are all implemented here
# or natively, so registering adds nothing but isinstance).
cabc.MutableSet.register(SortedSet)
cabc.Sequence.register(SortedSet)
cabc.MutableMapping.register(SortedDict)
