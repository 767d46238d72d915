"""Base85 codecs with the signatures and results of Python's ``base64`` functions.

``b85encode``/``b85decode``, ``a85encode``/``a85decode`` and ``z85encode``/``z85decode`` are
drop-in replacements running the native SIMD core (the GIL is released on large inputs).
Where CPython versions disagree, these follow the strict side (CPython 3.15): a final group of
a single character raises ``ValueError`` instead of being dropped. Every ``ValueError`` names
the byte position of the problem.

For files and other streams: :class:`Encoder`, :class:`Decoder`, :func:`encode_file` and
:func:`decode_file` work in chunks, in constant memory.
"""

from __future__ import annotations

import operator
import os
import re
from typing import BinaryIO, Union

from ._output import Output, write_all
from ._simdex import base85 as _native

__all__ = [
    "b85encode", "b85decode", "a85encode", "a85decode", "z85encode", "z85decode",
    "Encoder", "Decoder", "encode_file", "decode_file", "VARIANTS",
]

VARIANTS = ("b85", "z85", "a85")  # the names Encoder, Decoder and the file helpers take
_A85_WHITESPACE = b" \t\n\r\v"
_NO_WRAP = 1 << 62  # wider than any output


def _bytes_like(b):
    """The bytes of ``b`` (bytes-like only, TypeError otherwise), as ``base64`` reads them:
    a buffer of any format or shape is its raw bytes."""
    if isinstance(b, (bytes, bytearray)):
        return b
    m = memoryview(b)  # TypeError for non-buffers, as in base64
    if not m.c_contiguous:
        return m.tobytes()
    return m if m.format == "B" and m.ndim == 1 else m.cast("B")


def _wrap(wrapcol) -> int:
    """CPython's wrapcol rule: a false value (0, None) means no wrapping; otherwise an integer
    (TypeError for a float), at least 1 (2 with adobe, applied by the codec), and a width
    beyond any output means no wrapping."""
    if not wrapcol:
        return 0
    return min(max(operator.index(wrapcol), 1), _NO_WRAP)


def _ignore_set(chars):
    """The bytes ``chars`` makes a decoder skip, by CPython's test ``x in chars`` for each byte
    value x, so any container works (``[32]``). If that test raises (``None``, a ``str``), the
    error is returned instead: CPython raises it only on meeting a char it has to look up."""
    if isinstance(chars, (bytes, bytearray)):
        return bytes(chars), None
    try:
        return bytes(x for x in range(256) if x in chars), None
    except TypeError as e:
        return b"", e


def _lookup_error(e: ValueError, deferred) -> BaseException:
    """The error CPython raises: a deferred ignorechars TypeError where it would have looked a
    char up in ignorechars (a char outside the alphabet), else ``e``."""
    msg = str(e)
    if deferred is not None and (msg.startswith("Non-Ascii85 digit") or msg.startswith("bad ")):
        return deferred
    return e


_TILDE_AT = re.compile(r"Non-Ascii85 digit found: ~ at position (\d+)$")


def _blank_prefix(data, blank: bytes) -> int:
    """How many leading bytes of ``data`` are in ``blank`` (read a page at a time)."""
    view = memoryview(data)
    n = 0
    while n < len(view):
        piece = bytes(view[n:n + 4096])
        k = len(piece) - len(piece.lstrip(blank))
        n += k
        if k < len(piece):
            break
    return n


def _misplaced_opening(e: ValueError, lt_at) -> ValueError:
    """With adobe, ``e`` with a hint when its '~' is the one of a "<~" that skipped chars
    (whitespace) come before: as in CPython, "<~" opens the data only as its very first bytes,
    so there the '<' is a digit and the '~' an error. ``lt_at``: where the first char that is
    not skipped sits, if it is a '<'."""
    m = _TILDE_AT.match(str(e))
    if m is None or lt_at is None or lt_at == 0 or int(m.group(1)) != lt_at + 1:
        return e
    return ValueError(f"{e}: the '<~' at position {lt_at} opens adobe input only as its first "
                      f"two bytes, as in base64.a85decode (remove the {lt_at} "
                      f"byte{'s' if lt_at > 1 else ''} before it)")


