"""`simdex kv dump|load|compact|get|put|del|scan`: mdb_dump's text format both ways, with simdex
and with LMDB's own tools (mdb_dump / mdb_load, Debian's lmdb-utils: those tests skip where the
tools are absent, unless SIMDEX_REQUIRE_LMDB_UTILS=1), and the scripting commands' exit
statuses."""

import io
import os
import random
import shutil
import subprocess
import sys

import pytest

import simdex.kv as kv


def _kv(*args, input=None):
    """`simdex kv ARGS` run in this process (a process per call made this file take 40 s), its
    stdin (bytes, or a raw stream), stdout and stderr bytes in memory: .returncode, .stdout,
    .stderr as subprocess.run's."""
    from simdex import cli

    def stream(data=b""):
        raw = io.BufferedReader(data) if isinstance(data, io.RawIOBase) else io.BytesIO(data)
        return io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape")

    saved = sys.stdin, sys.stdout, sys.stderr
    sys.stdin, sys.stdout, sys.stderr = stream(input or b""), stream(), stream()
    try:
        code = cli.main(["kv", *map(str, args)])
        sys.stdout.flush(), sys.stderr.flush()
        return subprocess.CompletedProcess(args, code, sys.stdout.buffer.getvalue(), sys.stderr.buffer.getvalue())
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved


def _all(path):
    """{tree: [(key, value), ...]} of every tree of a database file."""
    with kv.open(path, read_only=True) as db:
        out = {}
        for t in db.trees():
            with db.read(t) as s:
                out[t] = list(s.items())
        return out


def _fill(path, trees):
    with kv.open(path) as db:
        for t, pairs in trees.items():
            with db.write(t) as tx:
                for k, v in pairs:
                    tx[k] = v


def _binary_pairs(rng, n, max_key=kv.MAX_KEY, empty_key=True):
    """Keys and values over every byte, empty value, a long value, a key of the store's limit."""
    pairs = {bytes([b]): bytes([255 - b]) * (b % 5) for b in range(256)}  # every byte, empty values
    pairs[bytes(range(256))] = bytes(range(256))[::-1]
    pairs[b"long"] = rng.randbytes(300_000)
    pairs[b"k" * max_key] = b"\\" * 100  # backslashes: print format's escape
    pairs[b"a\\b\\\\c\\5c"] = b"\\x41\n\r\t"
    if empty_key:
        pairs[b""] = b"empty key"
    for _ in range(n):
        pairs[rng.randbytes(rng.randint(1, 40))] = rng.randbytes(rng.randint(0, 200))
    return sorted(pairs.items())


@pytest.mark.parametrize("fmt", [[], ["-p"]])
def test_round_trip_through_dump_and_load(tmp_path, fmt):
    rng = random.Random(7)
    trees = {"": _binary_pairs(rng, 500)}
    for i in range(6):
        trees[f"tree {i}"] = _binary_pairs(rng, 50)[: 100 + i]
    trees["empty"] = []
    src, dst, dump = tmp_path / "src.kv", tmp_path / "dst.kv", tmp_path / "d.txt"
    _fill(src, trees)
    r = _kv("dump", src, "-a", *fmt, "-o", dump)
    assert r.returncode == 0 and r.stdout == b"" and r.stderr == b"", r.stderr
    r = _kv("load", dst, "-f", dump, "--batch", 97)  # several commits per tree
    assert r.returncode == 0, r.stderr
    assert f"loaded {len(trees[''])} pairs into the default tree, ".encode() in r.stderr
    assert _all(dst) == trees
    # Loading the same dump again changes nothing (overwrites), and its dump is byte for byte the same.
    assert _kv("load", dst, "-f", dump).returncode == 0
    again = _kv("dump", dst, "-a", *fmt)
    assert again.returncode == 0 and again.stdout == dump.read_bytes()


