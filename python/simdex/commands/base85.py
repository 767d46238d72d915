"""``simdex base85 encode|decode``: streams a file or stdin through the native codec in
1 MiB chunks (constant memory at any size); bad input exits 1 with the byte position."""

from __future__ import annotations

import argparse
import os
import sys

_CHUNK = 1 << 20


def _run(args: argparse.Namespace) -> int:
    from .. import base85

    if args.wrap < 0:
        print("simdex base85: --wrap wants N >= 0", file=sys.stderr)
        return 2
    if args.variant != "a85" and (args.adobe or args.foldspaces):
        print("simdex base85: --adobe and --foldspaces apply to --variant a85 only", file=sys.stderr)
        return 2
    if args.action == "encode":
        codec = base85.Encoder(args.variant, pad=args.pad, foldspaces=args.foldspaces,
                               adobe=args.adobe, wrapcol=args.wrap)
    else:
        # Line breaks and other whitespace are skipped for every variant, so wrapped output
        # (ours or another tool's) decodes as is.
        codec = base85.Decoder(args.variant, foldspaces=args.foldspaces, adobe=args.adobe,
                               ignorechars=b" \t\n\r\v\f")
    try:
        src = open(args.input, "rb") if args.input not in (None, "-") else sys.stdin.buffer
    except OSError as e:
        print(f"simdex base85: {e}", file=sys.stderr)
        return 1
    to_file = args.output not in (None, "-")
    try:
        dst = open(args.output, "wb") if to_file else sys.stdout.buffer
    except OSError as e:
        print(f"simdex base85: {e}", file=sys.stderr)
        return 1
    wrote_any = False
    try:
        while True:
            block = src.read(_CHUNK)
            if not block:
                break
            out = codec.update(block)
            wrote_any |= bool(out)
            dst.write(out)
        out = codec.finish()
        wrote_any |= bool(out)
        dst.write(out)
        if args.action == "encode" and args.wrap and wrote_any:
            dst.write(b"\n")
        dst.flush()
    except ValueError as e:
        print(f"simdex base85: {args.action} failed: {e}", file=sys.stderr)
        if to_file:
            dst.close()
            os.unlink(args.output)  # never leave a truncated result behind
        return 1
    except OSError as e:
        print(f"simdex base85: {e}", file=sys.stderr)
        return 1
    finally:
        if src is not sys.stdin.buffer:
            src.close()
        if to_file and not dst.closed:
            dst.close()
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("base85", help="encode or decode base85 (b85, z85, Ascii85), streaming",
                              description=__doc__)
    p.add_argument("action", choices=("encode", "decode"))
    p.add_argument("--variant", choices=("b85", "z85", "a85"), default="b85",
                   help="alphabet and rules (default: %(default)s)")
    p.add_argument("-i", "--input", metavar="FILE", help="read FILE (default: stdin)")
    p.add_argument("-o", "--output", metavar="FILE", help="write FILE (default: stdout)")
    p.add_argument("--wrap", type=int, default=0, metavar="N",
                   help="encode: break lines after N chars, end with a newline (default: no breaks)")
    p.add_argument("--pad", action="store_true", help="encode: whole 5-char final group")
    p.add_argument("--adobe", action="store_true", help="a85: <~ ~> framing")
    p.add_argument("--foldspaces", action="store_true", help="a85: 'y' for four spaces")
    p.set_defaults(func=_run)
