"""An ordered, persistent key-value store: a copy-on-write radix/B-tree hybrid after psitri.

Keys and values are bytes (keys up to 1 KiB, compared as unsigned bytes; values up to 2 GiB);
every method also takes a bytearray, memoryview or other buffer of single bytes for them (a
value: any contiguous buffer, its raw bytes) and returns bytes. A str is refused with a
TypeError: encode it. One memory-mapped file, or memory only. Write transactions commit
atomically, nest, and never block readers; snapshots are O(1) and see the committed state they
were taken at. Design, file format and benchmarks: docs/kv.md.

    >>> import simdex.kv
    >>> db = simdex.kv.open("data.kv", sync="fsync")   # path None: memory only
    >>> with db.write() as tx:                         # commits on success, aborts on error
    ...     tx[b"apple"] = b"1"
    ...     tx[b"apricot"] = b"2"
    >>> with db.read() as snap:
    ...     snap[b"apple"], b"kiwi" in snap, list(snap.keys(prefix=b"ap"))
    (b'1', False, [b'apple', b'apricot'])

Errors are KvError (a subclass of Exception) with .kind, one of ERROR_KINDS, and .detail; the
kinds about arguments (key_too_long, value_too_long, invalid_argument) are also ValueError,
io is also OSError (and FileNotFoundError, PermissionError, ... by its errno, as open()
raises them), not_found (a named tree that does not exist) is also LookupError. An
argument of the wrong type (a str key, None for a value) is a TypeError naming it. Closing a
database ends its open snapshots and transactions (and their iterations) too. Long calls
(get_many of 256 keys or more, bulk_load, remove_range, commit, validate, stat, compact,
opening, waiting for the writer) run without the GIL.
"""

from __future__ import annotations

import os
import weakref
from itertools import chain
from operator import itemgetter
from typing import Iterable, Iterator, Optional, Union

from ._simdex import kv as _native

__all__ = ["open", "Database", "Snapshot", "Transaction", "Cursor", "KvError", "ERROR_KINDS",
           "MAX_KEY", "MAX_VALUE", "MAX_TREE_NAME", "BytesLike"]

KvError = _native.Error
ERROR_KINDS: dict = dict(_native.ERROR_KINDS)  # kind -> what it means
MAX_KEY: int = _native.MAX_KEY
MAX_VALUE: int = _native.MAX_VALUE
MAX_TREE_NAME: int = _native.MAX_TREE_NAME  # bytes of a tree name's UTF-8 (39)
# Pairs fetched per native call while iterating: 4 at first, doubling up to 256, so a loop over
# many pairs pays one call per 256, and next(snap.items(lo)) ("the first key from lo") fetches 4
# instead of 256 (at 200,000 keys 2.3 us instead of 22.5, where a get takes 0.5).
_FIRST_CHUNK, _CHUNK = 4, 256
_FIRST, _SECOND = itemgetter(0), itemgetter(1)


class _NoDefault:
    """pop()'s "no default given" (shown so in help())."""

    def __repr__(self) -> str:
        return "<no default>"


_MISSING = _NoDefault()
# bytes, or what the store reads as bytes: bytearray, memoryview, array('B'), a uint8 array.
BytesLike = Union[bytes, bytearray, memoryview]
_as_bytes = _native.as_bytes  # (obj, name, value=False) -> bytes, or the store's TypeError


def _error(kind: str, detail: str) -> KvError:
    """A KvError raised from Python, shaped (and typed: ValueError, LookupError, ...) like the
    native ones."""
    cls = {"key_too_long": _native.ValueError, "value_too_long": _native.ValueError,
           "invalid_argument": _native.ValueError, "io": _native.OSError,
           "not_found": _native.LookupError}.get(kind, KvError)
    e = cls(f"kv {kind}: {detail}")
    e.kind, e.detail = kind, detail
    return e


def _prefix_end(prefix: bytes) -> Optional[bytes]:
    """Smallest key greater than every key with this prefix (None: no such key)."""
    p = bytearray(prefix)
    while p and p[-1] == 0xFF:
        p.pop()
    if not p:
        return None
    p[-1] += 1
    return bytes(p)