def test_dump_names_trees_as_mdb_dump_names_databases(tmp_path):
    p = tmp_path / "x.kv"
    _fill(p, {"": [(b"a", b"1")], "users": [(b"u", b"\x00\\")]})
    plain = _kv("dump", p).stdout.decode()
    assert plain.startswith("VERSION=3\nformat=bytevalue\ntype=btree\nmapsize=")  # the main database: no database=
    assert plain.endswith("HEADER=END\n 61\n 31\nDATA=END\n")
    named = _kv("dump", p, "-t", "users", "-p").stdout.decode()
    assert named.startswith("VERSION=3\nformat=print\ndatabase=users\ntype=btree\n")
    assert named.endswith("HEADER=END\n u\n \\00\\5c\nDATA=END\n")
    assert _kv("dump", p, "-a").stdout.decode() == plain + _kv("dump", p, "-t", "users").stdout.decode()
    missing = _kv("dump", p, "-t", "user", "-o", tmp_path / "out.txt")
    assert missing.returncode == 1 and b"no tree named 'user'" in missing.stderr
    assert not (tmp_path / "out.txt").exists() and os.listdir(tmp_path) == ["x.kv"]  # no partial output
    same = _kv("dump", p, "-o", p)  # would have renamed the dump over the database
    assert same.returncode == 2 and b"is the database itself" in same.stderr and _all(p)["users"]
    # A file never written: one empty section (as mdb_dump of a new environment); -a: nothing.
    kv.open(tmp_path / "new.kv").close()
    assert _kv("dump", tmp_path / "new.kv").stdout.endswith(b"HEADER=END\nDATA=END\n")
    assert _kv("dump", tmp_path / "new.kv", "-a").stdout == b""


def test_dump_help_says_what_p_writes(tmp_path):
    """--help's -p line names the escapes dump -p writes (a backslash as \\5c, not \\\\)."""
    p = tmp_path / "x.kv"
    _fill(p, {"": [(b"\\\n", b"")]})
    written = _kv("dump", p, "-p").stdout.split(b"HEADER=END\n")[1].split(b"\n")[0]
    assert written == b" \\5c\\0a"
    helptext = b" ".join(_kv("dump", "--help").stdout.split())
    assert b"a backslash as \\5c" in helptext, helptext


def test_print_format_of_a_long_value_takes_memory_in_proportion(tmp_path):
    """dump -p and load of a value of MiBs (random bytes: escapes all along it): the print
    format's escapes took a bytes object each, 50 (dump) and 100 (load) times the value in memory."""
    import tracemalloc

    p, dump, value = tmp_path / "x.kv", tmp_path / "d.txt", random.Random(3).randbytes(2 << 20)
    _fill(p, {"": [(b"k", value), (b"\\", b"\\\\" + value[:9000])]})
    for args in (["dump", p, "-p", "-o", dump], ["load", tmp_path / "y.kv", "-f", dump]):
        tracemalloc.start()
        try:
            r = _kv(*args)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert r.returncode == 0, r.stderr
        assert peak < 16 * len(value), (args[0], peak / len(value))
    assert _all(tmp_path / "y.kv") == _all(p)


def test_dump_of_a_damaged_file_fails_before_writing(tmp_path):
    """Reads trust the nodes: dump walked a damaged file into garbage (exit 0) or a crash. It
    checks the file first, as stat does (a process of its own: the old crash would end pytest)."""
    p, out = tmp_path / "x.kv", tmp_path / "d.txt"
    _fill(p, {"": [(b"%05d" % i, b"v" * 20) for i in range(3000)]})
    with open(p, "r+b") as f:  # a node in the middle of the tree
        f.seek(5 * 4096 + 100)
        f.write(b"\xff" * 64)
    with kv.open(p, read_only=True) as db, pytest.raises(kv.KvError, match="corrupt"):
        db.validate()
    r = subprocess.run([sys.executable, "-m", "simdex", "kv", "dump", str(p), "-o", str(out)], capture_output=True)
    assert r.returncode == 1 and b"kv corrupt" in r.stderr and b"nothing dumped" in r.stderr, r
    assert not out.exists()


def _stream(*sections, fmt="bytevalue"):
    out = []
    for name, lines in sections:
        out += ["VERSION=3", f"format={fmt}"] + ([f"database={name}"] if name else []) + ["type=btree", "HEADER=END"]
        out += lines + ["DATA=END"]
    return ("\n".join(out) + "\n").encode()


_GOOD = [" 6131", " 7631", " 6132", " 7632"]  # a1 -> v1, a2 -> v2


