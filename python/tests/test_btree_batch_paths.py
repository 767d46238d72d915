"""The single-key conversion (`in`, `add`, bisect) at every integer width, and the large-batch
paths (4096 keys or more go through a grouping pass) against Python sets as the reference."""

import gc

import numpy as np
import pytest

from simdex.btree import SortedSet

# Around every digit boundary of CPython's ints (30-bit digits) and the int64 / uint64 limits.
EDGES = sorted({s * (b + d) for b in (0, 1, 2**15, 2**30, 2**60, 2**62, 2**63, 2**64, 2**90)
                for d in (-2, -1, 0, 1) for s in (1, -1)})


class IntSub(int):
    pass


@pytest.mark.parametrize("dtype", ["int64", "uint64", "float64"])
def test_single_key_conversion_at_digit_boundaries(dtype):
    lo, hi = {"int64": (-(2**63), 2**63 - 1), "uint64": (0, 2**64 - 1), "float64": (-(2**53), 2**53)}[dtype]
    storable = [x for x in EDGES if lo <= x <= hi]
    s = SortedSet(dtype=dtype)
    for x in storable[::2]:
        s.add(x)
    ref = set(storable[::2])
    for x in EDGES:
        assert (x in s) == (x in ref), x
        assert (IntSub(x) in s) == (x in ref), x
        assert s.bisect_left(x) == sum(1 for k in ref if k < x), x
        assert s.bisect_right(x) == sum(1 for k in ref if k <= x), x
    assert (True in s) == (1 in ref)
    assert (False in s) == (0 in ref)
    for x in storable[1::2]:
        s.add(x)
    assert list(s) == storable
    for x in EDGES:
        if not lo <= x <= hi and dtype != "float64":
            with pytest.raises(ValueError):
                s.add(x)


def test_large_batches_match_a_set():
    rng = np.random.default_rng(5)
    keys = rng.integers(-(2**62), 2**62, size=50_000, dtype=np.int64)
    s = SortedSet(keys[:30_000])
    ref = set(keys[:30_000].tolist())
    # Lookups: hits, misses, repeats, the extremes, in an order the answer must follow.
    q = np.concatenate([keys[20_000:40_000], keys[:5_000], np.array([-(2**63), 2**63 - 1, 0] * 100)])
    rng.shuffle(q)
    assert s.contains_many(q).tolist() == [x in ref for x in q.tolist()]
    # The same through a list of mixed Python numbers, with values no int64 can equal.
    mixed = q[:6000].tolist() + [2**63, -(2**63) - 1, 2.5, None, "x", float(q[0])] + q[6000:9000].tolist()
    assert s.contains_many(mixed).tolist() == [isinstance(x, (int, float)) and x in ref for x in mixed]
    # A batch skewed into one corner of the range, plus one far key.
    skew = np.concatenate([np.sort(keys[:30_000])[:2000], np.arange(5000, dtype=np.int64), [2**63 - 1]])
    assert s.contains_many(skew).tolist() == [x in ref for x in skew.tolist()]
    ranks = s.bisect_many(skew)
    srt = np.sort(np.array(sorted(ref), dtype=np.int64))
    assert np.array_equal(ranks, np.searchsorted(srt, skew, side="left"))
    # Inserts with repeats and skew: the count of new keys and the order are exact.
    add = np.concatenate([keys[25_000:], keys[25_000:35_000], np.full(5000, 7, dtype=np.int64)])
    new = len(set(add.tolist()) - ref)
    assert s.add_many(add) == new
    ref |= set(add.tolist())
    assert s.to_numpy().tolist() == sorted(ref)
    s.validate()
    gone = keys[::3]
    assert s.discard_many(gone) == len(ref & set(gone.tolist()))
    ref -= set(gone.tolist())
    assert s.to_numpy().tolist() == sorted(ref)
    s.validate()


@pytest.mark.parametrize("dtype", ["uint64", "float64"])
def test_large_batches_other_dtypes(dtype):
    rng = np.random.default_rng(9)
    if dtype == "uint64":
        keys = rng.integers(0, 2**64 - 1, size=20_000, dtype=np.uint64, endpoint=True)
    else:
        keys = rng.normal(size=20_000) * 1e6
        keys[:10] = [0.0, -0.0, np.inf, -np.inf, 1e-300, -1e-300, 5e-324, 1.5, -1.5, 2.0]
    s = SortedSet(keys[:10_000], dtype=dtype)
    ref = set(keys[:10_000].tolist())
    q = np.concatenate([keys[5_000:15_000], keys[:100]])
    assert s.contains_many(q).tolist() == [x in ref for x in q.tolist()]
    assert s.add_many(keys) == len(set(keys.tolist()) - ref)
    assert s.to_numpy().tolist() == sorted(set(keys.tolist()))
    s.validate()


