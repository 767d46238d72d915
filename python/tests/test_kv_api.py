"""simdex.kv as a new user meets it: paths, argument conventions, help texts (audit of 2026-11-28)."""

import inspect
import os
import subprocess
import sys

import pytest

import simdex.kv as kv


def test_open_takes_bytes_and_path_like_paths(tmp_path, monkeypatch):
    """str(path) turned b"data.kv" into a file named "b'data.kv'" in the working directory."""
    monkeypatch.chdir(tmp_path)
    db = kv.open(b"rel.kv")
    with db.write() as tx:
        tx[b"k"] = b"v"
    assert db.path == "rel.kv"
    db.close()
    assert sorted(os.listdir(tmp_path)) == ["rel.kv"]
    db = kv.open(os.fsencode(str(tmp_path / "rel.kv")), read_only=True)
    assert db.read()[b"k"] == b"v"
    db.close()
    db = kv.open(tmp_path / "rel.kv", read_only=True)  # os.PathLike
    assert db.read()[b"k"] == b"v"
    db.close()


def test_count_takes_none_as_items_does():
    db = kv.open()
    with db.write() as tx:
        for k in (b"", b"a", b"b", b"c"):
            tx[k] = b"v"
    with db.read() as s:
        assert s.count(None, b"c") == len(list(s.items(None, b"c"))) == 3
        assert s.count(None) == s.count() == len(s) == 4


def test_dunder_methods_are_documented():
    """help(simdex.kv) listed view[key], del tx[key] (KeyError) and the rest with no text."""
    for cls in (kv.Snapshot, kv.Transaction):
        for name in ("__getitem__", "__contains__", "__len__", "__iter__", "__setitem__", "__delitem__"):
            assert inspect.getdoc(getattr(cls, name)), f"{cls.__name__}.{name} has no docstring"


def test_cli_subcommand_help_says_what_it_does():
    """`simdex kv stat --help` and `check --help` printed only their usage lines."""
    for cmd, says in (("stat", "bytes per key"), ("check", "Exit 0")):
        r = subprocess.run([sys.executable, "-m", "simdex", "kv", cmd, "--help"], capture_output=True, text=True)
        assert r.returncode == 0 and says in r.stdout and "the database file" in r.stdout, r.stdout


def test_abort_after_commit_or_abort_does_nothing():
    """abort() on an ended transaction raised invalid_argument, which broke the py-lmdb idiom
    of committing in the try block and aborting in finally."""
    db = kv.open()
    tx = db.write()
    try:
        tx[b"k"] = b"v"
        tx.commit()
    finally:
        tx.abort()
    assert db.read()[b"k"] == b"v"
    tx = db.write()
    tx[b"k2"] = b"v"
    tx.abort()
    tx.abort()
    assert b"k2" not in db.read()
    with pytest.raises(kv.KvError) as e:  # committing an ended transaction still raises
        tx.commit()
    assert e.value.kind == "invalid_argument"


# ---- The audit of the Python API against py-lmdb, dbm and dict (2026-11-28, second round) ----

BAD_TYPE = "incompatible function arguments"  # nanobind's overload dump: never shown to a user


def _tree(items=((b"a", b"1"), (b"b", b"2"), (b"c", b"3"))):
    db = kv.open()
    with db.write() as tx:
        for k, v in items:
            tx[k] = v
    return db


