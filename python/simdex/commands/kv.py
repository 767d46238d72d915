"""``simdex kv``: simdex kv database files from the command line, as LMDB's mdb_* tools.

  simdex kv stat data.kv              # keys, depth, node counts, bytes per key, free space per tree
  simdex kv check data.kv             # full structural check (exit 1 and the problem if it fails)
  simdex kv dump data.kv > d.txt      # the default tree in mdb_dump's text format (-p: print)
  simdex kv dump -a data.kv           # every tree: the default one, then database=NAME sections
  simdex kv load new.kv -f d.txt      # reads that format (mdb_dump's output too); creates the file
  mdb_dump -a env | simdex kv load data.kv     # LMDB -> simdex;  simdex kv dump -a data.kv | mdb_load env
  simdex kv compact data.kv           # rewrite the live data into a fresh file (as mdb_copy -c)
  simdex kv get data.kv KEY           # the value, then a newline; exit 1 when the key is absent
  simdex kv put data.kv KEY VALUE     # (no VALUE: the value is read from stdin, as bytes)
  simdex kv del data.kv KEY           # exit 1 when the key is absent (--missing-ok: 0)
  simdex kv scan data.kv --from a --to b --limit 10     # KEY<TAB>VALUE lines, keys in [a, b)

The default tree is LMDB's main database: a dump section without a database= line. -t TREE
names another tree. get, put, del and scan take keys and values as UTF-8 text (the command
line's bytes), or as hex with --hex; their output is the value's bytes (get) or escaped lines
(scan; --hex: hex). Exit status of get, put, del and scan, as grep's: 0 done, 1 the key is
absent (get, del), 2 an error (the file, the tree, an argument). dump, load, compact, stat and
check: 0 done, 1 failed, 2 usage error.

load writes each database of the input in transactions of --batch pairs (or 64 MiB of data) and
commits what it has read at the end of each section. Bad input stops it at the line that is
wrong: every pair before that line is loaded (committed), nothing after it, and the message says
how many pairs went into which tree. To load all or nothing, load into a new file and rename it
once the load succeeded. Progress goes to stderr when it is a terminal (--no-progress: never).

stat and dump check the file as check does before they walk the trees (reads trust the nodes,
so a damaged file could otherwise crash them, or dump garbage); --no-check skips that for a file
known to be sound.

stat, dump and check say so when the newest commit record (meta page) is damaged and the file
opened at the previous commit (the last commit is lost): check then exits 1, stat and dump warn
on stderr. A damaged older record loses nothing; they note it, and check still exits 0.
"""

from __future__ import annotations

import argparse
import binascii
import contextlib
import itertools
import json
import os
import re
import stat
import sys


def _open(path):
    from .. import kv

    return kv.open(path, read_only=True)


def _open_or_say(cmd: str, path):
    """The file opened read-only, or None after saying on stderr why it could not be."""
    from .. import kv

    try:
        return _open(path)
    except kv.KvError as e:
        print(f"simdex kv {cmd}: {path}: {e}", file=sys.stderr)
        return None


def _recovery_line(path, rec) -> str | None:
    """The open's fallback to an older commit (or a damaged older record), in words."""
    if rec["meta_fallback"]:
        return f"{path}: {rec['detail']}"
    if rec["detail"]:
        return f"{path}: note: {rec['detail']}"
    return None


def _checked(cmd: str, args, db, nothing: str) -> bool:
    """Warns when the open fell back to an older commit, then validates the file (unless
    --no-check): reads trust the nodes, so a walk of a damaged file could crash or read garbage.
    False (and the problem said) when it is damaged."""
    from .. import kv

    line = _recovery_line(args.path, db.recovery())
    if line:
        print(f"simdex kv {cmd}: {'warning: ' if db.recovery()['meta_fallback'] else ''}{line}",
              file=sys.stderr)
    if args.no_check:
        return True
    try:
        db.validate()
    except kv.KvError as e:
        print(f"simdex kv {cmd}: {args.path}: {e} ({nothing}; `simdex kv check` says the same)", file=sys.stderr)
        return False
    return True