class Tracked:
    """A value whose death is recorded, and which can look at the dict while it dies."""

    deaths: list = []

    def __init__(self, tag, watch=None):
        self.tag, self.watch = tag, watch

    def __del__(self):
        # A replaced value dies only after the dict is consistent again: len and lookups
        # from its finalizer see the finished update.
        Tracked.deaths.append((self.tag, None if self.watch is None else len(self.watch)))


@pytest.mark.parametrize("n_old, n_new", [(0, 5_000), (10, 50), (3_000, 200), (3_000, 6_000)])
def test_dict_update_in_batches(n_old, n_new):
    """update() of 64 items or more sorts them and goes in as one batch, also into a dict that
    has keys already: present keys get the new value (the last of repeats), the old value is
    released, absent keys go in, and the result matches a plain dict."""
    from simdex.btree import SortedDict

    rng = np.random.default_rng(n_old + n_new)
    old_keys = rng.choice(20_000, size=n_old, replace=False).tolist()
    d = SortedDict({k: Tracked(("old", k)) for k in old_keys})
    ref = {k: ("old", k) for k in old_keys}
    new_keys = rng.integers(0, 20_000, size=n_new).tolist()  # repeats and present keys too
    # The earlier cases' values sit in cycles with their dicts (watch): collect them now, or
    # the collector may finalize them in the middle of this case and count their deaths here.
    gc.collect()
    Tracked.deaths = []
    items = [(k, Tracked(("new", i), d)) for i, k in enumerate(new_keys)]
    d.update(items)
    for i, k in enumerate(new_keys):
        ref[k] = ("new", i)  # the last of repeats wins
    assert len(d) == len(ref)
    assert list(d.keys()) == sorted(ref)
    assert [d[k].tag for k in sorted(ref)] == [ref[k] for k in sorted(ref)]
    del items
    replaced = {("old", k) for k in old_keys if k in set(new_keys)}
    losers = {("new", i) for i, k in enumerate(new_keys) if ref[k] != ("new", i)}
    died = {tag for tag, _ in Tracked.deaths}
    assert died == replaced | losers
    assert all(seen in (None, len(ref)) for _, seen in Tracked.deaths)
    d.validate()


@pytest.mark.parametrize("dtype,top", [("int64", 2**63 - 1), ("uint64", 2**64 - 1)])
def test_exact_fractions_and_decimals_past_float_precision(dtype, top):
    """Integers past 2^53 given as Fraction or Decimal went through float64 first: 2^62 + 1 was
    not found, and 2^63 - 1 rounded past the dtype's range (placed after every key). Found by
    value now, as sortedcontainers finds them; non-integers fall between their neighbours."""
    from decimal import Decimal
    from fractions import Fraction

    import sortedcontainers

    keys = [5, 2**62 + 1, 2**62 + 3, top - 1, top]
    s, ref = SortedSet(keys, dtype=dtype), sortedcontainers.SortedSet(keys)
    probes = [Fraction(k) for k in keys] + [Decimal(k) for k in keys]
    probes += [Fraction(2**62 + 2), Decimal(2**62) + Decimal("2.5"), Fraction(2 * top + 1, 2), Fraction(-1, 3),
               Decimal(top) + 1, Decimal("4.999"), Fraction(11, 2)]
    for v in probes:
        assert (v in s) == (v in ref), v
        assert s.bisect_left(v) == ref.bisect_left(v), v
        assert s.bisect_right(v) == ref.bisect_right(v), v
    assert s.index(Decimal(2**62 + 1)) == 1
    s.discard(Fraction(2**62 + 3))
    assert 2**62 + 3 not in s and len(s) == 4


def test_longdouble_arrays_store_exactly_or_raise():
    """add() refused a long double float64 cannot hold, but arrays were rounded silently: a set
    built from one lacked its own input, and contains_many disagreed with `in`."""
    x = np.longdouble(1) / 3
    with pytest.raises(ValueError, match="not exactly representable as float64 at position 1"):
        SortedSet(np.array([np.longdouble(0.5), x]))
    assert list(SortedSet(np.array([np.longdouble(0.5), np.longdouble(-2)]))) == [-2.0, 0.5]
    t = SortedSet([1 / 3, 0.5])
    got = t.contains_many(np.array([x, np.longdouble(0.5), np.longdouble(1) / 3 + 0]))
    assert got.tolist() == [x in t, True, False] == [False, True, False]
    assert not t.issuperset(np.array([x]))



