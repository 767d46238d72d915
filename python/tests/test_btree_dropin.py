"""SortedSet / SortedDict as drop-ins for sortedcontainers' classes with numeric keys: every
behaviour here is checked against sortedcontainers itself or a plain Python reference."""

import collections.abc as cabc
import copy
import gc
import os
import pickle
import pydoc
import random
import subprocess
import sys
import weakref

import numpy as np
import pytest
import sortedcontainers as sc

from simdex.btree import SortedDict, SortedSet

# ---- set algebra ---------------------------------------------------------------------------


def _pairs():
    rng = random.Random(3)
    for _ in range(20):
        a = [rng.randrange(-50, 50) for _ in range(rng.randrange(0, 60))]
        b = [rng.randrange(-50, 50) for _ in range(rng.randrange(0, 60))]
        yield a, b


def test_set_algebra_methods_and_operators():
    for a, b in _pairs():
        s, ref, other = SortedSet(a), sc.SortedSet(a), set(b)
        for name in ("union", "intersection", "difference", "symmetric_difference"):
            got = getattr(s, name)(b)
            assert isinstance(got, SortedSet) and list(got) == list(getattr(ref, name)(b))
            got.validate()
        assert list(s | other) == sorted(set(a) | other)
        assert list(s & other) == sorted(set(a) & other)
        assert list(s - other) == sorted(set(a) - other)
        assert list(s ^ other) == sorted(set(a) ^ other)
        assert list(other | s) == sorted(set(a) | other)  # reflected
        assert list(other - s) == sorted(other - set(a))
        assert s.issubset(b) == set(a).issubset(b) and s.issuperset(b) == set(a).issuperset(b)
        assert (s < other) == (set(a) < other) and (s <= other) == (set(a) <= other)
        assert (s > other) == (set(a) > other) and (s >= other) == (set(a) >= other)
        assert s.isdisjoint(b) == set(a).isdisjoint(b)
        assert list(s) == sorted(set(a))  # none of the above changed s


def test_set_algebra_in_place_and_many_arguments():
    s = SortedSet(range(10))
    s |= [20, 21]
    s -= range(0, 3)
    s &= range(2, 21)
    s ^= {5, 100}
    assert list(s) == [3, 4, 6, 7, 8, 9, 20, 100]
    t = SortedSet([1])
    assert t.update(range(3), [10, 11], iter([40])) is t and list(t) == [0, 1, 2, 10, 11, 40]
    assert list(t.union([5], (6,), {7})) == [0, 1, 2, 5, 6, 7, 10, 11, 40]
    assert list(t.intersection(range(20), [0, 10, 99])) == [0, 10]
    assert list(t.difference([0], range(10, 12))) == [1, 2, 40]
    assert list(t.difference_update([0], [40])) == [1, 2, 10, 11]
    assert list(t.intersection_update([1, 2, 3], range(2, 5))) == [2]
    # A later, shorter iterable is intersected with the keys kept so far, not with the set.
    u = SortedSet(range(1, 11))
    assert list(u.intersection([1, 2, 3, 4, 5, 6], [7, 8])) == [] == sorted(set(u).intersection([1, 2, 3, 4, 5, 6], [7, 8]))
    assert list(u.intersection(range(1, 9), [7, 8, 99], [8])) == [8]
    assert list(u.intersection_update([1, 2, 3, 4, 5, 6], [7, 8])) == []


def test_set_algebra_with_values_that_are_not_keys():
    s = SortedSet([1, 2, 3])
    assert list(s - ["x", None, 2.5, 2**70, 2]) == [1, 3]
    assert list(s & [2.0, "x", 3]) == [2, 3]
    assert s.isdisjoint(["x", 2.5]) and not s.issuperset([1, "x"]) and s.issubset([1, 2, 3, "x"])
    with pytest.raises(TypeError):
        s | ["x"]
    with pytest.raises(ValueError):
        s | [2**64]
    with pytest.raises(TypeError):
        s | 5
    assert list({2.5, 1} - SortedSet([1, 2])) == [2.5] and list(iter([2.5, 1, 3]) - s) == [2.5]
    assert (SortedSet([1, 2]).__rsub__([3, 1])).dtype == np.int64
    # numpy object arrays (pandas columns, big ints) go in value by value, as lists do.
    o = np.array([3, 1, 2], dtype=object)
    assert list(SortedSet(o)) == [1, 2, 3] and SortedSet([0]).add_many(o) == 3
    assert list(SortedSet([0]).update(o)) == [0, 1, 2, 3] and list(SortedSet([0]) ^ o) == [0, 1, 2, 3]
    assert SortedSet(np.array([2**63], dtype=object)).dtype == np.uint64
    with pytest.raises(TypeError):
        SortedSet([1]).update(np.array(["x"], dtype=object))


