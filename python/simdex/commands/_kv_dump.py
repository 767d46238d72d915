"""mdb_dump's text format, written and read: how ``simdex kv dump`` and ``kv load`` move data
in and out of simdex kv and to and from LMDB (mdb_dump / mdb_load).

A stream holds one section per database::

    VERSION=3
    format=bytevalue          (or format=print)
    database=NAME             (absent for the default tree, LMDB's main database)
    type=btree
    mapsize=...               (read by mdb_load; ignored here)
    HEADER=END
     6b6579                   (a key: a space, then hex pairs)
     76616c7565               (its value)
    DATA=END

``format=print`` writes printable ASCII but the backslash as itself, and every other byte as a
backslash and two hex digits; it reads a backslash written as ``\\\\`` (as newer mdb_dump writes it) too.
"""

from __future__ import annotations

import binascii
import re
from dataclasses import dataclass, field

import numpy as np

# Header keywords mdb_dump writes that say nothing about the data (mdb_load sizes its map by
# mapsize; a kv file grows by itself).
_IGNORED = {b"mapsize", b"maxreaders", b"db_pagesize", b"mapaddr"}
# LMDB database flags as mdb_dump writes them ("dupsort=1"). Duplicate keys cannot be held by a
# tree (one value a key): loading them would silently keep only the last value of each key.
_DUPLICATES = {b"dupsort", b"dupfixed", b"integerdup", b"reversedup"}
# Orders other than bytewise: the keys load, but sort here as plain bytes.
_ORDERS = {b"integerkey": "native-endian integers sorted by value", b"reversekey": "compared from their last byte"}

# print format: printable ASCII stays as itself, runs of other bytes (the backslash among them) are escaped.
_UNPRINTABLE = re.compile(rb"[^\x20-\x5b\x5d-\x7e]+")
_ESCAPE = [b"\\%02x" % i for i in range(256)]
# The backslash as a hex escape too, not as newer mdb_dump's two backslashes: LMDB 0.9.24's mdb_load
# (Debian's) reads those wrongly after other escapes on the line (it skips the byte, not writes it).
_ESCAPE[0x5C] = b"\\5c"
_ESCAPED = re.compile(rb"\\(\\|[0-9a-fA-F]{2})|\\")
# Longer data goes through numpy in chunks: the regexes make a bytes object per escape, which
# took 50 (writing) and 100 (reading) times a random value's size in memory, and seconds a MiB.
_LONG, _CHUNK = 4096, 1 << 18
_HEX_DIGITS = np.frombuffer(b"0123456789abcdef", np.uint8)
_HEX_VALUES = np.full(256, 255, np.uint8)
for _i, _c in enumerate(b"0123456789abcdef"):
    _HEX_VALUES[_c] = _HEX_VALUES[ord(chr(_c).upper())] = _i


# Longest header line read: a database name of LMDB's longest key, and room.
_HEADER_LINE = 1 << 12


class DumpError(ValueError):
    """Input that is not mdb_dump's format; ``line`` is its 1-based line number."""

    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line, self.message = line, message


def _escape_run(m: re.Match) -> bytes:
    return b"".join([_ESCAPE[c] for c in m.group()])


def _encode_print_chunk(a: np.ndarray) -> bytes:
    """A chunk of bytes as print format: each byte is a row of three, of which an escaped byte
    keeps all (a backslash and two hex digits) and a printable one its first."""
    escaped = (a < 0x20) | (a > 0x7E) | (a == 0x5C)
    rows = np.empty((len(a), 3), np.uint8)
    rows[:, 0] = np.where(escaped, 0x5C, a)
    rows[:, 1] = _HEX_DIGITS[a >> 4]
    rows[:, 2] = _HEX_DIGITS[a & 15]
    keep = np.empty((len(a), 3), bool)
    keep[:, 0] = True
    keep[:, 1] = keep[:, 2] = escaped
    return rows[keep].tobytes()