@pytest.mark.parametrize("dtype", ["int64", "uint64", "float64"])
def test_membership_filter_follows_every_write(dtype):
    """A large batch of absent keys builds the set's membership filter (memory_usage grows by
    it); after every kind of Python write, contains_many must still answer as a set does (a
    key added and not put in the filter would be answered absent)."""
    rng = np.random.default_rng(7)
    n = 70_000
    evens = np.arange(0, 2 * n, 2).astype(dtype)
    odd = np.arange(1, 2 * n, 2).astype(dtype)
    s = SortedSet(evens, dtype=dtype)
    ref = set(evens.tolist())

    def check(present_share=0.0):
        pick = rng.random(8192) < present_share
        q = np.where(pick, rng.choice(evens, 8192), rng.choice(odd, 8192)).astype(dtype)
        want = np.array([x in ref for x in q.tolist()])
        assert np.array_equal(s.contains_many(q), want)

    before = s.memory_usage()
    check()
    assert s.memory_usage() >= before + n  # the filter: 1.5 bytes a key
    fresh = iter(odd.tolist())

    def take(count):
        return [next(fresh) for _ in range(count)]

    for k in take(20):
        s.add(k)
        ref.add(k)
    check()
    batch = take(500)
    s.add_many(np.array(batch, dtype=dtype))
    ref.update(batch)
    check()
    more, other = take(300), take(10)
    s.update(more)
    s |= other
    ref.update(more + other)
    check()
    gone = rng.choice(np.array(sorted(ref), dtype=dtype), 2000, replace=False).tolist()
    s.discard_many(np.array(gone, dtype=dtype))
    ref.difference_update(gone)
    head = list(s)[:100]
    del s[:100]
    ref.difference_update(head)
    flip = take(50) + list(s)[:50]
    s.symmetric_difference_update(flip)
    ref.symmetric_difference_update(flip)
    drop = list(s)[::97]
    s.difference_update(drop)
    ref.difference_update(drop)
    assert set(s) == ref
    check(0.05)
    check()
    s.clear()
    ref.clear()
    assert not s.contains_many(odd).any()


def test_batch_filter_switch():
    """batch_filter=False: a large batch of absent keys builds no filter (filter_bytes() stays
    0) and still answers right; True (the default) builds one. Copies, pickles and the
    containers a set or dict rebuilds itself into (growth onto 2 MiB pages, clear) keep the
    switch; it takes True or False only."""
    import copy
    import pickle

    from simdex.btree import SortedDict

    n = 70_000
    evens = np.arange(0, 2 * n, 2, dtype=np.int64)
    odd = evens + 1
    for cls, make in ((SortedSet, lambda **kw: SortedSet(evens, **kw)),
                      (SortedDict, lambda **kw: SortedDict(zip(evens.tolist(), evens.tolist()), **kw))):
        on, off = make(), make(batch_filter=False)
        assert on.batch_filter and not off.batch_filter
        for c in (on, off):
            assert c.filter_bytes() == 0
            assert not c.contains_many(odd[:8192]).any()
            assert c.contains_many(evens[:8192]).all()
        assert on.filter_bytes() >= n  # 1.5 bytes a key
        assert off.filter_bytes() == 0
        for twin in (off.copy(), copy.copy(off), copy.deepcopy(off), pickle.loads(pickle.dumps(off))):
            assert type(twin) is cls and not twin.batch_filter
            assert not twin.contains_many(odd[:8192]).any()
            assert twin.filter_bytes() == 0
        assert pickle.loads(pickle.dumps(on)).batch_filter
        off.clear()
        assert not off.batch_filter
        # Grown from empty on 4 KiB pages to 2 MiB ones: the rebuilt tree keeps the switch.
        grown = cls(batch_filter=False)
        big = np.arange(0, 600_000, 2, dtype=np.int64)
        for chunk in np.array_split(big, 40):
            if cls is SortedSet:
                grown.add_many(chunk)
            else:
                grown.update(zip(chunk.tolist(), chunk.tolist()))
        assert grown.pages == "2m"
        assert not grown.contains_many(big[:8192] + 1).any()
        assert grown.filter_bytes() == 0
        with pytest.raises(TypeError, match="batch_filter"):
            cls(batch_filter="no")
