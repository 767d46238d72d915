"""``simdex base85 encode|decode``: streams a file or stdin through the native codec in
1 MiB chunks (constant memory at any size); bad input exits 1 with the byte position."""

from __future__ import annotations

import argparse
import os
import stat
import sys

_CHUNK = 1 << 20
_WS = b" \t\n\r\v\f"  # skipped on decode, for every variant


def _error(msg: str, code: int = 1) -> int:
    print(f"simdex base85: {msg}", file=sys.stderr)
    return code


def _printable(name: str) -> str:
    """A file name for a message, control chars escaped."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in name)


def _same_file(a: os.stat_result, b: os.stat_result | None) -> bool:
    """One regular file under two names (or one name twice, or a hard link)."""
    return (b is not None and stat.S_ISREG(a.st_mode)
            and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino))


def _output_stat(args: argparse.Namespace) -> os.stat_result | None:
    try:
        if args.output not in (None, "-"):
            return os.stat(args.output)
        return os.fstat(sys.stdout.fileno())
    except (OSError, ValueError):  # no such file yet, or no real stdout
        return None


def _blocks(src, decode: bool):
    """The input in blocks. For decode, whitespace at the very end is left out (a final
    newline after an adobe "~>"); whitespace elsewhere goes on, as spaces, in its place."""
    pending = 0  # whitespace read but not passed on
    while True:
        try:
            block = src.read(_CHUNK)
        except OSError as e:  # name the input (an I/O error of /proc/self/mem said only "[Errno 5]")
            if e.filename is None:
                e.filename = getattr(src, "name", None)
            raise
        if not block:
            return
        if not decode:
            yield block
            continue
        body = block.rstrip(_WS)
        if not body:
            pending += len(block)
            continue
        while pending:
            n = min(pending, _CHUNK)
            yield b" " * n
            pending -= n
        yield body
        pending = len(block) - len(body)


def _is_terminal(f) -> bool:
    try:
        return f.isatty()
    except (OSError, ValueError):
        return False


def _run(args: argparse.Namespace) -> int:
    from .. import base85

    decode = args.action == "decode"
    # Encode-only options were silently ignored on decode: a "decode --wrap 76" did not check
    # line widths, and "decode --pad" did not ask for whole groups.
    encode_only = [f for f, given in (("--wrap", args.wrap is not None), ("--pad", args.pad)) if given]
    if decode and encode_only:
        return _error(f"{' and '.join(encode_only)} {'apply' if len(encode_only) > 1 else 'applies'} "
                      "to encode only (decode takes any line width and any final group)", 2)
    if args.wrap is not None and args.wrap < 0:
        return _error("--wrap wants N >= 0", 2)
    if args.variant != "a85" and (args.adobe or args.foldspaces):
        return _error("--adobe and --foldspaces apply to --variant a85 only", 2)
    if decode:
        # Whitespace is skipped for every variant, so wrapped output (ours or another tool's)
        # decodes as is.
        codec = base85.Decoder(args.variant, foldspaces=args.foldspaces, adobe=args.adobe,
                               ignorechars=_WS)
    else:
        codec = base85.Encoder(args.variant, pad=args.pad, foldspaces=args.foldspaces,
                               adobe=args.adobe, wrapcol=args.wrap or 0)
    for flag, name in (("-i", args.input), ("-o", args.output)):
        if name == "":  # "-o ''" staged its output beside the working directory, then failed
            return _error(f"{flag} wants a file name (or - for std{'in' if flag == '-i' else 'out'})", 2)
    if args.input in (None, "-") and sys.stdin is None:
        return _error("stdin is closed: give the input with -i FILE", 2)
    if args.output in (None, "-") and sys.stdout is None:
        return _error("stdout is closed: give the output with -o FILE", 2)
    try:
        src = open(args.input, "rb") if args.input not in (None, "-") else sys.stdin.buffer
    except OSError as e:
        return _error(str(e))
    to_file = args.output not in (None, "-")
    if decode and not to_file and _is_terminal(sys.stdout):
        # Decoded data is binary: on a terminal it is garbage at best, escape sequences at worst.
        if src is not sys.stdin.buffer:
            src.close()
        return _error("refusing to write binary output to a terminal: redirect it or give -o FILE", 2)
    try:
        # Writing a file we read would truncate it first (or grow it forever): refuse, as cat.
        if _same_file(os.fstat(src.fileno()), _output_stat(args)):
            return _error(f"{_printable(args.input or 'stdin')}: input file is output file")
        return _stream(args, codec, src, decode, to_file)
    finally:
        if src is not sys.stdin.buffer:
            src.close()


def _stream(args: argparse.Namespace, codec, src, decode: bool, to_file: bool) -> int:
    # A regular file appears only complete (simdex._output: written beside it, renamed at the
    # end, removed on error, Ctrl-C, SIGTERM or SIGHUP); /dev/null, a pipe or a device is
    # written in place.
    from .._output import Output, end_by_sigpipe, write_all

    try:
        out_file = Output(args.output) if to_file else None
    except OSError as e:
        return _error(f"cannot write {_printable(args.output)}: {e.strerror or e}")
    dst = out_file.file if out_file else sys.stdout.buffer
    failure = None
    try:
        wrote_any = False
        for block in _blocks(src, decode):
            out = codec.update(block)
            wrote_any |= bool(out)
            write_all(dst, out)
        out = codec.finish()
        wrote_any |= bool(out)
        write_all(dst, out)
        if not decode and args.wrap and wrote_any:
            write_all(dst, b"\n")
        dst.flush()
        if out_file is not None:
            out_file.commit()
    except ValueError as e:
        failure = _error(f"{args.action} failed: {e}")
    except BrokenPipeError as e:
        failure = _error(str(e)) if to_file else end_by_sigpipe()
    except OSError as e:
        failure = _error(str(e))
    finally:
        if out_file is not None:
            out_file.discard()  # never leave a partial result behind
    return failure if failure is not None else 0


_EPILOG = """\
decode skips whitespace for every variant, and refuses to write its binary
output to a terminal (redirect it, or give -o FILE). A -o FILE appears only
complete: it is written beside itself and renamed into place at the end, and on
an error, Ctrl-C, SIGTERM or SIGHUP it is left as it was. -o never names the
input file.