@pytest.mark.parametrize("text, line, says", [
    # truncated: the stream ends in the data, then inside a pair
    (_stream(("", _GOOD))[:-len(b"DATA=END\n")], 9, "the input ended before DATA=END"),
    (_stream(("", _GOOD + [" 6133"]))[:-len(b"DATA=END\n")], 10, "the input ended after a key line, before its value"),
    (_stream(("", _GOOD + [" 61zz", " 00"])), 9, "bad hex digit 'z' at column 4 of a key line"),
    (_stream(("", _GOOD + [" 6133", " 123"])), 10, "odd number of hex digits (3) in a value line"),
    (_stream(("", _GOOD + [" 6133", "DATA=END"])), 10, "DATA=END after a key without its value"),
    (_stream(("", _GOOD + ["6133", " 00"])), 9, "expected a key line (a space, then the data) or DATA=END"),
    (b"VERSION=3\nformat=bytevalue\ntype=btree\n 6131\n 7631\nDATA=END\n", 4, "a data line before HEADER=END"),
    (b"VERSION=3\nformat=bytevalue\ntype=btree\n", 4, "the input ended inside a header (no HEADER=END)"),
    (b"hello\n", 1, "expected VERSION=3"),
    (_stream(("", _GOOD + [" " + "6b" * (kv.MAX_KEY + 1), " 00"])), 9,
     f"key of {kv.MAX_KEY + 1} bytes is over the {kv.MAX_KEY}-byte limit"),
    (_stream(("", [" a1", " v1", " a\\b", " x"]), fmt="print"), 7,
     "a backslash not followed by \\ or two hex digits at column 3 of a key line"),
    (_stream(("", _GOOD)).replace(b"type=btree", b"type=btree\ndupsort=1"), 4, "'dupsort=1': the database holds duplicate keys"),
])
def test_bad_input_names_its_line_and_loads_what_came_before(tmp_path, text, line, says):
    p = tmp_path / "x.kv"
    r = _kv("load", p, "--batch", 1, input=text)
    err = r.stderr.decode()
    assert r.returncode == 1 and f"stdin:{line}: {says}" in err, err
    before = min(2, max(0, (line - 5) // 2))  # the good pairs (lines 5 to 8) before the bad line
    assert f"loaded before line {line} (committed): {before} pair" in err, err
    got = _all(p) if p.exists() else {}
    assert got.get("", []) == [(b"a1", b"v1"), (b"a2", b"v2")][:before]


@pytest.mark.parametrize("fmt, value", [("bytevalue", " 76317632"), ("print", " v1v2")])
def test_a_stream_cut_inside_its_last_value_line_loads_no_cut_value(tmp_path, fmt, value):
    """A dump cut inside a line (mdb_dump killed, a partial copy) ends without its line break:
    the cut value must not load as if it were whole (mdb_load: "unexpected end of input")."""
    p = tmp_path / "x.kv"
    first = [" 6131", " 7631"] if fmt == "bytevalue" else [" a1", " v1"]
    head = _stream(("", first), fmt=fmt).split(b"DATA=END")[0]  # a1 -> v1, then a2's cut pair
    cut = head + (b" 6132\n" if fmt == "bytevalue" else b" a2\n") + value.encode()
    r = _kv("load", p, input=cut)
    err = r.stderr.decode()
    assert r.returncode == 1 and "stdin:8: the input ended inside this value line (truncated?)" in err, err
    assert _all(p) == {"": [(b"a1", b"v1")]}
    cut_key = head + b" 61"  # a key line cut: its pair never loads either
    r = _kv("load", tmp_path / "y.kv", input=cut_key)
    assert r.returncode == 1 and b"stdin:7: the input ended inside this key line" in r.stderr, r.stderr


class _Endless(io.RawIOBase):
    """``head``, then zero bytes without end, as /dev/zero; reading past 1 MiB runs out of
    memory (as reading all of it would)."""

    def __init__(self, head=b""):
        self._head, self._given = head, 0

    def readable(self):
        return True

    def readinto(self, b):
        if self._given >= 1 << 20:
            raise MemoryError
        n = len(b)
        data = (self._head[self._given:] + bytes(n))[:n]
        b[:n] = data
        self._given += n
        return n


@pytest.mark.parametrize("head, line, says", [
    (b"", 1, "a header line longer than 4095 bytes (is this mdb_dump's output?), starting '\\x00"),
    (b"VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n ", 5, "a key line longer than 3074 bytes"),
    # A value line may be GiBs: read until memory runs out, then said so (not a traceback).
    (b"VERSION=3\nformat=bytevalue\ntype=btree\nHEADER=END\n 00\n ", None,
     "out of memory reading the line after line 4 (a line without end"),
])
def test_a_line_without_end_is_an_error_not_read_whole(tmp_path, head, line, says):
    r = _kv("load", tmp_path / "x.kv", input=_Endless(head))
    assert r.returncode == 1 and f"stdin{f':{line}' if line else ''}: {says}" in r.stderr.decode(), r.stderr


def test_load_sections_trees_and_no_overwrite(tmp_path):
    p = tmp_path / "x.kv"
    two = _stream(("", _GOOD), ("users", [" 75", " 00"]))
    r = _kv("load", p, input=two)
    assert r.returncode == 0 and b"loaded 2 pairs into the default tree, 1 into 'users'" in r.stderr
    assert _all(p) == {"": [(b"a1", b"v1"), (b"a2", b"v2")], "users": [(b"u", b"\x00")]}
    # -n keeps present values (mdb_load -N); without it, a load overwrites.
    changed = _stream(("", [" 6131", " 78", " 6133", " 7633"]))
    r = _kv("load", p, "-n", input=changed)
    assert r.returncode == 0 and b"1 keys already present kept (-n)" in r.stderr
    assert _all(p)[""] == [(b"a1", b"v1"), (b"a2", b"v2"), (b"a3", b"v3")]
    assert _kv("load", p, input=changed).returncode == 0 and _all(p)[""][0] == (b"a1", b"x")
    # -t puts the one database of the input in another tree (a rename through dump and load)...
    assert _kv("load", p, "-t", "copy", input=_kv("dump", p, "-t", "users").stdout).returncode == 0
    assert _all(p)["copy"] == [(b"u", b"\x00")]
    # ...and refuses a second one at its header, the first loaded.
    r = _kv("load", tmp_path / "y.kv", "-t", "one", input=two)
    assert r.returncode == 1 and b"stdin:10: a second database in the input" in r.stderr
    assert _all(tmp_path / "y.kv") == {"one": [(b"a1", b"v1"), (b"a2", b"v2")]}
    # A database name no tree can have (LMDB's go to 511 bytes): the error is at its line, the
    # trees before it loaded, none made up; -t gives it a name.
    long = _stream(("users", [" 75", " 00"]), ("n" * 100, _GOOD))
    r = _kv("load", tmp_path / "w.kv", input=long)
    err = r.stderr.decode()
    assert r.returncode == 1 and f"stdin:11: database='{'n' * 100}': kv invalid_argument: tree name" in err, err
    assert "-t NAME" in err and "loaded before line 11 (committed): 1 pair into 'users'; nothing" in err, err
    assert _all(tmp_path / "w.kv") == {"users": [(b"u", b"\x00")]}
    # Empty input (mdb_dump -a of an environment without named databases): nothing to do.
    assert _kv("load", tmp_path / "z.kv", input=b"").returncode == 0


def test_failed_write_says_what_was_committed(tmp_path):
    """A load whose file cannot grow (a full disk) stops with the count of the pairs committed
    before, and the file holds exactly those."""
    import resource
    import signal

    p = tmp_path / "x.kv"
    text = _stream(("", [x for i in range(60_000) for x in (" " + (b"%06d" % i).hex(), " " + "76" * 100)]))
    old_sig, old = signal.signal(signal.SIGXFSZ, signal.SIG_IGN), resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 20, old[1]))
    try:
        r = _kv("load", p, "--batch", 1000, input=text)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, old)
        signal.signal(signal.SIGXFSZ, old_sig)
    err = r.stderr.decode()
    assert r.returncode == 1 and "kv io" in err, err
    n = int(err.split("committed before it: ")[1].split(" ")[0])
    assert 0 < n < 60_000 and n % 1000 == 0, err
    with kv.open(p, read_only=True) as db, db.read() as s:
        assert len(s) == n