class Cursor(_native.Cursor):
    """A position in a snapshot or transaction, moved by the methods below.

    Every move returns True when it lands on a key, False when there is none (the cursor is
    then not valid). key and value read the current pair; on a transaction a cursor is valid
    until the transaction's next write. Keys and prefixes are bytes-like (as everywhere in
    simdex.kv); a key longer than MAX_KEY is simply never found.

    Off a key, next() and prev() move as py-lmdb's cursor does: a cursor that has not stood on
    a key (new, or after a failed seek, first or last) goes to the first key with next() and
    to the last with prev(); one that ran off an end (next() past the last key, a lower_bound
    or upper_bound above every key; prev() before the first) stays there in that direction and
    comes back with the other move. So ``c.lower_bound(x); c.prev()`` is "the last key below
    x" even when x is above every key, and ``while c.next():`` walks every key. Unlike
    py-lmdb's, key and value raise on a cursor off a key (py-lmdb's return b"").
    """

    # Its methods are native (no Python step per move); cursors are made by the views' cursor().
    __slots__ = ()


class _Reads:
    """Read operations of a snapshot or a transaction.

    A key is bytes-like (bytes, bytearray, a memoryview or other buffer of single bytes); a str
    or another type is a TypeError. A key longer than MAX_KEY cannot be stored, so it is never
    present: view[key] raises KeyError, get() returns the default, ``in`` is False.
    """

    __slots__ = ()
    _v = None

    def _iterations(self) -> dict:  # pragma: no cover - each class says its own
        """The chunk each items() iteration of this view is yielding from, by iteration.
        Everything that ends or changes the view (a snapshot's close, a transaction's writes,
        sub(), commit, abort, the database's close) empties them, so each such iteration stops
        at its next step and raises (a check of our own per pair cost a fifth of the
        iteration's time; the list iterator checks the length anyway)."""
        raise NotImplementedError

    def __getitem__(self, key: BytesLike) -> bytes:
        """view[key]: the value of key; KeyError when absent."""
        v = self._v._get(key)
        if v is None:
            raise KeyError(key)
        return v

    def get(self, key: BytesLike, default=None):
        """The value of key, or default when absent."""
        v = self._v._get(key)
        return default if v is None else v

    def __contains__(self, key: BytesLike) -> bool:
        """key in view: whether the key is present."""
        return self._v._contains(key)

    def __len__(self) -> int:
        """Number of keys (O(1))."""
        return self._v._size()

    def get_many(self, keys: Iterable[BytesLike]) -> list:
        """Values (None where absent) for many keys, looked up with many in flight."""
        if isinstance(keys, (bytes, bytearray, memoryview, str)):
            # list(b"key") would look up the keys 107, 101, 121.
            raise TypeError(f"get_many takes an iterable of keys, not one {type(keys).__name__}: "
                            "get_many([key])")
        return self._v._get_many(list(keys))

    def count(self, lo: Optional[BytesLike] = b"", hi: Optional[BytesLike] = None) -> int:
        """Number of keys in [lo, hi) (lo None: from the start, hi None: to the end), in
        O(depth)."""
        # None as in items(): count(None, hi) raised TypeError where items(None, hi) worked.
        return self._v._count(b"" if lo is None else lo, hi)

    def cursor(self) -> Cursor:
        """A cursor over this view, not yet on a key."""
        return self._v._cursor()

    def _changed(self, c) -> None:  # pragma: no cover - each class says its own
        """Raises for an iteration whose view changed since it began (see items())."""
        raise NotImplementedError

    def items(self, lo: Optional[BytesLike] = None, hi: Optional[BytesLike] = None, *,
              prefix: Optional[BytesLike] = None, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) pairs with lo <= key < hi (and the prefix, if given), in key order or
        reversed.

        The iteration reads the view as it was when it began: once the snapshot is closed (or
        its database), or the transaction writes, opens a sub-transaction, commits or aborts,
        its next step raises KvError invalid_argument (as a dict's iteration raises once the
        dict changed size); start a new one.
        """
        lo = None if lo is None else _as_bytes(lo, "lo")
        hi = None if hi is None else _as_bytes(hi, "hi")
        if prefix is not None:
            prefix = _as_bytes(prefix, "prefix")
            lo = prefix if lo is None or lo < prefix else lo
            end = _prefix_end(prefix)
            if end is not None and (hi is None or end < hi):
                hi = end
        # The pairs come out of C, the list iterator of each chunk in turn: a generator step per
        # pair was half the cost of a short iteration. _chunks runs again once a chunk is used.
        return chain.from_iterable(self._chunks(lo, hi, bool(reverse)))

    def _chunks(self, lo, hi, reverse):
        c = self._v._cursor()
        live = self._iterations()
        me = object()  # this iteration's key in live
        try:
            if not reverse:
                ok = c.lower_bound(lo) if lo else c.first()
                stop = hi
            else:
                if hi is None:
                    ok = c.last()
                else:  # the last key below hi: before hi's lower bound, or the very last key
                    ok = c.prev() if c.lower_bound(hi) else c.last()
                stop = lo if lo else None
            n = _FIRST_CHUNK
            while ok and c.valid:
                chunk = c._take(n, not reverse, stop)
                live[me] = chunk
                yield chunk
                if me not in live:  # emptied by a change (see _iterations)
                    self._changed(c)
                ok = len(chunk) == n
                n = min(2 * n, _CHUNK)
        finally:
            live.pop(me, None)

    def keys(self, *args, **kw) -> Iterator[bytes]:
        """The keys of items(*args, **kw)."""
        return map(_FIRST, self.items(*args, **kw))

    def values(self, *args, **kw) -> Iterator[bytes]:
        """The values of items(*args, **kw)."""
        return map(_SECOND, self.items(*args, **kw))

    def __iter__(self) -> Iterator[bytes]:
        """The keys in order, as keys()."""
        return self.keys()

    def stat(self) -> dict:
        """Keys, depth, node counts and bytes of this view's tree (walks all of it)."""
        return self._v._stat()

    def validate(self) -> None:
        """Checks every node of this view's tree; raises KvError corrupt naming the problem."""
        self._v._validate()