def encode_print(data: bytes) -> bytes:
    """``data`` as a print-format line body."""
    if len(data) < _LONG:
        return _UNPRINTABLE.sub(_escape_run, data)
    a = np.frombuffer(data, np.uint8)
    return b"".join([_encode_print_chunk(a[i:i + _CHUNK]) for i in range(0, len(a), _CHUNK)])


def _decode_print_chunk(body: bytes) -> bytes | None:
    """A print-format body (or a chunk of one that ends at an escape's end), decoded; None when
    it holds a bad escape. A backslash starts an escape unless it is the second of a pair (\\\\):
    within a run of backslashes, every other one does."""
    a = np.frombuffer(body, np.uint8)
    n = len(a)
    backslash = a == 0x5C
    count = np.cumsum(backslash)  # backslashes up to and including each position
    run_start = backslash.copy()
    run_start[1:] &= ~backslash[:-1]
    before_run = np.maximum.accumulate(np.where(run_start, count - 1, 0))
    starts = np.flatnonzero(backslash & ((count - before_run) % 2 == 1))
    if len(starts) and starts[-1] + 1 >= n:
        return None
    pair = backslash[starts + 1]
    hex_at = starts[~pair]
    if len(hex_at) and hex_at[-1] + 2 >= n:
        return None
    high, low = _HEX_VALUES[a[hex_at + 1]], _HEX_VALUES[a[hex_at + 2]]
    if (high == 255).any() or (low == 255).any():
        return None
    out = a.copy()
    out[hex_at] = (high << 4) | low  # a pair's first backslash is already the byte it stands for
    keep = np.ones(n, bool)
    keep[starts + 1] = False
    keep[hex_at + 2] = False
    return out[keep].tobytes()


def _print_chunks(body: bytes):
    """(start, end) of chunks of a long print-format body that each start and end between
    escapes: a chunk ends after two bytes that are not backslashes (no escape is open there).
    A run of backslashes as long as a chunk: the rest in one."""
    start, n = 0, len(body)
    while start < n:
        end = min(n, start + _CHUNK)
        while end < n and (body[end - 1] == 0x5C or body[end - 2] == 0x5C):
            end -= 1
            if end - start < 2:
                end = n
        yield start, end
        start = end


_ENCODERS = {"bytevalue": binascii.hexlify, "print": encode_print}


def header(fmt: str, name: str | None, mapsize: int | None = None) -> bytes:
    """A section's header; ``name`` None or "" is the default tree (LMDB's main database)."""
    lines = [b"VERSION=3", b"format=" + fmt.encode()]
    if name:
        raw = name.encode("utf-8", "surrogateescape")
        if b"\n" in raw or b"\r" in raw:  # it would end the line and corrupt the stream
            raise ValueError(f"tree name {name!r} holds a line break: the dump format cannot name it")
        lines.append(b"database=" + raw)
    lines.append(b"type=btree")
    if mapsize:
        lines.append(b"mapsize=%d" % mapsize)
    lines.append(b"HEADER=END\n")
    return b"\n".join(lines)


def write_section(out, fmt: str, name: str | None, pairs, mapsize: int | None = None,
                  tick=None, every: int = 4096) -> int:
    """Writes one section of (key, value) pairs to the binary file ``out``; returns how many.
    ``tick(n)`` is called with the pairs written so far every ``every`` pairs."""
    enc = _ENCODERS[fmt]
    out.write(header(fmt, name, mapsize))
    n, chunk = 0, []
    for k, v in pairs:
        chunk.append(b" %s\n %s\n" % (enc(k), enc(v)))
        if len(chunk) == every:
            out.writelines(chunk)
            n += len(chunk)
            chunk.clear()
            if tick:
                tick(n)
    out.writelines(chunk)
    n += len(chunk)
    out.write(b"DATA=END\n")
    if tick:
        tick(n)
    return n


def _show(line: bytes, width: int = 40) -> str:
    """A line for an error message: quoted, escaped, shortened."""
    text = line[:width].decode("ascii", "backslashreplace")
    return repr(text) + ("..." if len(line) > width else "")


