"""simdex.kv and the file system: growth that fails, a full disk, symbolic links (audit of
2026-11-28). Failures are made with RLIMIT_FSIZE (EFBIG), and a full disk with a small tmpfs
where this runs as root."""

import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

import simdex.kv as kv


@pytest.fixture
def fsize_limit():
    old_sig = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    old = resource.getrlimit(resource.RLIMIT_FSIZE)

    def set_limit(n):
        resource.setrlimit(resource.RLIMIT_FSIZE, (n, old[1]))

    yield set_limit
    resource.setrlimit(resource.RLIMIT_FSIZE, old)
    signal.signal(signal.SIGXFSZ, old_sig)


def test_failed_commit_is_kept_and_writes_refused(tmp_path, fsize_limit):
    """A commit whose file write failed was undone after its trees were published: abort()
    freed live nodes and the next commit overwrote them. It now stays in memory and the
    database refuses writes until reopened; the file opens to the last commit it holds."""
    p = str(tmp_path / "a.kv")
    db = kv.open(p)
    fsize_limit(4 << 20)
    for i in range(200_000):
        tx = db.write()
        tx[b"k%06d" % i] = b"x" * 100
        try:
            tx.commit()
        except kv.KvError as e:
            assert e.kind == "io"
            break
    else:
        pytest.fail("the limit was never reached")
    assert not tx.active
    assert (b"k%06d" % i) in db.read()  # published: the process's snapshots see it
    fsize_limit(resource.RLIM_INFINITY)
    for call in (db.write, db.compact):
        with pytest.raises(kv.KvError, match="reopen") as e:
            call()
        assert e.value.kind == "io" and "kv io: kv io" not in str(e.value)
    db.close()
    db = kv.open(p)
    db.validate()
    with db.write() as t:
        t[b"z"] = b"1"
    db.validate()
    db.close()


def test_failed_growth_in_a_transaction_leaks_nothing(tmp_path, fsize_limit):
    """The extent a write took before the file failed to grow was never given back, and the
    next commit wrote the leak into the file ("units neither used nor free": `simdex kv check`
    failed on it from then on)."""
    p = str(tmp_path / "a.kv")
    db = kv.open(p)
    fsize_limit(3 << 20)
    with pytest.raises(kv.KvError) as e:
        with db.write() as tx:
            tx[b"big"] = b"x" * (4 << 20)
    assert e.value.kind == "io"
    fsize_limit(resource.RLIM_INFINITY)
    with db.write() as tx:
        tx[b"small"] = b"1"
    db.validate()
    db.close()
    kv.open(p).validate()



def test_write_failed_halfway_is_aborted_without_a_leak(tmp_path, fsize_limit):
    """A write that ran out of room after taking some nodes (copies on its path, a split) left
    them linked or not, and the abort, walking the tree alone, leaked those it did not reach:
    the next commit wrote the leak into the file. The transaction now takes nothing but abort,
    which gives back what the write took and what it released."""
    p = str(tmp_path / "a.kv")
    db = kv.open(p)
    fsize_limit(4 << 20)
    r = random.Random(1)
    for _ in range(4):
        with pytest.raises(OSError):
            with db.write() as tx:
                for _ in range(100_000):
                    key = b"%06d" % r.randrange(40_000) + b"x" * r.choice([0, 30, 500])
                    tx.put(key, b"v" * r.choice([5, 100, 3000]))
        db.validate()
    tx = db.write()
    with pytest.raises(OSError):
        for i in range(100_000):
            tx.upsert(b"y%06d" % i, b"w" * 100)
    for call in (tx.commit, lambda: tx.get(b"y"), lambda: tx.put(b"y", b"1")):
        with pytest.raises(OSError, match="can only be aborted"):
            call()
    tx.abort()
    fsize_limit(resource.RLIM_INFINITY)
    db.validate()
    db.close()
    kv.open(p).validate()


