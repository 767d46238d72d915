"""An ordered, persistent key-value store: a copy-on-write radix/B-tree hybrid after psitri.

Keys and values are bytes (keys up to 1 KiB, compared as unsigned bytes; values up to 2 GiB).
One memory-mapped file, or memory only. Write transactions commit atomically, nest, and never
block readers; snapshots are O(1) and see the committed state they were taken at. Design,
file format and benchmarks: docs/kv.md.

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
io is also OSError. Long calls (get_many of 256 keys or more, bulk_load, remove_range, commit,
validate, stat, compact, opening, waiting for the writer) run without the GIL.
"""

from __future__ import annotations

import os
from typing import Iterable, Iterator, Optional

from ._simdex import kv as _native

__all__ = ["open", "Database", "Snapshot", "Transaction", "Cursor", "KvError", "ERROR_KINDS",
           "MAX_KEY", "MAX_VALUE"]

KvError = _native.Error
ERROR_KINDS: dict = dict(_native.ERROR_KINDS)  # kind -> what it means
MAX_KEY: int = _native.MAX_KEY
MAX_VALUE: int = _native.MAX_VALUE
_CHUNK = 256  # pairs fetched per native call while iterating


def _error(kind: str, detail: str) -> KvError:
    """A KvError raised from Python, shaped like the native ones."""
    e = KvError(f"kv {kind}: {detail}")
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


class Cursor:
    """A position in a snapshot or transaction, moved by the methods below.

    Every move returns True when it lands on a key, False when there is none (the cursor is
    then not valid). key and value read the current pair; on a transaction a cursor is valid
    until the transaction's next write.
    """

    def __init__(self, native):
        self._c = native

    def first(self, prefix: Optional[bytes] = None) -> bool:
        """Moves to the first key, or the first key with the prefix."""
        return self._c.first(prefix)

    def last(self, prefix: Optional[bytes] = None) -> bool:
        """Moves to the last key, or the last key with the prefix."""
        return self._c.last(prefix)

    def seek(self, key: bytes) -> bool:
        """Moves to exactly this key."""
        return self._c.seek(key)

    def lower_bound(self, key: bytes) -> bool:
        """Moves to the first key >= key."""
        return self._c.lower_bound(key)

    def upper_bound(self, key: bytes) -> bool:
        """Moves to the first key > key."""
        return self._c.upper_bound(key)

    def next(self) -> bool:
        """Moves to the next key."""
        return self._c.next()

    def prev(self) -> bool:
        """Moves to the previous key."""
        return self._c.prev()

    @property
    def valid(self) -> bool:
        """Whether the cursor stands on a key."""
        return self._c.valid()

    @property
    def key(self) -> bytes:
        """The current key (KvError invalid_argument when not valid)."""
        return self._c.key()

    @property
    def value(self) -> bytes:
        """The current value (KvError invalid_argument when not valid)."""
        return self._c.value()

    def item(self) -> tuple[bytes, bytes]:
        """The current (key, value)."""
        return self._c.key(), self._c.value()


class _Reads:
    """Read operations of a snapshot or a transaction."""

    _v = None

    def __getitem__(self, key: bytes) -> bytes:
        """view[key]: the value of key; KeyError when absent."""
        v = self._v.get(key)
        if v is None:
            raise KeyError(key)
        return v

    def get(self, key: bytes, default=None):
        """The value of key, or default when absent."""
        v = self._v.get(key)
        return default if v is None else v

    def __contains__(self, key: bytes) -> bool:
        """key in view."""
        return self._v.contains(key)

    def __len__(self) -> int:
        """Number of keys (O(1))."""
        return self._v.size()

    def get_many(self, keys: Iterable[bytes]) -> list:
        """Values (None where absent) for many keys, looked up with many in flight."""
        return self._v.get_many(list(keys))

    def count(self, lo: Optional[bytes] = b"", hi: Optional[bytes] = None) -> int:
        """Number of keys in [lo, hi) (lo None: from the start, hi None: to the end), in
        O(depth)."""
        # None as in items(): count(None, hi) raised TypeError where items(None, hi) worked.
        return self._v.count(b"" if lo is None else lo, hi)

    def cursor(self) -> Cursor:
        """A cursor over this view, not yet on a key."""
        return Cursor(self._v.cursor())

    def items(self, lo: Optional[bytes] = None, hi: Optional[bytes] = None, *,
              prefix: Optional[bytes] = None, reverse: bool = False) -> Iterator[tuple[bytes, bytes]]:
        """(key, value) pairs with lo <= key < hi (and the prefix, if given), in key order or
        reversed."""
        if prefix is not None:
            lo = prefix if lo is None or lo < prefix else lo
            end = _prefix_end(prefix)
            if end is not None and (hi is None or end < hi):
                hi = end
        c = self._v.cursor()
        if not reverse:
            ok = c.lower_bound(lo) if lo else c.first()
            while ok and c.valid():
                chunk = c.take(_CHUNK, True, hi)
                yield from chunk
                ok = len(chunk) == _CHUNK
        else:
            if hi is None:
                ok = c.last()
            else:  # the last key below hi: before hi's lower bound, or the very last key
                ok = c.prev() if c.lower_bound(hi) else c.last()
            while ok and c.valid():
                chunk = c.take(_CHUNK, False, lo if lo else None)
                yield from chunk
                ok = len(chunk) == _CHUNK

    def keys(self, *args, **kw) -> Iterator[bytes]:
        """The keys of items(*args, **kw)."""
        return (k for k, _ in self.items(*args, **kw))

    def values(self, *args, **kw) -> Iterator[bytes]:
        """The values of items(*args, **kw)."""
        return (v for _, v in self.items(*args, **kw))

    def __iter__(self) -> Iterator[bytes]:
        """The keys in order, as keys()."""
        return self.keys()

    def stat(self) -> dict:
        """Keys, depth, node counts and bytes of this view's tree (walks all of it)."""
        return self._v.stat()

    def validate(self) -> None:
        """Checks every node of this view's tree; raises KvError corrupt naming the problem."""
        self._v.validate()


