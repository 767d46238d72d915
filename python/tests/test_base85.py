"""simdex.base85 against CPython's base64 (on inputs where every Python version agrees), the
Z85 spec vector, error positions, streaming and the CLI."""

from __future__ import annotations

import array
import base64
import random
import re
import signal
import subprocess
import sys

import pytest

from simdex import base85 as b85

HAS_Z85 = hasattr(base64, "z85encode")  # Python 3.13+


def rand(n, seed):
    return random.Random(seed).randbytes(n)


SIZES = list(range(0, 70)) + [255, 256, 1000, 4093, 4096, 70000]


@pytest.mark.parametrize("n", SIZES)
def test_b85_matches_cpython(n):
    data = rand(n, n)
    for pad in (False, True):
        ours = b85.b85encode(data, pad=pad)
        assert ours == base64.b85encode(data, pad=pad)
        assert b85.b85decode(ours) == base64.b85decode(ours)


@pytest.mark.parametrize("n", SIZES)
def test_a85_matches_cpython(n):
    r = random.Random(n)
    data = bytearray(rand(n, n))
    for i in range(0, n - 3, 4):  # zero and space words exercise 'z' and 'y'
        if r.random() < 0.2:
            data[i:i + 4] = b"\0\0\0\0" if r.random() < 0.5 else b"    "
    data = bytes(data)
    for kw in (dict(), dict(foldspaces=True), dict(pad=True), dict(adobe=True),
               dict(wrapcol=1), dict(wrapcol=2, adobe=True), dict(wrapcol=75, adobe=True, foldspaces=True),
               dict(wrapcol=13, pad=True)):
        ours = b85.a85encode(data, **kw)
        assert ours == base64.a85encode(data, **kw), kw
        dkw = {k: v for k, v in kw.items() if k in ("foldspaces", "adobe")}
        assert b85.a85decode(ours, **dkw) == base64.a85decode(ours, **dkw), kw


def test_z85_spec_vector():
    raw = bytes([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])
    assert b85.z85encode(raw) == b"HelloWorld"
    assert b85.z85decode(b"HelloWorld") == raw
    assert b85.z85decode("HelloWorld") == raw


@pytest.mark.skipif(not HAS_Z85, reason="base64.z85encode needs Python 3.13+")
def test_z85_matches_cpython():  # pragma: no cover - runs on 3.13+
    for n in SIZES:
        data = rand(n, n)
        assert b85.z85encode(data) == base64.z85encode(data)
        assert b85.z85decode(base64.z85encode(data)) == data


def test_z85_is_b85_with_another_alphabet():
    # Holds on every Python: Z85 text is the b85 text under the alphabet mapping.
    b = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
    z = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
    table = bytes.maketrans(b, z)
    for n in SIZES:
        data = rand(n, n + 1)
        assert b85.z85encode(data) == base64.b85encode(data).translate(table)


def test_any_bytes_like():
    data = rand(400, 1)
    want = base64.b85encode(data)
    assert b85.b85encode(bytearray(data)) == want
    assert b85.b85encode(memoryview(data)) == want
    assert b85.b85encode(memoryview(data)[::2]) == base64.b85encode(data[::2])  # non-contiguous
    arr = array.array("I", data)
    assert b85.b85encode(arr) == base64.b85encode(arr)
    assert b85.b85decode(memoryview(want)) == data
    assert b85.b85decode(want.decode()) == data
    with pytest.raises(TypeError):
        b85.b85encode("text")
    with pytest.raises(ValueError):
        b85.b85decode("é")


def test_errors_carry_position():
    text = bytearray(base64.b85encode(rand(200, 2)))
    for i in (0, 1, 63, 64, 79, 80, 150, len(text) - 1):
        bad = bytearray(text)
        bad[i] = ord('"')
        with pytest.raises(ValueError, match=f"position {i}"):
            b85.b85decode(bytes(bad))
        with pytest.raises(ValueError):
            base64.b85decode(bytes(bad))  # CPython agrees it is bad
    with pytest.raises(ValueError, match="overflow in hunk starting at byte 85"):
        b85.b85decode(b"0" * 85 + b"|NsC1" + b"0" * 100)
    with pytest.raises(ValueError, match="1-character group"):
        b85.b85decode(b"00000" + b"0")
    with pytest.raises(ValueError, match="z inside Ascii85 5-tuple"):
        b85.a85decode(b"!!z!!")
    with pytest.raises(ValueError, match="Non-Ascii85 digit found: v"):
        b85.a85decode(b"!!!!v")
    with pytest.raises(ValueError, match="~>"):
        b85.a85decode(b"<~!!!!!", adobe=True)
    with pytest.raises(ValueError, match="overflow"):
        b85.a85decode(b"s8W-\"")
    with pytest.raises(ValueError, match="bad z85 character at position 4"):
        b85.z85decode(b"0000~")