def test_bytes_like_keys_and_values_everywhere():
    """bytearray and memoryview keys and values were refused with nanobind's overload dump."""
    import array

    import numpy as np

    def forms(b):  # the same bytes as every accepted kind of object
        return [b, bytearray(b), memoryview(b), memoryview(b"xx" + b + b"yy")[2:-2], array.array("B", b),
                np.frombuffer(b, dtype=np.uint8), np.frombuffer(b, dtype=np.int8), memoryview(bytearray(b)).cast("c")]

    db = kv.open()
    for i, k in enumerate(forms(b"key")):
        with db.write() as tx:
            tx[k] = forms(b"v%d" % i)[i]
            assert tx[b"key"] == b"v%d" % i and tx[k] == b"v%d" % i and k in tx and tx.get(k) == b"v%d" % i
            assert tx.put(k, b"p") is None and tx.upsert(k, bytearray(b"u")) is False
            assert tx.insert(k, b"x") is False and tx.update(k, memoryview(b"w")) is True
            assert tx.get_many([k, bytearray(b"nope")]) == [b"w", None]
            assert tx.count(forms(b"k")[i], forms(b"kez")[i]) == 1
            assert list(tx.keys(forms(b"k")[i], forms(b"kez")[i])) == [b"key"]
            assert list(tx.items(prefix=forms(b"ke")[i])) == [(b"key", b"w")]
            c = tx.cursor()
            assert c.seek(k) and c.lower_bound(k) and not c.upper_bound(k)
            assert c.first(forms(b"k")[i]) and c.last(forms(b"k")[i]) and c.key == b"key"
            assert tx.pop(k) == b"w" and k not in tx
            assert tx.setdefault(k, forms(b"d")[i]) == b"d"
            assert tx.remove(k) and not tx.remove(k)
            tx[k] = b"z"
            del tx[k]
            tx.bulk_load([(forms(b"a")[i], forms(b"1")[i]), (forms(b"b")[i], forms(b"2")[i])])
            assert tx.remove_range(forms(b"a")[i], forms(b"b")[i]) == 1
            assert tx[bytearray(b"b")] == b"2"
            tx.clear()
    with db.read() as s:
        assert len(s) == 0
    # A value is opaque: any contiguous buffer goes in as its raw bytes.
    with db.write() as tx:
        tx[b"ints"] = array.array("i", [1, 2])
        tx[b"f64"] = np.array([1.5])
        assert tx[b"ints"] == array.array("i", [1, 2]).tobytes() and tx[b"f64"] == np.array([1.5]).tobytes()


def test_keys_of_wider_items_and_str_are_refused_clearly():
    """A key's bytes decide its order, so a buffer of wider items (whose bytes sort in machine
    order) is refused, and a str is refused with the fix: encode it."""
    import array

    import numpy as np

    db = _tree()
    tx = db.write()
    with pytest.raises(TypeError, match=r"^kv keys are bytes, not str: encode it \(key.encode\(\)\)$"):
        tx["a"] = b"1"
    with pytest.raises(TypeError, match=r"^kv values are bytes, not str: encode it \(value.encode\(\)\)$"):
        tx[b"a"] = "1"
    for wide in (array.array("q", [5]), np.array([5], dtype=">u8"), memoryview(b"abcd").cast("I")):
        with pytest.raises(TypeError, match=r"format '.*Q?.*' \(\d bytes each\).*int.to_bytes\(n, 'big'\)") as e:
            tx.get(wide)
        assert BAD_TYPE not in str(e.value)
    with pytest.raises(TypeError, match=r"not C-contiguous cannot be read as kv bytes: pass bytes\(key\)"):
        tx[memoryview(b"abcdef")[::2]] = b"v"
    with pytest.raises(TypeError, match=r"^hi: kv keys are bytes, not str: encode it \(hi.encode\(\)\)$"):
        tx.count(b"a", "z")
    with pytest.raises(TypeError, match=r"^keys\[1\]: kv keys are bytes-like \(bytes, bytearray, memoryview\), not int$"):
        tx.get_many([b"a", 5])
    with pytest.raises(TypeError, match=r"get_many takes an iterable of keys, not one bytes"):
        tx.get_many(b"abc")
    with pytest.raises(TypeError, match=r"^prefix: kv keys are bytes, not str"):
        list(tx.items(prefix="a"))
    with pytest.raises(TypeError, match=r"^kv values are bytes-like \(bytes, bytearray, memoryview\), not NoneType$"):
        tx.put(b"a", None)
    with pytest.raises(TypeError, match=r"^default: kv values are bytes, not str"):
        tx.setdefault(b"new", "x")
    with pytest.raises(TypeError, match=r"^kv tree names are str, not bytes: decode it"):
        db.read(b"t")
    tx.abort()