@dataclass
class Section:
    """One database of the stream, from its header."""

    line: int  # of its VERSION= line
    name: str | None = None  # database=, None when absent (the main database)
    name_line: int = 0  # of its database= line
    fmt: str = "bytevalue"
    notes: list = field(default_factory=list)  # warnings about the header, with line numbers


class Reader:
    """Reads a stream section by section: ``next_section()`` returns the next header (None at
    the end of the input), then ``pairs()`` yields that section's (key, value) pairs up to its
    DATA=END. Errors are DumpError naming the line; ``line`` is the last line read."""

    def __init__(self, f, max_key: int, max_value: int):
        self._readline = f.readline
        self._max_key, self._max_value = max_key, max_value
        # Longest key line: a space, 3 characters a byte (print's escapes), \r\n. Key lines are
        # read no longer than that (header lines: _HEADER_LINE), so input without line breaks (a
        # binary file, /dev/zero) is an error at once rather than read into memory whole.
        self._key_line = 3 * max_key + 3
        self.line = 0
        self._cut = False  # the last line read had no line break: the input ended inside it
        self._section = None
        self._back = []  # lines read ahead by pairs()'s quick path, last first

    def _next(self, limit: int = _HEADER_LINE, what: str = "header") -> bytes | None:
        """The next line without its line break; None at the end of the input. A line that
        reaches ``limit`` bytes without its line break is an error."""
        raw = self._back.pop() if self._back else self._readline(limit)
        if not raw:
            return None
        self.line += 1
        self._cut = raw[-1:] != b"\n"
        if self._cut and len(raw) >= limit >= 0:
            raise DumpError(self.line, f"a {what} line longer than {limit - 1} bytes (is this mdb_dump's "
                            f"output?), starting {_show(raw)}")
        if not self._cut:
            raw = raw[:-1]
            if raw[-1:] == b"\r":
                raw = raw[:-1]
        return raw

    def next_section(self) -> Section | None:
        line = self._next()
        while line is not None and not line.strip():  # blank lines between sections
            line = self._next()
        if line is None:
            return None
        if not line.startswith(b"VERSION="):
            raise DumpError(self.line, f"expected VERSION=3 (the first line of an mdb_dump header), found {_show(line)}")
        if line != b"VERSION=3":
            raise DumpError(self.line, f"unsupported {_show(line)}: this reads VERSION=3, as mdb_dump writes it")
        sec = Section(self.line)
        while True:
            line = self._next()
            if line is None:
                raise DumpError(self.line + 1, "the input ended inside a header (no HEADER=END)")
            if line == b"HEADER=END":
                break
            if line.startswith(b" "):
                raise DumpError(self.line, "a data line before HEADER=END (the header is not ended)")
            key, eq, value = line.partition(b"=")
            if not eq:
                raise DumpError(self.line, f"expected NAME=VALUE or HEADER=END in the header, found {_show(line)}")
            if key == b"format":
                if value not in (b"bytevalue", b"print"):
                    raise DumpError(self.line, f"unsupported {_show(line)}: bytevalue or print")
                sec.fmt = value.decode()
            elif key == b"type":
                if value != b"btree":
                    raise DumpError(self.line, f"unsupported {_show(line)}: btree only")
            elif key == b"database":
                sec.name, sec.name_line = value.decode("utf-8", "surrogateescape"), self.line
            elif key in _DUPLICATES:
                if value != b"0":
                    raise DumpError(self.line, f"{_show(line)}: the database holds duplicate keys (LMDB "
                                    "MDB_DUPSORT); a kv tree holds one value per key")
            elif key in _ORDERS:
                if value != b"0":
                    sec.notes.append(f"line {self.line}: {key.decode()}: the keys were {_ORDERS[key]} in LMDB; "
                                     "here they sort as plain bytes")
            elif key not in _IGNORED:
                sec.notes.append(f"line {self.line}: unknown header keyword {_show(key)} ignored")
        self._section = sec
        return sec

    def _hex(self, body: bytes, what: str) -> bytes:
        try:
            return binascii.a2b_hex(body)
        except binascii.Error:
            bad = next((i for i, c in enumerate(body) if c not in b"0123456789abcdefABCDEF"), None)
            if bad is not None:
                raise DumpError(self.line, f"bad hex digit {_show(body[bad:bad + 1])} at column {bad + 2} "
                                f"of a {what} line") from None
            raise DumpError(self.line, f"odd number of hex digits ({len(body)}) in a {what} line") from None

    def _print(self, body: bytes, what: str = "key") -> bytes:
        if b"\\" not in body:
            return body
        if len(body) < _LONG:
            return self._unescape(body, what)
        out = []
        for start, end in _print_chunks(body):
            data = _decode_print_chunk(body[start:end])
            out.append(data if data is not None else self._unescape(body[start:end], what, start))
        return b"".join(out)

    def _unescape(self, body: bytes, what: str, column: int = 0) -> bytes:
        """print format's escapes decoded (the regex way); ``column``: where ``body`` starts in its line."""

        def unescape(m: re.Match) -> bytes:
            esc = m.group(1)
            if esc is None:
                raise DumpError(self.line, f"a backslash not followed by \\ or two hex digits at column "
                                f"{column + m.start() + 2} of a {what} line (mdb_dump 0.9.24 and older write a "
                                "backslash of the data unescaped with -p, which cannot be read back "
                                "for sure: dump without -p)")
            return b"\\" if esc == b"\\" else binascii.a2b_hex(esc)

        return _ESCAPED.sub(unescape, body)

    def _data(self, what: str) -> bytes | None:
        """The next data line's bytes; None at DATA=END."""
        line = self._next(self._key_line, what) if what == "key" else self._next(-1)
        if line is None:
            raise DumpError(self.line + 1, "the input ended after a key line, before its value (truncated?)"
                            if what == "value" else "the input ended before DATA=END (truncated?)")
        if line[:1] != b" ":
            if line == b"DATA=END":
                if what == "value":
                    raise DumpError(self.line, "DATA=END after a key without its value")
                return None
            raise DumpError(self.line, f"expected a {what} line (a space, then the data) or DATA=END, "
                            f"found {_show(line)}")
        if self._cut:  # mdb_dump stopped mid-line: the data is not whole, however it decodes
            raise DumpError(self.line, f"the input ended inside this {what} line (truncated?)")
        body = line[1:]
        return self._hex(body, what) if self._section.fmt == "bytevalue" else self._print(body, what)

    def pairs(self):
        """The current section's pairs, to its DATA=END."""
        readline, max_key, max_value, key_line = self._readline, self._max_key, self._max_value, self._key_line
        decode = binascii.a2b_hex if self._section.fmt == "bytevalue" else self._print
        while True:
            # Quick path (half the time of the checked one): two data lines that decode. Anything
            # else (DATA=END, the end, a line break \r\n, an error) is read again below, checked.
            k = readline(key_line)
            if k[:1] == b" " and k[-1:] == b"\n" and k[-2:-1] != b"\r":
                v = readline()
                if v[:1] == b" " and v[-1:] == b"\n" and v[-2:-1] != b"\r":
                    try:
                        key, value = decode(k[1:-1]), decode(v[1:-1])
                    except (binascii.Error, DumpError):
                        pass
                    else:
                        if len(key) <= max_key and len(value) <= max_value:
                            self.line += 2
                            yield key, value
                            continue
                self._back = [v, k] if v else [k]
            elif k:
                self._back = [k]
            key = self._data("key")
            if key is None:
                return
            if len(key) > self._max_key:
                raise DumpError(self.line, f"key of {len(key)} bytes is over the {self._max_key}-byte limit")
            value = self._data("value")
            if len(value) > self._max_value:
                raise DumpError(self.line, f"value of {len(value)} bytes is over the {self._max_value}-byte limit")
            yield key, value
