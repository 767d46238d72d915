"""simdex.kv for programs ported from py-lmdb: the cursor moves py-lmdb users rely on, what an
iteration fetches, and the same answers as py-lmdb on the same random operations (that part
only where the lmdb package is installed; it is not a test dependency)."""

import os
import random

import pytest

import simdex.kv as kv


def _db(keys):
    db = kv.open()
    with db.write() as tx:
        for k in keys:
            tx[k] = k.upper()
    return db


def test_cursor_off_a_key_moves_as_lmdbs():
    db = _db([b"a", b"b", b"c"])
    with db.read() as s:
        c = s.cursor()
        assert c.next() and c.key == b"a"  # a new cursor: next() is first()
        c = s.cursor()
        assert c.prev() and c.key == b"c"  # and prev() is last()
        # "The last key below x", ported as py-lmdb's set_range + prev: x above every key.
        c = s.cursor()
        assert not c.lower_bound(b"zz") and not c.valid
        assert not c.next()  # past the last key it stays past it
        assert c.prev() and c.key == b"c"
        assert not c.upper_bound(b"c") and c.prev() and c.key == b"c"
        assert c.lower_bound(b"bb") and c.prev() and c.key == b"b"
        # Off either end, the other move comes back.
        assert c.last() and not c.next() and not c.next() and c.prev() and c.key == b"c"
        assert c.first() and not c.prev() and not c.prev() and c.next() and c.key == b"a"
        # A failed seek leaves it unplaced, as py-lmdb's set_key does.
        assert not c.seek(b"bb") and c.next() and c.key == b"a"
        assert not c.seek(b"bb") and c.prev() and c.key == b"c"
        assert not c.first(b"x") and c.next() and c.key == b"a"
        # while c.next(): walks every key from a new cursor.
        c, seen = s.cursor(), []
        while c.next():
            seen.append(c.key)
        assert seen == [b"a", b"b", b"c"]
        with pytest.raises(kv.KvError):
            _ = c.key  # off a key: an error, not py-lmdb's b""
    empty = kv.open()
    with empty.read() as s:
        c = s.cursor()
        assert not c.next() and not c.prev() and not c.valid


class _TakeSpy:
    """Stands for a native view and records the size of each chunk an iteration asks for."""

    def __init__(self, native, sizes):
        self._native, self._sizes = native, sizes

    def _cursor(self):
        return _CursorSpy(self._native._cursor(), self._sizes)

    def __getattr__(self, name):
        return getattr(self._native, name)


class _CursorSpy:
    def __init__(self, native, sizes):
        self._native, self._sizes = native, sizes

    def _take(self, n, *args):
        self._sizes.append(n)
        return self._native._take(n, *args)

    def __getattr__(self, name):
        return getattr(self._native, name)


def test_iteration_fetches_few_pairs_first_then_more():
    keys = [b"%05d" % i for i in range(1000)]
    db = _db(keys)
    # On a transaction, whose native view can be swapped for the spy (a Snapshot is its own).
    with db.write() as s:
        sizes = []
        s._v = _TakeSpy(s._v, sizes)
        # "The first key from lo" / "the last key below hi": one small fetch, not 256 pairs.
        assert next(s.keys(b"00500")) == b"00500"
        assert next(s.keys(hi=b"00500", reverse=True)) == b"00499"
        assert sizes == [4, 4]
        sizes.clear()
        assert list(s.keys()) == keys and list(s.keys(reverse=True)) == keys[::-1]
        half = [4, 8, 16, 32, 64, 128, 256, 256, 256]  # 1000 pairs: the last fetch is short
        assert sizes[: len(half)] == half and len(sizes) == 2 * len(half)
        assert list(s.items(b"00100", b"00103")) == [(k, k) for k in keys[100:103]]


# ---- the same answers as py-lmdb --------------------------------------------------------------
# A py-lmdb program's operations (class Lmdb) and their ports to simdex.kv (class Simdex), each
# the idiom the docs' "Coming from LMDB" gives.


