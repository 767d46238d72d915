"""An ordered, persistent key-value store: psitri's copy-on-write radix/B-tree hybrid.

Keys and values are bytes (keys up to 1 KiB, in memcmp order). One memory-mapped file, or
memory only; write transactions commit atomically; snapshots are O(1) and never block the
writer. Design and file format: docs/kv.md.

    >>> import simdex.kv
    >>> db = simdex.kv.open("data.kv", sync="fsync")   # path None: memory only
    >>> with db.write() as tx:                         # commits on success, aborts on error
    ...     tx[b"apple"] = b"1"
    ...     tx[b"apricot"] = b"2"
    >>> with db.read() as snap:
    ...     snap[b"apple"], b"kiwi" in snap, list(snap.keys(prefix=b"ap"))
    (b'1', False, [b'apple', b'apricot'])
"""

from __future__ import annotations

from typing import Iterator, Optional

from ._simdex import kv as _native

__all__ = ["open", "Database", "Snapshot", "Transaction", "KvError", "MAX_KEY", "MAX_VALUE"]

KvError = _native.Error
MAX_KEY = _native.MAX_KEY
MAX_VALUE = _native.MAX_VALUE
_CHUNK = 256  # pairs fetched per native call while iterating


def _prefix_end(prefix: bytes) -> Optional[bytes]:
    """Smallest key greater than every key with this prefix (None: no such key)."""
    p = bytearray(prefix)
    while p and p[-1] == 0xFF:
        p.pop()
    if not p:
        return None
    p[-1] += 1
    return bytes(p)


class _Reads:
    """Read operations of a snapshot or a transaction."""

    _v = None

    def __getitem__(self, key: bytes) -> bytes:
        v = self._v.get(key)
        if v is None:
            raise KeyError(key)
        return v

    def get(self, key: bytes, default=None):
        v = self._v.get(key)
        return default if v is None else v

    def __contains__(self, key: bytes) -> bool:
        return self._v.contains(key)

    def __len__(self) -> int:
        return self._v.size()

    def get_many(self, keys) -> list:
        """Values (None where absent) for many keys: lookups run with many in flight."""
        return self._v.get_many(list(keys))

    def count(self, lo: bytes = b"", hi: Optional[bytes] = None) -> int:
        """Number of keys in [lo, hi) in O(depth)."""
        return self._v.count(lo, hi)

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
        return (k for k, _ in self.items(*args, **kw))

    def values(self, *args, **kw) -> Iterator[bytes]:
        return (v for _, v in self.items(*args, **kw))

    def __iter__(self) -> Iterator[bytes]:
        return self.keys()

    def stat(self) -> dict:
        return self._v.stat()

    def validate(self) -> None:
        self._v.validate()


class Snapshot(_Reads):
    """A read-only view of the committed state when it was taken; writes raise KvError."""

    def __init__(self, native):
        self._v = native

    @property
    def seq(self) -> int:
        return self._v.seq()

    def __setitem__(self, key, value):
        raise KvError("kv read_only: a snapshot cannot be written; use db.write()")

    def __delitem__(self, key):
        raise KvError("kv read_only: a snapshot cannot be written; use db.write()")

    def close(self) -> None:
        """Ends the snapshot: what it pins can be reused."""
        self._v.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


class Transaction(_Reads):
    """A write transaction. As a context manager it commits on success and aborts on error."""

    def __init__(self, native):
        self._v = native

    def __setitem__(self, key: bytes, value: bytes) -> None:
        self._v.put(key, value)

    def __delitem__(self, key: bytes) -> None:
        if not self._v.remove(key):
            raise KeyError(key)

    def put(self, key: bytes, value: bytes) -> None:
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
        return self._v.remove(key)

    def remove_range(self, lo: bytes, hi: Optional[bytes] = None) -> int:
        return self._v.remove_range(lo, hi)

    def sub(self) -> "Transaction":
        """A nested transaction: its commit folds into this one, its abort undoes only itself."""
        return Transaction(self._v.sub())

    def commit(self) -> None:
        self._v.commit()

    def abort(self) -> None:
        self._v.abort()

    @property
    def active(self) -> bool:
        return self._v.active()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._v.active():
            if exc_type is None:
                self._v.commit()
            else:
                self._v.abort()
        return False


class Database:
    """A database of named trees ("" is the default) in one file or in memory."""

    def __init__(self, native):
        self._db = native

    def read(self, tree: str = "") -> Snapshot:
        return Snapshot(self._db.read(tree))

    def write(self, tree: str = "") -> Transaction:
        """A write transaction; waits while another one is open."""
        return Transaction(self._db.write(tree))

    def trees(self) -> list[str]:
        return self._db.trees()

    def stat(self, tree: str = "") -> dict:
        return self._db.stat(tree)

    def validate(self) -> None:
        """Checks every tree and the free space; raises KvError naming the first problem."""
        self._db.validate()

    def compact(self) -> None:
        """Rewrites the live data into a fresh file (no snapshot or transaction may be open)."""
        self._db.compact()

    @property
    def path(self) -> str:
        return self._db.path()

    def close(self) -> None:
        self._db.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def open(path: Optional[str] = None, sync: str = "none", read_only: bool = False) -> Database:  # noqa: A001
    """Opens (or creates) the database file at path; path None: memory only.
    sync "none": commits reach the page cache; "fsync": a commit returns once on disk."""
    return Database(_native.Database.open(None if path is None else str(path), sync, read_only))