class _Closes:
    """Context-manager protocol for objects whose close() ends them."""

    __slots__ = ()

    def close(self) -> None:  # pragma: no cover - each class defines its own
        raise NotImplementedError

    def __enter__(self):
        """``with ... as x:`` gives the object itself."""
        return self

    def __exit__(self, *exc):
        """The end of the ``with`` block closes it (an error in the block propagates)."""
        self.close()
        return False


def _with_reads(cls):
    """Gives cls _Reads's members that its native base does not define, as if _Reads came after
    that base: nanobind before 3.0 (what CPython 3.9 builds with) lets a Python class have its
    native base only ("nb_type_init(): invalid number of bases")."""
    native = [vars(b) for b in cls.__mro__[1:] if b is not object]
    for name, value in vars(_Reads).items():
        if name in ("__dict__", "__weakref__", "__slots__", "__module__", "__qualname__", "__doc__"):
            continue
        if name not in vars(cls) and not any(name in d for d in native):
            setattr(cls, name, value)
    return cls


@_with_reads
class Snapshot(_native.Snapshot):
    """A read-only view of the committed state when it was taken; writes raise KvError.

    Made by Database.read(). get, [], in, len, close and the ``with`` block are native (no
    Python step): `with db.read() as s: s.get(k)` per call is the py-lmdb idiom ported programs
    use.
    """

    __slots__ = ("__weakref__",)

    def _changed(self, c) -> None:
        why = self._closed()
        if why != "its database was closed":
            _ = c.valid  # the store's own error: the snapshot was released, make a new cursor
        raise _error("invalid_argument", f"snapshot is closed: {why}; an iteration over it "
                     "cannot go on")

    def __setitem__(self, key, value):
        """Refused: KvError read_only."""
        raise _error("read_only", "a snapshot cannot be written; use db.write()")

    def __delitem__(self, key):
        """Refused: KvError read_only."""
        raise _error("read_only", "a snapshot cannot be written; use db.write()")


_native.set_python_classes(Snapshot, Cursor)