# ---- positions: del, islice, irange, bisect ------------------------------------------------


def test_delitem_and_slices_match_a_list():
    rng = random.Random(4)
    for _ in range(200):
        keys = sorted(set(rng.randrange(0, 300) for _ in range(rng.randrange(1, 80))))
        s, ref = SortedSet(keys), list(keys)
        start, stop = rng.randrange(-100, 100), rng.randrange(-100, 100)
        step = rng.choice([1, 1, 2, 3, -1, -2, None])
        sl = slice(start, stop, step)
        assert s[sl] == ref[sl]
        del s[sl]
        del ref[sl]
        assert list(s) == ref
        s.validate()
        if ref:
            i = rng.randrange(-len(ref), len(ref))
            del s[i]
            del ref[i]
            assert list(s) == ref
    with pytest.raises(IndexError):
        del SortedSet([1])[1]
    with pytest.raises(TypeError):
        SortedSet([1])[0] = 5


def test_islice_irange_bisect_match_sortedcontainers():
    rng = random.Random(5)
    keys = [rng.randrange(-1000, 1000) for _ in range(500)]
    s, ref = SortedSet(keys), sc.SortedSet(keys)
    for _ in range(300):
        a, b = rng.randrange(-600, 600), rng.randrange(-600, 600)
        rev = rng.random() < 0.5
        assert list(s.islice(a, b, rev)) == list(ref.islice(a, b, rev))
        lo, hi = rng.uniform(-1100, 1100), rng.randrange(-1100, 1100)
        inc = (rng.random() < 0.5, rng.random() < 0.5)
        assert list(s.irange(lo, hi, inc, rev)) == list(ref.irange(lo, hi, inc, rev))
        assert list(s.irange(None, hi)) == list(ref.irange(None, hi))
        assert list(s.irange(lo)) == list(ref.irange(lo))
        for x in (lo, hi, 2.5, -0.5, 10**30, -(10**30)):
            assert s.bisect_left(x) == ref.bisect_left(x)
            assert s.bisect_right(x) == ref.bisect_right(x) == s.bisect(x)
    assert SortedSet([1, 2, 3]).bisect_left(2.5) == sc.SortedSet([1, 2, 3]).bisect_left(2.5) == 2
    with pytest.raises(TypeError):
        s.bisect_left(None)
    with pytest.raises(ValueError):
        s.bisect_left(float("nan"))
    assert s.index(ref[10]) == 10
    with pytest.raises(ValueError):
        s.index(ref[10], 11)
    assert s.count(ref[0]) == 1 and s.count(5000) == 0


def test_bisect_many_matches_bisect_for_any_dtype():
    s = SortedSet([1, 5, 9, 2**40])
    for q in (np.array([0, 1, 2, 9, 10]), np.array([0.5, 1.0, 8.99, 2.0**40]), np.array([3], dtype=np.uint8)):
        for side in ("left", "right"):
            one = s.bisect_left if side == "left" else s.bisect_right
            assert s.bisect_many(q, side=side).tolist() == [one(x) for x in q.tolist()]


def test_batched_lookups_keep_the_shape_of_an_array():
    """contains_many flattened a 2-D array (so mask[i, j] did not exist), as numpy.isin and
    numpy.searchsorted do not; bisect_many did the same."""
    s = SortedSet([1, 5, 9, 2**40])
    q = np.array([[0, 1, 5], [9, 2**40, 7]])
    for arr in (q, q.astype(np.float64), q.astype(object), q.T):  # object: the slow path
        assert s.contains_many(arr).tolist() == np.isin(arr.astype(np.int64), [1, 5, 9, 2**40]).tolist()
        for side in ("left", "right"):
            want = np.searchsorted([1, 5, 9, 2**40], arr.astype(np.int64), side=side)
            assert s.bisect_many(arr, side=side).tolist() == want.tolist()
    assert s.contains_many(np.array(5)).shape == () and bool(s.contains_many(np.array(5)))
    assert s.contains_many(np.empty((0, 3), dtype=np.int64)).shape == (0, 3)
    assert s.bisect_many(5).tolist() == [1]  # one number: a 1-element answer, as before
    d = SortedDict({1: "a", 3: "b"})
    assert d.contains_many(np.array([[1], [2]])).tolist() == [[True], [False]]


