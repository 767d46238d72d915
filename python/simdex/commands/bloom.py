"""``simdex bloom build|probe|inspect|add|lookup``: Parquet split-block bloom filters from the shell.

  simdex bloom build --type INT64 --ndv 100000 --fpp 0.01 -o ids.bloom < ids.txt
  simdex bloom probe ids.bloom --type INT64 42 43
  simdex bloom inspect data.parquet                       # every filter: size, fill, est. FPP
  simdex bloom inspect data.parquet --column c --value v  # per row group: may v be present?
  simdex bloom add data/ --column user_id --out with_filters/   # filters for files without them
  simdex bloom lookup data/ --column user_id --value 42 --explain  # rows, reading few row groups

Filter files hold the Parquet form (Thrift BloomFilterHeader + bitset), as a column chunk's
filter is stored inside a Parquet file.
"""

from __future__ import annotations

import argparse
import json
import re
import sys

TYPE_CHOICES = ("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY",
                "FIXED_LEN_BYTE_ARRAY")


def _parse_value(text: str, physical_type: str, type_length=None, logical_type="", hex=False):
    """A command-line value, parsed by the column's logical type (decimals, dates, times,
    timestamps with zones, UUIDs, INT96 from a timestamp), else its physical type; raw bytes
    only with --hex."""
    from .._bloom_values import parse_text

    return parse_text(text, physical_type.upper(), logical_type or "", type_length, hex=hex)


def _hash_one(value, physical_type, type_length=None, logical_type=""):
    """(is_nan, may_hold(filter) -> bool): a filter cannot rule NaN out (its bit patterns
    differ); a zero may be there when the filter holds 0.0 or -0.0 (they hash apart)."""
    import numpy as np

    from .._bloom_values import hash_values

    hashed = hash_values([value], physical_type.upper(), logical_type or "", type_length)

    def may_hold(f) -> bool:
        return bool(hashed.answer(lambda hs: np.array([f.check_hash(int(h)) for h in hs]))[0])
    return bool(hashed.nan is not None and hashed.nan[0]), may_hold


_NAN_NOTE = "maybe (a bloom filter cannot rule NaN out: NaN has many bit patterns)"


def _cmd_build(args) -> int:
    from .._bloom_add import _naming
    from .._bloom_values import hash_values
    from .._output import Output, write_all
    from ..bloom import BloomFilter

    # Usage errors before any input is read: exit 2, as for the other bad options.
    bad = None
    if args.ndv is not None and args.ndv < 1:  # as `bloom add` refuses it (0 gave a saturated filter)
        bad = f"ndv must be at least 1, got {args.ndv}"
    elif args.bytes is not None and not (32 <= args.bytes <= 1 << 27 and args.bytes & (args.bytes - 1) == 0):
        bad = f"--bytes must be a power of two in [32, 134217728], got {args.bytes}"
    elif not 0.0 < args.fpp < 1.0:
        bad = f"--fpp must be in (0, 1), got {args.fpp}"
    if bad:
        print(f"simdex bloom: {bad}", file=sys.stderr)
        return 2
    src = open(args.input, "rb") if args.input != "-" else sys.stdin.buffer
    with src:
        lines = [ln.rstrip(b"\r\n") for ln in src]
    values = []
    for number, ln in enumerate(lines, 1):
        text = ln.decode("utf-8", "surrogateescape")
        if not text.strip() and args.type != "BYTE_ARRAY":
            raise ValueError(f"{args.input if args.input != '-' else 'stdin'}, line {number}: blank line "
                             f"(one {args.type} value per line)")
        try:
            values.append(_parse_value(text, args.type, args.type_length, args.logical_type, args.hex))
        except ValueError as e:
            raise ValueError(f"{args.input if args.input != '-' else 'stdin'}, line {number}: {e}") from None
    if args.bytes is not None:
        f = BloomFilter(args.bytes)
    else:
        distinct = len({repr(v) for v in values})
        f = BloomFilter(ndv=args.ndv if args.ndv is not None else max(distinct, 1), fpp=args.fpp, sizing=args.sizing)
    if values:
        f.insert_hashes(hash_values(values, args.type, args.logical_type or "", args.type_length)[0])
    data = _with_type_note(f, args)
    summary = (f"{f.num_bytes} bytes, {len(values)} values, fill {f.fill():.4f}, "
               f"estimated FPP {f.estimated_fpp():.3g}")
    if args.output == "-":  # the filter on stdout (it wrote a file named "-"); the summary aside
        write_all(sys.stdout.buffer, data)
        sys.stdout.buffer.flush()
        print(f"wrote stdout: {summary}", file=sys.stderr)
        return 0
    # A regular file appears only complete (simdex._output: written beside it, renamed at the
    # end): a failed write leaves no truncated filter, and an old one as it was.
    with _naming(args.output):
        out = Output(args.output)
    try:
        with _naming(args.output, every=True):
            write_all(out.file, data)
            out.commit()
    finally:
        out.discard()
    print(f"wrote {args.output}: {summary}")
    return 0