class Transaction(_Reads):
    """A write transaction on one tree. As a context manager it commits on success and aborts
    on error. Reads see its own writes.

    Keys and values are bytes-like (see simdex.kv). Besides the mapping methods of a dict
    (tx[k] = v, del tx[k], k in tx, get, pop, setdefault, popitem, clear, len, iteration) it
    has the store's own: put, insert, upsert, remove, remove_range, bulk_load. Note that
    update(key, value) is the store's "replace the value of a key that is present", not
    dict.update(mapping): it returns False and writes nothing for an absent key. For many
    pairs, loop over put(), or bulk_load() sorted ones.

    A write that fails because the file cannot grow (a full disk: KvError io, an OSError) may
    leave the tree half changed: every later call but abort() raises it again, as py-lmdb's
    transaction must be aborted after MapFullError (a ``with`` block aborts by itself).

    A Transaction is no collections.abc.MutableMapping (and is not registered as one): its
    keys(), values() and items() are iterators over a key range, not set-like views, and
    update() means something else, so code written against MutableMapping would misbehave.
    """

    _live: Optional[dict] = None  # _iterations(), made by the first iteration

    def __init__(self, native):
        self._v = native
        self._subs: list[Transaction] = []  # made by sub(), for __exit__ to end them

    def _iterations(self) -> dict:
        if self._live is None:
            self._live = {}
        return self._live

    def _changing(self) -> None:
        """Ends the items() iterations of this transaction at their next step."""
        for chunk in self._live.values():
            chunk.clear()
        self._live.clear()

    def _changed(self, c) -> None:
        _ = c.valid  # the store's own error, where the cursor knows it (a write it has applied)
        raise _error("invalid_argument", "the transaction wrote, opened a sub-transaction, "
                     "committed or aborted since the iteration began; make a new cursor (start "
                     "a new iteration)")

    def __setitem__(self, key: BytesLike, value: BytesLike) -> None:
        """tx[key] = value: as put()."""
        self._v.put(key, value)
        if self._live:
            self._changing()

    def __delitem__(self, key: BytesLike) -> None:
        """del tx[key]: removes key; KeyError when absent (remove() returns False instead), a
        key longer than MAX_KEY included."""
        if not self._v.remove(key):
            raise KeyError(key)
        if self._live:
            self._changing()

    def put(self, key: BytesLike, value: BytesLike) -> None:
        """Sets key (small values are buffered and applied in batches). A key longer than
        MAX_KEY raises KvError key_too_long, a value longer than MAX_VALUE value_too_long."""
        self._v.put(key, value)
        if self._live:
            self._changing()

    def insert(self, key: BytesLike, value: BytesLike) -> bool:
        """Adds key unless present; True if added."""
        added = self._v.insert(key, value)
        if self._live:
            self._changing()
        return added

    def update(self, key: BytesLike, value: BytesLike) -> bool:
        """Replaces key's value if the key is present; True if it was (False: nothing written).

        Not dict.update(): it takes one key, and never adds one. A key longer than MAX_KEY
        raises key_too_long, as in every write that stores a value."""
        replaced = self._v.update(key, value)
        if self._live:
            self._changing()
        return replaced

    def upsert(self, key: BytesLike, value: BytesLike) -> bool:
        """Sets key; True if it was new."""
        new = self._v.upsert(key, value)
        if self._live:
            self._changing()
        return new

    def remove(self, key: BytesLike) -> bool:
        """Removes key; True if it was present (False for a key longer than MAX_KEY, which
        cannot be)."""
        removed = self._v.remove(key)
        if self._live:
            self._changing()
        return removed

    def pop(self, key: BytesLike, default=_MISSING):
        """Removes key and returns its value; when it is absent, returns default, or raises
        KeyError if none was given (as dict.pop). A key longer than MAX_KEY is absent."""
        v = self._v._get(key)
        if v is None:
            if default is _MISSING:
                raise KeyError(key)
            return default
        self._v.remove(key)
        if self._live:
            self._changing()
        return v

    def setdefault(self, key: BytesLike, default: BytesLike) -> bytes:
        """The value of key; when it is absent, first sets it to default (as dict.setdefault,
        but default is required: a value cannot be None). Returns bytes either way. A key
        longer than MAX_KEY raises KvError key_too_long (it would be written)."""
        v = self._v._get(key)
        if v is not None:
            return v
        default = _as_bytes(default, "default", True)
        self._v.insert(key, default)
        if self._live:
            self._changing()
        return default

    def popitem(self, last: bool = True) -> tuple[bytes, bytes]:
        """Removes and returns the (key, value) pair of the largest key (last=False: the
        smallest), as OrderedDict.popitem; KeyError when the tree is empty."""
        c = self._v._cursor()
        if not (c.last() if last else c.first()):
            raise KeyError("popitem(): the tree is empty")
        k, v = c.key, c.value
        self._v.remove(k)
        if self._live:
            self._changing()
        return k, v

    def clear(self) -> None:
        """Removes every key of this transaction's tree (one remove_range: whole subtrees at
        once). The tree itself stays, empty; Database.drop() removes it."""
        self._v.remove_range(b"", None)
        if self._live:
            self._changing()

    def remove_range(self, lo: BytesLike, hi: Optional[BytesLike] = None) -> int:
        """Removes the keys in [lo, hi) (hi None: to the end); returns how many there were."""
        n = self._v.remove_range(lo, hi)
        if self._live:
            self._changing()
        return n

    def bulk_load(self, pairs: Iterable[tuple[BytesLike, BytesLike]]) -> None:
        """Adds (key, value) pairs sorted by key, keys distinct. Into an empty tree it builds
        full leaves in one pass; otherwise it inserts. Unsorted input, and a key or value
        over its limit, raise KvError before anything is written; a key already present in a
        tree that was not empty raises there, the pairs before it added. Every error names
        the pair by its index (pairs[i])."""
        try:
            pairs = list(pairs)
        except TypeError:
            raise TypeError("bulk_load takes an iterable of (key, value) pairs, not "
                            f"{type(pairs).__name__}") from None
        self._v.bulk_load(pairs)
        if self._live:
            self._changing()

    def sub(self) -> "Transaction":
        """A nested transaction: its commit folds into this one, its abort undoes only itself.
        While it is open this transaction may not be used at all: reads (get, len, count,
        items, cursors made before, ...) and writes raise KvError invalid_argument until the
        nested one commits or aborts."""
        t = Transaction(self._v.sub())
        if self._live:
            self._changing()
        self._subs = [x for x in self._subs if x._v.active()]
        self._subs.append(t)
        return t

    def _abort_all(self) -> None:
        """Aborts the sub-transactions still open (innermost first), then this one."""
        for t in reversed(self._subs):
            if t._v.active():
                t._abort_all()
        if self._v.active():
            self._v.abort()
        if self._live:
            self._changing()

    def commit(self) -> None:
        """Makes the writes visible (and, with sync="fsync", durable) at once."""
        if self._live:
            self._changing()
        self._v.commit()

    def abort(self) -> None:
        """Drops every write of this transaction; on one already committed or aborted, does
        nothing (as py-lmdb's abort), so ``try: ... tx.commit() finally: tx.abort()`` works."""
        if self._v.active():
            self._v.abort()
            if self._live:
                self._changing()

    @property
    def active(self) -> bool:
        """False once committed or aborted."""
        return self._v.active()

    def __enter__(self):
        """``with db.write() as tx:`` gives the transaction itself."""
        return self

    def __exit__(self, exc_type, exc, tb):
        """The end of the ``with`` block commits; an error in it aborts (and propagates)."""
        # An error inside the block aborts the sub-transactions left open too, so the error
        # that propagates is the block's own. Leaving the block normally with one still open
        # is refused (commit raises KvError invalid_argument), and nothing is kept.
        if exc_type is not None:
            self._abort_all()
        elif self._v.active():
            if self._live:
                self._changing()
            try:
                self._v.commit()
            except KvError:
                self._abort_all()
                raise
        return False