# ---- lookups by value: never an exception for a value that cannot be a key ---------------


def test_lookups_of_values_that_cannot_be_keys():
    s = SortedSet([1, 2, 3])
    for x in (2**63, 2**64, -(2**63) - 1, 2.5, None, "x", (1,), float("nan"), float("inf"), 1j):
        assert x not in s
    assert 2.0 in s and True in s and np.int32(3) in s and np.float32(2) in s
    u = SortedSet([0, 2**64 - 1], dtype="uint64")
    assert 2**64 - 1 in u and -1 not in u and 2**64 not in u
    d = SortedDict({1: "a"})
    assert d.get("x") is None and d.get(None, 5) == 5 and d.get(2**70) is None
    assert "x" not in d and d.get(1.0) == "a"
    assert d.pop("x", 7) == 7
    with pytest.raises(KeyError):
        d["x"]
    with pytest.raises(KeyError):
        del d[2**64]
    f = SortedSet([0.5, -0.0], dtype="float64")
    assert 0 in f and 0.0 in f and -0.0 in f and 2**64 not in f and "x" not in f
    assert list(f) == [0.0, 0.5]  # -0.0 and 0.0 are one key, as in a Python set
    assert f.contains_many(np.array([-0.0, 0.5, np.nan])).tolist() == [True, True, False]
    assert s.contains_many([1, "x", None, 2.0, 2**70]).tolist() == [True, False, False, True, False]
    assert s.contains_many(np.array([1.0, 1.5, 3.0])).tolist() == [True, False, True]


def test_inserting_what_cannot_be_stored_raises_a_clear_error():
    s = SortedSet()
    for bad, err in ((2**63, ValueError), (-(2**63) - 1, ValueError), (2.5, TypeError), (None, TypeError), ("x", TypeError)):
        with pytest.raises(err) as e:
            s.add(bad)
        assert "incompatible function arguments" not in str(e.value)
    with pytest.raises(ValueError, match="out of range for uint64"):
        SortedSet(dtype="uint64").add(-1)
    with pytest.raises(ValueError, match="position 2"):
        s.add_many([1, 2, 2**63])
    with pytest.raises(ValueError, match="position 1"):
        s.add_many(np.array([1, 2**63], dtype=np.uint64))
    with pytest.raises(ValueError, match="NaN"):
        SortedSet(dtype="float64").add(float("nan"))
    with pytest.raises(ValueError, match="exactly"):
        SortedSet(dtype="float64").add(2**53 + 1)
    with pytest.raises(ValueError, match="out of range"):
        SortedDict()[2**64] = 1
    assert len(s) == 0


def test_dtype_from_the_keys():
    assert SortedSet([1, 2**63], dtype="uint64").to_numpy().tolist() == [1, 2**63]
    assert SortedSet([1, 2**63]).dtype == np.uint64
    assert SortedSet([1, 2.5]).dtype == np.float64
    assert SortedSet([1, 2]).dtype == np.int64 and SortedSet().dtype == np.int64
    # No 64-bit integer dtype holds both a negative key and one above 2**63 - 1: said as such,
    # naming both keys (it read "key -1 out of range for uint64", as if -1 were the mistake).
    for keys in ([-1, 2**63], [2**63, 5, -7], list(range(100)) + [-1, 2**64 - 1]):
        with pytest.raises(ValueError, match="no 64-bit integer dtype in common"):
            SortedSet(keys)
    with pytest.raises(ValueError, match=r"keys -1 \(position 0\) and 9223372036854775808 \(position 1\)"):
        SortedDict({-1: "a", 2**63: "b"})
    assert SortedSet(np.array([1, 2], dtype=np.uint64)).dtype == np.uint64
    assert SortedSet(x for x in (3, 1)).dtype == np.int64
    assert SortedDict({2**64 - 1: 1}).dtype == np.uint64 and SortedDict({0.5: 1}).dtype == np.float64
    with pytest.raises(TypeError):
        SortedSet([1], key=lambda x: -x)
    with pytest.raises(TypeError):
        SortedDict(lambda x: -x, {1: 2})