class _Closes:
    """Context-manager protocol for objects whose close() ends them."""

    def close(self) -> None:  # pragma: no cover - each class defines its own
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Snapshot(_Reads, _Closes):
    """A read-only view of the committed state when it was taken; writes raise KvError."""

    def __init__(self, native):
        self._v = native

    @property
    def seq(self) -> int:
        """The commit sequence number this snapshot sees."""
        return self._v.seq()

    def __setitem__(self, key, value):
        """Refused: KvError read_only."""
        raise _error("read_only", "a snapshot cannot be written; use db.write()")

    def __delitem__(self, key):
        """Refused: KvError read_only."""
        raise _error("read_only", "a snapshot cannot be written; use db.write()")

    def close(self) -> None:
        """Ends the snapshot: what only it pinned can be reused."""
        self._v.release()


class Transaction(_Reads):
    """A write transaction on one tree. As a context manager it commits on success and aborts
    on error. Reads see its own writes."""

    def __init__(self, native):
        self._v = native
        self._subs: list[Transaction] = []  # made by sub(), for __exit__ to end them

    def __setitem__(self, key: bytes, value: bytes) -> None:
        """tx[key] = value: as put()."""
        self._v.put(key, value)

    def __delitem__(self, key: bytes) -> None:
        """del tx[key]: removes key; KeyError when absent (remove() returns False instead)."""
        if not self._v.remove(key):
            raise KeyError(key)

    def put(self, key: bytes, value: bytes) -> None:
        """Sets key (small values are buffered and applied in batches)."""
        self._v.put(key, value)

    def insert(self, key: bytes, value: bytes) -> bool:
        """Adds key unless present; True if added."""
        return self._v.insert(key, value)

    def update(self, key: bytes, value: bytes) -> bool:
        """Replaces key's value if present; True if it was."""
        return self._v.update(key, value)

    def upsert(self, key: bytes, value: bytes) -> bool:
        """Sets key; True if it was new."""
        return self._v.upsert(key, value)

    def remove(self, key: bytes) -> bool:
        """Removes key; True if it was present."""
        return self._v.remove(key)

    def remove_range(self, lo: bytes, hi: Optional[bytes] = None) -> int:
        """Removes the keys in [lo, hi) (hi None: to the end); returns how many there were."""
        return self._v.remove_range(lo, hi)

    def bulk_load(self, pairs: Iterable[tuple[bytes, bytes]]) -> None:
        """Adds (key, value) pairs sorted by key, keys distinct. Into an empty tree it builds
        full leaves in one pass; otherwise it inserts. Unsorted input raises KvError
        invalid_argument before anything is written."""
        self._v.bulk_load(list(pairs))

    def sub(self) -> "Transaction":
        """A nested transaction: its commit folds into this one, its abort undoes only itself.
        While it is open this transaction may not be used at all: reads (get, len, count,
        items, cursors made before, ...) and writes raise KvError invalid_argument until the
        nested one commits or aborts."""
        t = Transaction(self._v.sub())
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

    def commit(self) -> None:
        """Makes the writes visible (and, with sync="fsync", durable) at once."""
        self._v.commit()

    def abort(self) -> None:
        """Drops every write of this transaction; on one already committed or aborted, does
        nothing (as py-lmdb's abort), so ``try: ... tx.commit() finally: tx.abort()`` works."""
        if self._v.active():
            self._v.abort()

    @property
    def active(self) -> bool:
        """False once committed or aborted."""
        return self._v.active()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # An error inside the block aborts the sub-transactions left open too, so the error
        # that propagates is the block's own. Leaving the block normally with one still open
        # is refused (commit raises KvError invalid_argument), and nothing is kept.
        if exc_type is not None:
            self._abort_all()
        elif self._v.active():
            try:
                self._v.commit()
            except KvError:
                self._abort_all()
                raise
        return False


class Database(_Closes):
    """A database of named trees ("" is the default) in one file or in memory. One write
    transaction at a time; any number of snapshots beside it."""

    def __init__(self, native):
        self._db = native

    def read(self, tree: str = "") -> Snapshot:
        """A snapshot of the tree's committed state (O(1))."""
        return Snapshot(self._db.read(tree))

    def write(self, tree: str = "") -> Transaction:
        """A write transaction on the tree; waits while another one is open."""
        return Transaction(self._db.write(tree))

    def trees(self) -> list[str]:
        """Names of the trees that have been committed to. A name that is not UTF-8 (only a C++
        program can write one) comes back with its bytes escaped (``surrogateescape``)."""
        return self._db.trees()

    def stat(self, tree: str = "") -> dict:
        """Keys, depth, node counts, bytes used and free for the tree."""
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
        """The file's path ("" in memory)."""
        return self._db.path()

    def close(self) -> None:
        """Closes the database once its snapshots and transactions have ended."""
        self._db.close()


def open(path: Optional[str | bytes | os.PathLike] = None, sync: str = "none",  # noqa: A001
         read_only: bool = False) -> Database:
    """Opens (or creates) the database file at path (str, bytes or path-like); path None:
    memory only.

    sync "none": a commit reaches the page cache (survives the process, not a power loss);
    "fsync": a commit returns once it is on disk. read_only opens an existing file for reads.
    """
    # fsdecode, not str(): str(b"data.kv") is "b'data.kv'", a file of that name was created.
    return Database(_native.Database.open(None if path is None else os.fsdecode(path), sync, read_only))