class Database(_Closes):
    """A database of named trees ("" is the default) in one file or in memory. One write
    transaction at a time; any number of snapshots beside it.

    Tree names are str of at most MAX_TREE_NAME (39) bytes in UTF-8, without NUL (a longer
    one raises KvError invalid_argument, also a ValueError); None is the default tree "". A
    named tree exists once a transaction from write(name) committed (even with no writes: that
    creates it empty), until drop(name).
    """

    def __init__(self, native):
        self._db = native
        self._path = native.path()  # kept after close(), as a closed file keeps its name
        # The transactions made here and maybe still open, for close() to end (the native
        # database keeps its snapshots, at no cost per read()).
        self._made: weakref.WeakSet = weakref.WeakSet()
        # read() is the native one itself (what the method below only forwards to): the
        # py-lmdb idiom `with db.read() as s: s.get(k)` per lookup then runs no Python frame
        # (4 % of its instructions). A subclass's own read() is left as it is.
        if type(self).read is Database.read:
            self.read = native.read

    def read(self, tree: Optional[str] = "") -> Snapshot:
        """A snapshot of the tree's committed state (O(1)).

        A named tree that does not exist raises KvError not_found (also a LookupError) naming
        it and the trees there are, as LMDB refuses to open a named database that was never
        created; the default tree "" always reads (empty before its first commit)."""
        return self._db.read(tree)  # a Snapshot: the native read() makes one (set_python_classes)

    def write(self, tree: Optional[str] = "") -> Transaction:
        """A write transaction on the tree; waits while another one is open. A tree that does
        not exist yet is created by the transaction's commit (up to 32 trees, "" included; a
        name of at most MAX_TREE_NAME bytes in UTF-8)."""
        tx = Transaction(self._db.write(tree))
        self._made.add(tx)
        return tx

    def drop(self, tree: Optional[str], missing_ok: bool = False) -> None:
        """Removes the tree and all its keys in one commit (durable as any commit: on disk when
        it returns with sync="fsync"), freeing its place among the 32. Snapshots taken before
        still read it; its space is reused once none of them is open. Waits for the writer as
        write() does. A tree that does not exist raises KvError not_found unless missing_ok
        (as Path.unlink). To empty a tree but keep it, use Transaction.clear()."""
        try:
            self._db.drop(tree)
        except KvError as e:
            if not (missing_ok and e.kind == "not_found"):
                raise

    def trees(self) -> list[str]:
        """Names of the trees that have been committed to. A name that is not UTF-8 (only a C++
        program can write one) comes back with its bytes escaped (``surrogateescape``)."""
        return self._db.trees()

    def stat(self, tree: Optional[str] = "") -> dict:
        """Keys, depth, node counts, bytes used and free for the tree (KvError not_found for a
        named tree that does not exist, as read())."""
        return self._db.stat(tree)

    def validate(self) -> None:
        """Checks every tree and the free space; raises KvError naming the first problem."""
        self._db.validate()

    def recovery(self) -> dict:
        """What opening the file found in its two meta pages (the commit records).

        meta_fallback is True when the newest record was damaged (a torn or corrupted write of
        the last commit) and the open fell back to the previous commit: the database is at
        commit seq, and the commit of the damaged page (lost_seq, None when its number is
        unreadable) is lost. damaged_page is the page (0 or 1) that failed its checks (None:
        neither did; a damaged older record loses nothing), detail says it in words ("" when
        nothing was wrong). It describes the open: the next commit rewrites the damaged page.
        """
        return self._db.recovery()

    def compact(self) -> None:
        """Rewrites the live data into a fresh file (no snapshot or transaction may be open:
        KvError busy)."""
        self._db.compact()

    @property
    def path(self) -> str:
        """The file's path ("" in memory); still the path once the database is closed."""
        return self._path

    def close(self) -> None:
        """Closes the database, and ends what it made that is still open (as py-lmdb's and
        sqlite3's close do): open transactions are aborted, snapshots closed; using them
        afterwards, or taking the next step of an iteration over them, raises KvError
        invalid_argument. The file is then closed and can be opened again.

        A call on the database running in another thread (write() waiting its turn, compact,
        validate, stat) makes close() raise KvError busy, and nothing is closed. One on a
        snapshot or transaction of it makes close() raise busy after closing the rest: that
        one ends by itself, or by the next close(). Closing again does nothing else."""
        self._db.close()  # first: refused (busy) while a call on the database runs
        failed = None
        try:
            self._db.end_snapshots()
        except KvError as e:  # busy: a call on one runs in another thread
            failed = e
        while True:
            try:
                made = list(self._made)
                break
            except RuntimeError:  # another thread's write() added one meanwhile
                continue
        for tx in made:
            try:
                if tx._v.active():
                    tx._abort_all()
            except KvError as e:  # busy: a call on it runs in another thread
                failed = failed or e
        if failed is not None:
            raise failed


def open(path: Optional[str | bytes | os.PathLike] = None, sync: str = "none",  # noqa: A001
         read_only: bool = False) -> Database:
    """Opens (or creates) the database file at path (str, bytes or path-like); path None:
    memory only.

    sync "none": a commit reaches the page cache (survives the process, not a power loss);
    "fsync": a commit returns once it is on disk. read_only opens an existing file for reads.
    """
    if not isinstance(sync, str):
        raise TypeError(f"sync must be 'none' or 'fsync', not {type(sync).__name__}")
    if not isinstance(read_only, int):  # bool, or 0 / 1
        raise TypeError(f"read_only must be True or False, not {type(read_only).__name__}")
    # fsdecode, not str(): str(b"data.kv") is "b'data.kv'", a file of that name was created.
    return Database(_native.Database.open(None if path is None else os.fsdecode(path), sync, bool(read_only)))
