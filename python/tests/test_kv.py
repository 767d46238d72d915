"""simdex.kv from Python: transactions, snapshots, iteration, errors, persistence, CLI."""

import errno
import inspect
import json
import os
import random
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import simdex.kv as kv

# A file these tests leave open is an error: its ResourceWarning comes from a destructor, which
# pytest reports as an unraisable-exception warning.
pytestmark = [pytest.mark.filterwarnings("error::ResourceWarning"),
              pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")]


def test_memory_roundtrip_and_iteration():
    db = kv.open()
    ref = {}
    rng = random.Random(1)
    with db.write() as tx:
        for _ in range(5000):
            k = bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 9)))
            v = bytes(rng.getrandbits(8) for _ in range(rng.choice([0, 3, 8, 100])))
            tx[k] = v
            ref[k] = v
    with db.read() as snap:
        assert len(snap) == len(ref)
        keys = sorted(ref)
        assert list(snap.keys()) == keys
        assert list(snap.keys(reverse=True)) == keys[::-1]
        assert all(snap[k] == ref[k] for k in keys[:500])
        assert b"\xff" * 20 not in snap
        assert snap.get(b"\xff" * 20, b"d") == b"d"
        lo, hi = keys[100], keys[900]
        assert list(snap.keys(lo, hi)) == keys[100:900]
        assert list(snap.keys(lo, hi, reverse=True)) == keys[100:900][::-1]
        assert snap.count(lo, hi) == 800
        pre = keys[len(keys) // 2][:1]
        want = [k for k in keys if k.startswith(pre)]
        assert list(snap.keys(prefix=pre)) == want
        assert list(snap.keys(prefix=pre, reverse=True)) == want[::-1]
        probe = keys[:300] + [b"missing-%d" % i for i in range(300)]
        assert snap.get_many(probe) == [ref.get(k) for k in probe]
        snap.validate()


def test_transactions_abort_sub_and_snapshots():
    db = kv.open()
    with db.write() as tx:
        tx[b"a"] = b"1"
    before = db.read()
    with pytest.raises(RuntimeError):
        with db.write() as tx:
            tx[b"a"] = b"2"
            raise RuntimeError("abort me")
    assert db.read()[b"a"] == b"1"
    with db.write() as tx:
        with tx.sub() as sub:
            sub[b"b"] = b"kept"
        s2 = tx.sub()
        s2[b"c"] = b"dropped"
        s2.abort()
        assert tx.insert(b"a", b"x") is False
        assert tx.update(b"a", b"3") is True
        assert tx.upsert(b"d", b"4") is True
        del tx[b"d"]
        with pytest.raises(KeyError):
            del tx[b"zz"]
    snap = db.read()
    assert dict(snap.items()) == {b"a": b"3", b"b": b"kept"}
    assert dict(before.items()) == {b"a": b"1"}  # the old snapshot did not move
    with pytest.raises(kv.KvError, match="read_only") as e:
        snap[b"x"] = b"y"
    assert e.value.kind == "read_only"
    with db.write() as tx:
        assert tx.remove_range(b"a", b"b") == 1
    assert list(db.read().keys()) == [b"b"]


def test_errors_are_clear(tmp_path):
    db = kv.open()
    with pytest.raises(kv.KvError, match="key_too_long") as e:
        with db.write() as tx:
            tx[b"k" * (kv.MAX_KEY + 1)] = b""
    assert e.value.kind == "key_too_long" and isinstance(e.value, ValueError)
    assert "1025 bytes" in e.value.detail
    assert set(kv.ERROR_KINDS) >= {"key_too_long", "corrupt", "read_only", "busy", "io"}
    with pytest.raises(ValueError, match="invalid_argument"):
        kv.open(None, sync="sometimes")
    with pytest.raises(ValueError, match="read-only"):
        kv.open(None, read_only=True)  # no path: once a writable memory database
    missing = str(tmp_path / "no" / "such" / "dir.kv")
    with pytest.raises(OSError) as e:
        kv.open(missing)
    assert isinstance(e.value, kv.KvError) and e.value.kind == "io"
    # OSError's fields, as open() would give them; the message stays the kv one
    assert (e.value.errno, e.value.filename) == (errno.ENOENT, missing)
    assert e.value.strerror == os.strerror(errno.ENOENT)
    assert str(e.value) == f"kv io: create {missing}: {os.strerror(errno.ENOENT)}"
    path = str(tmp_path / "ro.kv")
    kv.open(path).close()
    ro = kv.open(path, read_only=True)
    with pytest.raises(kv.KvError) as e:
        ro.write()
    assert e.value.kind == "read_only"
    ro.close()
    bad = tmp_path / "bad.kv"
    bad.write_bytes(b"\0" * 100)
    with pytest.raises(kv.KvError, match="truncated"):
        kv.open(str(bad))
    bad.write_bytes(b"nonsense" * 2048)
    with pytest.raises(kv.KvError, match="corrupt"):
        kv.open(str(bad))


def test_file_persists_and_cli(tmp_path):
    path = str(tmp_path / "data.kv")
    db = kv.open(path, sync="fsync")
    with db.write("users") as tx:
        for i in range(2000):
            tx[b"user%05d" % i] = b"x" * (i % 90)
    db.close()
    db = kv.open(path)
    assert db.trees() == ["users"]
    with db.read("users") as s:
        assert len(s) == 2000 and s[b"user00089"] == b"x" * 89
    db.validate()
    db.compact()
    assert db.stat("users")["keys"] == 2000
    db.close()
    out = subprocess.run([sys.executable, "-m", "simdex", "kv", "stat", path, "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert '"keys": 2000' in out
    ok = subprocess.run([sys.executable, "-m", "simdex", "kv", "check", path], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    raw = bytearray(Path(path).read_bytes())
    raw[20] ^= 1
    raw[4096 + 20] ^= 1
    Path(path).write_bytes(bytes(raw))
    bad = subprocess.run([sys.executable, "-m", "simdex", "kv", "check", path], capture_output=True, text=True)
    assert bad.returncode == 1 and "bad_checksum" in bad.stderr


def test_cli_stat_checks_first_and_counts_per_tree(tmp_path):
    path = str(tmp_path / "two.kv")
    db = kv.open(path)
    for name in ("a", "b"):
        with db.write(name) as tx:
            for i in range(3000):
                tx[b"k%05d" % i] = b"v" * 20
    db.close()
    out = json.loads(subprocess.run([sys.executable, "-m", "simdex", "kv", "stat", path, "--json"],
                                    capture_output=True, text=True, check=True).stdout)
    # Per tree: its own nodes a key (the two trees once each counted the whole file).
    assert sum(out[t]["bytes_per_key"] * out[t]["keys"] for t in "ab") <= out["a"]["file_bytes"] + 1
    for t in "ab":
        assert out[t]["bytes_per_key"] == round(out[t]["node_bytes"] / out[t]["keys"], 2)
    # Every value-node reference of a one-leaf tree pointed far outside the file: stat walked
    # them and crashed; it checks the file first and says what is wrong.
    small = str(tmp_path / "small.kv")
    db = kv.open(small)
    with db.write() as tx:
        for i in range(40):
            tx[b"k%02d" % i] = b"v" * 100  # out of line: value nodes
    db.close()
    b = bytearray(Path(small).read_bytes())
    page = max((0, 1), key=lambda p: struct.unpack_from("<Q", b, p * 4096 + 16)[0])  # newer seq
    root = struct.unpack_from("<I", b, page * 4096 + 72 + 40)[0]  # meta_page.trees[0].root
    o = root * 64
    n = struct.unpack_from("<H", b, o + 2)[0]
    assert 0 < o < len(b) and n == 40
    for i in range(n):
        off = struct.unpack_from("<H", b, o + 96 + 2 * i)[0]
        klen, vlen = struct.unpack_from("<HH", b, o + off)
        assert vlen == 0xFFFF  # an out-of-line value
        struct.pack_into("<I", b, o + off + 4 + klen, 0x7FFFFFFF)
    Path(small).write_bytes(bytes(b))
    r = subprocess.run([sys.executable, "-m", "simdex", "kv", "stat", small], capture_output=True, text=True)
    assert r.returncode == 1 and "corrupt" in r.stderr and "value reference outside the file" in r.stderr, r


def test_tree_names_that_are_not_utf8(tmp_path):
    """The store takes any bytes as a name (a C++ program may write one): trees() escapes them
    instead of raising UnicodeDecodeError, and both CLI commands work on the file."""
    xxhash = pytest.importorskip("xxhash")  # in the test extras
    path = str(tmp_path / "names.kv")
    db = kv.open(path)
    with db.write("zz") as tx:
        tx[b"k"] = b"v"
    db.close()
    b = bytearray(Path(path).read_bytes())
    page = max((0, 1), key=lambda p: struct.unpack_from("<Q", b, p * 4096 + 16)[0])  # newer seq
    base, sum_at = page * 4096, page * 4096 + 72 + 32 * 64  # meta_page: 32 tree slots, checksum
    assert struct.unpack_from("<Q", b, sum_at)[0] == xxhash.xxh3_64_intdigest(bytes(b[base:sum_at]))
    name_at = base + 72  # trees[0].name
    assert bytes(b[name_at:name_at + 3]) == b"zz\0"
    b[name_at:name_at + 2] = b"\xffz"
    struct.pack_into("<Q", b, sum_at, xxhash.xxh3_64_intdigest(bytes(b[base:sum_at])))
    Path(path).write_bytes(bytes(b))
    db = kv.open(path, read_only=True)
    assert db.trees() == ["\udcffz"] and db.trees()[0].encode("utf-8", "surrogateescape") == b"\xffz"
    with db.read(db.trees()[0]) as snap:  # the escaped name opens the tree it names
        assert snap[b"k"] == b"v" and db.stat(db.trees()[0])["keys"] == 1
    db.close()
    for cmd in ("check", "stat"):
        r = subprocess.run([sys.executable, "-m", "simdex", "kv", cmd, path], capture_output=True, text=True)
        assert r.returncode == 0 and "Traceback" not in r.stderr, (cmd, r.stderr)


def test_readers_beside_a_writer_thread():
    db = kv.open()
    with db.write() as tx:
        for i in range(100):
            tx[b"acct%03d" % i] = (1000).to_bytes(8, "big")
    stop = threading.Event()
    errors = []

    def reader():
        while not stop.is_set():
            with db.read() as s:
                total = sum(int.from_bytes(v, "big") for v in s.values(prefix=b"acct"))
                if total != 100_000:
                    errors.append(total)

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    rng = random.Random(3)
    for _ in range(300):
        with db.write() as tx:
            a, b = b"acct%03d" % rng.randrange(100), b"acct%03d" % rng.randrange(100)
            va = int.from_bytes(tx[a], "big")
            amt = rng.randint(0, va)
            tx[a] = (va - amt).to_bytes(8, "big")
            tx[b] = (int.from_bytes(tx[b], "big") + amt).to_bytes(8, "big")
    stop.set()
    for t in threads:
        t.join()
    assert errors == []


def test_cursor_moves():
    db = kv.open()
    with db.write() as tx:
        for k in [b"a", b"ab", b"abc", b"b", b"ba", b"c"]:
            tx[k] = k.upper()
    with db.read() as s:
        c = s.cursor()
        assert not c.valid
        assert c.first() and c.item() == (b"a", b"A")
        assert c.last() and c.key == b"c"
        assert c.seek(b"ab") and c.value == b"AB"
        assert not c.seek(b"aa") and not c.valid
        assert c.lower_bound(b"abd") and c.key == b"b"
        assert c.upper_bound(b"b") and c.key == b"ba"
        assert c.prev() and c.key == b"b"
        assert c.next() and c.next() and c.key == b"c" and not c.next()
        assert c.first(b"ab") and c.key == b"ab"
        assert c.last(b"ab") and c.key == b"abc"
        assert c.last(b"b") and c.key == b"ba"
        assert not c.first(b"d")
        with pytest.raises(kv.KvError) as e:
            c.item()
        assert e.value.kind == "invalid_argument"


def test_bulk_load_and_remove_range():
    db = kv.open()
    pairs = [(i.to_bytes(4, "big"), b"%d" % i) for i in range(0, 100_000, 3)]
    with db.write() as tx:
        tx.bulk_load(pairs)
    with db.read() as s:
        assert len(s) == len(pairs)
        assert s[(300).to_bytes(4, "big")] == b"300"
        s.validate()
    with db.write() as tx:
        with pytest.raises(ValueError, match="not sorted"):
            tx.bulk_load([(b"b", b""), (b"a", b"")])
        assert tx.remove_range((1000).to_bytes(4, "big"), (2000).to_bytes(4, "big")) == 333
        assert tx.remove_range((90_000).to_bytes(4, "big")) == len(range(90_000, 100_000, 3))
    with db.read() as s:
        assert s.count() == len(pairs) - 333 - len(range(90_000, 100_000, 3))
        assert s.count((999).to_bytes(4, "big"), (2001).to_bytes(4, "big")) == 1
        s.validate()


def test_long_calls_release_the_gil():
    db = kv.open()
    keys = [i.to_bytes(8, "big") for i in range(200_000)]
    with db.write() as tx:
        tx.bulk_load([(k, b"v") for k in keys])
    ticks = [0]
    stop = threading.Event()

    def worker():
        while not stop.is_set():
            time.sleep(0.0005)
            ticks[0] += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(5.0)  # the main thread does not give the GIL up between bytecodes
    t = threading.Thread(target=worker)
    t.start()
    during = 0
    try:
        with db.read() as s:
            for _ in range(5):
                before = ticks[0]
                s.get_many(keys)
                during += ticks[0] - before
    finally:
        stop.set()
        t.join()
        sys.setswitchinterval(old)
    assert during > 0, "the worker never ran while get_many did"


def test_public_api_is_documented():
    assert kv.__doc__ and kv.open.__doc__
    for cls in (kv.Database, kv.Snapshot, kv.Transaction, kv.Cursor):
        assert cls.__doc__, cls
        for name, member in inspect.getmembers(cls):
            if name.startswith("_"):
                continue
            assert inspect.getdoc(member), f"{cls.__name__}.{name} has no docstring"


def test_benchmark_bar_table_reads_a_run():
    from simdex.benchmarks import kv as bench

    def row(workload, contender, median, unit="Mops/s", **params):
        return {"workload": workload, "contender": contender, "median": median, "unit": unit,
                "params": {"gen": "rand", "keys": 1000, **params}}

    doc = {"results": [
        row("insert/tx-per-round", "simdex", 1.0, round=1),
        row("insert/tx-per-round", "simdex", 3.0, round=2, keys=2000),
        row("insert/tx-per-round", "lmdb", 1.0, round=2, keys=2000),
        row("insert/tx-per-round", "simdex-scalar", 2.0, round=2, keys=2000),
        row("bytes-per-key/file", "simdex", 60.0, unit="B/key"),
        row("bytes-per-key/file", "lmdb", 30.0, unit="B/key"),
        row("concurrent/reader-alone", "simdex", 2.0),
        row("concurrent/reader-with-writer", "simdex", 1.8),
    ]}
    table = bench.bar_table(doc)
    # The largest tree's row is used: 3.0 / 1.0 meets the 3x bar; 60 / 30 B/key misses 1.5x.
    assert "| random insert, one transaction per round | 2000 | 3 Mops/s | 1 | 3.00 | >= 3.0x | met |" in table
    assert "| file bytes per key | 1000 | 60 B/key | 30 | 2.00 | <= 1.5x | missed |" in table
    assert "0.90 | >= 0.8x | met" in table
    assert "| insert/tx-per-round | 1.50 |" in bench.simd_table(doc)
    assert all(h["peers"] == ["lmdb"] for h in bench.HEADLINES)


def test_cursor_and_iteration_refuse_a_changed_view():
    """A cursor (and items()) of a closed snapshot read nodes later commits freed and reused
    (an audit walked other transactions' keys through one); of a transaction, nodes its own
    writes rewrote. Both now raise, never end early as if the keys had run out."""
    db = kv.open()
    with db.write() as tx:
        for i in range(5000):
            tx[b"k%06d" % i] = b"v"
    s = db.read()
    c = s.cursor()
    assert c.first()
    it = s.items()
    next(it)
    s.close()
    with db.write() as tx:
        tx.remove_range(b"")
        for i in range(3000):
            tx[b"x%d" % i] = b"y" * 50
    with pytest.raises(kv.KvError, match="make a new cursor"):
        c.next()
    with pytest.raises(kv.KvError, match="make a new cursor"):
        c.valid()
    with pytest.raises(kv.KvError, match="make a new cursor"):
        list(it)
    with db.write() as tx:
        got = tx.items()
        next(got)
        tx[b"new"] = b"1"
        tx.get(b"new")  # applies the buffered put: the tree changed under the iteration
        with pytest.raises(kv.KvError, match="make a new cursor"):
            list(got)
        assert sum(1 for _ in tx.items()) == len(tx)  # a fresh iteration sees the new tree


def test_second_write_transaction_in_one_thread_is_refused():
    """It waited for itself forever, without the GIL and deaf to Ctrl-C."""
    db = kv.open()
    tx = db.write()
    tx[b"a"] = b"1"
    with pytest.raises(kv.KvError, match="already has a write transaction open") as e:
        db.write()
    assert e.value.kind == "busy"
    tx.commit()
    with db.write() as tx2:
        assert tx2[b"a"] == b"1"


def test_paths_and_cursors_do_not_trap_the_file(tmp_path):
    """A NUL in the path looped forever creating the file; a cursor of a closed snapshot kept
    the database open after close() (reopen: busy; compact: busy with nothing open)."""
    with pytest.raises(kv.KvError, match="NUL"):
        kv.open(str(tmp_path / "a\0b.kv"))
    p = str(tmp_path / "c.kv")
    db = kv.open(p)
    with db.write() as tx:
        tx[b"a"] = b"1"
    with db.read() as snap:
        c = snap.cursor()
        assert c.first()
    db.compact()  # no snapshot or transaction is open
    db.close()
    db2 = kv.open(p)
    assert db2.read()[b"a"] == b"1"
    with pytest.raises(kv.KvError, match="make a new cursor"):
        _ = c.key
    db2.close()


def test_parent_transaction_is_not_readable_while_a_sub_is_open():
    """Reads through a parent returned its open sub-transaction's uncommitted writes. Every read
    of the parent (its cursors and iterations included) now raises until the sub ends, as its
    writes already did; a cursor made before reads on after an abort."""
    db = kv.open()
    with db.write() as tx:
        for i in range(300):
            tx[b"k%04d" % i] = b"v"
        c = tx.cursor()
        assert c.first() and c.key == b"k0000"
        sub = tx.sub()
        sub[b"new"] = b"uncommitted"
        assert sub[b"new"] == b"uncommitted"
        reads = [
            lambda: tx.get(b"new"),
            lambda: tx[b"k0001"],
            lambda: b"k0001" in tx,
            lambda: len(tx),
            lambda: tx.count(),
            lambda: tx.get_many([b"k0001", b"new"]),
            lambda: list(tx.items()),
            lambda: tx.cursor(),
            lambda: tx.stat(),
            lambda: tx.validate(),
            lambda: c.next(),
            lambda: c.key,
            lambda: c.valid,
            lambda: tx.put(b"p", b"1"),
            lambda: tx.remove(b"k0001"),
            lambda: tx.commit(),
        ]
        for read in reads:
            with pytest.raises(kv.KvError, match="sub-transaction") as e:
                read()
            assert e.value.kind == "invalid_argument" and isinstance(e.value, ValueError)
        sub.abort()
        assert tx.get(b"new") is None and len(tx) == 300
        assert c.valid and c.next() and c.key == b"k0001"  # the tree is as it was
        with tx.sub() as sub2:
            sub2[b"kept"] = b"1"
        assert tx[b"kept"] == b"1" and len(tx) == 301
        with pytest.raises(kv.KvError, match="make a new cursor"):
            c.next()  # the committed sub changed the tree under it
    assert db.read()[b"kept"] == b"1"


def test_damaged_newest_commit_record_is_reported(tmp_path):
    """A damaged newest meta page made the open fall back to the previous commit silently: the
    last commit vanished. recovery(), `kv check` (exit 1) and `kv stat` now say so."""
    path = str(tmp_path / "meta.kv")
    db = kv.open(path)
    for i in range(1, 4):
        with db.write() as tx:
            tx[b"last"] = b"%d" % i
            tx[b"n%d" % i] = b"x" * 100
    db.close()
    db = kv.open(path, read_only=True)
    rec = db.recovery()
    assert rec == {"meta_fallback": False, "seq": 3, "damaged_page": None, "lost_seq": None,
                   "detail": ""}
    db.close()
    assert kv.open().recovery()["meta_fallback"] is False
    good = Path(path).read_bytes()

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "simdex", "kv", *args, path],
                              capture_output=True, text=True, cwd=str(tmp_path))

    raw = bytearray(good)
    raw[(3 % 2) * 4096 + 300] ^= 0x40  # the newest page (commit 3): checksum mismatch
    Path(path).write_bytes(bytes(raw))
    db = kv.open(path, read_only=True)
    rec = db.recovery()
    assert rec["meta_fallback"] is True and rec["seq"] == 2 and rec["lost_seq"] == 3
    assert rec["damaged_page"] == 1
    assert "newest commit record (meta page 1, commit 3) is damaged" in rec["detail"]
    assert "opened the previous commit 2: commit 3 is lost" in rec["detail"]
    with db.read() as s:
        assert s[b"last"] == b"2" and b"n3" not in s
    db.close()
    bad = cli("check")
    assert bad.returncode == 1, (bad.stdout, bad.stderr)
    assert "the newest commit record (meta page 1, commit 3) is damaged" in bad.stderr
    assert "opened the previous commit 2: commit 3 is lost" in bad.stderr
    assert "NOT ok: commit 3 is lost; the previous commit 2 is intact" in bad.stdout
    st = cli("stat")
    assert st.returncode == 0 and "warning:" in st.stderr and "commit 3 is lost" in st.stderr
    assert "commit 2" in st.stdout
    st = cli("stat", "--json")
    assert st.returncode == 0 and "commit 3 is lost" in st.stderr and '"seq": 2' in st.stdout

    raw = bytearray(good)
    raw[4096 - (3 % 2) * 4096 + 300] ^= 0x40  # the older page: nothing is lost
    Path(path).write_bytes(bytes(raw))
    ok = cli("check")
    assert ok.returncode == 0, ok.stderr
    assert "older commit record" in ok.stderr and "nothing is lost" in ok.stderr
    assert ": ok (" in ok.stdout
    db = kv.open(path)
    assert db.recovery()["meta_fallback"] is False and db.recovery()["damaged_page"] == 0
    assert db.read()[b"last"] == b"3"
    with db.write() as tx:  # the next commit rewrites the damaged page
        tx[b"last"] = b"4"
    db.close()
    assert kv.open(path, read_only=True).recovery()["damaged_page"] is None


def test_with_block_ends_open_sub_transactions(tmp_path):
    """An error in a `with` block that left a sub-transaction open surfaced as the parent's
    refused abort (KvError invalid_argument) instead of the block's own error, and the writer
    slot stayed taken; leaving the block normally with a sub open is refused and commits nothing."""
    db = kv.open(str(tmp_path / "w.db"))
    with pytest.raises(ZeroDivisionError):
        with db.write() as tx:
            tx[b"a"] = b"1"
            inner = tx.sub()
            inner[b"b"] = b"2"
            raise ZeroDivisionError
    assert not inner.active
    with db.write() as tx:  # the writer slot is free again
        assert b"a" not in tx
        tx[b"c"] = b"3"
    with pytest.raises(kv.KvError) as e:
        with db.write() as tx:
            tx[b"d"] = b"4"
            tx.sub()[b"e"] = b"5"
    assert e.value.kind == "invalid_argument"
    with db.read() as s:
        assert list(s.keys()) == [b"c"]
    with db.write() as tx:
        tx[b"f"] = b"6"
    db.close()


def test_bench_kv_measures_only_what_only_names(tmp_path):
    """bench_kv ignored --only: every workload ran (minutes, hundreds of MB of scratch files)."""
    from simdex import bench

    if "kv" not in bench.available():
        pytest.skip(f"bench_kv not built in {bench.bench_dir()}")
    r = subprocess.run([str(bench.bench_dir() / "bench_kv"), "--only", "iterate", "--only", "reader-alone-wall",
                        "--items", "3000", "--rounds", "1", "--gens", "rand", "--quick", "--reps", "1",
                        "--no-probe", "--out", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    doc = json.loads((tmp_path / "kv.json").read_text())
    assert {x["workload"] for x in doc["results"]} == {"iterate/full", "concurrent/reader-alone-wall"}


def test_calls_from_several_threads_never_crash():
    """A call that releases the GIL (validate, stat, commit, remove_range, write() waiting its
    turn, compact) ran beside close(), release() or abort() from another thread and crashed
    (use after unmap, double free); compact() lost a commit made meanwhile. A conflicting call
    is now refused with KvError busy (audit of 2026-11-28)."""
    db = kv.open()
    with db.write() as tx:
        tx.bulk_load((b"%08d" % i, b"v") for i in range(200_000))
    holder = db.write()
    waiting_done = []

    def waits_for_the_writer():
        with db.write() as t:  # registered while it waits for `holder`
            t[b"late"] = b"1"
        waiting_done.append(True)

    th = threading.Thread(target=waits_for_the_writer)
    th.start()
    time.sleep(0.2)
    for call in (db.close, db.compact):
        with pytest.raises(kv.KvError) as e:
            call()
        assert e.value.kind == "busy"
    holder.commit()
    th.join()
    assert waiting_done and db.read()[b"late"] == b"1"

    # Racing pairs: each either runs or is refused with busy; nothing crashes or is lost.
    def race(slow, quick):
        errors = []

        def run():
            try:
                slow()
            except kv.KvError as e:
                errors.append(e.kind)

        t = threading.Thread(target=run)
        t.start()
        time.sleep(0.002)
        try:
            quick()
        except kv.KvError as e:
            errors.append(e.kind)
        t.join()
        assert set(errors) <= {"busy"}, errors

    for _ in range(3):
        s = db.read()
        race(s.validate, s.close)
        s.close()
        tx = db.write()
        race(lambda: tx.remove_range(b"", None), tx.abort)
        if tx.active:
            tx.abort()
        race(db.validate, lambda: db.write().abort())
    db.validate()
    assert len(db.read()) == 200_001
    db.close()


def test_cursor_refuses_while_its_transaction_is_in_a_call():
    """A transaction's cursor moved while another thread's commit (or validate) of the same
    transaction ran without the GIL: its staleness check could pass just before the commit
    began changing the nodes it reads. It is now refused with busy, as the transaction's own
    calls are (audit of 2026-11-28)."""
    db = kv.open()
    tx = db.write()
    tx.bulk_load((b"%08d" % i, b"v" * 16) for i in range(300_000))
    c = tx.cursor()
    assert c.first()
    refused = False
    for _ in range(10):  # validate walks 300,000 keys: the cursor call lands inside it
        t = threading.Thread(target=tx.validate)
        t.start()
        time.sleep(0.005)
        try:
            c.next()
        except kv.KvError as e:
            assert e.kind == "busy"
            refused = True
        t.join()
        if refused:
            break
    assert refused
    assert c.next() and c.valid  # idle again: the cursor moves on
    tx.abort()
    db.close()


def test_file_names_that_are_not_utf8(tmp_path):
    """A name that is not UTF-8 (os.listdir and argv give it escaped) raised TypeError from the
    native open; it now opens as the bytes it is, from Python and from the CLI."""
    name = os.fsdecode(b"db\xff.kv")
    p = tmp_path / name
    db = kv.open(p)
    with db.write() as tx:
        tx[b"k"] = b"v"
    db.close()
    assert os.fsencode(name) in os.listdir(os.fsencode(str(tmp_path)))
    assert kv.open(str(p), read_only=True).read()[b"k"] == b"v"
    r = subprocess.run([sys.executable, "-m", "simdex", "kv", "check", os.fsencode(str(p))],
                       capture_output=True)
    assert r.returncode == 0 and b": ok" in r.stdout and b"Traceback" not in r.stderr, r.stderr
    with pytest.raises(OSError) as e:
        kv.open(tmp_path / os.fsdecode(b"no\xff") / "x.kv")
    assert e.value.filename == str(tmp_path / os.fsdecode(b"no\xff") / "x.kv")