exit status: 0 done; 1 bad input (the message names its byte position) or an
I/O error; 2 a usage error; 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP (after the
cleanup); killed by SIGPIPE when the reader of stdout goes away (| head).

examples:
  simdex base85 encode -i data.bin -o data.b85
  simdex base85 encode --variant a85 --adobe --wrap 76 < data.bin > data.a85
  simdex base85 decode --variant a85 --adobe -i data.a85 -o data.bin"""


def register(subparsers) -> None:
    p = subparsers.add_parser("base85", help="encode or decode base85 (b85, z85, Ascii85), streaming",
                              description=__doc__, epilog=_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("encode", "decode"), help="encode: binary in, base85 text out; decode: the reverse")
    p.add_argument("--variant", choices=("b85", "z85", "a85"), default="b85",
                   help="alphabet and rules (default: %(default)s)")
    p.add_argument("-i", "--input", metavar="FILE", help="read FILE (default: stdin)")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write FILE (default: stdout); never the input file")
    p.add_argument("--wrap", type=int, default=None, metavar="N",
                   help="encode only: break lines after N chars, end with a newline (default: no breaks)")
    p.add_argument("--pad", action="store_true", help="encode only: whole 5-char final group")
    p.add_argument("--adobe", action="store_true",
                   help="a85: <~ ~> framing (decode: whitespace after ~> is allowed)")
    p.add_argument("--foldspaces", action="store_true", help="a85: 'y' for four spaces")
    p.set_defaults(func=_run)
