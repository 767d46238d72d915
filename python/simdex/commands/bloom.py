"""``simdex bloom build|probe|inspect``: Parquet split-block bloom filters from the shell.

  simdex bloom build --type INT64 --ndv 100000 --fpp 0.01 -o ids.bloom < ids.txt
  simdex bloom probe ids.bloom --type INT64 42 43
  simdex bloom inspect data.parquet                       # every filter: size, fill, est. FPP
  simdex bloom inspect data.parquet --column c --value v  # per row group: may v be present?

Filter files hold the Parquet form (Thrift BloomFilterHeader + bitset), as a column chunk's
filter is stored inside a Parquet file.
"""

from __future__ import annotations

import argparse
import json
import sys

TYPE_CHOICES = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                "FIXED_LEN_BYTE_ARRAY")


def _parse_value(text: str, physical_type: str, type_length=None):
    """A command-line value in the column's physical type (FLBA/INT96 as hex unless the raw
    text already has the type's width)."""
    t = physical_type.upper()
    try:
        if t in ("INT32", "INT64"):
            return int(text, 0)
        if t in ("FLOAT", "DOUBLE"):
            return float(text)
        if t == "BOOLEAN":
            low = text.lower()
            if low in ("true", "1", "t", "yes"):
                return True
            if low in ("false", "0", "f", "no"):
                return False
            raise ValueError(f"not a boolean: {text!r}")
        if t == "BYTE_ARRAY":
            return text.encode("utf-8")
        width = 12 if t == "INT96" else type_length
        raw = text.encode("utf-8")
        if width is not None and len(raw) == width:
            return raw
        return bytes.fromhex(text)
    except ValueError as e:
        raise ValueError(f"value {text!r} is not a valid {t}: {e}") from None


def _hash_one(value, physical_type, type_length=None) -> int:
    from .. import bloom

    return int(bloom.hash_values([value], physical_type, type_length)[0])


def _cmd_build(args) -> int:
    from ..bloom import BloomFilter

    src = open(args.input, "rb") if args.input != "-" else sys.stdin.buffer
    with src:
        lines = [ln.rstrip(b"\r\n") for ln in src]
    values = [_parse_value(ln.decode("utf-8", "surrogateescape"), args.type, args.type_length) for ln in lines]
    if args.bytes:
        f = BloomFilter(args.bytes)
    else:
        f = BloomFilter(ndv=args.ndv if args.ndv else max(len(set(values)), 1), fpp=args.fpp, sizing=args.sizing)
    if values:
        from .. import bloom

        f.insert_hashes(bloom.hash_values(values, args.type, args.type_length))
    with open(args.output, "wb") as out:
        out.write(f.to_bytes())
    print(f"wrote {args.output}: {f.num_bytes} bytes, {len(values)} values, fill {f.fill():.4f}, "
          f"estimated FPP {f.estimated_fpp():.3g}")
    return 0


def _cmd_probe(args) -> int:
    from ..bloom import BloomFilter

    with open(args.filter, "rb") as fh:
        f = BloomFilter.from_bytes(fh.read())
    for text in args.values:
        h = _hash_one(_parse_value(text, args.type, args.type_length), args.type, args.type_length)
        print(f"{text}\t{'maybe' if f.check_hash(h) else 'absent'}")
    return 0