@pytest.mark.parametrize("group", ["|NsC1", "}0000", "~0000", "~~~~~"])
def test_overflow_inside_blocks(group):
    # A bad group at every offset of a long input: CPython and simdex both reject it.
    for at in range(0, 40):
        text = (b"00000" * at + group.encode() + b"00000" * (40 - at))
        with pytest.raises(ValueError, match=f"byte {5 * at}"):
            b85.b85decode(text)
        with pytest.raises(ValueError, match="overflow"):
            base64.b85decode(text)


def test_a85_ignorechars_and_framing():
    data = rand(1000, 3)
    text = base64.a85encode(data, wrapcol=60, adobe=True)
    assert b85.a85decode(text, adobe=True) == data
    assert b85.a85decode(text.replace(b"\n", b"\r\n"), adobe=True) == data
    spaced = base64.a85encode(data).replace(b"A", b"A\x0c")
    assert b85.a85decode(spaced, ignorechars=b"\x0c") == data
    with pytest.raises(ValueError):
        b85.a85decode(spaced)  # \f is not in the default ignore set, as in CPython
    assert b85.b85decode(base64.b85encode(data) + b"\n", ignorechars=b"\n") == data


def test_streaming_matches_one_shot():
    r = random.Random(5)
    for variant, enc in (("b85", b85.b85encode), ("z85", b85.z85encode), ("a85", b85.a85encode)):
        data = rand(100000, 6)
        e = b85.Encoder(variant)
        d = b85.Decoder(variant)
        text, back, i = b"", b"", 0
        while i < len(data):
            step = r.randrange(0, 5000)
            text += e.update(data[i:i + step])
            i += step
        text += e.finish()
        assert text == enc(data)
        for j in range(0, len(text), 777):
            back += d.update(text[j:j + 777])
        back += d.finish()
        assert back == data


def test_streaming_error_position_is_absolute():
    d = b85.Decoder("b85")
    d.update(b"00000" * 300)
    with pytest.raises(ValueError, match="position 1502"):
        d.update(b"00" + b'"' + b"00")


def test_file_helpers(tmp_path):
    data = rand(3_000_000, 7)
    src = tmp_path / "in.bin"
    src.write_bytes(data)
    b85.encode_file(src, tmp_path / "t.txt", "a85", wrapcol=76, adobe=True, chunk_size=65536)
    assert (tmp_path / "t.txt").read_bytes() == base64.a85encode(data, wrapcol=76, adobe=True)
    b85.decode_file(tmp_path / "t.txt", tmp_path / "out.bin", "a85", adobe=True, chunk_size=100001)
    assert (tmp_path / "out.bin").read_bytes() == data


def run_cli(*args, input=None):
    return subprocess.run([sys.executable, "-m", "simdex", "base85", *args], input=input,
                          capture_output=True)


@pytest.mark.parametrize("variant", ["b85", "z85", "a85"])
def test_cli_round_trip(tmp_path, variant):
    data = rand(300_000, 8)
    (tmp_path / "in").write_bytes(data)
    r = run_cli("encode", "--variant", variant, "-i", str(tmp_path / "in"), "-o", str(tmp_path / "t"),
                "--wrap", "76")
    assert r.returncode == 0, r.stderr
    text = (tmp_path / "t").read_bytes()
    assert max(len(line) for line in text.splitlines()) == 76 and text.endswith(b"\n")
    r = run_cli("decode", "--variant", variant, input=text)
    assert r.returncode == 0, r.stderr
    assert r.stdout == data


def test_cli_reports_bad_input():
    r = run_cli("decode", input=b"00000" * 10 + b"0\x01000")
    assert r.returncode == 1
    assert b"position 51" in r.stderr
    r = run_cli("encode", "--variant", "b85", input=b"hello")
    assert r.returncode == 0 and r.stdout == b"Xk~0{Zv"


PRINTABLE = set(range(0x20, 0x7F)) | {0x0A}