def _cmd_stat(args) -> int:
    db = _open_or_say("stat", args.path)
    if db is None:
        return 1
    if not _checked("stat", args, db, "nothing walked"):
        return 1
    out = {}
    for tree in db.trees() or [""]:
        s = db.stat(tree)
        # The tree's own nodes (and value nodes) a key; file_bytes is the whole file's.
        s["bytes_per_key"] = round(s["node_bytes"] / s["keys"], 2) if s["keys"] else None
        out[tree] = s
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for tree, s in out.items():
            print(f"{'tree ' + repr(tree) if tree else 'the default tree'}: {s['keys']} keys, depth {s['depth']}, {s['inner_nodes']} inner / "
                  f"{s['leaf_nodes']} leaf / {s['value_nodes']} value nodes")
            print(f"  nodes {s['node_bytes']} B, file used {s['file_bytes']} B, free {s['free_bytes']} B, "
                  + (f"{s['bytes_per_key']} B/key, " if s["bytes_per_key"] is not None else "")
                  + f"commit {s['seq']}")
    return 0


def _tree_label(name: str) -> str:
    """How the output names a tree: the default one's name is empty, which read as ''."""
    return repr(name) if name else "the default tree"


def _cmd_check(args) -> int:
    from .. import kv

    db = _open_or_say("check", args.path)
    if db is None:
        return 1
    rec = db.recovery()
    line = _recovery_line(args.path, rec)
    if line:  # before validating, so it is said even when the rest fails too
        print(f"simdex kv check: {line}", file=sys.stderr)
    try:
        db.validate()
    except kv.KvError as e:
        print(f"simdex kv check: {args.path}: {e}", file=sys.stderr)
        return 1
    trees = ", ".join(_tree_label(t) for t in db.trees()) or "no trees"
    if rec["meta_fallback"]:
        lost = (f"commit {rec['lost_seq']} is lost; the previous commit" if rec["lost_seq"] is not None
                else f"a commit after {rec['seq']} may be lost; commit")
        print(f"{args.path}: NOT ok: {lost} {rec['seq']} is intact ({trees})")
        return 1
    print(f"{args.path}: ok ({trees})")
    return 0


# load: pairs and bytes of data per transaction. A commit costs a meta-page write (and an fsync
# with --sync fsync), so batches are large; bounded so a huge stream's transaction stays small.
_BATCH_PAIRS, _BATCH_BYTES = 100_000, 64 << 20


