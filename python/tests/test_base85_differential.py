"""simdex.base85 against CPython's base64 on random inputs and random argument combinations:
the same bytes or the same exception type, on the one-shot functions and on the streaming
classes with random chunking. Where CPython versions differ (a 1-character final group, which
CPython up to 3.14 drops and 3.15 rejects), the reference is the strict side."""

from __future__ import annotations

import array
import base64
import random

import pytest

from simdex import base85 as b85

A85_DIGITS = bytes(range(ord("!"), ord("u") + 1))
B85_ALPHABET = (b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                b"!#$%&()*+-;<=>?@^_`{|}~")


def outcome(fn, *args, **kwargs):
    """("ok", result) or ("raise", exception type)."""
    try:
        return "ok", fn(*args, **kwargs)
    except (ValueError, TypeError) as e:
        return "raise", type(e)


def a85_body(data: bytes, adobe: bool) -> bytes:
    if not adobe:
        return data
    return data[2:-2] if data.startswith(b"<~") else data[:-2]


def ref_a85decode(data, **kw):
    """CPython's a85decode, with a 1-character final group rejected."""
    out = base64.a85decode(data, **kw)
    if sum(c in A85_DIGITS for c in a85_body(bytes(data), kw.get("adobe", False))) % 5 == 1:
        raise ValueError("1-character final group")
    return out


def ref_b85decode(data, ignore=b""):
    """CPython's b85decode of the text with ignored chars (outside the alphabet) removed, with
    a 1-character final group rejected."""
    kept = bytes(c for c in data if c in B85_ALPHABET or c not in ignore)
    if len(kept) % 5 == 1:
        raise ValueError("1-character final group")
    return base64.b85decode(kept)


def random_a85_text(r: random.Random) -> bytes:
    """Mostly valid Ascii85 with every kind of trouble mixed in."""
    data = bytearray(r.randbytes(r.choice([0, 1, 3, 4, 7, 20, 64, 300, 1000])))
    for i in range(0, len(data) - 3, 4):
        if r.random() < 0.15:
            data[i:i + 4] = b"\0\0\0\0" if r.random() < 0.5 else b"    "
    text = bytearray(base64.a85encode(bytes(data), foldspaces=r.random() < 0.5,
                                      wrapcol=r.choice([0, 0, 5, 76]), adobe=r.random() < 0.5))
    trouble = b"zy~<>\x00\x80\xff \t\n\x0c!u"
    for _ in range(r.choice([0, 0, 1, 2, 4])):
        at = r.randrange(len(text) + 1)
        text[at:at] = bytes([r.choice(trouble)])
    if r.random() < 0.2:
        del text[r.randrange(len(text) + 1):]
    if r.random() < 0.15:
        text = bytearray(r.choice([b"<~>", b"<~~>", b"~>", b"<~", b"<~z~>", b"<~'f,~~~>", b"z"]))
    return bytes(text)


def random_ignorechars(r: random.Random):
    pool = b" \t\n\r\v\x0czy~<>x\x80"
    pick = bytes(r.sample(pool, r.randrange(0, 6)))
    return r.choice([pick, pick, list(pick), bytearray(pick), None, "abc", b" \t\n\r\v"])


def test_a85decode_random_arguments():
    r = random.Random(14)
    for case in range(4000):
        text = random_a85_text(r)
        kw = dict(foldspaces=r.random() < 0.5, adobe=r.random() < 0.5)
        if r.random() < 0.7:
            kw["ignorechars"] = random_ignorechars(r)
        want = outcome(ref_a85decode, text, **kw)
        got = outcome(b85.a85decode, text, **kw)
        assert got == want, (case, text, kw)


def test_a85_decoder_random_chunks():
    # The streaming decoder: same bytes as CPython; on bad input a ValueError too (which one
    # may differ: CPython looks at the end of the whole input first).
    r = random.Random(15)
    for case in range(2000):
        text = random_a85_text(r)
        kw = dict(foldspaces=r.random() < 0.5, adobe=r.random() < 0.5)
        ignore = random_ignorechars(r)
        if ignore is None:
            ignore = b""  # the Decoder's None means its default
        want = outcome(ref_a85decode, text, ignorechars=ignore, **kw)

        def streamed():
            d = b85.Decoder("a85", ignorechars=ignore, **kw)
            out, i = b"", 0
            while i < len(text):
                step = r.choice([1, 1, 2, 3, 7, 100])
                out += d.update(text[i:i + step])
                i += step
            return out + d.finish()

        got = outcome(streamed)
        if want[0] == "ok":
            assert got == want, (case, text, kw, ignore)
        else:
            assert got[0] == "raise" and (got[1] is want[1] or want[1] is ValueError), (case, text)


def test_b85decode_random_arguments():
    r = random.Random(16)
    for case in range(2000):
        text = bytearray(base64.b85encode(r.randbytes(r.choice([0, 1, 5, 64, 700]))))
        for _ in range(r.choice([0, 1, 3])):
            text.insert(r.randrange(len(text) + 1), r.choice(b' \n"\x00\x80~|'))
        ignore = bytes(r.sample(b' \n"~\x80', r.randrange(0, 3)))
        want = outcome(ref_b85decode, bytes(text), ignore)
        got = outcome(b85.b85decode, bytes(text), ignorechars=ignore)
        assert got == want, (case, bytes(text), ignore)