@pytest.mark.parametrize("share", [4, 2], ids=["creating", "copying"])
def test_failed_compact_leaves_no_file_and_the_database_works(tmp_path, fsize_limit, share):
    """A compact() that failed while writing its new file (full disk, EFBIG here) left a
    half-written database beside the real one: PATH.compact when the copy failed, and
    PATH.compact.new-PID-N when creating it did (any new database's creation left that)."""
    p = str(tmp_path / "a.kv")
    db = kv.open(p)
    with db.write() as tx:
        for i in range(20_000):
            tx[b"k%06d" % i] = b"x" * 100
    size = os.path.getsize(p)
    fsize_limit(size // share)  # the old file keeps its size; the new one cannot reach it
    with pytest.raises(kv.KvError) as e:
        db.compact()
    assert e.value.kind == "io"
    assert sorted(os.listdir(tmp_path)) == ["a.kv"]
    fsize_limit(resource.RLIM_INFINITY)
    assert len(db.read()) == 20_000
    with db.write() as tx:
        tx[b"z"] = b"1"
    db.compact()
    db.validate()
    db.close()
    assert sorted(os.listdir(tmp_path)) == ["a.kv"]
    with kv.open(p, read_only=True) as db:
        assert len(db.read()) == 20_001

def _in_child(code: str, *args, timeout=60):
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


OPEN_PUT_CLOSE = """
import sys, simdex.kv as kv
db = kv.open(sys.argv[1])
with db.write() as tx:
    tx[b"k"] = b"v"
db.close()
"""


def test_dangling_symlink_creates_the_database_where_it_points(tmp_path):
    """Opening through a dangling link looped for ever (creating beside the link and linking
    onto its name failed with EEXIST, taken for another process's creation), writing a 2 MiB
    temporary file each round, without the GIL. The database is now created at the target."""
    link, target = tmp_path / "link.kv", tmp_path / "sub" / "target.kv"
    (tmp_path / "sub").mkdir()
    link.symlink_to(os.path.join("sub", "target.kv"))  # relative: resolved from the link's folder
    r = _in_child(OPEN_PUT_CLOSE, link)
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and target.is_file()
    assert sorted(os.listdir(tmp_path)) == ["link.kv", "sub"]  # no temporary files left
    assert kv.open(str(link), read_only=True).read()[b"k"] == b"v"


def test_symlink_to_an_empty_file_and_compact_keep_the_link(tmp_path):
    """An empty file is replaced by a database, and compact() renames a new file into place:
    through a link, both replaced the link itself with a regular file, leaving the target."""
    target, link = tmp_path / "target.kv", tmp_path / "link.kv"
    target.touch()
    link.symlink_to(target)
    db = kv.open(str(link))
    with db.write() as tx:
        tx[b"k"] = b"v"
    db.compact()
    with db.write() as tx:
        tx[b"k2"] = b"v2"
    db.close()
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert not os.path.exists(str(target) + ".compact")
    with kv.open(str(target), read_only=True) as db:
        assert dict(db.read().items()) == {b"k": b"v", b"k2": b"v2"}


FILL = """
import sys, simdex.kv as kv
db = kv.open(sys.argv[1], sync=sys.argv[2])
try:
    with db.write() as tx:
        for i in range(200_000):
            tx[b"k%07d" % i] = b"x" * 100
except kv.KvError as e:
    print(e.kind, e.errno)
"""


@pytest.mark.parametrize("sync", ["none", "fsync"])
def test_full_disk_raises_io_instead_of_sigbus(sync):
    """The file grew sparse, so the first store into a page a full file system could not back
    killed the process with SIGBUS (exit 135). Growth now reserves the blocks and fails with
    io (ENOSPC) instead."""
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root to mount a small tmpfs")
    d = tempfile.mkdtemp()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", d],
                      capture_output=True).returncode != 0:
        os.rmdir(d)
        pytest.skip("cannot mount a tmpfs here")
    try:
        r = _in_child(FILL, os.path.join(d, "a.kv"), sync)
        assert r.returncode == 0, (r.returncode, r.stderr)
        assert r.stdout.split() == ["io", str(__import__("errno").ENOSPC)], r.stdout
    finally:
        subprocess.run(["umount", d], capture_output=True)
        os.rmdir(d)


def test_os_errors_are_the_builtin_kinds_too(tmp_path):
    """A missing file was a kv.OSError with errno ENOENT but not a FileNotFoundError, so
    `except FileNotFoundError` (what code around open() catches) let it through."""
    import errno

    missing = str(tmp_path / "no" / "such.kv")
    with pytest.raises(FileNotFoundError) as e:
        kv.open(missing, read_only=True)
    assert isinstance(e.value, kv.KvError) and e.value.kind == "io" and e.value.errno == errno.ENOENT
    assert e.value.filename == missing and "such.kv" in str(e.value)
    with pytest.raises(FileNotFoundError):
        kv.open(missing)  # its folder is missing
    (tmp_path / "f").write_bytes(b"")
    with pytest.raises(NotADirectoryError):
        kv.open(str(tmp_path / "f" / "x.kv"))