# ---- SortedDict ----------------------------------------------------------------------------


def test_dict_methods_match_sortedcontainers():
    rng = random.Random(6)
    items = [(rng.randrange(-100, 100), rng.random()) for _ in range(150)]
    d, ref = SortedDict(items), sc.SortedDict(items)
    assert list(d.items()) == list(ref.items()) and d == ref and ref == d
    assert SortedDict(None, items[:5]) == sc.SortedDict(None, items[:5])
    assert d.popitem() == ref.popitem() and d.popitem(0) == ref.popitem(0)
    assert d.peekitem(3) == ref.peekitem(3) and d.peekitem() == ref.peekitem()
    k = ref.peekitem(5)[0]
    assert d.index(k) == ref.index(k) and d.bisect(k) == ref.bisect(k)
    assert d.setdefault(k, 0) == ref.setdefault(k, 0) and d.setdefault(1000, 0) == ref.setdefault(1000, 0)
    assert d.pop(k) == ref.pop(k) and d.pop(k, "gone") == "gone"
    assert list(d.irange(-10, 10)) == list(ref.irange(-10, 10))
    assert list(d.islice(2, 9, reverse=True)) == list(ref.islice(2, 9, reverse=True))
    d.update({1: "a"})
    ref.update({1: "a"})
    d.update([(2, "b"), (2, "c")])
    ref.update([(2, "b"), (2, "c")])
    assert d == ref and list(d) == list(ref) and list(reversed(d)) == list(reversed(ref))
    with pytest.raises(KeyError):
        SortedDict().popitem()
    with pytest.raises(IndexError):
        SortedDict({1: 1}).peekitem(5)
    d.validate()


def test_fromkeys_copy_and_union():
    d = SortedDict.fromkeys([3, 1, 2], "v")
    assert list(d.items()) == [(1, "v"), (2, "v"), (3, "v")] and type(d) is SortedDict
    value = ["shared"]
    a = SortedDict({1: value})
    b = a.copy()
    assert b == a and b[1] is value and type(b) is SortedDict
    b[2] = 0
    del b[1]
    assert list(a) == [1] and list(b) == [2]
    assert list((a | {0: 0}).items()) == [(0, 0), (1, value)]
    assert list(({0: 0, 1: "old"} | a).items()) == [(0, 0), (1, value)]
    a |= {5: 5}
    assert list(a) == [1, 5]
    assert SortedDict.__or__(a, 5) is NotImplemented


def test_views_are_live_indexable_and_set_like():
    d = SortedDict({i: str(i) for i in range(10)})
    keys, values, items = d.keys(), d.values(), d.items()
    assert len(keys) == len(values) == len(items) == 10
    assert keys[0] == 0 and keys[-1] == 9 and keys[2:5] == [2, 3, 4]
    assert values[1] == "1" and values[-2:] == ["8", "9"]
    assert items[0] == (0, "0") and items[8:] == [(8, "8"), (9, "9")]
    assert list(reversed(keys)) == list(range(9, -1, -1)) and list(reversed(values))[0] == "9"
    assert keys.index(4) == 4 and values.index("4") == 4 and items.index((4, "4")) == 4
    assert keys.count(4) == 1 and keys.count("x") == 0 and values.count("3") == 1
    with pytest.raises(ValueError):
        items.index((4, "x"))
    d[10] = "10"  # views follow the dict
    assert len(keys) == 11 and keys[-1] == 10 and (10, "10") in items and "10" in values
    assert list(keys) == list(keys)  # reusable
    plain = dict(d)
    assert keys == plain.keys() and items == plain.items() and keys <= plain.keys() and not keys < plain.keys()
    assert list(keys & {1, 2, 99}) == [1, 2] and list(keys - set(range(1, 11))) == [0]
    assert keys | {"x"} == set(range(11)) | {"x"}
    assert keys.isdisjoint([-1]) and not items.isdisjoint([(1, "1")])
    assert repr(SortedDict({1: 2}).keys()) == "SortedKeysView(SortedDict({1: 2}))"
    for view in (keys, values, items):  # past any machine index: IndexError, as for lists
        with pytest.raises(IndexError):
            view[2**70]
        with pytest.raises(IndexError):
            view[-12]