# A filter file from `build` records the values' type in its header, in a field no Parquet
# reader asks for (Thrift readers skip unknown fields), so `probe` can refuse another type: a
# value hashed as the wrong type answers "absent" for values that are there.
_NOTE_FIELD = 101


def _with_type_note(f, args) -> bytes:
    data = f.to_bytes()
    head = len(data) - f.num_bytes  # the header ends with its stop byte
    note = "|".join([args.type, args.logical_type or "", str(args.type_length or "")]).encode()
    field = bytes([0x08, 0xCA, 0x01]) + _varint(len(note)) + note  # binary, long form id 101
    return data[:head - 1] + field + data[head - 1:]


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _type_note(data: bytes, num_bytes: int):
    """(type, logical, type_length) recorded by `build`, or None."""
    head = data[:len(data) - num_bytes]
    at = head.find(bytes([0x08, 0xCA, 0x01]))
    if at < 0:
        return None
    n, shift, i = 0, 0, at + 3
    while i < len(head):
        b = head[i]
        n |= (b & 0x7F) << shift
        i += 1
        shift += 7
        if not b & 0x80:
            break
    parts = head[i:i + n].decode("utf-8", "replace").split("|")
    if len(parts) != 3:
        return None
    return parts[0], parts[1], int(parts[2]) if parts[2] else None


def _cmd_probe(args) -> int:
    from ..bloom import BloomFilter

    with open(args.filter, "rb") as fh:
        data = fh.read()
    if data[:4] == b"PAR1":
        raise ValueError(f"{args.filter} is a Parquet file, not a filter file: `simdex bloom inspect "
                         f"{args.filter} --column C --value V` probes the filters inside it")
    f = BloomFilter.from_bytes(data)
    note = _type_note(data, f.num_bytes)
    if note is not None:
        t, logical, length = note
        if args.type is None:
            args.type = t
            args.logical_type = args.logical_type or logical
            args.type_length = args.type_length or length
        elif args.type != t or (args.logical_type and args.logical_type.upper() != logical.upper()):
            raise ValueError(f"{args.filter} holds {t}{' ' + logical if logical else ''} values; --type "
                             f"{args.type}{' --logical-type ' + args.logical_type if args.logical_type else ''} would "
                             "hash the values differently and answer 'absent' for values that are there")
    elif args.type is None:
        raise ValueError(f"{args.filter} does not record its values' type: give --type")
    # Every value is parsed and answered before any answer is printed: a bad value late in the
    # list printed the answers before it and then failed.
    answers = []
    for text in args.values:
        value = _parse_value(text, args.type, args.type_length, args.logical_type, args.hex)
        nan, may_hold = _hash_one(value, args.type, args.type_length, args.logical_type)
        answers.append(f"{text}\t{_NAN_NOTE if nan else 'maybe' if may_hold(f) else 'absent'}")
    for line in answers:
        print(line)
    return 0


def _cmd_inspect(args) -> int:
    from .. import bloom
    from .._bloom_values import refuse_ambiguous, usable_filter

    if args.value is None:
        # One filter in memory at a time; chunks sharing a filter are read once.
        pf = bloom._native.ParquetFile(str(args.file), [args.column] if args.column else None, None, False)
        if args.column and not pf.footer()["chunks"]:
            names = [c["path"] for c in pf.footer()["columns"]]
            if args.column not in names:
                print(f"simdex bloom inspect: no column {args.column!r} in {args.file}; it has: {', '.join(names)}",
                      file=sys.stderr)
                return 2
        stats: dict = {}
        rows = []
        for i, c in enumerate(pf.footer()["chunks"]):
            row = {"row_group": c["row_group"], "column": c["path"], "physical_type": c["physical_type"],
                   "logical_type": c["logical_type"], "num_values": c["num_values"],
                   "bloom_filter_offset": c["bloom_filter_offset"],
                   "bloom_filter_length": c["bloom_filter_length"]}
            off = c["bloom_filter_offset"]
            if off >= 0:
                if off not in stats:
                    f = pf.read_filter(i)
                    stats[off] = {"num_bytes": f.num_bytes, "fill": f.fill(), "estimated_fpp": f.estimated_fpp()}
                    del f
                row.update(stats[off])
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
    pf = bloom._native.ParquetFile(str(args.file), [args.column], None, False)
    chunks = pf.footer()["chunks"]
    columns = {c["path"]: c for c in pf.footer()["columns"]}
    if args.column not in columns:  # not "no chunks": a file without row groups has none either
        print(f"simdex bloom inspect: no column {args.column!r} in {args.file}; it has: {', '.join(columns)}",
              file=sys.stderr)
        return 2
    refuse_ambiguous(args.file, pf.footer(), [args.column])
    c0 = chunks[0] if chunks else columns[args.column]
    logical = c0["logical_type"] if c0["logical_type"] != "OTHER" else ""
    value = _parse_value(args.value, c0["physical_type"], c0["type_length"] or None, logical, args.hex)
    nan, may_hold = _hash_one(value, c0["physical_type"], c0["type_length"] or None, logical)
    rows = []
    verdicts: dict = {}  # offset -> excludes, so a filter shared by chunks is read once
    for i, c in enumerate(chunks):
        off = c["bloom_filter_offset"]
        has = off >= 0
        # A BOOLEAN chunk's filter is never asked: parquet-java writes them empty.
        usable = usable_filter(c)
        if usable and off not in verdicts:
            verdicts[off] = not may_hold(pf.read_filter(i))
        # Like DuckDB's parquet_bloom_probe: excludes is true only when a filter rules it out.
        rows.append({"file": str(args.file), "row_group": c["row_group"], "has_filter": has,
                     "excludes": usable and verdicts[off]})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        if nan:
            print("note: a bloom filter cannot rule NaN out (NaN has many bit patterns): every row group may hold it")
        if c0["physical_type"] == "BOOLEAN" and any(r["has_filter"] for r in rows):
            print("note: filters on BOOLEAN columns are not used (parquet-java writes them empty)")
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
        except (ValueError, OSError, ImportError) as e:
            print(f"simdex bloom: {e}", file=sys.stderr)
            return 1
        except Exception as e:
            if not type(e).__module__.startswith("pyarrow"):
                raise
            # pyarrow's own refusals (a type its scan cannot compare, say): a message, not a
            # traceback.
            print(f"simdex bloom: pyarrow: {e}", file=sys.stderr)
            return 1
    return handler