def test_load_commits_in_batches(tmp_path):
    p = tmp_path / "x.kv"
    lines = [[" " + (b"%03d" % i).hex(), " 00"] for i in range(10)]
    r = _kv("load", p, "--batch", 3, input=_stream(("", [x for pair in lines for x in pair])))
    assert r.returncode == 0
    with kv.open(p, read_only=True) as db, db.read() as s:
        assert len(s) == 10 and s.seq == 4  # 3 + 3 + 3 + 1: one commit per batch
    assert _kv("load", p, "--batch", 0, input=b"").returncode == 2


def _on_a_terminal(*args):
    """(exit status, what a command wrote to stderr) with stderr on a pseudo-terminal."""
    import pty

    leader, follower = pty.openpty()
    try:
        r = subprocess.run([sys.executable, "-m", "simdex", "kv", *map(str, args)], stderr=follower,
                           stdout=subprocess.DEVNULL, env={**os.environ, "TERM": "xterm"})
        os.close(follower)
        follower = None
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the terminal's other end is closed and drained
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
        if follower is not None:
            os.close(follower)
    return r.returncode, shown


def test_progress_only_on_a_terminal(tmp_path):
    """Progress goes to stderr when it is a terminal; a pipe gets only the summary line."""
    p, dump = tmp_path / "x.kv", tmp_path / "d.txt"
    dump.write_bytes(_stream(("", [x for i in range(20000) for x in (" " + (b"%06d" % i).hex(), " 00")])))
    r = _kv("load", p, "-f", dump, "--batch", 1000)
    assert r.returncode == 0 and r.stderr == f"simdex kv load: {p}: loaded 20000 pairs into the default tree\n".encode()
    assert _kv("dump", p, "-o", tmp_path / "d2.txt").stderr == b""
    code, shown = _on_a_terminal("load", tmp_path / "y.kv", "-f", dump, "--batch", 1000)
    assert code == 0 and b"load: " in shown and b" pairs" in shown and b"%" in shown, shown
    code, shown = _on_a_terminal("dump", p, "-o", tmp_path / "d3.txt")
    assert code == 0 and b"dump: " in shown and b" of 20,000 pairs" in shown, shown
    assert _on_a_terminal("dump", p, "-o", tmp_path / "d4.txt", "--no-progress") == (0, b"")