def test_bad_pairs_raise_as_dict_does():
    for cls in (dict, sc.SortedDict, SortedDict):
        with pytest.raises(ValueError):  # a sequence of another length
            cls([(1, 2), (3,)])
        with pytest.raises(TypeError):  # not a sequence
            cls([(1, 2), 5])


def test_calls_that_change_nothing_keep_iterators():
    # As sortedcontainers: an iterator lives on through updates that add or remove no key (and
    # a dict's update of present keys), in batches as in single calls; a real change stops it.
    rng = np.random.default_rng(4)
    keys = rng.permutation(200_000)
    s = SortedSet()
    for k in keys[:20_000].tolist():  # single inserts: pages not in their built layout
        s.add(k)
    s.add_many(keys[20_000:])
    it = iter(s)
    assert [next(it) for _ in range(5)] == [0, 1, 2, 3, 4]
    s.update(keys[::3])  # all present, in one batch
    s.update([])
    s.difference_update(keys[:1000] + 10**9)  # all absent
    s.discard_many(np.arange(-500, 0))
    s.add(7)
    assert [next(it) for _ in range(3)] == [5, 6, 7]
    assert list(it) == list(range(8, 200_000))
    it = iter(s)
    s.update([10**9])
    with pytest.raises(RuntimeError):
        next(it)
    d = SortedDict({i: i for i in range(5000)})
    it = iter(d)
    next(it)
    d.update({i: -i for i in range(0, 5000, 2)})  # present keys, new values, one batch
    d.update({3: "x"})
    assert next(it) == 1 and d[4] == -4 and d[3] == "x"
    d.update({10**6: 0})
    with pytest.raises(RuntimeError):
        next(it)


# ---- protocols: abc, weakref, pickle, copy, subclassing, equality, repr, help ---------------


def test_abc_registration():
    s, d = SortedSet([1]), SortedDict({1: 2})
    assert isinstance(s, cabc.Set) and isinstance(s, cabc.MutableSet) and isinstance(s, cabc.Sequence)
    assert isinstance(d, cabc.Mapping) and isinstance(d, cabc.MutableMapping)
    assert isinstance(d.keys(), cabc.KeysView) and isinstance(d.items(), cabc.ItemsView)
    with pytest.raises(TypeError):
        hash(s)


def test_weakref_pickle_copy_deepcopy():
    for obj in (SortedSet([3, 1, 2]), SortedSet([0.5], dtype="float64", pages="4k"), SortedDict({1: [1], 2: "b"})):
        r = weakref.ref(obj)
        assert r() is obj
        for clone in (pickle.loads(pickle.dumps(obj)), copy.copy(obj), copy.deepcopy(obj), obj.copy()):
            assert clone == obj and clone is not obj and type(clone) is type(obj)
            assert clone.dtype == obj.dtype and clone.pages == obj.pages
            clone.validate()
    d = SortedDict({1: [1]})
    assert copy.copy(d)[1] is d[1] and copy.deepcopy(d)[1] is not d[1]
    d[2] = d
    dd = copy.deepcopy(d)
    assert dd[2] is dd
    del d, dd
    r = weakref.ref(SortedSet([1]))
    gc.collect()
    assert r() is None


class Tagged(SortedSet):
    pass


class TaggedDict(SortedDict):
    def __init__(self, *args, tag="t", **kwargs):
        super().__init__(*args, **kwargs)
        self.tag = tag


def test_subclassing():
    s = Tagged([2, 1])
    assert list(s) == [1, 2] and repr(s) == "Tagged([1, 2])"
    assert type(s | {3}) is Tagged and type(s.copy()) is Tagged
    s.note = "kept"
    t = pickle.loads(pickle.dumps(s))
    assert type(t) is Tagged and t.note == "kept" and t == s
    d = TaggedDict({1: 2}, tag="x")
    assert d.tag == "x" and copy.deepcopy(d).tag == "x" and pickle.loads(pickle.dumps(d)).tag == "x"
    assert repr(d) == "TaggedDict({1: 2})"