def register(subparsers) -> None:
    p = subparsers.add_parser("bloom", help="Parquet split-block bloom filters: build, probe, inspect, add, lookup",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="bloom_command", required=True, metavar="COMMAND")

    def values_start_with_minus(sp):
        # argparse takes "-5" for a value but "-1e5", "-inf" or "-abc" for unknown options; these
        # subcommands have no single-dash options other than -h/-i/-o, so any "-x..." is a value.
        sp._negative_number_matcher = re.compile(r"^-[^-]")

    def typed(sp, required=True):
        sp.add_argument("--type", required=required, type=str.upper, choices=TYPE_CHOICES,
                        help="Parquet physical type of the values (decides the bytes hashed)")
        sp.add_argument("--type-length", type=int, help="width of FIXED_LEN_BYTE_ARRAY values")
        sp.add_argument("--logical-type", default="",
                        help="how values are written: DECIMAL(p,s), DATE, TIME(unit,UTC|LOCAL), "
                             "TIMESTAMP(MILLIS|MICROS|NANOS,UTC|LOCAL), UUID, INT(32,UNSIGNED), ...")
        sp.add_argument("--hex", action="store_true", help="values are raw bytes in hex")
        values_start_with_minus(sp)

    b = sub.add_parser("build", help="build a filter from values, one per line")
    typed(b)
    b.add_argument("-i", "--input", default="-", help="values file (default: stdin)")
    b.add_argument("-o", "--output", required=True, help="filter file to write (header + bitset); - for stdout")
    g = b.add_mutually_exclusive_group()
    g.add_argument("--bytes", type=int, help="bitset size: a power of two in [32, 134217728]")
    g.add_argument("--ndv", type=int, help="expected distinct values (default: the distinct input values)")
    b.add_argument("--fpp", type=float, default=0.01, help="target false-positive rate (default: %(default)s)")
    b.add_argument("--sizing", choices=("arrow", "model"), default="arrow",
                   help="arrow: Arrow/DuckDB formula; model: exact SBBF model (default: %(default)s)")
    b.set_defaults(func=_run(_cmd_build))

    pr = sub.add_parser("probe", help="check values against a filter file (--type: default, the type the "
                                      "file records)")
    pr.add_argument("filter", help="a filter file (what build writes: header + bitset)")
    typed(pr, required=False)
    pr.add_argument("values", nargs="+", help="values to check, each answered 'maybe' or 'absent'")
    pr.set_defaults(func=_run(_cmd_probe))

    from . import _bloom_datasets

    _bloom_datasets.register(sub, _run, values_start_with_minus)

    ins = sub.add_parser("inspect", help="list a Parquet file's filters, or probe one column per row group")
    ins.add_argument("file", help="a Parquet file")
    ins.add_argument("--column", help="dotted column path")
    ins.add_argument("--value", help="value to probe (parsed by the column's logical type: 1.50, 2024-01-31, "
                                     "2024-01-31T12:00:00+01:00, a UUID...)")
    ins.add_argument("--hex", action="store_true", help="the value is raw bytes in hex")
    values_start_with_minus(ins)
    ins.add_argument("--json", action="store_true", help="print JSON")
    ins.set_defaults(func=_run(_cmd_inspect))