WRAPCOLS = [0, None, False, True, -5, -1, 1, 2, 3, 7, 75, 10**20, 7.0, 0.0, 2.5, "3"]


def test_a85encode_random_arguments():
    r = random.Random(17)
    for case in range(3000):
        data = bytearray(r.randbytes(r.choice([0, 1, 2, 3, 4, 5, 8, 33, 200, 1100])))
        for i in range(0, len(data) - 3, 4):
            if r.random() < 0.2:
                data[i:i + 4] = b"\0\0\0\0" if r.random() < 0.5 else b"    "
        kw = dict(foldspaces=r.random() < 0.5, wrapcol=r.choice(WRAPCOLS), pad=r.random() < 0.5,
                  adobe=r.random() < 0.5)
        want = outcome(base64.a85encode, bytes(data), **kw)
        assert outcome(b85.a85encode, bytes(data), **kw) == want, (case, kw)
        if want[0] == "ok":  # the streaming encoder, random chunks
            e = b85.Encoder("a85", **kw)
            text, i = b"", 0
            while i < len(data):
                step = r.choice([1, 3, 4, 5, 64])
                text += e.update(data[i:i + step])
                i += step
            assert text + e.finish() == want[1], (case, kw)
            assert outcome(ref_a85decode, want[1], foldspaces=kw["foldspaces"],
                           adobe=kw["adobe"]) == outcome(b85.a85decode, want[1],
                                                         foldspaces=kw["foldspaces"],
                                                         adobe=kw["adobe"])


def test_b85encode_random_arguments():
    r = random.Random(18)
    for case in range(1000):
        data = r.randbytes(r.choice([0, 1, 2, 3, 4, 5, 63, 64, 65, 1000]))
        pad = r.choice([False, True, 0, 1, "", "x"])
        assert outcome(b85.b85encode, data, pad) == outcome(base64.b85encode, data, pad), case


@pytest.mark.parametrize("make", [
    lambda b: memoryview(b).cast("H"),
    lambda b: array.array("H", b),
    lambda b: memoryview(b).cast("B", (2, len(b) // 2)),
    lambda b: memoryview(bytearray(b)).cast("I"),
])
def test_any_buffer_is_read_as_bytes(make):
    text = b"<~@:E_WAS,RgBkhD~>"
    assert len(text) % 4 == 2
    text = text[:-2] + b"  ~>"  # a length every cast accepts
    buf = make(text)
    assert b85.a85decode(buf, adobe=True) == base64.a85decode(buf, adobe=True) == b"abcdefghijk"
    d = b85.Decoder("a85", adobe=True)
    assert d.update(buf) + d.finish() == b"abcdefghijk"
    assert b85.a85encode(buf) == base64.a85encode(buf)
    assert b85.b85encode(buf) == base64.b85encode(buf)


_EVERY_LEVEL_SCRIPT = r"""
import hashlib, random, sys
from simdex import base85 as b85
r = random.Random(2026)
h = hashlib.sha256()
def note(fn, *a, **k):
    try:
        h.update(b"ok" + fn(*a, **k))
    except ValueError as e:  # the message: kind and byte position
        h.update(b"err" + str(e).encode())
for case in range(600):
    data = r.randbytes(r.choice([r.randrange(0, 301), r.randrange(300, 3000)]))
    for v in ("b85", "z85", "a85"):
        text = bytearray(getattr(b85, v + "encode")(data, wrapcol=r.choice([0, 0, 76, 7])))
        for _ in range(r.choice([0, 1, 2])):
            at = r.randrange(len(text) + 1)
            text[at:at] = bytes([r.choice(b" \n\x00\x80z~#u")])
        if r.random() < 0.3:
            text[r.randrange(len(text) + 1):] = b""
        note(getattr(b85, v + "decode"), bytes(text), ignorechars=b" \n")
        d = b85.Decoder(v, ignorechars=b" \n\t")
        note(lambda: b"".join(d.update(bytes(text[i:i + 333])) for i in range(0, len(text), 333)) + d.finish())
        note(getattr(b85, v + "encode"), data, pad=r.random() < 0.5, wrapcol=r.choice([0, 1, 76]))
print(h.hexdigest())
"""


def test_every_isa_level_gives_the_same_results_and_errors():
    # Results and error messages (kind and byte position) must not depend on the level a
    # process runs at; SIMDEX_ISA caps it (a level the CPU lacks runs as the best below it),
    # and only in a fresh process.
    import os
    import subprocess
    import sys

    digests = {}
    for level in ("scalar", "sse4.2", "avx2", "avx512", "avx512vbmi"):
        r = subprocess.run([sys.executable, "-c", _EVERY_LEVEL_SCRIPT], capture_output=True, text=True,
                           env={**os.environ, "SIMDEX_ISA": level})
        assert r.returncode == 0, r.stderr
        digests[level] = r.stdout.strip()
    assert len(set(digests.values())) == 1, digests