def test_equality_with_sortedcontainers_sets_and_lists():
    keys = [5, 1, 3]
    s, ref = SortedSet(keys), sc.SortedSet(keys)
    assert s == ref and ref == s and not (s != ref) and s == set(keys) and set(keys) == s
    assert s == frozenset(keys) and s != {1} and s != SortedSet([1, 3, 6])
    assert (s == [1, 3, 5]) == (ref == [1, 3, 5]) and (s != [1, 3, 5]) == (ref != [1, 3, 5])
    assert s == SortedSet([1.0, 3.0, 5.0], dtype="float64")
    assert SortedDict({1: "a"}) == sc.SortedDict({1: "a"}) == {1: "a"} and SortedDict({1: "a"}) != {1: "b"}
    assert (SortedDict({1: "a"}) == [(1, "a")]) is False


def test_repr_is_plain_numbers():
    assert repr(SortedSet(np.array([3, 1], dtype=np.int64))) == "SortedSet([1, 3])"
    assert repr(SortedSet(np.array([1.5]))) == "SortedSet([1.5], dtype='float64')"
    assert repr(SortedSet([2**64 - 1])) == "SortedSet([18446744073709551615], dtype='uint64')"
    assert repr(SortedDict({np.int64(2): "v"})) == "SortedDict({2: 'v'})"
    assert repr(SortedSet()) == "SortedSet([])"
    d = SortedDict({1: None})
    d[2] = d
    assert repr(d) == "SortedDict({1: None, 2: ...})"


@pytest.mark.parametrize("cls, peer", [(SortedSet, sc.SortedSet), (SortedDict, sc.SortedDict)])
def test_help_shows_every_public_method_with_a_docstring(cls, peer):
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    assert "[int64]" not in text
    public = [n for n in dir(cls) if not n.startswith("_")]
    for name in public:
        assert name in text, name
        attr = getattr(cls, name)
        assert (attr.__doc__ or "").strip(), f"{cls.__name__}.{name} has no docstring"
    # everything sortedcontainers offers without a key function is here too
    theirs = {n for n in dir(peer) if not n.startswith("_") and "key" not in n and n not in ("iloc", "has_key")}
    assert theirs <= set(public) | {"viewkeys", "viewvalues", "viewitems"}


# ---- found by test_btree_fuzz.py's differential fuzzer and by hand -------------------------


def test_bisect_many_of_a_list_is_not_rounded_by_numpy():
    # numpy makes [45, 2**64 - 1, 2.0] a float64 array, in which 2**64 - 1 is 2**64, and rounds
    # ints past 2**53 that sit next to a float: the list must be placed value by value.
    cases = [
        (SortedSet([33, 2**63 - 1, 2**64 - 1], dtype="uint64"), [45, 2**64 - 1, 2.0, 2**63 - 1]),
        (SortedSet([2**62, 2**62 + 2]), [2**62 + 1, 0.5]),
        (SortedSet([2.0**53, 2.0**53 + 2]), [2**53 + 1, 0.5]),
    ]
    for s, q in cases:
        for side in ("left", "right"):
            want = [getattr(s, "bisect_" + side)(x) for x in q]
            assert s.bisect_many(q, side).tolist() == want, (s, q, side)
            assert s.bisect_many(tuple(q), side).tolist() == want and s.bisect_many(iter(q), side).tolist() == want
    s = SortedSet([1, 5])  # arrays of other dtypes that convert exactly, and ones that do not
    assert s.bisect_many(np.array([5, 6], dtype=np.int32), "right").tolist() == [2, 2]
    assert s.bisect_many(np.array([1.5, 5.0]), "right").tolist() == [1, 2]
    with pytest.raises(ValueError, match="NaN"):
        s.bisect_many([1, float("nan")])


@pytest.mark.parametrize("dtype", ["int64", "uint64"])
def test_an_empty_float_array_goes_into_an_integer_container(dtype):
    # np.array([]) is float64; it holds no key an integer dtype would refuse.
    empty = np.array([])
    s = SortedSet([1, 2], dtype=dtype)
    assert s.add_many(empty) == 0 and list(s.update(empty)) == [1, 2]
    assert list(s.symmetric_difference(empty)) == [1, 2] and list(s | empty) == [1, 2]
    assert len(SortedSet(empty, dtype=dtype)) == 0 and SortedSet(empty, dtype=dtype).dtype == dtype
    with pytest.raises(TypeError):  # a float array that holds something still refuses
        s.add_many(np.array([3.0]))


