"""Seeded differential fuzzer: simdex's SortedSet / SortedDict against sortedcontainers'.

Each seed picks a dtype and a container, then runs random public calls on both (single and
batched; batches as lists and as numpy arrays of several dtypes, strided, reversed, Fortran
order, read-only; boundary keys and values the dtype cannot hold) and compares every answer
and every exception type. Differences that docs/btree.md documents are not asked: values the
dtype cannot store raise on insert here, NaN has no place in bisect/irange, and changing a
container while iterating raises RuntimeError (checked below as its own rule).
"""

import copy
import math
import operator
import pickle
import random

import numpy as np
import pytest
import sortedcontainers as sc

from simdex.btree import SortedDict, SortedSet

_RANGES = {"int64": (-(2**63), 2**63 - 1), "uint64": (0, 2**64 - 1)}
_SETLIKE = (set, frozenset, sc.SortedSet, SortedSet)
_OPERATORS = {"|": operator.or_, "&": operator.and_, "-": operator.sub, "^": operator.xor, "<=": operator.le, "<": operator.lt,
              ">=": operator.ge, ">": operator.gt, "==": operator.eq, "!=": operator.ne}


class Mismatch(AssertionError):
    pass


def _py(x):
    return x.item() if isinstance(x, np.generic) else x


def _nan(x):
    return isinstance(x, float) and math.isnan(x)


def _same_shape(answer, query):
    """A batched lookup's answer in the query's element order, once its shape is checked
    (an array query's shape is kept, a list's answer is flat)."""
    if isinstance(query, np.ndarray) and answer.shape != query.shape:
        raise Mismatch(f"answer shape {answer.shape} for a query of shape {query.shape}")
    return answer.ravel()


def _storable(dt, x):
    """Whether simdex must accept x as a key of dtype dt."""
    x = _py(x)
    if isinstance(x, bool):
        x = int(x)
    if dt == "float64":
        if isinstance(x, float):
            return not math.isnan(x)
        try:
            return isinstance(x, int) and float(x) == x
        except OverflowError:
            return False
    lo, hi = _RANGES[dt]
    return isinstance(x, int) and lo <= x <= hi


def _pool(dt, rng):
    """(keys to store, extra values: lookups, out of range, other types)."""
    if dt == "int64":
        base = [rng.randrange(-50, 50) for _ in range(20)] + [-(2**63), 2**63 - 1, -(2**63) + 1, 2**63 - 2, 0, -1]
        extra = [2**63, -(2**63) - 1, 2**64 - 1, 2.5, 3.0, -0.0, math.inf, -math.inf, np.int32(7), np.uint64(2**64 - 1), np.float32(2.0), np.int8(-3)]
    elif dt == "uint64":
        base = [rng.randrange(0, 100) for _ in range(20)] + [0, 2**64 - 1, 2**63, 2**63 - 1, 2**64 - 2]
        extra = [-1, 2**64, 2.0, 2.5, math.inf, np.int64(-5), np.uint8(9), np.float64(3.0)]
    else:
        base = [rng.randrange(-50, 50) / rng.choice([1, 2, 3, 4]) for _ in range(20)]
        base += [0.0, -0.0, math.inf, -math.inf, 1e308, -1e308, 5e-324, 2.0**53, 2**53]
        extra = [2**53 + 1, 2**64, math.nan, np.float32(0.5), np.int64(3), np.float16(1.5), 10**400, -(10**400)]
    return base, extra


_ARRAY_DTYPES = {
    "int64": [np.int64, np.int32, np.uint64, np.uint8, np.int16, np.float64, object],
    "uint64": [np.uint64, np.uint32, np.int64, np.float64, object],
    "float64": [np.float64, np.float32, np.int64, np.float16, object],
}


