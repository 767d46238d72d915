"""``simdex kv stat|check PATH``: inspect a simdex kv database file.

  simdex kv stat data.kv        # keys, depth, node counts, bytes per key, free space per tree
  simdex kv check data.kv       # full structural check (exit 1 and the problem if it fails)
"""

from __future__ import annotations

import argparse
import json
import sys


def _open(path):
    from .. import kv

    return kv.open(path, read_only=True)


def _cmd_stat(args) -> int:
    from .. import kv

    try:
        db = _open(args.path)
    except kv.KvError as e:
        print(f"simdex kv: {e}", file=sys.stderr)
        return 1
    out = {}
    for tree in db.trees() or [""]:
        s = db.stat(tree)
        s["bytes_per_key"] = round(s["file_bytes"] / s["keys"], 2) if s["keys"] else None
        out[tree] = s
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for tree, s in out.items():
            print(f"tree {tree!r}: {s['keys']} keys, depth {s['depth']}, {s['inner_nodes']} inner / "
                  f"{s['leaf_nodes']} leaf / {s['value_nodes']} value nodes")
            print(f"  nodes {s['node_bytes']} B, file used {s['file_bytes']} B, free {s['free_bytes']} B, "
                  + (f"{s['bytes_per_key']} B/key, " if s["bytes_per_key"] is not None else "")
                  + f"commit {s['seq']}")
    return 0


def _cmd_check(args) -> int:
    from .. import kv

    try:
        db = _open(args.path)
        db.validate()
    except kv.KvError as e:
        print(f"simdex kv check: {args.path}: {e}", file=sys.stderr)
        return 1
    print(f"{args.path}: ok ({', '.join(repr(t) for t in db.trees()) or 'no trees'})")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("kv", help="kv database files: stat, check",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kv_command", required=True, metavar="COMMAND")
    s = sub.add_parser("stat", help="keys, depth, node counts, bytes per key, free space")
    s.add_argument("path")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(func=_cmd_stat)
    c = sub.add_parser("check", help="validate every tree and the free space")
    c.add_argument("path")
    c.set_defaults(func=_cmd_check)
