"""simdex.kv from Python: transactions, snapshots, iteration, errors, persistence, CLI."""

import random
import subprocess
import sys
import threading

import pytest

import simdex.kv as kv


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
    with pytest.raises(kv.KvError, match="read_only"):
        snap[b"x"] = b"y"
    with db.write() as tx:
        assert tx.remove_range(b"a", b"b") == 1
    assert list(db.read().keys()) == [b"b"]


def test_errors_are_clear(tmp_path):
    db = kv.open()
    with pytest.raises(kv.KvError, match="key_too_long"):
        with db.write() as tx:
            tx[b"k" * (kv.MAX_KEY + 1)] = b""
    with pytest.raises(kv.KvError, match="invalid_argument"):
        kv.open(None, sync="sometimes")
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
    raw = bytearray(open(path, "rb").read())
    raw[20] ^= 1
    raw[4096 + 20] ^= 1
    open(path, "wb").write(bytes(raw))
    bad = subprocess.run([sys.executable, "-m", "simdex", "kv", "check", path], capture_output=True, text=True)
    assert bad.returncode == 1 and "bad_checksum" in bad.stderr


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