def test_load_reads_crlf_and_both_backslash_forms_and_warns_on_lmdb_orders(tmp_path):
    p = tmp_path / "x.kv"
    text = _stream(("", [" a\\\\b", " \\5c\\00", " c", " "]), fmt="print")  # \\ (newer mdb_dump) and \5c
    text = text.replace(b"type=btree", b"type=btree\nintegerkey=1\nfrobnicate=2")
    r = _kv("load", p, input=text.replace(b"\n", b"\r\n"))
    assert r.returncode == 0, r.stderr
    assert _all(p) == {"": [(b"a\\b", b"\\\x00"), (b"c", b"")]}
    err = r.stderr.decode()
    assert "stdin: warning: line 4: integerkey: the keys were native-endian integers" in err
    assert "line 5: unknown header keyword 'frobnicate' ignored" in err


def _lmdb_tools():
    need = os.environ.get("SIMDEX_REQUIRE_LMDB_UTILS") == "1"
    missing = [t for t in ("mdb_dump", "mdb_load") if shutil.which(t) is None]
    if missing:
        if need:
            pytest.fail(f"SIMDEX_REQUIRE_LMDB_UTILS=1 but {', '.join(missing)} not found (apt-get install lmdb-utils)")
        pytest.skip(f"{', '.join(missing)} not found (Debian's lmdb-utils)")
    return pytest.importorskip("lmdb")


def _lmdb_pairs(rng, n, backslash=True):
    """Pairs LMDB takes: keys of 1..511 bytes."""
    pairs = _binary_pairs(rng, n, max_key=511, empty_key=False)
    if not backslash:  # mdb_dump 0.9.24 -p writes a backslash unescaped (see the docs)
        pairs = [(k.replace(b"\\", b"/"), v.replace(b"\\", b"/")) for k, v in pairs]
    return sorted(dict(pairs).items())