def test_non_ascii_bytes_are_value_errors_with_position():
    for text, pos in ((b"\xff", 0), (b"0000\x80", 4), (b"!!!!!\x1b[31m", 5)):
        with pytest.raises(ValueError, match=f"position {pos}") as e:
            b85.a85decode(text)
        assert set(str(e.value).encode("ascii")) <= PRINTABLE  # escaped, never raw
    with pytest.raises(ValueError, match=r"Non-Ascii85 digit found: \\xff at position 0"):
        b85.a85decode(b"\xff")
    with pytest.raises(ValueError, match="bad b85 character at position 3"):
        b85.b85decode(b"000\xe9")
    # '~' and the next byte in different chunks (adobe): '~' is an ordinary char there.
    d = b85.Decoder("a85", adobe=True)
    d.update(b"<~9jqo~")
    with pytest.raises(ValueError, match="Non-Ascii85 digit found: ~ at position 6"):
        d.update(b"x~>")
    d = b85.Decoder("a85", adobe=True)
    d.update(b"<~9jqo")
    with pytest.raises(ValueError, match=r"\\x80 at position 6"):
        d.update(b"\x80")
        d.update(b"~>")


def test_streaming_adobe_finish_names_what_is_wrong():
    d = b85.Decoder("a85", adobe=True)
    d.update(b"<~9jqo^B~>")
    with pytest.raises(ValueError, match="1-character group at position 7"):
        d.finish()
    with pytest.raises(ValueError, match="1-character group at position 7"):
        b85.a85decode(b"<~9jqo^B~>", adobe=True)
    for text in (b"<~9jqo^", b"<~9jqo^~", b"<~", b"~"):
        d = b85.Decoder("a85", adobe=True)
        d.update(text)
        with pytest.raises(ValueError, match=f"must end with b'~>' .input ends at byte {len(text)}"):
            d.finish()
    d = b85.Decoder("a85", adobe=True)
    d.update(b"<~9jqo^~>")
    with pytest.raises(ValueError, match="Non-Ascii85 digit found: ~ at position 7"):
        d.update(b"\n")  # "~>" was not the end after all
    for split in range(1, 11):  # every split of a good input, the frame included
        text = b"<~9jqo^BlbD-BleB1DJ+*+F(f,q~>"
        d = b85.Decoder("a85", adobe=True)
        assert d.update(text[:split]) + d.update(text[split:]) + d.finish() == \
            base64.a85decode(text, adobe=True)


def test_adobe_whitespace_before_the_opening_is_an_error_as_in_cpython():
    """CPython drops "<~" only as the input's first bytes, so whitespace before it makes the '<'
    a digit and the '~' an error. simdex raises there too, on every path, naming both
    positions and why, never a silent answer."""
    text = base64.a85encode(b"Hello World!", adobe=True)
    for lead in (b" ", b"\n", b"\t\r\n  "):
        data = lead + text
        with pytest.raises(ValueError, match="Non-Ascii85 digit found: ~"):
            base64.a85decode(data, adobe=True)
        want = (f"Non-Ascii85 digit found: ~ at position {len(lead) + 1}: the '<~' at position "
                f"{len(lead)} opens adobe input only as its first two bytes")
        with pytest.raises(ValueError, match=re.escape(want)):
            b85.a85decode(data, adobe=True)
        with pytest.raises(ValueError, match=re.escape(want)):
            b85.a85decode(data.decode(), adobe=True)  # str input too
        for i in range(len(data) + 1):
            for j in range(i, len(data) + 1):  # wherever the chunks split
                d = b85.Decoder("a85", adobe=True)
                with pytest.raises(ValueError, match=re.escape(want)):
                    d.update(data[:i]), d.update(data[i:j]), d.update(data[j:]), d.finish()
        r = run_cli("decode", "--variant", "a85", "--adobe", input=data)
        assert r.returncode == 1 and want.encode() in r.stderr, r.stderr
    # No hint where the '<~' is not the first thing after whitespace, and none without adobe.
    with pytest.raises(ValueError, match=r"position 3$"):
        b85.a85decode(b"<~" + text, adobe=True)
    with pytest.raises(ValueError, match=r"position 2$"):
        b85.a85decode(b" " + text)
    assert b85.a85decode(text, adobe=True) == base64.a85decode(text, adobe=True) == b"Hello World!"


