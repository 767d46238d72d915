"""``simdex bloom lookup`` and ``simdex bloom add``: bloom filters over many Parquet files."""

from __future__ import annotations

import contextlib
import sys


@contextlib.contextmanager
def _progress(enabled: bool, what: str):
    """A progress callback (done, total) drawing a bar on stderr, or None."""
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    # Lines printed while the bar is up go above it on the terminal, but only when stdout is
    # that terminal: rich sends them to its console (stderr), which took `add`'s per-file lines
    # out of `> log`.
    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn("files"), TimeElapsedColumn(),
                  console=Console(stderr=True), transient=True, redirect_stdout=sys.stdout.isatty()) as p:
        task = p.add_task(what, total=None)

        def update(done, total):
            p.update(task, completed=done, total=total)
        yield update


def _column_type(files, column, dataset=None):
    """(physical, logical, type_length) of the column in the first file that has it (files may
    lack it: pyarrow reads nulls there); else, for a hive partition column, its type in the
    dataset (an Arrow type); else the error naming the first file's columns."""
    from .._bloom_dataset import PruneReport, open_file, refuse_missing_column

    if not files:
        raise ValueError("no Parquet files in the source")
    for f in files:
        _, footer = open_file(f, column, missing_ok=True)
        for c in footer["columns"]:
            if c["path"] == column:
                logical = c["logical_type"] if c["logical_type"] != "OTHER" else ""
                return c["physical_type"], logical, c["type_length"] or None
    if dataset is not None and dataset.schema.get_field_index(column) >= 0:
        return dataset.schema.field(column).type, "", None
    refuse_missing_column(files, column, PruneReport(files_without_column=len(files)))
    raise AssertionError("unreachable")


def _parse_partition_text(text: str, arrow_type):
    """A value of a hive partition column (year=2024), parsed as pyarrow parses the folder's."""
    import pyarrow as pa

    try:
        return pa.array([text]).cast(arrow_type)[0].as_py()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise ValueError(f"{text!r} is not a {arrow_type} (the partition column's type): {e}") from None


def _read_values(args, files, dataset=None):
    from .._bloom_values import parse_text

    t, logical, length = _column_type(files, args.column, dataset)
    if isinstance(t, str):
        def parse(text):
            return parse_text(text, t, logical, length, hex=args.hex)
    else:  # a partition column: t is its Arrow type
        def parse(text):
            return _parse_partition_text(text, t)
    texts: list[tuple[str, str]] = [(f"--value {i + 1}", v) for i, v in enumerate(args.value or [])]
    if args.values_file:
        src = sys.stdin.buffer if args.values_file == "-" else open(args.values_file, "rb")
        name = "stdin" if args.values_file == "-" else args.values_file
        with src:
            for number, raw in enumerate(src, 1):
                text = raw.rstrip(b"\r\n").decode("utf-8", "surrogateescape")
                if not text.strip() and t != "BYTE_ARRAY" and str(t) != "string":
                    raise ValueError(f"{name}, line {number}: blank line (one {t} value per line)")
                texts.append((f"{name}, line {number}", text))
    if not texts:
        raise ValueError("give --value (repeatable) or --values-file")
    values = []
    for where, text in texts:
        if args.null and text == args.null:
            values.append(None)
            continue
        try:
            values.append(parse(text))
        except ValueError as e:
            raise ValueError(f"{where}: {e}") from None
    return values


def _hive_dataset(sources, column, columns=None):
    """One directory given: a pyarrow dataset of it with hive partitioning, so that its
    partition folders' columns (year=2024/) are columns of the rows found and can be looked up,
    as pyarrow.dataset(partitioning="hive"), pyarrow.parquet.read_table and DuckDB read such a
    directory, with ``column`` and ``columns`` (the others asked for) in its schema as a lookup
    of the files adds them when the first file lacks them (a Dataset's own schema is kept as it
    is); None otherwise (files, several sources)."""
    import os

    if len(sources) != 1 or not os.path.isdir(sources[0]):
        return None
    from .._bloom_dataset import _schema_field, lookup_schema, resolve, resolve_named

    _, names, _ = resolve_named(sources[0])
    if not any("=" in part for n in names for part in n.split(os.sep)[:-1]):
        return None  # no partition folders: the files as they are
    import pyarrow as pa
    import pyarrow.dataset as pds

    try:
        ds = pds.dataset(sources[0], format="parquet", partitioning="hive")
        if all(_schema_field(ds.schema, name) is not None for name in (column, *(columns or ()))):
            return ds
        files, _ = resolve(ds)
        base = lookup_schema(files, None, column, columns)
        if _schema_field(base, column) is None:
            return ds  # no file has it: the lookup says so
        parts = [f for f in ds.schema if base.get_field_index(f.name) < 0]  # the partition columns
        return pds.dataset(sources[0], format="parquet", partitioning="hive", schema=pa.schema(list(base) + parts))
    except pa.ArrowException:
        return None  # a file pyarrow cannot open: the plain lookup says which, and why