def _lt_after_blanks(data, ignore: bytes):
    """Where the first byte of ``data`` that is not in ``ignore`` sits, if it is a '<'."""
    n = _blank_prefix(data, ignore.replace(b"<", b""))
    return n if n < len(data) and data[n] == 0x3C else None


# The native calls take their arguments by position: nanobind's keyword matching was a third
# of the cost of a call on a short input.
def _encode(b, variant, pad, foldspaces=False, adobe=False, wrapcol=0):
    data = b if type(b) is bytes else _bytes_like(b)
    return _native.encode(data, variant, bool(pad), bool(foldspaces), bool(adobe),
                          _wrap(wrapcol) if wrapcol else 0)


def _decode(data, variant, ignorechars, foldspaces=False, adobe=False):
    if type(ignorechars) is bytes:  # the usual case, with no error to defer: the shortest path
        return _native.decode(data, variant, foldspaces, adobe, ignorechars)
    ignore, deferred = _ignore_set(ignorechars)
    try:
        return _native.decode(data, variant, foldspaces, adobe, ignore)
    except ValueError as e:
        raise _lookup_error(e, deferred) from None


def _decode_input(s):
    """``base64``'s rule for decoder input: bytes-like, or a str of ASCII characters."""
    if type(s) is bytes:
        return s
    if isinstance(s, str):
        try:
            return s.encode("ascii")
        except UnicodeEncodeError:
            raise ValueError("string argument should contain only ASCII characters") from None
    try:
        return _bytes_like(s)
    except TypeError:
        raise TypeError("argument should be a bytes-like object or ASCII string, "
                        f"not {s.__class__.__name__!r}") from None


def b85encode(b, pad=False, *, wrapcol=0):
    """Encode bytes-like ``b`` with the RFC 1924 / git alphabet; returns bytes (as
    ``base64.b85encode``).

    Each 4 bytes become 5 chars; a final group of n = 1..3 bytes becomes n+1 chars, or 5 when
    ``pad`` is true (the input zero-padded to a multiple of 4). ``wrapcol``: a newline after
    every ``wrapcol`` chars (0 or None: no wrapping; a negative value wraps at 1, a float is a
    TypeError), none at the end. Any buffer is read as its raw bytes; a ``str`` is a TypeError.
    """
    return _encode(b, "b85", pad, wrapcol=wrapcol)


def b85decode(b, *, ignorechars=b""):
    """Decode b85 text, bytes-like or an ASCII ``str``; returns bytes (as ``base64.b85decode``).

    ``ignorechars``: bytes skipped wherever they appear (any container of byte values, e.g.
    ``b" \\n"`` for wrapped text); alphabet chars keep their meaning even when listed. A final
    group of k = 2..4 chars gives k-1 bytes. Raises ValueError naming the byte position: a char
    outside the alphabet and ``ignorechars``, a 5-char group worth more than 2**32-1 (its first
    char), or a 1-char final group (rejected as CPython 3.15 does; older versions drop it).
    """
    return _decode(_decode_input(b), "b85", ignorechars)


def z85encode(s, pad=False, *, wrapcol=0):
    """Encode bytes-like ``s`` with the ZeroMQ Z85 alphabet; returns bytes (as
    ``base64.z85encode`` of Python 3.13+).

    ``pad`` and ``wrapcol`` as for :func:`b85encode`. For an input length that is a multiple
    of 4 the output is ZeroMQ's ``zmq_z85_encode``, which refuses other lengths; here a partial
    final group is written as n+1 chars (5 with ``pad``), as in Python.
    """
    return _encode(s, "z85", pad, wrapcol=wrapcol)


def z85decode(s, *, ignorechars=b""):
    """Decode Z85 text, bytes-like or an ASCII ``str``; returns bytes (as ``base64.z85decode``
    of Python 3.13+). ``ignorechars`` and the errors (ValueError with the byte position) as for
    :func:`b85decode`."""
    return _decode(_decode_input(s), "z85", ignorechars)