def test_streaming_consumed_counts_the_frame_and_what_follows():
    """consumed left out the closing "~>" (held back until finish()): 17 of 19 bytes."""
    text = base64.a85encode(b"Hello World!", adobe=True)  # 19 bytes
    for split in range(len(text) + 1):
        d = b85.Decoder("a85", adobe=True)
        d.update(text[:split])
        assert d.consumed == split
        d.update(text[split:])
        assert d.consumed == len(text)
        assert d.finish() == b"" and d.consumed == len(text)
    d = b85.Decoder("a85", adobe=True)
    d.update(text)
    with pytest.raises(ValueError, match=f"~ at position {len(text) - 2}"):
        d.update(b"more")  # after "~>": the pair was body, and its '~' no digit
    assert d.consumed == len(text) - 2  # the bytes before the one where decoding stopped
    d = b85.Decoder("b85")
    d.update(b"Xk~0{Zv")
    assert d.consumed == 7


@pytest.mark.parametrize("options,named", [(["--wrap", "76"], "--wrap applies"), (["--wrap", "0"], "--wrap applies"),
                                           (["--pad"], "--pad applies"), (["--pad", "--wrap", "5"], "--wrap and --pad apply")])
def test_cli_decode_refuses_encode_options(options, named):
    """decode took --wrap and --pad and ignored them; now a usage error, before any output."""
    r = run_cli("decode", *options, input=b"Xk~0{Zv")
    assert r.returncode == 2 and r.stdout == b"", r
    assert f"simdex base85: {named} to encode only".encode() in r.stderr and b"Traceback" not in r.stderr
    r = run_cli("encode", *options, input=b"hello")
    assert r.returncode == 0 and r.stdout.startswith(b"Xk~0"), r.stderr


def test_a85_folds_and_frames_as_cpython():
    cases = [(b"z9jqo^", dict(ignorechars=b"z")), (b"z", dict(ignorechars=b"z")),
             (b"y9jqo^", dict(ignorechars=b"y", foldspaces=True)),
             (b"9jqo^y", dict(ignorechars=b"y")), (b"<~'f,~~~>", dict(adobe=True, ignorechars=b"~")),
             (b"<~>", dict(adobe=True)), (b"<~~>", dict(adobe=True)),
             (b"9jqo ^", dict(ignorechars=[32])), (b"9jqo^", dict(ignorechars=None)),
             (b"z" * 40 + b"9jqo^" * 40, dict(ignorechars=b"z"))]
    for text, kw in cases:
        want = base64.a85decode(text, **kw)
        assert b85.a85decode(text, **kw) == want, (text, kw)
        d = b85.Decoder("a85", **kw) if kw.get("ignorechars", 0) is not None else None
        if d is not None:
            assert b"".join(d.update(text[i:i + 1]) for i in range(len(text))) + d.finish() == want
    with pytest.raises(TypeError):  # CPython: `x in None` when it meets the space
        b85.a85decode(b"9jqo ^", ignorechars=None)
    with pytest.raises(ValueError, match="must end with"):
        b85.a85decode(b"<~9jqo^~>\n", adobe=True)


def test_wrapcol_as_cpython():
    data = b"hello world, hello base85"
    for wrapcol in (-1, -7, 0, None, False, True, 1, 2, 10**20, 2**64):
        for adobe in (False, True):
            want = base64.a85encode(data, wrapcol=wrapcol, adobe=adobe)
            assert b85.a85encode(data, wrapcol=wrapcol, adobe=adobe) == want, (wrapcol, adobe)
            e = b85.Encoder("a85", wrapcol=wrapcol, adobe=adobe)
            assert e.update(data) + e.finish() == want
    for bad in (7.0, 2.5, "3"):
        with pytest.raises(TypeError):
            base64.a85encode(data, wrapcol=bad)
        with pytest.raises(TypeError):
            b85.a85encode(data, wrapcol=bad)
    assert b85.b85encode(data, wrapcol=-1) == b"\n".join(bytes([c]) for c in b85.b85encode(data))


def test_cli_refuses_to_write_its_input(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"precious data")
    link = tmp_path / "link"
    link.hardlink_to(f)
    for out in (f, link):
        r = run_cli("encode", "-i", str(f), "-o", str(out))
        assert r.returncode == 1 and b"input file is output file" in r.stderr
        assert f.read_bytes() == b"precious data"
    with open(f, "rb") as src, open(f, "ab") as dst:  # simdex base85 encode < f >> f
        r = subprocess.run([sys.executable, "-m", "simdex", "base85", "encode"], stdin=src,
                           stdout=dst, stderr=subprocess.PIPE)
    assert r.returncode == 1 and b"input file is output file" in r.stderr
    assert f.read_bytes() == b"precious data"