@pytest.mark.parametrize("fmt", [[], ["-p"]])
def test_lmdb_env_through_mdb_dump_loads_the_same(tmp_path, fmt):
    lmdb = _lmdb_tools()
    rng = random.Random(11)
    trees = {"users": _lmdb_pairs(rng, 300, backslash=not fmt), "orders": _lmdb_pairs(rng, 30, backslash=not fmt)}
    env = lmdb.open(str(tmp_path / "env"), max_dbs=4, map_size=1 << 26)
    for name, pairs in trees.items():
        db = env.open_db(name.encode())
        with env.begin(write=True, db=db) as t:
            for k, v in pairs:
                t.put(k, v)
    main = lmdb.open(str(tmp_path / "main"), map_size=1 << 26)  # an environment of the main database only
    with main.begin(write=True) as t:
        for k, v in trees["orders"]:
            t.put(k, v)
    env.close(), main.close()
    for src, args, want in ((tmp_path / "env", ["-a"], trees), (tmp_path / "main", [], {"": trees["orders"]})):
        dump = subprocess.run(["mdb_dump", *args, *fmt, str(src)], capture_output=True, check=True).stdout
        dst = tmp_path / f"{src.name}.kv"
        r = _kv("load", dst, input=dump)
        assert r.returncode == 0, r.stderr
        assert _all(dst) == want


@pytest.mark.parametrize("fmt", [[], ["-p"]])
def test_simdex_dump_through_mdb_load_reads_the_same(tmp_path, fmt):
    lmdb = _lmdb_tools()
    rng = random.Random(13)
    trees = {"": _lmdb_pairs(rng, 200), "users": _lmdb_pairs(rng, 100), "orders": [(b"o", b"")]}
    p = tmp_path / "x.kv"
    _fill(p, trees)
    for args, env_trees in ((["-a"], trees), (["-t", "users"], {"users": trees["users"]})):
        env_dir = tmp_path / f"env{len(args)}"
        env_dir.mkdir()
        dump = _kv("dump", p, *args, *fmt)
        assert dump.returncode == 0
        r = subprocess.run(["mdb_load", str(env_dir)], input=dump.stdout, capture_output=True)
        assert r.returncode == 0 and r.stderr == b"", r.stderr
        env = lmdb.open(str(env_dir), max_dbs=4, readonly=True)
        try:
            for name, pairs in env_trees.items():
                db = env.open_db(name.encode()) if name else None
                with env.begin(db=db) as t:
                    got = [(k, v) for k, v in t.cursor()]
                if not name:  # the main database also holds the named databases' records
                    got = [(k, v) for k, v in got if k not in (b"users", b"orders")]
                assert got == pairs, name
        finally:
            env.close()


def test_get_put_del_exit_statuses(tmp_path):
    p = tmp_path / "x.kv"
    assert _kv("put", p, "k", "v").returncode == 0  # creates the file
    r = _kv("get", p, "k")
    assert (r.returncode, r.stdout) == (0, b"v\n")
    r = _kv("get", p, "nope")
    assert r.returncode == 1 and b"'nope': no such key in the default tree" in r.stderr and r.stdout == b""
    # Binary through --hex, and a value from stdin as it comes.
    assert _kv("put", p, "--hex", "00ff", "0a00").returncode == 0
    assert _kv("get", p, "--hex", "00ff").stdout == b"0a00\n"
    assert _kv("put", p, "-t", "users", "bin", input=b"\x00\n\xff").returncode == 0
    assert _kv("get", p, "-t", "users", "bin").stdout == b"\x00\n\xff\n"
    assert _kv("get", p, "--hex", "0g").returncode == 2  # not hex: an error, not "absent"
    r = _kv("get", p, "-t", "user", "bin")
    assert r.returncode == 2 and b"no tree named 'user'" in r.stderr
    r = _kv("put", p, "x" * (kv.MAX_KEY + 1), "v")
    assert r.returncode == 2 and b"key_too_long" in r.stderr
    assert _kv("get", p, "x" * (kv.MAX_KEY + 1)).returncode == 1  # such a key is never present
    assert _kv("get", tmp_path / "missing.kv", "k").returncode == 2
    assert _kv("del", p, "k").returncode == 0 and _kv("get", p, "k").returncode == 1
    r = _kv("del", p, "k")
    assert r.returncode == 1 and b"no such key" in r.stderr
    assert _kv("del", p, "k", "--missing-ok").returncode == 0
    assert _kv("del", p, "-t", "nosuch", "k").returncode == 2
    assert _kv("del", tmp_path / "missing.kv", "k").returncode == 2 and not (tmp_path / "missing.kv").exists()
    with kv.open(p, read_only=True) as db:
        assert "nosuch" not in db.trees()  # del did not create it