def a85encode(b, *, foldspaces=False, wrapcol=0, pad=False, adobe=False):
    """Ascii85-encode bytes-like ``b``; returns bytes (as ``base64.a85encode``).

    A group of four zero bytes is written as ``z``; with ``foldspaces`` four spaces as ``y``
    (btoa's extension, not Adobe's). ``wrapcol``: a newline after every ``wrapcol`` chars (at
    least 2 with ``adobe``; 0 or None: no wrapping), the framing counted. ``pad``: a final
    partial group as 5 chars. ``adobe``: frame with ``<~`` and ``~>`` (the ``~>`` on a line of
    its own when it would pass ``wrapcol``).
    """
    return _encode(b, "a85", pad, foldspaces, adobe, wrapcol)


def a85decode(b, *, foldspaces=False, adobe=False, ignorechars=_A85_WHITESPACE):
    """Decode Ascii85 text, bytes-like or an ASCII ``str``; returns bytes (as
    ``base64.a85decode``).

    ``z`` decodes to four zero bytes, and with ``foldspaces`` ``y`` to four spaces, between
    groups only. With ``adobe`` the input must end with ``~>`` and a leading ``<~`` is dropped
    (only as its very first bytes, as in CPython). ``ignorechars`` (default: ASCII whitespace)
    are skipped anywhere; alphabet chars, ``z`` and ``y`` (with ``foldspaces``) keep their
    meaning even when listed. Raises ValueError naming the byte position: a char outside the
    alphabet and ``ignorechars``, a ``z``/``y`` inside a group, a group worth more than
    2**32-1, a 1-char final group, or (``adobe``) a missing ``~>``.
    """
    data = _decode_input(b)
    try:
        return _decode(data, "a85", ignorechars, bool(foldspaces), bool(adobe))
    except ValueError as e:
        if not adobe:
            raise
        hinted = _misplaced_opening(e, _lt_after_blanks(data, _ignore_set(ignorechars)[0]))
        if hinted is e:
            raise
        raise hinted from None


def _a85_only(variant, foldspaces, adobe) -> None:
    # b85 and z85 have no such options; ignoring them would hide a mistake.
    if variant != "a85" and (foldspaces or adobe):
        raise ValueError(f"foldspaces and adobe apply to variant 'a85' only, not {variant!r}")


def _not_finished(codec) -> None:
    # Data after finish() went on silently: after an adobe "~>", or after a final partial group.
    if codec._done:
        raise ValueError(f"the {type(codec).__name__.lower()} has finished: make a new one for more data")


class Encoder:
    """Streaming encoder: ``update(chunk)`` returns the text so far, ``finish()`` the rest;
    their concatenation equals the one-shot function's result for the whole input.

    ``variant`` is "b85", "z85" or "a85"; ``pad`` and ``wrapcol`` as for the one-shot
    functions, ``foldspaces`` and ``adobe`` (a85 only, ValueError otherwise) as for
    :func:`a85encode`. Keeps at most 3 bytes between calls.
    """

    def __init__(self, variant="b85", *, pad=False, foldspaces=False, adobe=False, wrapcol=0):
        _a85_only(variant, foldspaces, adobe)
        self._e = _native.Encoder(variant, pad=bool(pad), fold_spaces=bool(foldspaces),
                                  adobe=bool(adobe), wrap=_wrap(wrapcol))
        self._done = False

    def update(self, data) -> bytes:
        """Encode the next chunk (bytes-like); returns the text complete so far."""
        _not_finished(self)
        return self._e.update(_bytes_like(data))

    def finish(self) -> bytes:
        """Encode what is left (the final partial group, and the framing with adobe=True);
        call once, last: the encoder then refuses more (ValueError)."""
        _not_finished(self)
        self._done = True
        return self._e.finish()