def test_cli_closed_pipe_ends_quietly(tmp_path):
    big = tmp_path / "big"
    big.write_bytes(rand(8 << 20, 9))
    # As a context manager the stderr pipe is closed on every way out (it was left open: a
    # ResourceWarning under python -X dev).
    with subprocess.Popen([sys.executable, "-m", "simdex", "base85", "encode", "-i", str(big)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        p.stdout.read(10)
        p.stdout.close()  # as `| head -c 10` does
        err = p.stderr.read()
        status = p.wait()
    assert status == -signal.SIGPIPE  # what cat and base64 do: no message, killed by SIGPIPE
    assert err == b""


def test_cli_errors_across_its_chunk_boundary():
    mib = 1 << 20
    body = base64.a85encode(rand(mib, 10))[:mib - 3]
    for text, pos, shown in ((b"<~" + body + b"~x~>", mib - 1, b"~"),
                             (b"<~" + body + b"\x80z~>", mib - 1, b"\\x80"),
                             (b"<~" + body + b"!\x1b[2J~>", mib, b"\\x1b")):
        r = run_cli("decode", "--variant", "a85", "--adobe", input=text)
        assert r.returncode == 1
        assert f"position {pos}".encode() in r.stderr and shown in r.stderr, r.stderr
        assert set(r.stderr) <= PRINTABLE  # no raw control char reaches the terminal


def test_cli_adobe_allows_trailing_whitespace(tmp_path):
    data = rand(3 << 20, 11)
    text = base64.a85encode(data, adobe=True, wrapcol=76) + b"\n" + b" \n" * (1 << 20)
    r = run_cli("decode", "--variant", "a85", "--adobe", input=text)
    assert r.returncode == 0 and r.stdout == data, r.stderr
    r = run_cli("decode", "--variant", "a85", "--adobe", input=text + b"x")
    assert r.returncode == 1 and b"digit found: ~ at position" in r.stderr  # not the end


def test_cli_output_on_error_is_never_removed_unless_its_own(tmp_path):
    """A decode error unlinked whatever -o named: a device node (run as root, /dev/null itself),
    a symlink (its target left empty). Now a regular file is written beside its name and
    renamed into place only when complete, so an error leaves the old file as it was; anything
    else is written in place and kept."""
    import os
    import stat

    old = tmp_path / "old.txt"
    old.write_bytes(b"previous")
    os.chmod(old, 0o640)
    assert run_cli("decode", "-o", str(old), input=b'ab"cd').returncode == 1
    assert old.read_bytes() == b"previous"
    assert run_cli("encode", "-o", str(old), input=b"hello").returncode == 0
    assert b85.b85decode(old.read_bytes()) == b"hello" and stat.S_IMODE(old.stat().st_mode) == 0o640
    target, link = tmp_path / "target", tmp_path / "link"
    target.write_bytes(b"keep")
    link.symlink_to(target)
    assert run_cli("decode", "-o", str(link), input=b'ab"cd').returncode == 1
    assert link.is_symlink() and target.read_bytes() == b"keep"
    assert run_cli("encode", "-o", str(link), input=b"hi").returncode == 0
    assert link.is_symlink() and b85.b85decode(target.read_bytes()) == b"hi"
    assert not [p for p in os.listdir(tmp_path) if "simdex-tmp" in p]
    new = tmp_path / "new.txt"
    assert run_cli("decode", "-o", str(new), input=b'ab"cd').returncode == 1 and not new.exists()
    if os.geteuid() == 0:
        node = tmp_path / "null"
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        assert run_cli("decode", "-o", str(node), input=b'ab"cd').returncode == 1
        assert stat.S_ISCHR(node.lstat().st_mode)


def test_cli_full_disk_and_closed_descriptors_are_messages():
    r = run_cli("encode", "-o", "/dev/full", input=b"x" * 100000)
    assert r.returncode == 1 and b"No space left" in r.stderr and b"Traceback" not in r.stderr
    r = subprocess.run(f"{sys.executable} -m simdex base85 encode <&-", shell=True, capture_output=True)
    assert r.returncode == 2 and b"stdin is closed" in r.stderr, r.stderr
    r = subprocess.run(f"echo hi | {sys.executable} -m simdex base85 encode >&-", shell=True, capture_output=True)
    assert r.returncode == 2 and b"stdout is closed" in r.stderr, r.stderr


def test_streams_refuse_data_after_finish_and_empty_chunks(tmp_path):
    import io

    for codec in (b85.Encoder("a85", adobe=True), b85.Encoder("b85"), b85.Decoder("b85")):
        codec.update(b"VPazW" if isinstance(codec, b85.Decoder) else b"data")
        codec.finish()
        with pytest.raises(ValueError, match="has finished"):
            codec.update(b"more")
        with pytest.raises(ValueError, match="has finished"):
            codec.finish()
    for fn in (b85.encode_file, b85.decode_file):
        with pytest.raises(ValueError, match="chunk_size must be at least 1"):
            fn(io.BytesIO(b"abc"), io.BytesIO(), chunk_size=0)


def test_file_helpers_never_leave_a_partial_result(tmp_path):
    """decode_file into a path wrote the groups before a bad character and left them there, a
    truncated file that read as a result; a path to a regular file is now replaced only when
    the whole result is written (as the CLI's -o)."""
    import os

    old, new = tmp_path / "old.bin", tmp_path / "new.bin"
    old.write_bytes(b"previous")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b85.b85encode(b"x" * 100_000) + b'"')
    for dst in (old, new):
        with pytest.raises(ValueError, match="position 125000"):
            b85.decode_file(bad, dst, chunk_size=4096)
    assert old.read_bytes() == b"previous" and not new.exists()
    assert sorted(os.listdir(tmp_path)) == ["bad.txt", "old.bin"]
    assert b85.encode_file(old, new) == 10 and b85.b85decode(new.read_bytes()) == b"previous"
    with pytest.raises(FileNotFoundError) as e:  # names the path given, not a temporary file
        b85.encode_file(old, tmp_path / "no" / "x.txt")
    assert e.value.filename == str(tmp_path / "no" / "x.txt")
    r = run_cli("encode", "-o", str(tmp_path / "no" / "x.txt"), input=b"hi")
    assert r.returncode == 1 and str(tmp_path / "no" / "x.txt").encode() in r.stderr, r.stderr
    assert b"simdex-tmp" not in r.stderr


@pytest.mark.parametrize("variant", ["b85", "z85"])
def test_a85_options_refused_for_other_variants(variant):
    """Encoder("b85", adobe=True) ignored the option (the CLI and the one-shot functions refuse it)."""
    for make in (lambda: b85.Encoder(variant, adobe=True), lambda: b85.Encoder(variant, foldspaces=True),
                 lambda: b85.Decoder(variant, adobe=True), lambda: b85.Decoder(variant, foldspaces=True)):
        with pytest.raises(ValueError, match="apply to variant 'a85' only"):
            make()
    with pytest.raises(ValueError, match="apply to variant 'a85' only"):
        b85.encode_file(b"", b"", variant, adobe=True)


def test_a_stream_used_from_two_threads_is_refused_not_overrun():
    """update() releases the GIL on large chunks after sizing its output from the stream's
    state; another thread's update() meanwhile changed that state (an overrun of up to a
    group). A second call while one runs now raises RuntimeError."""
    import threading

    for codec, chunk in ((b85.Encoder("b85"), b"\x01" * (1 << 20)),
                         (b85.Decoder("b85"), b85.b85encode(b"\x01" * (1 << 20)))):
        errors, outs = [], []

        def feed(codec=codec, chunk=chunk, errors=errors, outs=outs):
            for _ in range(20):
                try:
                    outs.append(len(codec.update(chunk)))
                except RuntimeError as e:
                    errors.append(str(e))

        ts = [threading.Thread(target=feed) for _ in range(2)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        assert all("another thread" in e for e in errors)
        assert len(outs) + len(errors) == 40


def test_stdout_that_takes_part_of_a_write_is_not_truncated_silently(tmp_path):
    """Under PYTHONUNBUFFERED (or python -u) stdout is a raw file whose write() may take only
    part of the data; the rest was dropped and the command exited 0 with a truncated result."""
    import os
    import resource

    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (500_000, 500_000))

    out = tmp_path / "out"
    with open(out, "wb") as f:
        r = subprocess.run([sys.executable, "-m", "simdex", "base85", "encode"], input=os.urandom(1_000_000),
                           stdout=f, stderr=subprocess.PIPE, preexec_fn=limit,
                           env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert r.returncode == 1 and b"File too large" in r.stderr, r.stderr
    with open(out, "wb") as f:
        r = subprocess.run([sys.executable, "-u", "-m", "simdex", "base85", "encode"], input=b"x" * 3_000_000,
                           stdout=f, stderr=subprocess.PIPE)
    assert r.returncode == 0 and b85.b85decode(out.read_bytes()) == b"x" * 3_000_000


@pytest.mark.parametrize("variant", ["b85", "a85"])
def test_long_runs_of_skipped_chars_decode_in_linear_time(variant):
    """Each skipped char of a long blank run re-scanned the rest of the input (1 MiB of
    newlines took 30 s, 2 MiB a minute); the run now passes in one step. Through the one-shot
    call, a stream and the CLI (whose 1 MiB blocks hold such runs)."""
    enc = b85.b85encode if variant == "b85" else b85.a85encode
    dec = b85.b85decode if variant == "b85" else b85.a85decode
    text = b"\n" * (4 << 20) + enc(b"tail") + b"\n" * (4 << 20) + enc(b"more")
    ws = b" \t\n\r\v"
    assert dec(text, **({"ignorechars": ws} if variant == "b85" else {})) == b"tailmore"
    d = b85.Decoder(variant, ignorechars=ws)
    assert d.update(text) + d.finish() == b"tailmore"
    r = run_cli("decode", "--variant", variant, input=text)
    assert r.returncode == 0 and r.stdout == b"tailmore", r.stderr
    with pytest.raises(ValueError, match="position 300000"):  # positions count the skipped run
        b85.Decoder(variant, ignorechars=ws).update(b"\n" * 300_000 + b"\x7f" + b"0" * 9)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
@pytest.mark.parametrize("existing", [False, True])
def test_cli_termination_signal_leaves_no_partial_output(tmp_path, signum, existing):
    """SIGTERM (kill, timeout) or SIGHUP (a closed terminal) ended the process without its
    cleanup: a hidden half-written .simdex-tmp file stayed beside the output. Now the temporary
    file is removed, the old output is left as it was, and the exit status is 128 + N."""
    import os
    import time

    out = tmp_path / "out.b85"
    if existing:
        out.write_bytes(b"previous")
    # As a context manager the pipes are closed on every way out (a failed assertion left them
    # open: a ResourceWarning under python -X dev).
    with subprocess.Popen([sys.executable, "-m", "simdex", "base85", "encode", "-o", str(out)],
                          stdin=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        p.stdin.write(rand(3 << 20, 21))  # three 1 MiB chunks read and encoded; then it waits for more
        p.stdin.flush()
        deadline = time.monotonic() + 30
        while not any(n.endswith(".simdex-tmp") and (tmp_path / n).stat().st_size > 0
                      for n in os.listdir(tmp_path)):
            assert time.monotonic() < deadline and p.poll() is None, p.stderr.read()
            time.sleep(0.02)
        p.send_signal(signum)
        _, said = p.communicate(timeout=30)  # closes stdin, reads stderr to its end
    assert p.returncode == 128 + signum, said
    assert said == b""
    assert os.listdir(tmp_path) == (["out.b85"] if existing else [])
    if existing:
        assert out.read_bytes() == b"previous"


def test_cli_decode_refuses_a_terminal_for_its_binary_output(tmp_path):
    """decode wrote raw bytes (escape sequences included) to a terminal; it now refuses, as gzip
    does, and names the ways out. encode's text output still goes to a terminal."""
    import os
    import pty

    text = tmp_path / "t.b85"
    text.write_bytes(b85.b85encode(b"\x1b[2J\x1b]0;owned\x07"))
    master, slave = pty.openpty()
    try:
        r = subprocess.run([sys.executable, "-m", "simdex", "base85", "decode", "-i", str(text)],
                           stdout=slave, stderr=subprocess.PIPE)
        assert r.returncode == 2 and b"refusing to write binary output to a terminal" in r.stderr
        os.set_blocking(master, False)
        with pytest.raises(BlockingIOError):
            os.read(master, 100)  # nothing reached the terminal
        r = subprocess.run([sys.executable, "-m", "simdex", "base85", "encode"], input=b"hello",
                           stdout=slave, stderr=subprocess.PIPE)
        assert r.returncode == 0 and os.read(master, 100) == b"Xk~0{Zv"
    finally:
        os.close(master)
        os.close(slave)
    out = tmp_path / "out.bin"  # -o and a redirection are the ways out
    assert run_cli("decode", "-i", str(text), "-o", str(out)).returncode == 0
    assert out.read_bytes() == b"\x1b[2J\x1b]0;owned\x07"


def test_cli_empty_file_names_are_usage_errors(tmp_path):
    # "-o ''" staged its output beside the working directory and failed naming the temporary
    # file ("Is a directory: '/x/.cwd.abc.simdex-tmp' -> '/x/cwd'").
    import os

    for args in (("-o", ""), ("-i", "")):
        r = subprocess.run([sys.executable, "-m", "simdex", "base85", "encode", *args], input=b"hi",
                           capture_output=True, cwd=tmp_path)
        assert r.returncode == 2 and f"{args[0]} wants a file name".encode() in r.stderr, r.stderr
    assert os.listdir(tmp_path) == [] and not [n for n in os.listdir(tmp_path.parent) if "simdex-tmp" in n]


def test_docstrings_name_every_parameter():
    # help() showed one line for b85encode, naming neither pad nor wrapcol (z85 and the
    # decoders' ignorechars alike): every public callable now documents each of its options.
    import inspect

    for name in b85.__all__:
        obj = getattr(b85, name)
        if not callable(obj):
            continue
        doc = inspect.getdoc(obj) or ""
        params = [p for p in inspect.signature(obj).parameters.values()
                  if p.kind is not p.VAR_KEYWORD and p.name not in ("b", "s", "data", "src", "dst")]
        for p in params:
            assert f"``{p.name}``" in doc, (name, p.name)
    for cls in (b85.Encoder, b85.Decoder):
        for method in ("update", "finish"):
            assert inspect.getdoc(getattr(cls, method)), (cls, method)


def test_streaming_a85_update_buffer_is_near_its_output():
    """Decoder("a85").update() sized its output at 4 bytes a char (any char may be a 'z'), so a
    100 MB chunk took a 400 MB buffer; the chunk's folds are now counted, as the one-shot decode
    does. The bound still holds where the stream carries a partial group or adobe chars that
    are folds from the previous call."""
    import tracemalloc

    data = rand(4 << 20, 30)
    text = b85.a85encode(data)
    d = b85.Decoder("a85")
    tracemalloc.start()
    try:
        out = d.update(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out + d.finish() == data
    assert peak < 1.5 * len(data), peak  # was 4x the text: 21 MB for 4 MiB
    zeros = b"z" * 9000
    cases = [  # (chunks, options)
        ([b"<~zz", zeros, b"zz~>"], dict(adobe=True)),
        ([b"<~yy", b"y" * 9000 + b"~>"], dict(adobe=True, foldspaces=True)),
        ([b"9jqo", b"^" + zeros + b"z" + b"9jqo^" * 2000], {}),
        ([b"<~9jqo^z", b"zz" + zeros + b"9jqo^" * 1000 + b"~>"], dict(adobe=True)),
    ]
    for chunks, kw in cases:
        d = b85.Decoder("a85", **kw)
        got = b"".join(d.update(c) for c in chunks) + d.finish()
        assert got == b85.a85decode(b"".join(chunks), **kw)


def test_option_values_read_as_base64_reads_them():
    # The one-shot functions pass their options to the codec by position, with a shortcut for
    # bytes input and no wrapping: any truthy pad/foldspaces/adobe, and 0/None/False wrapcol,
    # must still mean what they mean to base64.
    class Truthy:
        def __bool__(self):
            return True

    def wrapped(text, width):
        width = int(width)
        return b"\n".join(text[i:i + width] for i in range(0, len(text), width)) if width else text

    data = b"\x00\x00\x00\x00    abc"
    for pad in (False, True, 0, 1, "", "x", None, Truthy()):
        for wrapcol in (0, None, False, 3, True):
            assert b85.b85encode(data, pad, wrapcol=wrapcol) == wrapped(base64.b85encode(data, bool(pad)), wrapcol or 0)
            assert b85.a85encode(data, pad=pad, foldspaces=pad, adobe=pad, wrapcol=wrapcol) == \
                base64.a85encode(data, pad=pad, foldspaces=pad, adobe=pad, wrapcol=wrapcol or 0)
    text = base64.a85encode(data, foldspaces=True, adobe=True)
    for flag in (1, "x", Truthy()):
        assert b85.a85decode(text, foldspaces=flag, adobe=flag) == data
    with pytest.raises(TypeError):
        b85.b85encode(data, wrapcol=2.0)
    with pytest.raises(TypeError):
        b85.b85encode("text")