def cmd_lookup(args) -> int:
    from .. import bloom
    from .._bloom_dataset import resolve

    columns = [c for part in args.columns for c in part.split(",") if c] if args.columns else None
    dataset = _hive_dataset(args.source, args.column, columns)
    files, _ = resolve(dataset if dataset is not None else args.source)
    if args.output:
        _refuse_input_as_output(args.output, files)
    values = _read_values(args, files, dataset)
    show = not args.no_progress and sys.stderr.isatty()
    if args.dask is not None or args.scheduler:
        from .. import _bloom_dask

        table, report = _bloom_dask.lookup(dataset if dataset is not None else files, args.column, values, columns,
                                           scheduler=args.scheduler,
                                           n_workers=args.dask or None, return_report=True,
                                           use_filters=not args.no_filters,
                                           use_statistics=not args.no_statistics)
    else:
        with _progress(show, "lookup") as progress:
            table, report = bloom.lookup(dataset if dataset is not None else files, args.column, values, columns,
                                         progress=progress,
                                         use_filters=not args.no_filters, use_statistics=not args.no_statistics,
                                         return_report=True)
    if args.explain:
        print(report, file=sys.stderr if not args.output else sys.stdout)
    if args.output:
        _write_rows(table, args.output)
        print(f"wrote {table.num_rows} rows to {args.output}", file=sys.stderr)
    elif args.format == "csv":
        import pyarrow.csv as pcsv

        pcsv.write_csv(_csv_ready(table), sys.stdout.buffer)
    else:
        print("\t".join(table.column_names))
        for batch in table.to_batches():
            for row in zip(*(col.to_pylist() for col in batch.columns)):
                print("\t".join("" if v is None else str(v) for v in row))
    return 0


def _csv_ready(table):
    """The table with its extension-typed columns as pyarrow's CSV writer takes them (it takes
    none: a UUID column failed the whole lookup): a UUID as its canonical text, any other as
    its storage type."""
    import uuid

    import pyarrow as pa

    for i, f in enumerate(table.schema):
        if not isinstance(f.type, pa.BaseExtensionType):
            continue
        storage = pa.chunked_array([c.storage for c in table.column(i).chunks], f.type.storage_type)
        if f.type.extension_name == "arrow.uuid":
            storage = pa.array([None if b is None else str(uuid.UUID(bytes=b)) for b in storage.to_pylist()],
                               pa.string())
        table = table.set_column(i, f.name, storage)
    return table