def test_keys_view_symmetric_difference_with_values_of_other_types():
    # abc's Set.__xor__ is (self - other) | (other - self): the first part was an int64
    # SortedSet, whose | refused 3.0 or -1.
    for keys, other in (({1: "a", -3: "b"}, {3.0, 1, -1}), ({1: "a", -3: "b"}, [2.5]), ({0: 1, 2**64 - 1: 2}, {-1, 0})):
        ours, ref = SortedDict(keys).keys(), sc.SortedDict(keys).keys()
        assert ours ^ other == ref ^ other
        if not isinstance(other, list):
            assert other ^ ours == other ^ ref


def test_views_delete_by_position_as_sortedcontainers():
    for index in (0, -1, 3, slice(None), slice(1, 7, 2), slice(None, None, -3), slice(8, 2, -1), 20, -21):
        for view in ("keys", "values", "items"):
            ours, ref = SortedDict({i: str(i) for i in range(10)}), sc.SortedDict({i: str(i) for i in range(10)})
            got = []
            for d in (ours, ref):
                try:
                    del getattr(d, view)()[index]
                    got.append(None)
                except IndexError:
                    got.append(IndexError)
            assert got[0] == got[1] and list(ours.items()) == list(ref.items()), (index, view)
    ours.validate()


def test_generic_alias_for_annotations():
    assert SortedSet[int].__origin__ is SortedSet and SortedDict[int, str].__args__ == (int, str)


def test_wrong_argument_types_raise_plain_errors():
    s, d = SortedSet([1, 2]), SortedDict({1: 2})
    calls = [
        lambda: s.add_many(None),
        lambda: s.contains_many(None),
        lambda: s.discard_many(None),
        lambda: s.bisect_many(None),
        lambda: s.update(None),
        lambda: s.pop(None),
        lambda: d.popitem(None),
        lambda: d.peekitem(None),
        lambda: SortedSet(pages=3),
        lambda: SortedDict(pages=None),
    ]
    for call in calls:
        with pytest.raises(TypeError) as e:
            call()
        assert "incompatible function arguments" not in str(e.value)
    with pytest.raises(ValueError):  # not a pair: not among the items, as list.index says
        d.items().index(5)


def test_reversed_of_a_subclass_whose_init_skipped_ours_raises():
    # reversed() read the native object without checking that it was built (a crash); run in a
    # child so that a crash fails this test instead of ending the session.
    code = (
        "from simdex.btree import SortedSet, SortedDict\n"
        "class S(SortedSet):\n    def __init__(self): pass\n"
        "class D(SortedDict):\n    def __init__(self): pass\n"
        "for c in (S, D):\n"
        "    try:\n        reversed(c())\n    except TypeError as e:\n        assert 'not initialized' in str(e)\n"
        "    else:\n        raise SystemExit('no error')\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


# ---- memory --------------------------------------------------------------------------------


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_small_containers_cost_little_memory():
    before = _rss()
    sets = [SortedSet([i]) for i in range(200)]
    dicts = [SortedDict({i: i}) for i in range(200)]
    grown = _rss() - before
    assert grown < 24 << 20, f"400 one-key containers took {grown >> 20} MiB"
    assert sets[0].pages == "4k" and dicts[0].pages == "4k"


def test_a_growing_container_moves_to_huge_pages():
    s = SortedSet()
    rng = np.random.default_rng(2)
    keys = rng.integers(0, 2**62, 400_000)
    for k in keys[:1000].tolist():
        s.add(k)
    assert s.pages == "4k"
    it = iter(s)
    s.add_many(keys)
    assert s.pages == "2m" and len(s) == len(np.unique(keys))
    with pytest.raises(RuntimeError):
        next(it)  # moving to huge pages is a change like any other for live iterators
    s.validate()
    assert SortedSet(keys, pages="4k").pages == "4k" and SortedSet([1], pages="2m").pages == "2m"
    assert SortedSet(keys).pages == "2m"  # a large build starts on huge pages
    s.clear()
    s.add(1)
    assert s.pages == "4k"  # emptied, it starts small again