def test_scan(tmp_path):
    p = tmp_path / "x.kv"
    _fill(p, {"": [(b"a", b"1"), (b"b\tc", b"x\\y\n"), (b"bb", "é".encode()), (b"c\xff", b""), (b"d", b"4")]})
    assert _kv("scan", p).stdout == "a\t1\nb\\x09c\tx\\\\y\\x0a\nbb\té\nc\\xff\t\nd\t4\n".encode()
    assert _kv("scan", p, "--from", "b", "--to", "d", "--keys-only").stdout == b"b\\x09c\nbb\nc\\xff\n"
    assert _kv("scan", p, "--prefix", "b", "--reverse", "--limit", 1).stdout == "bb\té\n".encode()
    assert _kv("scan", p, "--hex", "--from", "63").stdout == b"63ff\t\n64\t34\n"
    r = _kv("scan", p, "--from", "x")
    assert r.returncode == 0 and r.stdout == b""
    assert _kv("scan", p, "--limit", -1).returncode == 2
    # C1 controls and Unicode's line separators too, as their UTF-8 bytes (\xNN is always a byte).
    _fill(p, {"": [("e\x85\x9b".encode(), "\u2028\u2029".encode())]})
    assert _kv("scan", p, "--from", "e").stdout == b"e\\xc2\\x85\\xc2\\x9b\t\\xe2\\x80\\xa8\\xe2\\x80\\xa9\n"


def test_compact(tmp_path):
    p = tmp_path / "x.kv"
    _fill(p, {"": [(b"%06d" % i, b"v" * 1000) for i in range(10000)]})
    with kv.open(p) as db, db.write() as tx:
        tx.remove_range(b"000100")
    r = _kv("compact", p)
    assert r.returncode == 0 and r.stdout.startswith(str(p).encode() + b": ")
    before, after = (int(x.replace(",", "")) for x in r.stdout.decode().split(": ")[1].split(" bytes")[0].split(" -> "))
    assert after < before and after == os.path.getsize(p)
    assert _all(p) == {"": [(b"%06d" % i, b"v" * 1000) for i in range(100)]}
    assert _kv("compact", tmp_path / "missing.kv").returncode == 1


def test_dump_to_an_unwritable_place_names_the_command(tmp_path):
    """`dump -o DIR` and a full disk said only "simdex: Is a directory: ...", not which command
    failed or that nothing was written."""
    db = tmp_path / "d.kv"
    with kv.open(str(db)) as d, d.write() as tx:
        tx.put(b"k", b"v")
    for target in (tmp_path, "/dev/full"):
        r = _kv("dump", db, "-o", target)
        err = r.stderr.decode()
        assert r.returncode == 1, r
        assert err.startswith("simdex kv dump: ") and "nothing written" in err, err


@pytest.mark.parametrize("cmd, args", [("stat", ["F"]), ("check", ["F"]), ("dump", ["F"]), ("load", ["F"]),
                                       ("compact", ["F"]), ("get", ["F", "k"]), ("put", ["F", "k", "v"]),
                                       ("del", ["F", "k"]), ("scan", ["F"])])
def test_an_extra_argument_is_refused_with_the_subcommands_usage(tmp_path, cmd, args):
    """`simdex kv get FILE KEY extra` printed the top-level `simdex` usage (argparse hands a
    subcommand's leftovers up): each kv subcommand says its own, and exits 2 before any work."""
    f = tmp_path / "x.kv"
    r = _kv(cmd, *[f if a == "F" else a for a in args], "extra")
    err = r.stderr.decode()
    assert r.returncode == 2, r
    assert err.startswith(f"usage: simdex kv {cmd} "), err
    assert f"simdex kv {cmd}: error: unrecognized arguments: extra" in err, err
    assert not f.exists()  # nothing ran (load and put would have created it)