def _refuse_input_as_output(output: str, files) -> None:
    """-o naming a file being read (under any name: a symlink, a hard link) would replace the
    data with the rows found in it: refused, as `simdex base85` and cat refuse."""
    import os
    import stat

    try:
        out = os.stat(output)
    except OSError:
        return  # not there yet (or not reachable: writing it will say why)
    if stat.S_ISDIR(out.st_mode):
        raise IsADirectoryError(21, "Is a directory", output)
    if not stat.S_ISREG(out.st_mode):
        return  # a device or FIFO is never an input file
    for f in files:
        try:
            st = os.stat(f)
        except OSError:
            continue
        if (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
            also = "" if os.path.abspath(f) == os.path.abspath(output) else f" ({f})"
            raise ValueError(f"{output}: input file is output file{also}: write the rows elsewhere")


def _write_rows(table, output: str) -> None:
    """The rows as Parquet, or CSV for a name ending in .csv, by simdex._output's rules: a
    regular file appears only complete (a failed write leaves an old file as it was, and no
    truncated result); a device or FIFO is written in place. Errors name ``output``."""
    from .._bloom_add import _naming
    from .._output import Output

    with _naming(output):
        o = Output(output)
    try:
        if output.lower().endswith(".csv"):
            import pyarrow.csv as pcsv

            def write(t, f):
                pcsv.write_csv(_csv_ready(t), f)
        else:
            import pyarrow.parquet as pq

            write = pq.write_table
        with _naming(output, every=True):  # pyarrow writes a table in memory: every error is the output's
            write(table, o.file)
            o.commit()
    finally:
        o.discard()


def _refuse_bad_ndv(args) -> int | None:
    if args.ndv is not None and args.ndv < 1:
        print(f"simdex bloom: ndv must be at least 1, got {args.ndv}", file=sys.stderr)
        return 2
    return None


def cmd_add(args) -> int:
    from .. import bloom

    bad = _refuse_bad_ndv(args)
    if bad is not None:
        return bad
    kw = dict(fpp=args.fpp, ndv=args.ndv, sizing=args.sizing, replace=args.replace)

    def done(r) -> None:  # each file as it is complete: a later failure or Ctrl-C keeps these lines
        kept = f", {r['filters_kept']} kept" if r["filters_kept"] else ""
        print(f"{r['out']}: {r['filters_added']} filters added ({r['filter_bytes']} bytes){kept}", flush=True)

    if args.dask is not None or args.scheduler:
        from .. import _bloom_dask

        for r in _bloom_dask.add_filters(args.files, args.column, out=args.out, in_place=args.in_place,
                                         scheduler=args.scheduler, n_workers=args.dask or None, **kw):
            done(r)
    else:
        with _progress(not args.no_progress and sys.stderr.isatty(), "adding filters") as progress:
            bloom.add_filters(args.files, args.column, out=args.out, in_place=args.in_place,
                              progress=progress, on_file=done, **kw)
    return 0


def register(sub, run, values_start_with_minus) -> None:
    lk = sub.add_parser("lookup", help="rows of Parquet files whose column holds given values, reading only "
                                       "the row groups statistics and bloom filters cannot rule out")
    lk.add_argument("source", nargs="+", help="Parquet files and/or directories (one directory with hive "
                                              "folders, year=2024/: their columns too)")
    lk.add_argument("--column", required=True, help="dotted column path")
    lk.add_argument("--value", action="append", help="a value (repeatable), parsed by the column's type")
    lk.add_argument("--values-file", help="values, one per line ('-': stdin)")
    lk.add_argument("--null", metavar="TEXT", help="this text stands for null (matches null rows)")
    lk.add_argument("--hex", action="store_true", help="values are raw bytes in hex")
    lk.add_argument("--columns", action="append", help="columns to return (comma-separated; default: all)")
    lk.add_argument("-o", "--output", help="write the rows to FILE (.parquet or .csv)")
    lk.add_argument("--format", choices=("table", "csv"), default="table", help="how to print rows (default: table)")
    lk.add_argument("--explain", action="store_true", help="print the pruning report")
    lk.add_argument("--no-filters", action="store_true", help="do not use bloom filters (statistics only)")
    lk.add_argument("--no-statistics", action="store_true", help="do not use min/max statistics")
    lk.add_argument("--no-progress", action="store_true", help="no progress bar")
    _dask_args(lk)
    values_start_with_minus(lk)
    lk.set_defaults(func=run(cmd_lookup))

    ad = sub.add_parser("add", help="add bloom filters to Parquet files that lack them (data pages copied "
                                    "byte for byte)")
    ad.add_argument("files", nargs="+", help="Parquet files and/or directories")
    ad.add_argument("--column", action="append", required=True, help="column to add filters for (repeatable)")
    ad.add_argument("--fpp", type=float, default=0.01, help="target false-positive rate (default: %(default)s)")
    ad.add_argument("--ndv", type=int, help="distinct values per row group to size for (default: counted)")
    ad.add_argument("--sizing", choices=("arrow", "model"), default="arrow",
                    help="arrow: Arrow/DuckDB formula; model: exact SBBF model (default: %(default)s)")
    o = ad.add_mutually_exclusive_group(required=True)
    o.add_argument("--out", help="output file (one input) or directory (many inputs, or a name ending in /; "
                                 "made if missing; a directory's files keep their subfolders, e.g. year=2024/)")
    o.add_argument("--in-place", action="store_true", help="replace each file (atomically: temporary file + rename; "
                                                           "a symlink's target, the link kept)")
    ad.add_argument("--replace", action="store_true", help="rebuild filters that are already there")
    ad.add_argument("--no-progress", action="store_true", help="no progress bar")
    _dask_args(ad)
    ad.set_defaults(func=run(cmd_add))


def _dask_args(p) -> None:
    p.add_argument("--dask", type=int, nargs="?", const=0, metavar="WORKERS",  # 0: one per CPU
                   help="run on a local Dask cluster (default workers: the CPU count); needs simdex[dask]")
    p.add_argument("--scheduler", metavar="ADDRESS", help="run on the Dask scheduler at ADDRESS (tcp://host:8786)")
