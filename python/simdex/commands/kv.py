"""``simdex kv stat|check PATH``: inspect a simdex kv database file.

  simdex kv stat data.kv        # keys, depth, node counts, bytes per key, free space per tree
  simdex kv check data.kv       # full structural check (exit 1 and the problem if it fails)

stat checks the file as check does before it walks the trees (reads trust the nodes, so a
damaged file could otherwise crash it); --no-check skips that for a file known to be sound.

Both say so when the newest commit record (meta page) is damaged and the file opened at the
previous commit (the last commit is lost): check then exits 1, stat warns on stderr. A damaged
older record loses nothing; both note it, and check still exits 0.
"""

from __future__ import annotations

import argparse
import json
import sys


def _open(path):
    from .. import kv

    return kv.open(path, read_only=True)


def _recovery_line(path, rec) -> str | None:
    """The open's fallback to an older commit (or a damaged older record), in words."""
    if rec["meta_fallback"]:
        return f"{path}: {rec['detail']}"
    if rec["detail"]:
        return f"{path}: note: {rec['detail']}"
    return None


def _cmd_stat(args) -> int:
    from .. import kv

    try:
        db = _open(args.path)
    except kv.KvError as e:
        print(f"simdex kv stat: {args.path}: {e}", file=sys.stderr)
        return 1
    line = _recovery_line(args.path, db.recovery())
    if line:
        print(f"simdex kv stat: {'warning: ' if db.recovery()['meta_fallback'] else ''}{line}",
              file=sys.stderr)
    if not args.no_check:
        try:
            db.validate()
        except kv.KvError as e:
            print(f"simdex kv stat: {args.path}: {e} (nothing walked; `simdex kv check` says the same)",
                  file=sys.stderr)
            return 1
    out = {}
    for tree in db.trees() or [""]:
        s = db.stat(tree)
        # The tree's own nodes (and value nodes) a key; file_bytes is the whole file's.
        s["bytes_per_key"] = round(s["node_bytes"] / s["keys"], 2) if s["keys"] else None
        out[tree] = s
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        for tree, s in out.items():
            print(f"{'tree ' + repr(tree) if tree else 'the default tree'}: {s['keys']} keys, depth {s['depth']}, {s['inner_nodes']} inner / "
                  f"{s['leaf_nodes']} leaf / {s['value_nodes']} value nodes")
            print(f"  nodes {s['node_bytes']} B, file used {s['file_bytes']} B, free {s['free_bytes']} B, "
                  + (f"{s['bytes_per_key']} B/key, " if s["bytes_per_key"] is not None else "")
                  + f"commit {s['seq']}")
    return 0


def _tree_label(name: str) -> str:
    """How the output names a tree: the default one's name is empty, which read as ''."""
    return repr(name) if name else "the default tree"


def _cmd_check(args) -> int:
    from .. import kv

    try:
        db = _open(args.path)
    except kv.KvError as e:
        print(f"simdex kv check: {args.path}: {e}", file=sys.stderr)
        return 1
    rec = db.recovery()
    line = _recovery_line(args.path, rec)
    if line:  # before validating, so it is said even when the rest fails too
        print(f"simdex kv check: {line}", file=sys.stderr)
    try:
        db.validate()
    except kv.KvError as e:
        print(f"simdex kv check: {args.path}: {e}", file=sys.stderr)
        return 1
    trees = ", ".join(_tree_label(t) for t in db.trees()) or "no trees"
    if rec["meta_fallback"]:
        lost = (f"commit {rec['lost_seq']} is lost; the previous commit" if rec["lost_seq"] is not None
                else f"a commit after {rec['seq']} may be lost; commit")
        print(f"{args.path}: NOT ok: {lost} {rec['seq']} is intact ({trees})")
        return 1
    print(f"{args.path}: ok ({trees})")
    return 0


def register(subparsers) -> None:
    p = subparsers.add_parser("kv", help="kv database files: stat, check",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="kv_command", required=True, metavar="COMMAND")
    # description= too: `simdex kv stat --help` showed only the usage line.
    s = sub.add_parser("stat", help="keys, depth, node counts, bytes per key, free space",
                       description="Per tree: keys, depth, node counts, the tree's node bytes per key, "
                       "the file's used and free bytes. Validates the file first (exit 1 and the problem "
                       "if it fails); warns on stderr when the newest commit record was damaged.")
    s.add_argument("path", help="the database file (opened read-only)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument("--no-check", action="store_true",
                   help="skip the structural check before the walk (a file known to be sound)")
    s.set_defaults(func=_cmd_stat)
    c = sub.add_parser("check", help="validate every tree and the free space, and report a "
                       "damaged newest commit record (exit 1)",
                       description="Validates every tree and the free space of the file. Exit 0: ok; "
                       "1: it cannot be opened, a check failed, or the newest commit record was damaged "
                       "and the previous commit was opened (the last commit is lost); 2: usage error.")
    c.add_argument("path", help="the database file (opened read-only)")
    c.set_defaults(func=_cmd_check)