class _Run:
    def __init__(self, seed):
        self.rng = rng = random.Random(seed)
        self.dt = rng.choice(["int64", "uint64", "float64"])
        self.base, extra = _pool(self.dt, rng)
        self.all = self.base + extra
        self.log = []

    def key(self, lookup=False):
        return self.rng.choice(self.all if lookup or self.rng.random() < 0.15 else self.base)

    def lookup_key(self):
        """A value to look up or place (NaN left out: it has no place)."""
        k = self.key(True)
        return None if _nan(_py(k)) else k

    def both(self, name, f, g=None):
        """f(ours) against (g or f)(ref): equal answers, or exceptions of one kind."""
        g = g or f
        res = []
        for fn, c in ((f, self.ours), (g, self.ref)):
            try:
                res.append((fn(c), None))
            except Exception as e:  # any exception is an answer to compare
                res.append((None, e))
        (a, ea), (b, eb) = res
        self.log.append((name, type(ea).__name__ if ea else repr(a)[:60]))
        if (ea is None) != (eb is None):
            raise Mismatch(f"{name}: simdex {a!r} / {ea!r}; sortedcontainers {b!r} / {eb!r}")
        if ea is not None:
            if not (isinstance(ea, type(eb)) or isinstance(eb, type(ea))):
                raise Mismatch(f"{name}: simdex raised {ea!r}; sortedcontainers raised {eb!r}")
            return
        a, b = (x.tolist() if isinstance(x, np.ndarray) else x for x in (a, b))
        if not (a == b):
            raise Mismatch(f"{name}: simdex {a!r}; sortedcontainers {b!r}")

    def array(self, vals):
        """vals as a list, or as a numpy array (when numpy keeps every value) in some layout."""
        rng = self.rng
        if rng.random() < 0.3:
            return list(vals)
        t = rng.choice(_ARRAY_DTYPES[self.dt])
        try:
            with np.errstate(all="ignore"):
                a = np.array(vals, dtype=t)
        except (OverflowError, ValueError, TypeError):
            return list(vals)
        if t is not object and a.tolist() != [_py(v) for v in vals]:  # numpy wrapped or rounded
            return list(vals)
        r = rng.random()
        if r < 0.2 and len(a) > 1:  # every other element of a larger array
            big = np.zeros(len(a) * 2, dtype=a.dtype)
            big[::2] = a
            a = big[::2]
        elif r < 0.35:
            a = a[::-1].copy()[::-1]
        elif r < 0.45 and len(a) and len(a) % 2 == 0:
            a = np.asfortranarray(a.reshape(2, -1, order="F"))
        if rng.random() < 0.2:
            a.flags.writeable = False
        return a

    @staticmethod
    def values_of(a):
        return [_py(x) for x in (a.ravel().tolist() if isinstance(a, np.ndarray) else a)]

    def must_refuse(self, name, f):
        n = len(self.ours)
        try:
            f()
        except (ValueError, TypeError):
            if len(self.ours) != n:
                raise Mismatch(f"{name}: refused, but the size changed") from None
        else:
            raise Mismatch(f"{name}: accepted a value {self.dt} cannot hold")

    def iterate_while_adding(self, it, setitem):
        """The documented rule: an iterator lives through an add of a present key and raises
        RuntimeError at its next step after a new key went in."""
        next(it, None)
        k = self.key()
        if not _storable(self.dt, k):
            return
        present = _py(k) in self.ref
        setitem(k)
        try:
            list(it)
        except RuntimeError:
            if present:
                raise Mismatch(f"iterator died after re-adding present key {k!r}") from None
        else:
            if not present:
                raise Mismatch(f"iterator lived on after adding new key {k!r}")