class Decoder:
    """Streaming decoder: ``update(chunk)`` returns the bytes so far, ``finish()`` the rest;
    their concatenation equals the one-shot function's result for the whole input.

    ``variant`` is "b85", "z85" or "a85"; ``foldspaces`` and ``adobe`` (a85 only, ValueError
    otherwise) as for :func:`a85decode`. ``ignorechars`` defaults to whitespace for a85 and to
    nothing for b85/z85. A ValueError names the position in the whole stream. With ``adobe``
    the last two chars seen wait for the next chunk or ``finish()``, which checks that the
    stream ends with ``~>``; as in ``a85decode``, a leading ``<~`` is dropped only as the
    stream's very first bytes.
    """

    def __init__(self, variant="b85", *, foldspaces=False, adobe=False, ignorechars=None):
        _a85_only(variant, foldspaces, adobe)
        if ignorechars is None:
            ignorechars = _A85_WHITESPACE if variant == "a85" else b""
        ignore, self._deferred = _ignore_set(ignorechars)
        self._d = _native.Decoder(variant, fold_spaces=bool(foldspaces), adobe=bool(adobe),
                                  ignore=ignore)
        self._done = False
        # adobe: the skipped chars that open the stream, counted until another char comes
        # (then _lt_at: where it sits, if a '<'), for the hint on a "<~" after whitespace.
        self._blank = ignore.replace(b"<", b"") if adobe and variant == "a85" else None
        self._seen = 0
        self._lt_at = None

    def _opening(self, data) -> None:
        n = _blank_prefix(data, self._blank)
        if n < len(data):
            self._lt_at = self._seen + n if data[n] == 0x3C else None
            self._blank = None
        self._seen += n

    def update(self, data) -> bytes:
        """Decode the next chunk (bytes-like or ASCII str); returns the bytes complete so far.
        Raises ValueError naming the position of bad input in the whole stream."""
        _not_finished(self)
        data = _decode_input(data)
        if self._blank is not None:
            self._opening(data)
        try:
            return self._d.update(data)
        except ValueError as e:
            raise _misplaced_opening(_lookup_error(e, self._deferred), self._lt_at) from None

    def finish(self) -> bytes:
        """Decode what is left and check that the stream ended cleanly (ValueError with the
        position otherwise, e.g. a single trailing character). Call once, last: the decoder
        then refuses more (ValueError)."""
        _not_finished(self)
        self._done = True
        return self._d.finish()

    @property
    def consumed(self) -> int:
        """Input bytes taken so far: every byte given to ``update()``, with ``adobe`` the ``<~``
        and the two chars held back for a possible ``~>`` included (after ``finish()``, the
        stream's length). After an error, the bytes before the one where decoding stopped."""
        return self._d.consumed


_File = Union[str, os.PathLike, BinaryIO]
_CHUNK = 1 << 20


def _pump(codec, src: _File, dst: _File, chunk_size: int) -> int:
    if int(chunk_size) < 1:  # read(0) is b"", which reads as the end: nothing would be written
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    fin = open(src, "rb") if isinstance(src, (str, os.PathLike)) else None
    try:
        out_file = Output(dst) if isinstance(dst, (str, os.PathLike)) else None
    except BaseException:
        if fin is not None:
            fin.close()
        raise
    reader, writer = fin or src, out_file.file if out_file else dst
    written = 0
    try:
        while True:
            block = reader.read(chunk_size)
            if not block:
                break
            out = codec.update(block)
            write_all(writer, out)
            written += len(out)
        out = codec.finish()
        write_all(writer, out)
        if out_file is not None:
            out_file.commit()
        return written + len(out)
    finally:
        if out_file is not None:
            out_file.discard()
        if fin is not None:
            fin.close()


def encode_file(src: _File, dst: _File, variant="b85", *, chunk_size=_CHUNK, **options) -> int:
    """Encode ``src`` into ``dst`` (paths or binary file objects) chunk by chunk; returns the
    number of chars written. ``variant``: "b85", "z85" or "a85"; ``chunk_size``: bytes read at
    a time (memory use is a few times that); ``options``: pad, foldspaces, adobe, wrapcol, as
    for :class:`Encoder`. A ``dst`` path to a regular file is replaced only when the whole
    result is written (on an error it is left as it was)."""
    return _pump(Encoder(variant, **options), src, dst, chunk_size)


def decode_file(src: _File, dst: _File, variant="b85", *, chunk_size=_CHUNK, **options) -> int:
    """Decode ``src`` into ``dst`` (paths or binary file objects) chunk by chunk; returns the
    number of bytes written. ``variant`` and ``chunk_size`` as for :func:`encode_file`;
    ``options``: foldspaces, adobe, ignorechars, as for :class:`Decoder`. Raises ValueError
    with the stream position; a ``dst`` path to a regular file is then left as it was (never
    half written)."""
    return _pump(Decoder(variant, **options), src, dst, chunk_size)