def _public_calls(db_factory):
    """(name, call(args)) for every public method of every kv class, on fresh objects."""
    def snap():
        return db_factory().read()

    def tx():
        return db_factory().write()

    def cur():
        return db_factory().read().cursor()

    calls = []
    for make, cls in ((snap, kv.Snapshot), (tx, kv.Transaction), (cur, kv.Cursor), (db_factory, kv.Database)):
        for name, fn in inspect.getmembers(cls, callable):
            if name.startswith("_") and name not in ("__getitem__", "__setitem__", "__delitem__", "__contains__"):
                continue
            calls.append((f"{cls.__name__}.{name}", make, name, _positional_params(fn)))
    return calls


def _positional_params(fn) -> list[str]:
    """The names of a method's positional parameters but self; a native one's (Snapshot.get,
    which inspect cannot read) from the signature nanobind gives as text."""
    try:
        return [p.name for p in inspect.signature(fn).parameters.values() if p.name != "self"
                and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except ValueError:
        text = fn.__nb_signature__[0][0]
        names = [a.split(":")[0].split("=")[0].strip() for a in text[text.index("(") + 1:text.rindex(")")].split(",")]
        return [n for n in names if n and n != "self" and not n.startswith("*")]


GOOD = {"key": b"a", "value": b"v", "lo": b"a", "hi": b"z", "prefix": b"a", "default": b"d", "tree": "",
        "keys": [b"a"], "pairs": [(b"x", b"1")], "last": True, "missing_ok": False}


@pytest.mark.parametrize("bad", ["str", None, 5, 2.5, object(), [b"a"], {"a": 1}])
def test_no_public_method_shows_nanobind_overload_dump(bad):
    """Each public method with each argument in turn of a wrong type: a TypeError (or the
    store's own error) that names it, never nanobind's "incompatible function arguments"."""
    for label, make, name, params in _public_calls(_tree):
        for i, p in enumerate(params):
            args = [GOOD.get(q, b"a") for q in params]
            args[i] = bad
            obj = make()
            try:
                getattr(obj, name)(*args)
            except (TypeError, KvError, KeyError, ValueError) as e:
                assert BAD_TYPE not in str(e), f"{label}({p}={bad!r}): {e}"
            if isinstance(obj, kv.Transaction) and obj.active:
                obj.abort()


KvError = kv.KvError


def test_overlong_key_is_absent_for_reads_and_removes():
    """remove() of a key over the limit raised key_too_long, while get() answered None: a key
    that cannot be stored cannot be present. Writes that store a value still raise."""
    db = _tree()
    long_key = b"k" * (kv.MAX_KEY + 1)
    with db.write() as tx:
        assert tx.remove(long_key) is False
        with pytest.raises(KeyError):
            del tx[long_key]
        with pytest.raises(KeyError):
            tx[long_key]
        assert long_key not in tx and tx.get(long_key, b"d") == b"d"
        assert tx.pop(long_key, None) is None
        with pytest.raises(KeyError):
            tx.pop(long_key)
        assert tx.get_many([long_key, b"a"]) == [None, b"1"]
        assert not tx.cursor().seek(long_key)
        for write in (tx.put, tx.insert, tx.upsert, tx.update, tx.setdefault, tx.__setitem__):
            with pytest.raises(ValueError) as e:
                write(long_key, b"v")
            assert e.value.kind == "key_too_long"
    with db.read() as s:
        assert long_key not in s and s.get(long_key) is None and len(s) == 3


def test_mapping_methods_of_a_transaction():
    """pop, setdefault, popitem and clear were missing; update keeps its own meaning."""
    import collections.abc

    db = _tree()
    with db.write() as tx:
        assert tx.pop(b"a") == b"1" and b"a" not in tx
        assert tx.pop(b"a", b"gone") == b"gone"
        with pytest.raises(KeyError):
            tx.pop(b"a")
        assert tx.setdefault(b"b", b"new") == b"2" and tx[b"b"] == b"2"
        assert tx.setdefault(bytearray(b"n"), bytearray(b"new")) == b"new" and tx[b"n"] == b"new"
        assert tx.popitem() == (b"n", b"new")
        assert tx.popitem(last=False) == (b"b", b"2")
        assert tx.update(b"zz", b"1") is False and b"zz" not in tx  # not dict.update
        assert tx.clear() is None and len(tx) == 0
        with pytest.raises(KeyError, match="empty"):
            tx.popitem()
    assert db.trees() == [""] and len(db.read()) == 0  # clear() keeps the tree
    for cls in (kv.Snapshot, kv.Transaction):
        assert not isinstance(cls.__new__(cls), collections.abc.Mapping)
        for name in ("pop", "setdefault", "popitem", "clear", "get", "items"):
            if hasattr(cls, name):
                assert inspect.getdoc(getattr(cls, name)), f"{cls.__name__}.{name}"
    assert inspect.getdoc(kv.Database.drop)


def test_tree_name_limit_is_exported():
    """MAX_TREE_NAME is the store's limit on a tree name's UTF-8 bytes (kMaxTreeName): a name
    that long works, one byte more is refused, and a name in UTF-8 counts its bytes."""
    assert kv.MAX_TREE_NAME == 39 and "MAX_TREE_NAME" in kv.__all__
    db = kv.open()
    longest = "t" * kv.MAX_TREE_NAME
    with db.write(longest) as tx:
        tx[b"k"] = b"v"
    assert db.trees() == [longest] and db.read(longest)[b"k"] == b"v"
    for name in ("t" * (kv.MAX_TREE_NAME + 1), "é" * (kv.MAX_TREE_NAME // 2 + 1)):
        with pytest.raises(ValueError, match=f"at most {kv.MAX_TREE_NAME} bytes"):
            db.write(name)
    assert "MAX_TREE_NAME" in inspect.getdoc(kv.Database)
    db.close()


def test_read_is_the_native_one_unless_a_subclass_has_its_own():
    """Database.read on an instance is the native read() (no Python frame per snapshot); a
    subclass's own read() still wins, and a closed database's read() raises as before."""
    db = kv.open()
    assert db.read.__self__ is db._db and "Database.read" in inspect.getdoc(db.read)

    class Logged(kv.Database):
        def read(self, tree=""):
            self.reads = getattr(self, "reads", 0) + 1
            return super().read(tree)

    mine = Logged(kv._native.Database.open(None, "none", False))
    with mine.read() as s:
        assert len(s) == 0
    assert mine.reads == 1
    mine.close()
    db.close()
    with pytest.raises(ValueError, match="database is closed"):
        db.read()


def test_bulk_load_errors_name_the_pair():
    db = _tree()
    with db.write("t") as tx:
        for pairs, kind, says in (
            ([(b"a", b""), (b"b", b""), (b"c" * 2000, b"")], "key_too_long", "pair at index 2: key of 2000 bytes"),
            ([(b"a", b""), (b"c", b""), (b"b", b"")], "invalid_argument", "pair at index 2: keys not sorted"),
            ([(b"a", b""), (b"a", b"")], "invalid_argument", "pair at index 1: keys not distinct"),
        ):
            with pytest.raises(ValueError, match=says) as e:
                tx.bulk_load(pairs)
            assert e.value.kind == kind
        for pairs, says in (([(b"a", b""), (b"b", "x")], r"^pairs\[1\]\[1\]: kv values are bytes, not str"),
                            ([(b"a", b""), ("b", b"")], r"^pairs\[1\]\[0\]: kv keys are bytes, not str"),
                            ([(b"a", b""), b"bx"], r"^bulk_load: pairs\[1\] is not a \(key, value\) pair but a bytes"),
                            ([(b"a", b"", b"")], r"^bulk_load: pairs\[0\] is not a \(key, value\) pair but a sequence of 3")):
            with pytest.raises(TypeError, match=says):
                tx.bulk_load(pairs)
        with pytest.raises(TypeError, match="iterable of \\(key, value\\) pairs, not int"):
            tx.bulk_load(5)
        assert len(tx) == 0
        tx.bulk_load([(b"b", b"")])
        with pytest.raises(ValueError, match=r"pair at index 1: key already present \(the pairs before it were added\)"):
            tx.bulk_load([(b"a", b""), (b"b", b""), (b"c", b"")])


def test_missing_tree_is_not_found_and_trees_can_be_dropped(tmp_path):
    """db.read("typo") returned an empty snapshot; there was no way to drop a tree."""
    p = tmp_path / "t.kv"
    db = kv.open(p, sync="fsync")
    assert len(db.read()) == 0 and len(db.read(None)) == 0  # the default tree always reads
    with pytest.raises(LookupError, match=r"no tree named 'users' in the database \(it has no named trees\)") as e:
        db.read("users")
    assert isinstance(e.value, KvError) and e.value.kind == "not_found"
    for name, n in (("users", 300), ("orders", 2000), ("empty", 0)):
        with db.write(name) as tx:
            tx.bulk_load((b"%06d" % i, b"x" * 40) for i in range(n))
    with pytest.raises(kv.KvError, match=r"no tree named 'user' in the database \(its named trees: 'users', 'orders', 'empty'\)"):
        db.read("user")
    with pytest.raises(LookupError, match="'user'"):
        db.stat("user")
    assert len(db.read("empty")) == 0  # created by its commit
    old = db.read("orders")
    db.drop("orders")
    assert db.trees() == ["users", "empty"] and len(old) == 2000 and old[b"001999"] == b"x" * 40
    old.validate()
    old.close()
    db.validate()
    with pytest.raises(LookupError):
        db.read("orders")
    with pytest.raises(LookupError, match="'orders'"):
        db.drop("orders")
    db.drop("orders", missing_ok=True)
    db.compact()
    db.validate()
    db.close()
    db = kv.open(p, read_only=True)
    db.validate()
    assert db.trees() == ["users", "empty"] and len(db.read("users")) == 300
    with pytest.raises(kv.KvError) as e:
        db.drop("users")
    assert e.value.kind == "read_only"
    db.close()
    r = subprocess.run([sys.executable, "-m", "simdex", "kv", "check", str(p)], capture_output=True, text=True)
    assert r.returncode == 0 and "ok ('users', 'empty')" in r.stdout, r.stdout + r.stderr


def test_cli_names_the_default_tree(tmp_path):
    """`simdex kv check` printed "ok ('')" and `kv stat` "tree ''" for the default tree."""
    p = str(tmp_path / "a.kv")
    with kv.open(p) as db:
        with db.write() as tx:
            tx[b"k"] = b"v"
        with db.write("users") as tx:
            tx[b"k"] = b"v"
    run = [sys.executable, "-m", "simdex", "kv"]
    r = subprocess.run(run + ["check", p], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok (the default tree, 'users')"), r.stdout + r.stderr
    r = subprocess.run(run + ["stat", p], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith("the default tree: 1 keys"), r.stdout + r.stderr
    assert "tree 'users': 1 keys" in r.stdout and "''" not in r.stdout


def test_close_keeps_the_path_and_ends_what_it_made(tmp_path):
    """After close(), db.path read "" and an items() generator kept yielding the chunk it had
    fetched (and, with its snapshot alive, everything); the file stayed open and locked."""
    p = str(tmp_path / "c.kv")
    db = kv.open(p)
    with db.write() as tx:
        tx.bulk_load((b"%06d" % i, b"v") for i in range(1000))
    s = db.read()
    it = s.items()
    assert next(it) == (b"000000", b"v")
    keys = s.keys(reverse=True)
    next(keys)
    tx = db.write("other")
    tx[b"k"] = b"v"
    db.close()
    assert db.path == p
    for gen in (it, keys):
        with pytest.raises(kv.KvError, match="snapshot is closed: its database was closed") as e:
            next(gen)
        assert e.value.kind == "invalid_argument" and isinstance(e.value, ValueError)
    with pytest.raises(kv.KvError, match="snapshot is closed: its database was closed"):
        s.get(b"000001")
    assert not tx.active
    tx.abort()  # does nothing, as after any abort
    s.close()
    db.close()
    db2 = kv.open(p)  # not busy: nothing holds the file any more
    assert db2.trees() == [""] and len(db2.read()) == 1000
    # A snapshot's own close, and a transaction's writes, stop an iteration at its next step.
    s = db2.read()
    it = s.items()
    next(it)
    s.close()
    with pytest.raises(kv.KvError, match="make a new cursor"):
        next(it)
    with db2.write() as tx:
        it = tx.keys()
        next(it)
        tx[b"new"] = b"1"  # buffered: the tree has not even changed yet
        with pytest.raises(kv.KvError, match="make a new cursor"):
            next(it)
        it = tx.keys()
        next(it)
        tx.pop(b"000005")
        with pytest.raises(kv.KvError, match="make a new cursor"):
            next(it)
    db2.close()
    assert kv.open().path == ""


def test_close_ends_exactly_the_snapshots_its_database_made(tmp_path):
    """Snapshots are kept for Database.close() natively (no WeakSet entry per read()): close()
    ends those of its own database still open, whether or not others were closed or dropped
    before, and nothing of another database's; a snapshot or cursor outliving everything else
    still reads."""
    import gc
    import weakref

    a, b = kv.open(tmp_path / "a.kv"), kv.open(tmp_path / "b.kv")
    for db in (a, b):
        with db.write() as tx:
            tx[b"k"] = b"v"
    kept = [a.read() for _ in range(5)]
    for i, s in enumerate([a.read() for _ in range(6)]):  # closed, dropped, in turn
        if i % 2:
            s.close()
    with a.read() as s:
        assert s.get(b"k") == b"v" and s.get(b"x", 1) == 1 and len(s) == 1 and b"k" in s
    own = kept.pop(2)
    own.close()
    del kept[2]
    gc.collect()
    other = b.read()
    ref = weakref.ref(other)  # snapshots stay weakly referenceable
    key = bytearray(b"missing")
    with pytest.raises(KeyError) as e:
        other[key]
    assert e.value.args == (key,) and e.value.args[0] is key
    a.close()
    for s in kept:
        with pytest.raises(kv.KvError, match="snapshot is closed: its database was closed"):
            s.get(b"k")
    with pytest.raises(kv.KvError, match="view is closed"):  # closed before: the store's words
        own.get(b"k")
    assert other[b"k"] == b"v" and ref() is other and isinstance(other, kv.Snapshot)
    kv.open(tmp_path / "a.kv").close()  # the file is free: nothing of a's is still open
    other.close()
    b.close()
    # A cursor keeps its snapshot alive, and both outlive their database object.
    db = kv.open()
    with db.write() as tx:
        tx[b"k"] = b"v"
    c = db.read().cursor()
    del db
    gc.collect()
    assert isinstance(c, kv.Cursor) and c.first() and c.item() == (b"k", b"v") and c.valid


def test_cli_stat_into_a_closed_pipe_is_quiet(tmp_path):
    """`simdex kv stat FILE | head -1` exited 1; it now ends as cat and `simdex base85` do."""
    import signal

    p = str(tmp_path / "p.kv")
    db = kv.open(p)
    for t in ("a", "b", "c"):
        with db.write(t) as tx:
            tx[b"k"] = b"v"
    db.close()
    for cmd in (["stat"], ["stat", "--json"], ["check"]):
        r_fd, w_fd = os.pipe()
        os.close(r_fd)  # the reader is gone before anything is written
        try:
            r = subprocess.run([sys.executable, "-m", "simdex", "kv", *cmd, p], stdout=w_fd, stderr=subprocess.PIPE,
                               text=True)
        finally:
            os.close(w_fd)
        assert r.returncode == -signal.SIGPIPE and r.stderr == "", (cmd, r.returncode, r.stderr)


def test_new_methods_agree_with_a_dict():
    """A short differential run of the mapping methods against a dict (keys of all forms,
    overlong ones included)."""
    import random

    rng = random.Random(7)
    db = kv.open()
    model: dict = {}
    keys = [b"", b"a", b"ab", b"b", b"\xff", b"k" * kv.MAX_KEY, b"k" * (kv.MAX_KEY + 1)] + [b"%d" % i for i in range(40)]
    tx = db.write()
    for step in range(3000):
        k = rng.choice(keys)
        kf = rng.choice([bytes, bytearray, memoryview])(k)
        v = b"v%d" % step
        op = rng.randrange(9)
        storable = len(k) <= kv.MAX_KEY
        if op == 0:
            assert tx.pop(kf, None) == model.pop(k, None)
        elif op == 1:
            if storable:
                assert tx.setdefault(kf, v) == model.setdefault(k, v)
        elif op == 2 and storable:
            tx[kf] = v
            model[k] = v
        elif op == 3:
            try:
                del tx[kf]
                assert k in model
                del model[k]
            except KeyError:
                assert k not in model
        elif op == 4:
            assert (kf in tx) == (k in model) and tx.get(kf) == model.get(k)
        elif op == 5 and rng.random() < 0.1:
            if model:
                last = rng.random() < 0.5
                want = max(model) if last else min(model)
                assert tx.popitem(last=last) == (want, model.pop(want))
            else:
                with pytest.raises(KeyError):
                    tx.popitem()
        elif op == 6 and rng.random() < 0.02:
            tx.clear()
            model.clear()
        elif op == 7:
            assert tx.remove(kf) == (model.pop(k, None) is not None)
        elif op == 8 and step % 500 == 0:
            tx.commit()
            assert dict(db.read().items()) == model
            tx = db.write()
        assert len(tx) == len(model)
    tx.commit()
    assert dict(db.read().items()) == model
    db.validate()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_forked_child_is_refused_and_does_not_hold_the_file(tmp_path):
    # A child made by fork() read the parent's map without its bookkeeping (torn reads once
    # the parent reused space) and could commit into the file; and it kept the parent's lock
    # held, so the parent could not close and reopen its own file while a worker lived.
    path = tmp_path / "fork.kv"
    db = kv.open(path)
    with db.write() as tx:
        tx[b"a"] = b"1"
    snap = db.read()
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        for call in (lambda: snap[b"a"], db.read, lambda: db.write()):
            try:
                call()
                code = 1
            except kv.KvError as e:
                if e.kind != "busy" or "fork()" not in e.detail:
                    code = 2
        snap.close()
        db.close()
        os.write(ready_w, b"r")
        os.read(go_r, 1)  # alive while the parent reopens
        os._exit(code)
    assert os.read(ready_r, 1) == b"r"
    snap.close()
    db.close()
    again = kv.open(path)  # was KvError busy: the child held the lock
    assert again.read()[b"a"] == b"1"
    os.write(go_w, b"g")
    _, status = os.waitpid(pid, 0)
    for fd in (ready_r, ready_w, go_r, go_w):
        os.close(fd)
    assert os.waitstatus_to_exitcode(status) == 0
    again.close()


def test_iterations_across_chunk_boundaries_and_after_their_end():
    # items() yields from the chunks it fetches (4 pairs, then 8, ... 256), keys() and values()
    # take one side of each pair: every length and direction must give each key once, in order,
    # and an ended iteration (used up, or stopped by a change) stays ended.
    db = kv.open()
    for n in (0, 1, 3, 4, 5, 12, 13, 300, 1000):
        with db.write(str(n)) as tx:
            tx.bulk_load((b"%05d" % i, b"v%d" % i) for i in range(n))
        s = db.read(str(n))
        want = [(b"%05d" % i, b"v%d" % i) for i in range(n)]
        assert list(s.items()) == want
        assert list(s.items(reverse=True)) == want[::-1]
        assert list(s.keys()) == [k for k, _ in want] and list(s) == [k for k, _ in want]
        assert list(s.values(reverse=True)) == [v for _, v in want[::-1]]
        assert list(s.items(b"00002", b"00290")) == want[2:290]
        assert list(s.keys(prefix=b"000")) == [k for k, _ in want[:100]]
        it = s.items()
        assert list(it) == want and next(it, None) is None
        s.close()
    tx = db.write("1000")
    it, keys = tx.items(), tx.keys()
    assert [next(it) for _ in range(6)] == [(b"%05d" % i, b"v%d" % i) for i in range(6)]
    assert next(keys) == b"00000"
    tx[b"x"] = b"y"
    for i in (it, keys):
        with pytest.raises(kv.KvError):
            next(i)
        assert next(i, None) is None
    tx.abort()