def _set_step(r, op):
    rng, dt, n = r.rng, r.dt, len(r.ref)
    both = r.both
    if op < 8:
        k = r.key()
        if _storable(dt, k):
            both("add", lambda s: s.add(k), lambda s: s.add(_py(k)))
        else:
            r.must_refuse(f"add({k!r})", lambda: r.ours.add(k))
    elif op < 13:
        k = r.lookup_key()
        if k is None:
            return
        for name in ("discard", "remove", "__contains__", "index", "count", "bisect_left", "bisect_right"):
            both(name, lambda s: getattr(s, name)(k), lambda s: getattr(s, name)(_py(k)))
    elif op < 17:
        i = rng.randrange(-n - 2, n + 2)
        both("getitem", lambda s: s[i])
        both("pop", lambda s: s.pop(i))
        both("pop()", lambda s: s.pop())
    elif op < 22:
        sl = slice(rng.choice([None, rng.randrange(-n - 2, n + 3)]), rng.choice([None, rng.randrange(-n - 2, n + 3)]), rng.choice([None, 1, 2, -1, -3, 5]))
        at = sl if rng.random() < 0.5 else rng.randrange(-n - 2, n + 2)
        both("getslice", lambda s: s[sl])
        both("delitem", lambda s: s.__delitem__(at))
    elif op < 25:
        lo, hi = (rng.choice([None, r.lookup_key()]) for _ in range(2))
        inc, rev = (rng.random() < 0.5, rng.random() < 0.5), rng.random() < 0.5
        both("irange", lambda s: list(s.irange(lo, hi, inc, rev)), lambda s: list(s.irange(_py(lo), _py(hi), inc, rev)))
        a, b = (rng.choice([None, rng.randrange(-n - 2, n + 3)]) for _ in range(2))
        both("islice", lambda s: list(s.islice(a, b, rev)))
        both("reversed", lambda s: list(reversed(s)))
    elif op < 31:
        arr = r.array([r.key() for _ in range(rng.randrange(0, 12))])
        vals = r.values_of(arr)
        if all(_storable(dt, v) for v in vals):
            before = len(r.ref)
            both("add_many", lambda s: s.add_many(arr), lambda s: (s.update(vals), len(s) - before)[1])
        else:
            r.must_refuse(f"add_many({arr!r})", lambda: r.ours.add_many(arr))
    elif op < 38:
        arr = r.array([r.key(rng.random() < 0.3) for _ in range(rng.randrange(0, 12))])
        vals = r.values_of(arr)
        both("contains_many", lambda s: _same_shape(s.contains_many(arr), arr), lambda s: [not _nan(v) and v in s for v in vals])
        if not any(_nan(v) for v in vals):
            side = rng.choice(["left", "right"])
            both("bisect_many", lambda s: _same_shape(s.bisect_many(arr, side), arr), lambda s: [getattr(s, "bisect_" + side)(v) for v in vals])
        if op < 34:

            def discard_each(s):
                gone = [v for v in vals if not _nan(v) and v in s]
                s.difference_update(gone)
                return len(set(gone))

            both("discard_many", lambda s: s.discard_many(arr), discard_each)
    elif op < 46:
        vals = [r.lookup_key() for _ in range(rng.randrange(0, 10))]
        vals = [_py(v) for v in vals if v is not None]
        kind = rng.choice([set, list, tuple, sc.SortedSet, frozenset, "ours"])
        other = SortedSet([v for v in vals if _storable(dt, v)], dtype=dt) if kind == "ours" else kind(vals)
        ref_other = set(other) if kind == "ours" else other
        name = rng.choice(
            "union intersection difference symmetric_difference update intersection_update difference_update "
            "symmetric_difference_update isdisjoint issubset issuperset | & - ^ r- r| r& r^ <= < >= > == !=".split()
        )
        inserts = name in ("union", "update", "symmetric_difference", "symmetric_difference_update", "|", "^", "r|", "r^", "r-")
        if inserts and not all(_storable(dt, v) for v in vals):
            return  # inserting what the dtype cannot hold raises by design
        if name[-1] in "|&-^<>=" and not isinstance(other, _SETLIKE):
            return

        def norm(x):
            return sorted(x) if isinstance(x, _SETLIKE) else x

        def apply(s, o):  # operators through Python's dispatch (reflected ones too)
            if name.startswith("r") and len(name) == 2:
                return _OPERATORS[name[1]](o, s)
            if name in _OPERATORS:
                return _OPERATORS[name](s, o)
            return getattr(s, name)(o)

        both(name, lambda s: norm(apply(s, other)), lambda s: norm(apply(s, ref_other)))
    elif op < 50:
        how = rng.choice([lambda x: x.copy(), lambda x: pickle.loads(pickle.dumps(x)), copy.deepcopy, copy.copy])
        got = how(r.ours)
        if list(got) != list(r.ref) or type(got) is not type(r.ours) or got.dtype != r.ours.dtype or got != r.ours:
            raise Mismatch(f"copy: {got!r} of {r.ours!r}")
    elif op < 53:
        r.iterate_while_adding(iter(r.ours), lambda k: (r.ours.add(k), r.ref.add(_py(k))))
    elif op < 54:
        both("clear", lambda s: s.clear())
    else:
        both("list", list)
        both("ends", lambda s: (s[0], s[-1]) if len(s) else None)