class Lmdb:
    def __init__(self, path, lmdb):
        self.env = lmdb.open(path, max_dbs=4, map_size=1 << 28, sync=False)
        # Data in a named database: LMDB keeps the named ones' records in the unnamed one.
        self.main = self.env.open_db(b"main")
        self.users = self.env.open_db(b"users")

    def txn(self, write=False):
        return self.env.begin(write=write, db=self.main)

    def put(self, k, v):
        with self.txn(True) as t:
            t.put(k, v)

    def get(self, k):
        with self.txn() as t:
            return t.get(k, b"default")

    def delete(self, k):
        with self.txn(True) as t:
            return t.delete(k)

    def replace(self, k, v):
        with self.txn(True) as t:
            return t.replace(k, v)

    def add(self, k, v):
        with self.txn(True) as t:
            return t.put(k, v, overwrite=False)

    def pop(self, k):
        with self.txn(True) as t:
            return t.pop(k)

    def range(self, lo, hi):
        with self.txn() as t:
            c, out = t.cursor(), []
            if c.set_range(lo):
                for k, v in c:
                    if k >= hi:
                        break
                    out.append((k, v))
            return out

    def prefix(self, p):
        with self.txn() as t:
            c, out = t.cursor(), []
            if c.set_range(p):
                for k, v in c:
                    if not k.startswith(p):
                        break
                    out.append((k, v))
            return out

    def down_from(self, k):  # keys <= k, descending
        with self.txn() as t:
            c = t.cursor()
            ok = (c.key() == k or c.prev()) if c.set_range(k) else c.last()
            return list(c.iterprev(values=False)) if ok else []

    def last_below(self, x):
        with self.txn() as t:
            c = t.cursor()
            c.set_range(x)
            return c.key() if c.prev() else None

    def count(self, lo, hi):
        return len(self.range(lo, hi))

    def total(self):
        with self.txn() as t:
            return t.stat(self.main)["entries"]

    def putmulti(self, items):
        with self.txn(True) as t:
            return t.cursor().putmulti(items)

    def delete_where(self, lo, hi):  # values of even length, while iterating
        n = 0
        with self.txn(True) as t:
            c = t.cursor()
            ok = c.set_range(lo)
            while ok and c.key() < hi:
                if len(c.value()) % 2 == 0:
                    c.delete()  # moves to the next key
                    n += 1
                    ok = c.key() != b""
                else:
                    ok = c.next()
        return n

    def both(self, k, v):  # one transaction over two databases
        with self.txn(True) as t:
            t.put(k, v)
            t.put(k, v, db=self.users)

    def dump(self):
        out = []
        for db in (self.main, self.users):
            with self.env.begin(db=db) as t:
                out.append(list(t.cursor()))
        return out


class Simdex:
    def __init__(self, path):
        self.db = kv.open(path)

    def put(self, k, v):
        with self.db.write() as t:
            t.put(k, v)

    def get(self, k):
        with self.db.read() as s:
            return s.get(k, b"default")

    def delete(self, k):
        with self.db.write() as t:
            return t.remove(k)

    def replace(self, k, v):
        with self.db.write() as t:
            old = t.get(k)
            t.put(k, v)
            return old

    def add(self, k, v):
        with self.db.write() as t:
            return t.insert(k, v)

    def pop(self, k):
        with self.db.write() as t:
            return t.pop(k, None)

    def range(self, lo, hi):
        with self.db.read() as s:
            return list(s.items(lo, hi))

    def prefix(self, p):
        with self.db.read() as s:
            return list(s.items(prefix=p))

    def down_from(self, k):
        with self.db.read() as s:
            return list(s.keys(hi=k + b"\0", reverse=True))  # k + b"\0": the next key after k

    def last_below(self, x):
        with self.db.read() as s:
            c = s.cursor()
            c.lower_bound(x)
            return c.key if c.prev() else None

    def count(self, lo, hi):
        with self.db.read() as s:
            return s.count(lo, hi)

    def total(self):
        with self.db.read() as s:
            return len(s)

    def putmulti(self, items):
        with self.db.write() as t:
            for k, v in items:
                t.put(k, v)
        return len(items), len(items)  # py-lmdb counts a replaced key as added

    def delete_where(self, lo, hi):
        with self.db.write() as t:
            doomed = [k for k, v in t.items(lo, hi) if len(v) % 2 == 0]  # a write ends items()
            for k in doomed:
                t.remove(k)
        return len(doomed)

    def both(self, k, v):  # one transaction per tree: not atomic across them
        with self.db.write() as t:
            t.put(k, v)
        with self.db.write("users") as t:
            t.put(k, v)

    def dump(self):
        out = []
        for tree in ("", "users"):
            if tree in self.db.trees() or not tree:
                with self.db.read(tree) as s:
                    out.append(list(s.items()))
            else:
                out.append([])
        return out


def _key(r):
    # Nonempty: LMDB refuses an empty key (simdex takes it).
    return bytes(r.choice(b"ab\x00\xff") for _ in range(r.randint(1, 4)))


@pytest.mark.parametrize("seed", [1, 2])
def test_same_answers_as_py_lmdb(tmp_path, seed):
    lmdb = pytest.importorskip("lmdb")
    r = random.Random(seed)
    a, b = Lmdb(str(tmp_path / "lmdb"), lmdb), Simdex(str(tmp_path / "s.kv"))
    for i in range(1500):
        op = r.choice(["put", "get", "delete", "replace", "add", "pop", "range", "prefix",
                       "down_from", "last_below", "count", "total", "putmulti", "delete_where",
                       "both", "big"])
        if op == "big":
            op, args = "put", (_key(r), r.randbytes(r.randint(100, 70000)))
        elif op in ("put", "replace", "add", "both"):
            args = (_key(r), r.randbytes(r.randint(0, 80)))
        elif op in ("get", "delete", "pop", "prefix", "down_from"):
            args = (_key(r),)
        elif op == "last_below":  # also above every key
            args = (r.choice([_key(r), b"\xff" * 5]),)
        elif op in ("range", "count", "delete_where"):
            args = tuple(sorted((_key(r), _key(r))))
        elif op == "putmulti":
            args = ([(_key(r), r.randbytes(5)) for _ in range(r.randint(0, 20))],)
        else:
            args = ()
        assert getattr(a, op)(*args) == getattr(b, op)(*args), (i, op, args)
        if i % 300 == 0:
            assert a.dump() == b.dump(), i
    assert a.dump() == b.dump()
    a.env.close()
    b.db.close()
    assert os.path.exists(tmp_path / "s.kv")