@contextlib.contextmanager
def _progress(enabled: bool, what: str, total: int | None):
    """A progress callback (done, label) drawing a bar on stderr, or None (stderr not a terminal,
    or --no-progress), in the style of `simdex bloom lookup`."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True) as p:
        task = p.add_task(what, total=total)

        def update(done, label):
            p.update(task, completed=done, description=f"{what}: {label}")
        yield update


def _show_progress(args) -> bool:
    try:
        return not args.no_progress and sys.stderr is not None and sys.stderr.isatty()
    except (OSError, ValueError):
        return False


def _lmdb_mapsize(path) -> int:
    """The map size a dump's header offers mdb_load: LMDB's map does not grow, and it stores the
    same pairs in about 1.5x the bytes of a kv file (more with large values and its free pages
    while loading). A large map costs address space only, so: 8x the file, at least 1 GiB."""
    size = os.path.getsize(path)
    mib = 1 << 20
    return max(1 << 30, -(-8 * size // mib) * mib)


def _cmd_dump(args) -> int:
    db = _open_or_say("dump", args.path)
    if db is None:
        return 1
    try:
        if not _checked("dump", args, db, "nothing dumped"):
            return 1
        return _dump(args, db)
    except BrokenPipeError:  # `dump | head`: the CLI ends as by SIGPIPE
        raise
    except OSError as e:  # the output: -o DIR, a full disk (no partial file is left: Output)
        from ..cli import _problem

        print(f"simdex kv dump: {_problem(e)}; nothing written", file=sys.stderr)
        return 1
    finally:
        db.close()  # its snapshots too


def _dump(args, db) -> int:
    from .. import kv
    from .._output import Output
    from . import _kv_dump

    try:
        if args.all:
            trees = db.trees()
            trees = ([""] if "" in trees else []) + sorted(t for t in trees if t)  # the default tree first
        else:
            trees = [args.tree or ""]
        # All snapshots first: the trees as of one commit (no writer can change the file while
        # this read-only open holds it, and a snapshot never changes).
        snaps = [db.read(t) for t in trees]
    except kv.KvError as e:
        print(f"simdex kv dump: {args.path}: {e}", file=sys.stderr)
        return 1
    for t in trees:
        if "\n" in t or "\r" in t:
            print(f"simdex kv dump: tree {t!r} holds a line break: the dump format cannot name it", file=sys.stderr)
            return 1
    if args.output in (None, "-"):
        if sys.stdout is None:
            print("simdex kv dump: stdout is closed: give the output with -o FILE", file=sys.stderr)
            return 2
        out, staged = sys.stdout.buffer, None
    else:
        try:
            same = os.path.samefile(args.output, args.path)
        except OSError:  # no such output file yet
            same = False
        if same:  # the rename would replace the database with its dump
            print(f"simdex kv dump: -o {args.output} is the database itself", file=sys.stderr)
            return 2
        staged = Output(args.output)  # renamed into place once complete: a failed dump is never mistaken for one
        out = staged.file
    fmt = "print" if args.print else "bytevalue"
    mapsize = _lmdb_mapsize(args.path)
    total, done = sum(len(s) for s in snaps), 0
    try:
        with _progress(_show_progress(args), "dump", total) as progress:
            for t, snap in zip(trees, snaps):
                tick = None
                if progress:
                    def tick(n, base=done):
                        progress(base + n, f"{base + n:,} of {total:,} pairs")
                done += _kv_dump.write_section(out, fmt, t, snap.items(), mapsize, tick)
        if staged is not None:
            staged.commit()
    finally:
        if staged is not None:
            staged.discard()
    return 0


def _tree_counts(counts: dict) -> str:
    """{tree: pairs} in words: "10 pairs into the default tree, 2 into 'users'"."""
    if not counts:
        return "0 pairs"
    parts = [f"{n} {('pair ' if n == 1 else 'pairs ') if i == 0 else ''}into {_tree_label(t)}"
             for i, (t, n) in enumerate(counts.items())]
    return ", ".join(parts)


class _Loader:
    """Writes a section's pairs into one tree in transactions of up to ``batch`` pairs (or
    _BATCH_BYTES of data). ``committed`` counts the pairs of committed transactions, ``kept``
    the present keys left alone under --no-overwrite."""

    def __init__(self, db, tree: str, no_overwrite: bool, batch: int):
        self._db, self.tree, self._no_overwrite, self._batch = db, tree, no_overwrite, batch
        self.committed = self.kept = 0

    def load(self, pairs, tick=None) -> None:
        """Loads the pairs, calling tick() after each commit. Bad input (a DumpError out of
        ``pairs``) commits the pairs before it, then propagates; any other error aborts the open
        transaction (``committed`` says what is in). A section without pairs commits an empty
        transaction: that creates its tree, as mdb_load creates an empty database."""
        from ._kv_dump import DumpError

        pairs = iter(pairs)
        first, more = True, True
        while more:
            tx = self._db.write(self.tree)
            write = tx.insert if self._no_overwrite else tx.put
            n = size = kept = 0
            more = False
            try:
                for k, v in pairs:
                    if write(k, v) is False:  # insert: present, kept
                        kept += 1
                    n += 1
                    size += len(k) + len(v)
                    if n == self._batch or size >= _BATCH_BYTES:
                        more = True
                        break
            except DumpError:
                self._commit(tx, n, kept)
                raise
            except BaseException:
                tx.abort()
                raise
            if n == 0 and not first:  # the last batch ended the section exactly
                tx.abort()
                return
            self._commit(tx, n, kept)
            first = False
            if tick:
                tick()

    def _commit(self, tx, n: int, kept: int) -> None:
        try:
            tx.commit()
        except BaseException:
            tx.abort()
            raise
        self.committed += n - kept
        self.kept += kept


def _input_size(f) -> int | None:
    try:
        st = os.fstat(f.fileno())
        return st.st_size if stat.S_ISREG(st.st_mode) else None
    except (OSError, ValueError, AttributeError):
        return None


def _cmd_load(args) -> int:
    from .. import kv

    if args.batch < 1:
        print("simdex kv load: --batch wants N >= 1", file=sys.stderr)
        return 2
    if args.file in (None, "-"):
        if sys.stdin is None:
            print("simdex kv load: stdin is closed: give the input with -f FILE", file=sys.stderr)
            return 2
        src, src_name = sys.stdin.buffer, "stdin"
    else:
        try:
            src, src_name = open(args.file, "rb"), args.file
        except OSError as e:
            print(f"simdex kv load: {args.file}: {e.strerror or e}", file=sys.stderr)
            return 1
    with contextlib.ExitStack() as closing:
        if src is not sys.stdin.buffer:
            closing.callback(src.close)
        try:
            db = kv.open(args.path, sync=args.sync)
        except kv.KvError as e:
            print(f"simdex kv load: {args.path}: {e}", file=sys.stderr)
            return 1
        closing.callback(db.close)
        return _load(args, db, src, src_name)


def _load(args, db, src, src_name: str) -> int:
    from .. import kv
    from . import _kv_dump

    counts, kept = {}, 0
    loader = None

    def settle() -> None:  # the section's committed pairs into the totals
        nonlocal kept, loader
        if loader is not None:
            counts[loader.tree] = counts.get(loader.tree, 0) + loader.committed
            kept += loader.kept
            loader = None

    def summary() -> str:
        return _tree_counts(counts) + (f"; {kept} keys already present kept (-n)" if kept else "")

    reader = _kv_dump.Reader(src, kv.MAX_KEY, kv.MAX_VALUE)
    size = _input_size(src)
    try:
        with _progress(_show_progress(args), "load", size) as progress:
            tick = None
            if progress:
                def tick():
                    done = sum(counts.values()) + loader.committed
                    progress(src.tell() if size is not None else 0, f"{done:,} pairs")
            sections = 0
            while (sec := reader.next_section()) is not None:
                sections += 1
                if args.tree is not None and sections > 1:
                    raise _kv_dump.DumpError(sec.line, "a second database in the input; -t loads one: leave "
                                             "-t out to load each into the tree its database= line names")
                for note in sec.notes:
                    print(f"simdex kv load: {src_name}: warning: {note}", file=sys.stderr)
                tree = args.tree if args.tree is not None else (sec.name or "")
                if sec.name and args.tree is None:
                    try:  # a name no tree can have (LMDB's go to 511 bytes): said at its line, with the way out
                        db.write(tree).abort()
                    except kv.KvError as e:
                        raise _kv_dump.DumpError(sec.name_line, f"database={sec.name!r}: {e}; load this "
                                                 "database alone with -t NAME to give it another name") from None
                loader = _Loader(db, tree, args.no_overwrite, args.batch)
                loader.load(reader.pairs(), tick)
                settle()
    except _kv_dump.DumpError as e:  # the pairs before the bad line are committed: the count is exact
        settle()
        print(f"simdex kv load: {src_name}:{e.line}: {e.message}\n"
              f"simdex kv load: {args.path}: loaded before line {e.line} (committed): {summary()}; "
              "nothing from that line on", file=sys.stderr)
        return 1
    except kv.KvError as e:  # a write that failed (a full disk, a tree too many): its batch is lost
        settle()
        print(f"simdex kv load: {args.path}: {e} (at line {reader.line} of {src_name})\n"
              f"simdex kv load: {args.path}: committed before it: {summary()}", file=sys.stderr)
        return 1
    except MemoryError:  # a value line without end (a binary file, /dev/zero): a message, not a traceback
        settle()
        print(f"simdex kv load: {src_name}: out of memory reading the line after line {reader.line} (a line "
              f"without end: is this mdb_dump's output?)\nsimdex kv load: {args.path}: committed before it: "
              f"{summary()}", file=sys.stderr)
        return 1
    except BaseException:  # Ctrl-C, SIGTERM, a read error: say what is in before going
        settle()
        print(f"simdex kv load: {args.path}: stopped at line {reader.line} of {src_name}; committed before it: "
              f"{summary()}", file=sys.stderr)
        raise
    print(f"simdex kv load: {args.path}: loaded {summary()}", file=sys.stderr)
    return 0


def _cmd_compact(args) -> int:
    from .. import kv

    try:
        before = os.path.getsize(args.path)
        db = kv.open(args.path, sync="fsync")
        try:
            db.compact()
        finally:
            db.close()
        after = os.path.getsize(args.path)
    except (kv.KvError, OSError) as e:
        print(f"simdex kv compact: {args.path}: {getattr(e, 'strerror', None) or e}", file=sys.stderr)
        return 1
    print(f"{args.path}: {before:,} -> {after:,} bytes")
    return 0


# get, put, del, scan: grep's exit statuses.
_ABSENT, _ERROR = 1, 2


class _Usage(Exception):
    """A bad argument of get/put/del/scan: message, exit 2."""


def _arg(text: str | None, hex_: bool, what: str) -> bytes | None:
    """A key, value or bound from the command line: its bytes (os.fsencode keeps bytes that are
    not UTF-8 as they were given), or with --hex the bytes its hex digits spell."""
    if text is None:
        return None
    if not hex_:
        return os.fsencode(text)
    try:
        return binascii.a2b_hex(text)
    except binascii.Error:
        raise _Usage(f"{what} {text!r} is not hex (--hex: pairs of hex digits, as 6b6579)") from None


# Control characters (C0, DEL and C1: U+0085 ends a line for some readers, U+009B starts a
# terminal's escape sequence), the Unicode line and paragraph separators, the backslash, and
# bytes that are not UTF-8 (surrogates after decoding).
_LINE_BREAKERS = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\\\udc80-\udcff]")


def _escape_char(m: re.Match) -> str:
    c = m.group()
    if c == "\\":
        return "\\\\"
    o = ord(c)
    if o >= 0xDC00:  # a surrogate: a byte that is not UTF-8
        return f"\\x{o - 0xDC00:02x}"
    return "".join(f"\\x{b:02x}" for b in c.encode())  # its UTF-8 bytes, as \xNN always means a byte


def _text(data: bytes) -> bytes:
    """A key or value as a scan line shows it: its UTF-8 text, with control characters, bytes
    that are not UTF-8 and the backslash escaped (\\x09, \\xff, \\\\), so each pair is one line."""
    s = data.decode("utf-8", "surrogateescape")
    return _LINE_BREAKERS.sub(_escape_char, s).encode("utf-8")


def _cmd_kv_item(args) -> int:
    """get, put, del and scan: their common errors and exit statuses."""
    from .. import kv

    cmd = f"simdex kv {args.kv_command}"
    try:
        return args.item_func(args, kv)
    except _Usage as e:
        print(f"{cmd}: {e}", file=sys.stderr)
        return _ERROR
    except kv.KvError as e:
        print(f"{cmd}: {args.path}: {e}", file=sys.stderr)
        return _ERROR


def _get(args, kv) -> int:
    key = _arg(args.key, args.hex, "KEY")
    with _open(args.path) as db, db.read(args.tree) as snap:
        value = snap.get(key)
    if value is None:
        print(f"simdex kv get: '{_text(key).decode()}': no such key in {_tree_label(args.tree)}", file=sys.stderr)
        return _ABSENT
    sys.stdout.buffer.write((binascii.hexlify(value) if args.hex else value) + b"\n")
    return 0


def _put(args, kv) -> int:
    key = _arg(args.key, args.hex, "KEY")
    if args.value is not None:
        value = _arg(args.value, args.hex, "VALUE")
    elif sys.stdin is None:
        raise _Usage("no VALUE and stdin is closed")
    else:  # the value's bytes as they come (binary, no newline added or taken)
        value = sys.stdin.buffer.read()
        if args.hex:
            value = _arg(value.decode("ascii", "replace").strip(), True, "VALUE (stdin)")
    with kv.open(args.path, sync="fsync") as db, db.write(args.tree) as tx:
        tx.put(key, value)
    return 0


def _del(args, kv) -> int:
    key = _arg(args.key, args.hex, "KEY")
    if not os.path.exists(args.path):  # opening would create it
        raise _Usage(f"{args.path}: No such file or directory")
    with kv.open(args.path, sync="fsync") as db:
        # Read first: a tree that does not exist is an error (a write would create it), and an
        # absent key needs no commit.
        with db.read(args.tree) as snap:
            removed = key in snap
        if removed:
            with db.write(args.tree) as tx:
                tx.remove(key)
    if not removed and not args.missing_ok:
        print(f"simdex kv del: '{_text(key).decode()}': no such key in {_tree_label(args.tree)}", file=sys.stderr)
        return _ABSENT
    return 0


def _scan(args, kv) -> int:
    lo, hi = _arg(args.lo, args.hex, "--from"), _arg(args.hi, args.hex, "--to")
    prefix = _arg(args.prefix, args.hex, "--prefix")
    if args.limit is not None and args.limit < 0:
        raise _Usage("--limit wants N >= 0")
    show = binascii.hexlify if args.hex else _text
    out = sys.stdout.buffer
    with _open(args.path) as db, db.read(args.tree) as snap:
        items = snap.items(lo, hi, prefix=prefix, reverse=args.reverse)
        for k, v in itertools.islice(items, args.limit):
            out.write(show(k) if args.keys_only else b"%s\t%s" % (show(k), show(v)))
            out.write(b"\n")
    return 0


def _refusing_extras(base: type) -> type:
    """A parser class like base whose parse refuses arguments left over with its own usage.
    argparse hands a subcommand's leftovers up to the top parser, which printed `simdex`'s
    usage for `simdex kv get FILE KEY extra` instead of `simdex kv get`'s."""

    class Parser(base):
        def parse_known_args(self, args=None, namespace=None):
            namespace, extras = super().parse_known_args(args, namespace)
            if extras:
                self.error("unrecognized arguments: " + " ".join(extras))  # exits 2
            return namespace, extras

    return Parser