def _dict_step(r, op):
    rng, dt, n = r.rng, r.dt, len(r.ref)
    both = r.both
    if op < 10:
        k, v = r.key(), rng.randrange(1000)
        if _storable(dt, k):
            both("setitem", lambda d: d.__setitem__(k, v), lambda d: d.__setitem__(_py(k), v))
            both("setdefault", lambda d: d.setdefault(k, -v), lambda d: d.setdefault(_py(k), -v))
        else:
            r.must_refuse(f"d[{k!r}] = v", lambda: r.ours.__setitem__(k, v))
    elif op < 17:
        k = r.lookup_key()
        if k is None:
            return
        for name, args in (("__getitem__", ()), ("get", ("d",)), ("__contains__", ()), ("index", ()), ("bisect", ()), ("pop", ("d",))):
            both(name, lambda d: getattr(d, name)(k, *args), lambda d: getattr(d, name)(_py(k), *args))
        both("delitem", lambda d: d.__delitem__(k), lambda d: d.__delitem__(_py(k)))
        both("pop", lambda d: d.pop(k), lambda d: d.pop(_py(k)))
    elif op < 20:
        i = rng.randrange(-n - 2, n + 2)
        both("peekitem", lambda d: d.peekitem(i))
        both("popitem", lambda d: d.popitem(i))
        both("popitem()", lambda d: d.popitem())
    elif op < 26:
        items = [(r.key(), rng.randrange(1000)) for _ in range(rng.choice([0, 3, 10, 70, 150]))]
        if not all(_storable(dt, k) for k, _ in items):
            return
        src = items if rng.random() < 0.5 else dict(items)
        ref_src = [(_py(k), v) for k, v in items] if isinstance(src, list) else {_py(k): v for k, v in items}
        both("update", lambda d: d.update(src), lambda d: d.update(ref_src))
        both("items", lambda d: list(d.items()))
    elif op < 34:
        view = rng.choice(["keys", "values", "items"])
        i = rng.randrange(-n - 2, n + 2)
        sl = slice(rng.choice([None, rng.randrange(-n - 2, n + 3)]), rng.choice([None, rng.randrange(-n - 2, n + 3)]), rng.choice([None, 1, 2, -1, -3]))
        both(view + "[i]", lambda d: getattr(d, view)()[i])
        both(view + "[sl]", lambda d: list(getattr(d, view)()[sl]))
        both(view, lambda d: (list(getattr(d, view)()), list(reversed(getattr(d, view)())), len(getattr(d, view)())))
        if rng.random() < 0.2:
            at = sl if rng.random() < 0.5 else i
            both("del " + view, lambda d: getattr(d, view)().__delitem__(at))
        if view == "values":
            v = rng.randrange(1000)
            both("values in/index/count", lambda d: (v in d.values(), d.values().count(v)))
            both("values index", lambda d: d.values().index(v))
            return
        vals = [_py(x) for x in (r.lookup_key() for _ in range(4)) if x is not None]
        if view == "items":
            vals = [(x, rng.randrange(1000)) for x in vals] + list(r.ref.items())[:2]
        other = set(vals)

        def norm(x):  # sets of equal numbers (2 and 2.0, -0.0 and 0.0) are equal
            return frozenset(x) if isinstance(x, (set, frozenset, SortedSet)) else x

        for name in ("__and__", "__or__", "__sub__", "__xor__", "__rand__", "__ror__", "__rsub__", "__rxor__", "__le__", "__eq__", "isdisjoint"):
            both(view + name, lambda d: norm(getattr(getattr(d, view)(), name)(other)))
        if vals:
            x = vals[0]
            both(view + " in/count", lambda d: (x in getattr(d, view)(), getattr(d, view)().count(x)))
            both(view + " index", lambda d: getattr(d, view)().index(x))
    elif op < 38:
        lo, hi = (rng.choice([None, r.lookup_key()]) for _ in range(2))
        inc, rev = (rng.random() < 0.5, rng.random() < 0.5), rng.random() < 0.5
        both("irange", lambda d: list(d.irange(lo, hi, inc, rev)), lambda d: list(d.irange(_py(lo), _py(hi), inc, rev)))
        a, b = (rng.choice([None, rng.randrange(-n - 2, n + 3)]) for _ in range(2))
        both("islice", lambda d: list(d.islice(a, b, rev)))
        if lo is not None:
            both("bisect_left", lambda d: d.bisect_left(lo), lambda d: d.bisect_left(_py(lo)))
            both("bisect_right", lambda d: d.bisect_right(lo), lambda d: d.bisect_right(_py(lo)))
    elif op < 42:
        how = rng.choice([lambda x: x.copy(), lambda x: pickle.loads(pickle.dumps(x)), copy.deepcopy, copy.copy])
        got = how(r.ours)
        if list(got.items()) != list(r.ref.items()) or type(got) is not type(r.ours) or got.dtype != r.ours.dtype:
            raise Mismatch(f"copy: {got!r} of {r.ours!r}")
        if not (got == r.ours and got == r.ref and r.ref == got):
            raise Mismatch("copy compares unequal")
    elif op < 45:
        items = {_py(k): rng.randrange(1000) for k in [r.key() for _ in range(rng.randrange(0, 6))]}
        if not all(_storable(dt, k) for k in items):
            return
        both("|", lambda d: list((d | items).items()))
        both("r|", lambda d: list((items | d).items()))
        both("|=", lambda d: d.__ior__(items) and None)
    elif op < 47:
        r.iterate_while_adding(iter(r.ours.items()), lambda k: (r.ours.__setitem__(k, 1), r.ref.__setitem__(_py(k), 1)))
    elif op < 48:
        both("clear", lambda d: d.clear())
    elif op < 53:
        arr = r.array([r.key(rng.random() < 0.3) for _ in range(rng.randrange(0, 12))])
        vals = r.values_of(arr)
        both("contains_many", lambda d: _same_shape(d.contains_many(arr), arr), lambda d: [not _nan(v) and v in d for v in vals])
        if not any(_nan(v) for v in vals):
            side = rng.choice(["left", "right"])
            both("bisect_many", lambda d: _same_shape(d.bisect_many(arr, side), arr), lambda d: [getattr(d, "bisect_" + side)(v) for v in vals])
    else:
        both("items", lambda d: list(d.items()))
        both("as dict", dict)


def run(seed, steps):
    r = _Run(seed)
    kind = r.rng.choice(["set", "dict"])
    init = r.rng.sample(r.base, r.rng.randrange(0, len(r.base)))
    if kind == "set":
        r.ours, r.ref, step = SortedSet(init, dtype=r.dt), sc.SortedSet(_py(k) for k in init), _set_step
    else:
        r.ours = SortedDict({k: i for i, k in enumerate(init)}, dtype=r.dt)
        r.ref, step = sc.SortedDict({_py(k): i for i, k in enumerate(init)}), _dict_step
    for i in range(steps):
        try:
            step(r, r.rng.randrange(56))
            if len(r.ours) != len(r.ref) or (i % 10 == 0 and list(r.ours) != list(r.ref)):
                raise Mismatch(f"contents: {list(r.ours)!r} against {list(r.ref)!r}")
        except Mismatch as e:
            raise Mismatch(f"seed {seed} ({kind}, {r.dt}) step {i}: {e}\n  last calls: {r.log[-4:]}") from None
    r.ours.validate()
    assert list(r.ours) == list(r.ref)


@pytest.mark.parametrize("first", range(0, 240, 40))
def test_differential_fuzz(first):
    for seed in range(first, first + 40):
        run(seed, 150)