def _cmd_inspect(args) -> int:
    from .. import bloom

    filters = bloom.from_parquet(args.file)
    footer = bloom.read_footer(args.file)
    if args.value is None:
        rows = []
        for c in footer["chunks"]:
            if args.column and c["path"] != args.column:
                continue
            f = filters.get(c["row_group"], {}).get(c["path"])
            row = {"row_group": c["row_group"], "column": c["path"], "physical_type": c["physical_type"],
                   "num_values": c["num_values"], "bloom_filter_offset": c["bloom_filter_offset"],
                   "bloom_filter_length": c["bloom_filter_length"]}
            if f is not None:
                row.update(num_bytes=f.num_bytes, fill=f.fill(), estimated_fpp=f.estimated_fpp())
            rows.append(row)
        if args.json:
            print(json.dumps(rows, indent=2))
        else:
            print(f"{'rg':>4} {'column':<24} {'type':<22} {'values':>10} {'filter bytes':>12} {'fill':>7} {'est. FPP':>9}")
            for r in rows:
                if "num_bytes" in r:
                    print(f"{r['row_group']:>4} {r['column']:<24} {r['physical_type']:<22} {r['num_values']:>10} "
                          f"{r['num_bytes']:>12} {r['fill']:>7.4f} {r['estimated_fpp']:>9.3g}")
                else:
                    print(f"{r['row_group']:>4} {r['column']:<24} {r['physical_type']:<22} {r['num_values']:>10} "
                          f"{'-':>12} {'-':>7} {'-':>9}")
        return 0
    if not args.column:
        print("simdex bloom inspect: --value needs --column", file=sys.stderr)
        return 2
    chunks = [c for c in footer["chunks"] if c["path"] == args.column]
    if not chunks:
        print(f"simdex bloom inspect: no column {args.column!r} in {args.file}", file=sys.stderr)
        return 2
    c0 = chunks[0]
    value = _parse_value(args.value, c0["physical_type"], c0["type_length"] or None)
    h = _hash_one(value, c0["physical_type"], c0["type_length"] or None)
    rows = []
    for c in chunks:
        f = filters.get(c["row_group"], {}).get(args.column)
        # Like DuckDB's parquet_bloom_probe: excludes is true only when a filter rules it out.
        rows.append({"file": str(args.file), "row_group": c["row_group"], "has_filter": f is not None,
                     "excludes": f is not None and not f.check_hash(h)})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for r in rows:
            verdict = "no filter" if not r["has_filter"] else ("excluded" if r["excludes"] else "may be present")
            print(f"row group {r['row_group']}: {verdict}")
    return 0


def _run(fn):
    def handler(args) -> int:
        try:
            return fn(args)
        except BrokenPipeError:
            raise
        except (ValueError, OSError) as e:
            print(f"simdex bloom: {e}", file=sys.stderr)
            return 1
    return handler


def register(subparsers) -> None:
    p = subparsers.add_parser("bloom", help="Parquet split-block bloom filters: build, probe, inspect",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="bloom_command", required=True)

    def typed(sp, required=True):
        sp.add_argument("--type", required=required, type=str.upper, choices=TYPE_CHOICES,
                        help="Parquet physical type of the values (decides the bytes hashed)")
        sp.add_argument("--type-length", type=int, help="width of FIXED_LEN_BYTE_ARRAY values")

    b = sub.add_parser("build", help="build a filter from values, one per line")
    typed(b)
    b.add_argument("-i", "--input", default="-", help="values file (default: stdin)")
    b.add_argument("-o", "--output", required=True, help="filter file to write (header + bitset)")
    g = b.add_mutually_exclusive_group()
    g.add_argument("--bytes", type=int, help="bitset size: a power of two in [32, 134217728]")
    g.add_argument("--ndv", type=int, help="expected distinct values (default: the distinct input values)")
    b.add_argument("--fpp", type=float, default=0.01, help="target false-positive rate (default: %(default)s)")
    b.add_argument("--sizing", choices=("arrow", "model"), default="arrow",
                   help="arrow: Arrow/DuckDB formula; model: exact SBBF model (default: %(default)s)")
    b.set_defaults(func=_run(_cmd_build))

    pr = sub.add_parser("probe", help="check values against a filter file")
    pr.add_argument("filter")
    typed(pr)
    pr.add_argument("values", nargs="+")
    pr.set_defaults(func=_run(_cmd_probe))

    ins = sub.add_parser("inspect", help="list a Parquet file's filters, or probe one column per row group")
    ins.add_argument("file")
    ins.add_argument("--column", help="dotted column path")
    ins.add_argument("--value", help="value to probe (parsed in the column's physical type)")
    ins.add_argument("--json", action="store_true", help="print JSON")
    ins.set_defaults(func=_run(_cmd_inspect))