def register(subparsers) -> None:
    p = subparsers.add_parser("kv", help="kv database files: stat, check, dump, load, compact, get, put, del, scan",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kv_command", required=True, metavar="COMMAND", parser_class=_refusing_extras(type(p)))
    # description= too: `simdex kv stat --help` showed only the usage line.
    s = sub.add_parser("stat", help="keys, depth, node counts, bytes per key, free space",
                       description="Per tree: keys, depth, node counts, the tree's node bytes per key, "
                       "the file's used and free bytes. Validates the file first (exit 1 and the problem "
                       "if it fails); warns on stderr when the newest commit record was damaged.")
    s.add_argument("path", help="the database file (opened read-only)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--no-check", action="store_true",
                   help="skip the structural check before the walk (a file known to be sound)")
    s.set_defaults(func=_cmd_stat)
    c = sub.add_parser("check", help="validate every tree and the free space, and report a "
                       "damaged newest commit record (exit 1)",
                       description="Validates every tree and the free space of the file. Exit 0: ok; "
                       "1: it cannot be opened, a check failed, or the newest commit record was damaged "
                       "and the previous commit was opened (the last commit is lost); 2: usage error.")
    c.add_argument("path", help="the database file (opened read-only)")
    c.set_defaults(func=_cmd_check)

    def tree_option(q, what="the tree (default: the default tree, LMDB's main database)"):
        q.add_argument("-t", "--tree", metavar="TREE", help=what)

    d = sub.add_parser("dump", help="write trees in mdb_dump's text format (LMDB's dump/load interchange)",
                       description="Writes the default tree (-t: another, -a: every tree) in mdb_dump's text "
                       "format, as `mdb_dump` (-s NAME, -a, -p) does: one section per tree, a named tree's with "
                       "database=NAME. mdb_load and `simdex kv load` read it. Checks the file first, as check "
                       "(--no-check: not), then streams from one snapshot of it (opened read-only). Exit 0: done; "
                       "1: the file is damaged, or it or the tree cannot be read; 2: usage error.")
    d.add_argument("path", help="the database file (opened read-only)")
    g = d.add_mutually_exclusive_group()
    g.add_argument("-t", "--tree", metavar="TREE", help="dump this named tree (as mdb_dump -s NAME)")
    g.add_argument("-a", "--all", action="store_true",
                   help="dump every tree: the default one (when it was ever written), then the named ones by name")
    d.add_argument("-p", "--print", action="store_true",
                   help="format=print: printable ASCII as itself, other bytes as \\xx, a backslash as \\5c "
                   "(which every mdb_load reads; default: format=bytevalue, hex pairs)")
    d.add_argument("-o", "--output", metavar="FILE", help="write to FILE (complete or not at all) instead of stdout")
    d.add_argument("--no-check", action="store_true",
                   help="skip the structural check before the dump (a file known to be sound)")
    d.add_argument("--no-progress", action="store_true", help="no progress display, even on a terminal")
    d.set_defaults(func=_cmd_dump)

    ld = sub.add_parser("load", help="read mdb_dump's text format into a database (created if needed)",
                        description="Reads mdb_dump's text format (bytevalue or print, any number of databases "
                        "one after another: each goes into the tree its database= line names, none: the default "
                        "tree) into the database, creating the file if needed. Keys already present are "
                        "overwritten (-n: kept). Writes in transactions of --batch pairs. Bad input stops the "
                        "load at its line, with the line number and what is wrong: the pairs before that line "
                        "are loaded (committed), the message says how many into which tree. Exit 0: done; 1: "
                        "bad input or a failed write; 2: usage error.")
    ld.add_argument("path", help="the database file (created if it does not exist)")
    tree_option(ld, "load the input's one database into this tree, whatever its database= line says "
                "(default: the tree each database= line names; none: the default tree)")
    ld.add_argument("-f", "--file", metavar="FILE", help="read FILE instead of stdin")
    ld.add_argument("-n", "-N", "--no-overwrite", action="store_true",
                    help="keep the value of a key already present (mdb_load -N; mdb_load's -n, its "
                    "no-subdirectory flag, has no meaning here: a kv database is always one file)")
    ld.add_argument("--batch", type=int, default=_BATCH_PAIRS, metavar="N",
                    help="pairs per transaction (default: %(default)s; a transaction also ends at 64 MiB of data)")
    ld.add_argument("--sync", choices=("fsync", "none"), default="fsync",
                    help="fsync: each commit is on disk when it returns (default); none: the page cache only")
    ld.add_argument("--no-progress", action="store_true", help="no progress display, even on a terminal")
    ld.set_defaults(func=_cmd_load)

    cp = sub.add_parser("compact", help="rewrite the live data into a fresh file (as mdb_copy -c, in place)",
                        description="Rewrites the live data of every tree into a fresh file and renames it over "
                        "the old one (Database.compact); prints the file's size before and after. Exit 0: done; "
                        "1: failed (the file is left as it was); 2: usage error.")
    cp.add_argument("path", help="the database file")
    cp.set_defaults(func=_cmd_compact)

    exits = ("Exit 0: done; 1: the key is absent; 2: an error (the file, the tree, an argument)."
             " Keys and values are the command line's text (its UTF-8 bytes), or hex digits with --hex.")
    for name, helptext, func in (("get", "print the value of a key", _get),
                                 ("put", "set a key's value", _put),
                                 ("del", "remove a key", _del)):
        q = sub.add_parser(name, help=helptext,
                           description=f"{helptext[0].upper()}{helptext[1:]}"
                           + (" (its bytes, then a newline; --hex: in hex)" if name == "get" else "")
                           + (" (no VALUE: read the value from stdin, as bytes)" if name == "put" else "")
                           + ". " + (exits.replace("1: the key is absent; ", "") if name == "put" else exits))
        q.add_argument("path", help="the database file" + (" (opened read-only)" if name == "get" else
                                                           " (created if it does not exist)" if name == "put" else ""))
        q.add_argument("key", metavar="KEY", help="the key: its UTF-8 bytes, or hex digits with --hex")
        if name == "put":
            q.add_argument("value", metavar="VALUE", nargs="?",
                           help="the value: its UTF-8 bytes, or hex digits with --hex; absent: stdin's bytes")
        tree_option(q, "the tree (default: the default tree, LMDB's main database)"
                    + ("; a put creates it if it does not exist" if name == "put" else ""))
        q.add_argument("--hex", action="store_true", help={"get": "KEY is hex digits, and the value prints in hex",
                                                           "put": "KEY and VALUE are hex digits",
                                                           "del": "KEY is hex digits"}[name])
        if name == "del":
            q.add_argument("--missing-ok", action="store_true", help="exit 0 when the key is absent")
        q.set_defaults(func=_cmd_kv_item, item_func=func)

    sc = sub.add_parser("scan", help="print the pairs of a key range, one per line",
                        description="Prints KEY<TAB>VALUE lines in key order for the keys in [--from, --to) "
                        "(and with --prefix), at most --limit. Keys and values print as UTF-8 text with control "
                        "characters, bytes that are not UTF-8 and the backslash escaped (\\x09, \\xff, \\\\; a C1 "
                        "control or U+2028/U+2029 as its UTF-8 bytes, \\xc2\\x85), so every pair is one line; "
                        "--hex prints hex (and takes the bounds in hex). Exit 0: done (also when no key is in the "
                        "range); 2: an error.")
    sc.add_argument("path", help="the database file (opened read-only)")
    tree_option(sc)
    sc.add_argument("--from", dest="lo", metavar="KEY", help="first key (included)")
    sc.add_argument("--to", dest="hi", metavar="KEY", help="end key (excluded)")
    sc.add_argument("--prefix", metavar="P", help="only keys starting with P")
    sc.add_argument("--limit", type=int, metavar="N", help="at most N pairs")
    sc.add_argument("--reverse", action="store_true", help="descending key order")
    sc.add_argument("--keys-only", action="store_true", help="print the keys only")
    sc.add_argument("--hex", action="store_true", help="bounds in hex, output in hex")
    sc.set_defaults(func=_cmd_kv_item, item_func=_scan)
