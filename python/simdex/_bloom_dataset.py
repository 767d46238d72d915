"""Point lookups over many Parquet files: which row groups may hold any of a set of values.

Each file costs its footer and, for the row groups its min/max statistics cannot rule out, the
filter blocks the values' hashes select (ranged reads; no column data). Statistics are used
first, then bloom filters. A filter that cannot be read is ignored with a warning and its row
group is read: a wrong "absent" would lose rows, a wrong "maybe" only costs a read.
"""

from __future__ import annotations

import bisect
import dataclasses
import datetime as _dt
import functools
import os
import struct
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from . import _bloom_pages as _pages
from . import _bloom_values as _values
from ._simdex import bloom as _native
from ._unique import unique_sorted

# Probe calls take this many hashes at a time (bounds the per-call scratch memory).
_HASH_BATCH = 1 << 16


class FilterWarning(UserWarning):
    """A bloom filter could not be used (corrupt, truncated, unreadable); its row group is read."""


@dataclasses.dataclass
class PruneReport:
    """What a prune or lookup did. Row groups: total = skipped_by_statistics +
    skipped_by_filters + read."""

    files: int = 0
    row_groups: int = 0
    skipped_by_statistics: int = 0
    skipped_by_filters: int = 0
    read: int = 0
    read_without_filter: int = 0   # read because there was no filter to ask
    filter_errors: int = 0         # filters ignored (warned): their row groups are read
    values: int = 0                # distinct values looked up
    footer_bytes: int = 0
    filter_reads: int = 0
    filter_bytes: int = 0          # filter headers and blocks read
    expected_false_positives: float = 0.0  # row groups the filters' FPP lets through, expected
    files_without_column: int = 0  # files lacking the column (read as nulls, as pyarrow does)
    matched: int | None = None     # lookup only: row groups that held a matching row
    rows: int | None = None        # lookup only: rows returned
    seconds: float = 0.0

    def merge(self, other: PruneReport) -> None:
        for f in dataclasses.fields(self):
            a, b = getattr(self, f.name), getattr(other, f.name)
            if f.name == "values":
                setattr(self, f.name, max(a, b))
            elif a is None or b is None:
                setattr(self, f.name, b if a is None else a)
            else:
                setattr(self, f.name, a + b)

    def __str__(self) -> str:
        rows = [("files", self.files), ("row groups", self.row_groups),
                ("  skipped by statistics", self.skipped_by_statistics),
                ("  skipped by bloom filters", self.skipped_by_filters),
                ("  read", self.read),
                ("    of which without a filter", self.read_without_filter),
                ("    of which with an unusable filter", self.filter_errors),
                ("values looked up", self.values),
                ("footer bytes read", self.footer_bytes),
                ("filter reads / bytes", f"{self.filter_reads} / {self.filter_bytes}"),
                ("expected false positives", f"{self.expected_false_positives:.2f}")]
        if self.files_without_column:
            rows.insert(1, ("  of which without the column", self.files_without_column))
        if self.matched is not None:
            rows.append(("row groups with a match", self.matched))
        if self.rows is not None:
            rows.append(("rows returned", self.rows))
        rows.append(("time", f"{self.seconds * 1e3:.1f} ms"))
        w = max(len(k) for k, _ in rows)
        return "\n".join(f"{k:<{w}}  {v}" for k, v in rows)


class Pruned(list):
    """The (path, row_group) pairs that may hold a value, in file order, with ``.report``."""

    def __init__(self, pairs=(), report: PruneReport | None = None):
        super().__init__(pairs)
        self.report = report or PruneReport()

    def by_file(self) -> dict:
        out: dict = {}
        for path, rg in self:
            out.setdefault(path, []).append(rg)
        return out


# ---- sources -------------------------------------------------------------------------------------

def _is_hidden(name: str) -> bool:
    # pyarrow.dataset's default: files starting with "." or "_" (_SUCCESS, _metadata) are not data.
    return name.startswith((".", "_"))


def resolve(source) -> tuple[list[str], object]:
    """(file paths, pyarrow Dataset or None) for a file, a directory, a list of paths or a
    pyarrow.dataset.Dataset. Missing paths raise FileNotFoundError."""
    files, _, dataset = resolve_named(source)
    return files, dataset


def resolve_named(source) -> tuple[list[str], list[str], object]:
    """resolve's (files, dataset) and each file's name below the source: its path inside the
    directory it was found in (hive partition folders kept: year=2024/part-0.parquet), a file
    given by itself its base name, a Dataset's files their path below the files' common folder."""
    if _values.is_pyarrow(source) and hasattr(source, "get_fragments"):
        import pyarrow.fs as pafs

        fs = getattr(source, "filesystem", None)
        if fs is not None and not isinstance(fs, pafs.LocalFileSystem):
            raise ValueError(f"only datasets on the local filesystem are supported, not {type(fs).__name__}")
        files = [f.path for f in source.get_fragments()]
        base = os.path.commonpath([os.path.dirname(os.path.abspath(f)) for f in files]) if files else ""
        return files, [os.path.relpath(os.path.abspath(f), base) for f in files], source
    if isinstance(source, (str, os.PathLike)):
        items = [source]
    else:
        items = list(source)
    files: list[str] = []
    names: list[str] = []
    for item in items:
        p = Path(item)
        if p.is_dir():
            for root, dirs, found in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not _is_hidden(d))
                for n in sorted(found):
                    if not _is_hidden(n):
                        files.append(os.path.join(root, n))
                        names.append(os.path.relpath(files[-1], p))
        elif p.exists():
            files.append(str(p))
            names.append(p.name)
        else:
            raise FileNotFoundError(f"no such file or directory: {item}")
    return files, names, None


# ---- values --------------------------------------------------------------------------------------

def _dedupe(values: list) -> list:
    """Distinct values in first-seen order, keyed by type too (1, 1.0 and True hash alike but
    are different values to a filter) and floats by their bits (-0.0 is not 0.0)."""
    kinds = set(map(type, values))
    if len(kinds) == 1 and kinds <= {int, str, bytes}:
        # One plain type: a dict dedupes in C (a million ints 0.05 s, the loop below 0.6 s).
        return list(dict.fromkeys(values))
    seen, uniq = set(), []
    for v in values:
        try:
            # numpy floats too: np.float32(-0.0) == np.float32(0.0) would drop one of them.
            key = (type(v), struct.pack("<d", v) if isinstance(v, (float, np.floating)) else v)
            if key in seen:
                continue
            seen.add(key)
        except TypeError:  # unhashable: kept, physical_values decides what it is
            pass
        uniq.append(v)
    return uniq


class Values:
    """The looked-up values, hashed and in physical form once per column type met."""

    def __init__(self, values):
        self.has_null = False
        if _values.is_pyarrow(values):
            import pyarrow as pa

            if isinstance(values, pa.Scalar):
                values = pa.array([values.as_py()], values.type) if values.is_valid else pa.nulls(1, values.type)
            if isinstance(values, pa.ChunkedArray):
                values = values.combine_chunks()
            self.has_null = values.null_count > 0
            values = values.drop_null().unique()
        elif isinstance(values, (np.ndarray, np.generic)):
            values = np.asarray(values)
            values = values.reshape(1) if values.ndim == 0 else values
            if values.ndim != 1:
                raise ValueError(f"expected a 1-D array of values, got shape {values.shape}")
            if values.dtype.kind == "f":
                # Distinct bit patterns: -0.0 and 0.0 are different values to a filter and to isin.
                u = unique_sorted(values.view(np.uint32 if values.itemsize == 4 else np.uint64))
                values = u.view(values.dtype)
            elif values.dtype.kind in "iub":
                values = unique_sorted(values)
            else:
                values = list(values)
        elif _values.is_scalar(values):
            values = [values]
        else:
            values = list(values)
        if isinstance(values, list):
            self.has_null = any(v is None for v in values)
            values = _dedupe([v for v in values if v is not None] if self.has_null else values)
        self.values = values
        self._by_type: dict = {}

    def __len__(self) -> int:
        return len(self.values) + self.has_null

    def typed(self, t: str, logical: str, type_length):
        """(Physical, hashes, sort order, sorted comparable values, zero_twins) for a column
        type: of the values such a column can hold (integers outside its range cannot be there)."""
        key = (t, logical, type_length)
        got = self._by_type.get(key)
        if got is None:
            bounds = _column_range(t, logical)
            vals = self.values if bounds is None else in_range(self.values, *bounds)
            lt = _values.parse_logical("" if logical == "OTHER" else logical)
            if lt.kind in ("DATE", "TIMESTAMP"):
                vals = in_unit(vals, "D" if lt.kind == "DATE" else _NP_UNITS[lt.unit])
            try:
                phys = _values.physical_values(vals, t, "" if logical == "OTHER" else logical, type_length)
            except ValueError as e:
                raise ValueError(f"values do not fit the column ({t}{' ' + logical if logical else ''}): {e}") from None
            hashes = _values.hash_physical(phys)
            order, keys = _sortable(phys, logical)
            got = self._by_type[key] = (phys, np.ascontiguousarray(hashes, dtype=np.uint64), order, keys,
                                        _values.zero_twins(phys))
        return got


def _column_range(t: str, logical: str):
    """[lo, hi) of the integers an INT32/INT64 column holds as a reader sees them (signed unless
    its logical type says unsigned; INT(8/16) narrower), or None for other columns. A value
    outside it is in no row: pyarrow's dataset compares a file's int32 column with 2**40 (or
    2**31, or -1 with a uint32 column) and finds nothing, and refusing it made a dataset whose
    files store one column as INT32 and INT64 impossible to look up."""
    if t not in ("INT32", "INT64") or (logical and not logical.startswith("INT(")):
        return None
    lt = _values.parse_logical(logical)
    bits = lt.bits or (32 if t == "INT32" else 64)
    return (0, 1 << bits) if not lt.signed else (-(1 << (bits - 1)), 1 << (bits - 1))


def in_range(values, lo: int, hi: int):
    """The values without the integers outside [lo, hi) (the same kind of container; other
    values kept, for the typing to accept or refuse)."""
    if _values.is_pyarrow(values):
        import pyarrow as pa

        if not pa.types.is_integer(values.type):
            return values
        kept = in_range(values.to_numpy(zero_copy_only=False), lo, hi)
        return values if len(kept) == len(values) else pa.array(kept, values.type)
    if isinstance(values, np.ndarray):
        if values.dtype.kind not in "iu":
            return values
        info = np.iinfo(values.dtype)
        if info.min >= lo and info.max < hi:
            return values
        keep = np.ones(len(values), dtype=bool)
        if lo > info.min:
            keep &= values >= values.dtype.type(lo)
        if hi <= info.max:
            keep &= values < values.dtype.type(hi)
        return values[keep]
    return [v for v in values if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_))
            or lo <= int(v) < hi]


_NP_UNITS = {"MILLIS": "ms", "MICROS": "us", "NANOS": "ns"}
_DAY_NS = 86400 * 10**9


def in_unit(values, unit: str):
    """The values without the instants a column of dates (unit "D") or of timestamps in
    ``unit`` cannot hold, and a date column's midnights as dates. A file's ticks are whole
    units, and pyarrow's dataset compares a date with a timestamp as its midnight: 12:00 is in
    no row of a date column, 00:00:00.000001 in none of a millisecond one (refused before, and
    pyarrow.array truncated it into the value set, matching the millisecond's rows). Other
    values unchanged, for the typing to accept or refuse."""
    if _values.is_pyarrow(values):
        import pyarrow as pa

        if not (pa.types.is_timestamp(values.type) or pa.types.is_date(values.type)):
            return values
        conv, keep = _whole_units(values.to_numpy(zero_copy_only=False), unit)
        if unit == "D":
            return conv[keep]  # datetime64[D]: what a date column holds
        return values if keep.all() else values.filter(pa.array(keep))
    if isinstance(values, np.ndarray):
        if values.dtype.kind != "M":
            return values
        conv, keep = _whole_units(values, unit)
        return conv[keep] if unit == "D" else values[keep]
    tick = {"D": _DAY_NS, "s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[unit]
    out = []
    for v in values:
        if isinstance(v, _dt.datetime) and (unit != "D" or v.tzinfo is None):
            ns = ((v.hour * 60 + v.minute) * 60 + v.second) * 10**9 + v.microsecond * 1000
            if ns % tick:
                continue
            if unit == "D":
                v = v.date()
        elif isinstance(v, np.datetime64) and not np.isnat(v):
            kept = in_unit(np.array([v]), unit)
            if not len(kept):
                continue
            v = kept[0]
        elif isinstance(v, _values._Ns):
            if v.ns % tick:
                continue
            if unit == "D":
                v = _dt.date(1970, 1, 1) + _dt.timedelta(days=v.ns // _DAY_NS)
        out.append(v)
    return out


def _whole_units(arr: np.ndarray, unit: str):
    """(arr in datetime64[unit], which of arr's values that unit holds exactly; NaT kept, to be
    refused as a null later)."""
    conv = arr.astype(f"datetime64[{unit}]")
    return conv, (conv == arr) | np.isnat(arr)


def _narrowed(arrow_type, t: str, logical: str) -> bool:
    """Whether a file's column (Parquet type t, logical) read as arrow_type (the dataset's
    type) has its values rounded together: timestamps read as dates, doubles as floats
    (pyarrow's dataset casts these without complaint, where it refuses a coarser timestamp
    unit or a narrower integer that would change a value). A value then matches rows whose
    stored value differs from it, which a filter or min/max in the file's type cannot find."""
    if arrow_type is None:
        return False
    import pyarrow as pa

    arrow_type = _comparable_type(arrow_type)
    if pa.types.is_date(arrow_type):
        return t == "INT96" or _values.parse_logical("" if logical == "OTHER" else logical).kind == "TIMESTAMP"
    if pa.types.is_float32(arrow_type) or pa.types.is_float16(arrow_type):
        return t == "DOUBLE" or (t == "FLOAT" and pa.types.is_float16(arrow_type))
    return False


def lookup_schema(files, dataset, column: str, columns=None):
    """The schema a lookup reads the files as: the Dataset's, else the first file's (as
    pyarrow.dataset infers a directory's). When the first file lacks the column (one added to
    the dataset later, at the top level or inside a struct), the column's field from the first
    file that has it is added where the first file's path ends (appended to the schema, or to
    the deepest struct on the column's path), as pyarrow.dataset reads files given such a
    schema: those without it hold nulls there. ``columns``, the others a lookup returns, are
    added (or refused in a Dataset) the same way. The first file's own schema when no file has
    it (pruning says so); ValueError without files, for a Dataset whose schema lacks a column its
    files hold, and naming the files when the first one holds a prefix of the path as something
    other than a struct (pyarrow cannot read the two together)."""
    import pyarrow.parquet as pq

    names = list(dict.fromkeys([column, *(_column_list(columns) or [])]))
    if dataset is not None:
        for name in names:
            if _schema_field(dataset.schema, name) is None:
                _refuse_dataset_without(dataset, files, name)
        return dataset.schema
    if not files:
        raise ValueError("no Parquet files in the source")
    schema = pq.read_schema(files[0])
    later: dict = {}  # the other files' schemas, each read once
    for name in names:
        if _schema_field(schema, name) is not None:
            continue
        for path in files[1:]:
            if path not in later:
                later[path] = pq.read_schema(path)
            other = later[path]
            # A leaf inside a list is added with its list, for lookup_path to refuse by its type.
            if _schema_field(other, name) is not None or _into_repeated(other, name):
                schema = _with_column(schema, other, name, files[0], path)
                break
    return schema


def _with_column(schema, other, column: str, first: str, holder: str):
    """``schema`` (``first``'s, which lacks the column) with the column's field from ``other``
    (``holder``'s) added where ``schema``'s path stops: a missing struct field is appended to
    its struct, and each struct above it is rebuilt around the new one."""
    import pyarrow as pa

    if other.get_field_index(column) >= 0:  # a top-level name, dots and all
        return schema.append(other.field(column))
    have, parts = _walk(schema, column)
    want, _ = _walk(other, column)
    depth = len(have)
    if depth >= len(want):
        return schema  # a struct where the other's path has a list: pruning names the file
    if depth and not pa.types.is_struct(have[-1].type):
        raise ValueError(f"{first}: {'.'.join(parts[:depth])!r} is {have[-1].type}, not a struct, where {holder} "
                         f"has the column {column!r}: pyarrow cannot read these files together")
    if not depth:
        return schema.append(want[0])
    added = want[depth]
    for k in range(depth - 1, -1, -1):
        children = list(have[k].type)
        if k == depth - 1:
            children.append(added)
        else:
            children[have[k].type.get_field_index(parts[k + 1])] = added
        added = have[k].with_type(pa.struct(children))
    return schema.set(schema.get_field_index(parts[0]), added)


def _refuse_dataset_without(dataset, files, column: str) -> None:
    """A Dataset whose schema lacks the column (or a struct field on its path) that one of its
    files holds: pyarrow.dataset reads every file in the Dataset's schema and refuses the column
    itself, so the lookup cannot answer as it would. Nothing when no file holds it (pruning
    names the columns there are)."""
    import pyarrow.parquet as pq

    for path in files:
        if _schema_field(pq.read_schema(path), column) is not None:
            raise ValueError(
                f"the Dataset's schema has no column {column!r} ({', '.join(dataset.schema.names)}), but {path} "
                "holds it: pyarrow.dataset reads each file in the Dataset's schema and cannot return it either. "
                "Make the Dataset with a schema that has the column (pyarrow.dataset.dataset(..., schema=...), "
                "e.g. pyarrow.unify_schemas of its files' schemas), or pass the files' paths: lookups then add "
                "the column to the first file's schema")


def column_type(files, dataset, column: str, lookup: bool = False, columns=None):
    """The column's Arrow type in the schema a lookup reads the files as (lookup_schema, which
    also checks ``columns``, the others a lookup returns); None where there is none. With
    lookup=True, a path into a list or map is refused (lookup_path), also where a Dataset's
    schema lacks the list that its files hold."""
    import pyarrow as pa

    if dataset is None and not files:
        return None  # pruning says so
    try:
        schema = lookup_schema(files, dataset, column, columns)
        if lookup and dataset is not None and files and _schema_field(schema, column) is None:
            # Pruning answers for the files' leaves; the lookup would end in "no column".
            lookup_path(lookup_schema(files, None, column), column)
    except (OSError, pa.ArrowException):
        return None  # not Parquet, or unreadable: pruning says why
    if lookup:
        lookup_path(schema, column)
    return _schema_field(schema, column)


def _unsigned(logical: str) -> bool:
    return logical.startswith("INT(") and logical.endswith("UNSIGNED)")


def _sortable(phys, logical: str):
    """(order, keys): indices sorting the values, and the sorted values in the order the
    column's statistics use; (None, None) where statistics cannot be compared."""
    t, data = phys.type, phys.data
    if logical == "OTHER":  # a logical type this reader does not know: its order is unknown
        return None, None
    if t in ("INT32", "INT64"):
        arr = data.view(np.uint32 if t == "INT32" else np.uint64) if _unsigned(logical) else data
        order = np.argsort(arr, kind="stable")
        return order, arr[order]
    if t in ("FLOAT", "DOUBLE"):
        order = np.argsort(data, kind="stable")  # NaNs sort last
        return order, data[order]
    if t == "BOOLEAN":
        arr = data.astype(np.uint8)
        order = np.argsort(arr, kind="stable")
        return order, arr[order]
    if t == "BYTE_ARRAY" and logical in ("", "STRING", "ENUM", "JSON", "BSON"):
        order = sorted(range(len(data)), key=data.__getitem__)
        return np.array(order, dtype=np.int64), [data[i] for i in order]
    if t == "FIXED_LEN_BYTE_ARRAY" and logical in ("", "UUID"):
        rows = [bytes(r) for r in data]
        order = sorted(range(len(rows)), key=rows.__getitem__)
        return np.array(order, dtype=np.int64), [rows[i] for i in order]
    return None, None  # INT96, decimals in bytes, FLOAT16, INTERVAL: no usable order here


def _decode_stat(raw: bytes, t: str, logical: str):
    if t in ("INT32", "INT64"):
        width = 4 if t == "INT32" else 8
        if len(raw) != width:
            return None
        return int.from_bytes(raw, "little", signed=not _unsigned(logical))
    if t in ("FLOAT", "DOUBLE"):
        if len(raw) != (4 if t == "FLOAT" else 8):
            return None
        v = struct.unpack("<f" if t == "FLOAT" else "<d", raw)[0]
        return None if v != v else v
    if t == "BOOLEAN":
        return raw[0] if len(raw) == 1 else None
    return bytes(raw)


def _stat_ranges(chunks, keys, t: str, logical: str) -> list:
    """Per chunk, [a, b) of the sorted keys inside its [min, max], or None where the chunk's
    statistics say nothing usable (absent, or of an unexpected width)."""
    n = len(keys)
    bounds = []
    for c in chunks:
        lo = _decode_stat(c["min"], t, logical) if c["min"] is not None else None
        hi = _decode_stat(c["max"], t, logical) if c["max"] is not None else None
        bad = (c["min"] is not None and lo is None) or (c["max"] is not None and hi is None)
        bounds.append(None if bad or (c["min"] is None and c["max"] is None) else (lo, hi))
    if not isinstance(keys, np.ndarray):
        return [None if bd is None else (bisect.bisect_left(keys, bd[0]) if bd[0] is not None else 0,
                                         bisect.bisect_right(keys, bd[1]) if bd[1] is not None else n)
                for bd in bounds]
    # Numbers: two searchsorted calls for the whole file (a missing bound is the keys' own end).
    live = [i for i, bd in enumerate(bounds) if bd is not None]
    out: list = [None] * len(chunks)
    if not live or n == 0:
        return out
    lo = np.array([bounds[i][0] if bounds[i][0] is not None else keys[0] for i in live], dtype=keys.dtype)
    hi = np.array([bounds[i][1] if bounds[i][1] is not None else keys[-1] for i in live], dtype=keys.dtype)
    a = np.searchsorted(keys, lo, "left")
    b = np.searchsorted(keys, hi, "right")
    for k, i in enumerate(live):
        out[i] = (int(a[k]), int(b[k]))
    return out


# ---- one file ------------------------------------------------------------------------------------

def _column_error(path: str, column: str, footer: dict) -> ValueError:
    names = [c["path"] for c in footer["columns"]]
    shown = ", ".join(names[:50]) + (f", ... ({len(names)} columns)" if len(names) > 50 else "")
    return ValueError(f"{path}: no column {column!r}; the file has: {shown}")


def open_file(path: str, column: str, missing_ok: bool = False):
    """The native file with only `column`'s chunks kept; ValueError naming the real columns
    when it has no such column (unless missing_ok), and for encrypted files."""
    try:
        pf = _native.ParquetFile(str(path), [column], None, False)
    except ValueError as e:
        raise ValueError(f"not a readable Parquet file: {e}") from None
    footer = pf.footer()
    if footer["encrypted"]:
        raise ValueError(f"{path}: encrypted Parquet files are not supported")
    if not any(c["path"] == column for c in footer["columns"]):
        if missing_ok:
            return pf, footer
        raise _column_error(path, column, footer)
    _values.refuse_ambiguous(path, footer, [column])
    return pf, footer


def refuse_missing_column(files, column: str, report: PruneReport) -> None:
    """The ValueError (naming the real columns) when no file has the column: a typo, not a
    column that some files of the dataset lack."""
    if files and report.files_without_column >= len(files):
        _, footer = open_file(files[0], column, missing_ok=True)
        err = _column_error(files[0], column, footer)
        if len(files) > 1:
            err = ValueError(f"no column {column!r} in any of the {len(files)} files; {err}")
        raise err


def _partition_holds(partition: dict, column: str, values: Values, arrow_type) -> bool:
    """Whether a file whose folder names ``column``'s value (hive partitioning) holds a value
    looked up: its value is one of them (a null partition, or one that cannot be compared, is
    kept)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    key = partition.get(column)
    if key is None or arrow_type is None:
        return True
    try:
        return bool(pc.is_in(pa.array([key], arrow_type), value_set=value_set(values, arrow_type))[0].as_py())
    except (ValueError, pa.ArrowException):
        return True


def _without_column(pf, footer, column: str, values: Values, partition) -> tuple:
    """prune_file for a file that lacks the column. pyarrow's dataset reads it as null there
    (a partition folder's value, if the folder names it): only a null looked up (or the folder's
    value) can match, so the other row groups are skipped, counted with those the statistics
    rule out (what the footer says rules them out)."""
    rep = PruneReport(files=1, values=len(values), footer_bytes=pf.footer_length + 8,
                      row_groups=footer["num_row_groups"])
    if partition is not None and column in partition[0]:
        keep = _partition_holds(partition[0], column, values, partition[1])
    else:
        rep.files_without_column = 1
        keep = values.has_null
    if keep:
        rep.read = rep.read_without_filter = rep.row_groups
        return list(range(rep.row_groups)), rep
    rep.skipped_by_statistics = rep.row_groups
    return [], rep


def _refuse_other_shape(path: str, column: str, footer) -> None:
    """ValueError naming the file when it lacks the column's leaf but holds its path in another
    shape (a struct or list where the column is, a non-struct where a struct on its path is, a
    list whose leaves another writer named otherwise): pyarrow cannot read it as nulls there,
    and skipping it as a file without the column could hide rows that are there."""
    top = column.split(".")[0]
    leaves = [c["path"] for c in footer["columns"] if c["path"] == top or c["path"].startswith(top + ".")]
    if not leaves:
        return  # nothing of the path here: a file without the column
    import pyarrow.parquet as pq

    why = _path_conflict(pq.read_schema(path), column)
    if why is not None:
        shown = ", ".join(leaves[:10]) + (", ..." if len(leaves) > 10 else "")
        raise ValueError(f"{path}: column {column!r}: {why} (its columns there: {shown})")


def prune_file(path: str, column: str, values: Values, use_statistics: bool = True,
               use_filters: bool = True, partition=None, column_type=None) -> tuple[list[int], PruneReport]:
    """The row groups of one file that may hold a value, and what it took to know.
    ``partition``: (the file's hive partition keys, {field: value}, and the column's type in
    the dataset), for a dataset's partition columns; ``column_type``: the column's Arrow type
    in the schema the files are read as (:func:`column_type`), None if not known."""
    pf, footer = open_file(path, column, missing_ok=True)
    if not any(c["path"] == column for c in footer["columns"]):
        _refuse_other_shape(path, column, footer)
        return _without_column(pf, footer, column, values, partition)
    rep = PruneReport(files=1, values=len(values))
    rep.footer_bytes = pf.footer_length + 8
    chunks = footer["chunks"]
    rep.row_groups = footer["num_row_groups"]
    if not chunks:
        rep.read = rep.read_without_filter = rep.row_groups
        return list(range(rep.row_groups)), rep
    c0 = chunks[0]
    t = c0["physical_type"]
    logical = c0["logical_type"]  # "OTHER" (a type this reader does not know): no statistics
    tl = c0["type_length"] or None
    if _narrowed(column_type, t, logical):
        # Read as a coarser type, the file's values round together (12:00 and 13:00 into one
        # date): no filter or statistics in the file's own type can rule a value out.
        rep.read = rep.read_without_filter = rep.row_groups
        return list(range(rep.row_groups)), rep
    try:
        phys, hashes, order, keys, twins = values.typed(t, logical, tl) if len(values.values) else (None,) * 5
    except ValueError as e:  # the column retyped in this file: say which file
        raise ValueError(f"{path}: column {column!r}: {e}") from None
    n = len(hashes) if hashes is not None else 0  # the values this column's type can hold
    if len(values.values) and not n and not values.has_null:
        # None of the values fits this column's type (2**40 for an INT32 column): no row holds one.
        rep.skipped_by_statistics = rep.row_groups
        return [], rep
    nan_idx = np.flatnonzero(phys.nan) if phys is not None and phys.nan is not None else None
    # NaN has many bit patterns and a filter holds only those its writer hashed, so no filter
    # can rule out a chunk for a NaN, as BloomFilter.check answers "maybe" for it.
    nan_hit = nan_idx is not None and len(nan_idx) > 0
    # -0.0 equals 0.0 but the two hash apart: a zero's other sign is probed too, wherever the
    # zero is, and a chunk whose filter holds either is kept.
    probes = hashes if twins is None else np.concatenate([hashes, twins[1]])

    survivors: list[int] = []
    # Per chunk: the candidate value indices (None: all of them), after statistics.
    candidates: dict[int, object] = {}
    ranges = _stat_ranges(chunks, keys, t, logical) if use_statistics and n and keys is not None else None
    for i, c in enumerate(chunks):
        num, nulls = c["num_values"], c["null_count"]
        null_hit = values.has_null and nulls != 0  # a null in the values matches null rows
        if use_statistics and not null_hit and nulls >= 0 and nulls == num:
            rep.skipped_by_statistics += 1  # only nulls here, no value can match
            continue
        cand = None
        if ranges is not None and ranges[i] is not None:
            a, b = ranges[i]
            if nan_idx is not None:  # statistics leave NaN out: kept
                cand = np.union1d(order[a:b], nan_idx)
            elif a != 0 or b != n:
                cand = order[a:b]
            if cand is not None and len(cand) == 0 and not null_hit:
                rep.skipped_by_statistics += 1
                continue
        has_filter = _values.usable_filter(c)  # not BOOLEAN ones: parquet-java's are empty
        if null_hit or nan_hit or not n or not use_filters or not has_filter:
            survivors.append(i)
            if not null_hit and n and not has_filter:
                rep.read_without_filter += 1
            continue
        candidates[i] = cand

    # Filters: the chunks with every value a candidate in one bulk probe; the others alone.
    passed: set = set()
    groups: list[tuple[list[int], object]] = []
    full = [i for i, cand in candidates.items() if cand is None]
    if full:
        groups.append((full, None))
    groups += [([i], cand) for i, cand in candidates.items() if cand is not None]
    for idx, cand in groups:
        hs = probes
        if cand is not None:
            hs = hashes[cand] if twins is None else np.concatenate([hashes[cand], twins[1][np.isin(twins[0], cand)]])
            hs = np.ascontiguousarray(hs)
        alive = np.zeros(len(idx), dtype=bool)
        errs_seen: list = [""] * len(idx)
        for s in range(0, len(hs), _HASH_BATCH):
            batch = hs[s:s + _HASH_BATCH]
            out, errs, reads, nbytes = pf.probe(idx, batch)
            rep.filter_reads += reads
            rep.filter_bytes += nbytes
            alive |= out.reshape(len(idx), len(batch)).any(axis=1)
            for k, e in enumerate(errs):
                if e and not errs_seen[k]:
                    errs_seen[k] = e
        for k, i in enumerate(idx):
            c = chunks[i]
            if errs_seen[k]:
                rep.filter_errors += 1
                warnings.warn(f"{path}: row group {c['row_group']}, column {column!r}: bloom filter ignored, "
                              f"the row group is read: {errs_seen[k]}", FilterWarning, stacklevel=3)
                passed.add(i)
                continue
            if alive[k]:
                passed.add(i)
            k_vals = len(hs)
            nb = _filter_bytes(c)
            if nb and c["num_values"] > 0:
                p = _model_fpp(max(int(c["num_values"]) - max(int(c["null_count"]), 0), 1), nb)
                rep.expected_false_positives += 1.0 - (1.0 - p) ** k_vals
    survivors += list(passed)
    rep.skipped_by_filters = len(candidates) - len(passed)
    survivors.sort()
    rgs = [chunks[i]["row_group"] for i in survivors]
    # Row groups with no chunk of this column (none in practice) cannot be ruled out.
    have = {c["row_group"] for c in chunks}
    rgs = sorted(set(rgs) | (set(range(rep.row_groups)) - have))
    rep.read = len(rgs)
    return rgs, rep


@functools.lru_cache(maxsize=4096)
def _model_fpp(ndv: int, num_bytes: int) -> float:
    # The model sums a Poisson series (~15 us); chunks of one dataset share a few shapes.
    return _native.model_fpp(ndv, float(num_bytes))


def _filter_bytes(c) -> int:
    # bloom_filter_length covers the header (under 32 bytes for every known writer) + bitset.
    n = c["bloom_filter_length"]
    return (n // 32) * 32 if n and n > 0 else 0


# ---- many files ----------------------------------------------------------------------------------

def partitions(dataset, column: str):
    """{path: (hive partition keys, the column's type in the dataset)} of a Dataset's files
    whose folders name ``column`` (a partition column, which no file holds); None if none do."""
    if dataset is None or dataset.schema.get_field_index(column) < 0:
        return None
    import pyarrow.dataset as pds

    typ = dataset.schema.field(column).type
    out = {}
    for frag in dataset.get_fragments():
        keys = pds.get_partition_keys(frag.partition_expression)
        if column in keys:
            out[frag.path] = (keys, typ)
    return out or None


def prune_files(files, column: str, values: Values, *, use_statistics=True, use_filters=True,
                threads=None, progress=None, partitions=None, whole=True, column_type=None) -> Pruned:
    """prune() of a list of files. ``partitions``: what :func:`partitions` gives; ``whole``:
    the files are the whole dataset, so a column none of them has is an error (a Dask task's
    batch is not: the caller checks the merged report with refuse_missing_column);
    ``column_type``: what :func:`column_type` gives."""
    t0 = time.perf_counter()
    report = PruneReport(values=len(values))
    results: list = [None] * len(files)
    if not isinstance(column, str) or not column:
        raise ValueError("column must be a non-empty column path (dotted for nested columns)")
    partitions = partitions or {}

    def one(i):
        results[i] = prune_file(files[i], column, values, use_statistics, use_filters, partitions.get(files[i]),
                                column_type)
        return i

    if threads == 1 or len(files) <= 1:
        for i in range(len(files)):
            one(i)
            if progress:
                progress(i + 1, len(files))
    else:
        for done, _ in enumerate(_pool(threads).map(one, range(len(files))), 1):
            if progress:
                progress(done, len(files))
    pairs = []
    for path, (rgs, rep) in zip(files, results):
        pairs += [(path, rg) for rg in rgs]
        report.merge(rep)
    report.values = len(values)
    report.seconds = time.perf_counter() - t0
    if whole:
        refuse_missing_column(files, column, report)
    return Pruned(pairs, report)


def prune(source, column: str, values, *, use_statistics: bool = True, use_filters: bool = True,
          threads: int | None = None, progress=None) -> Pruned:
    """The (path, row_group) pairs of a dataset that may hold any of ``values`` in ``column``.

    source: a Parquet file, a directory (walked recursively; names starting with "." or "_" are
    skipped, as pyarrow.dataset does), a list of those, or a pyarrow.dataset.Dataset on the local
    filesystem. values: a scalar, a list, a numpy array or a pyarrow array, interpreted by the
    column's logical type (Decimal, date, datetime, UUID, ...); None matches null rows, as
    pyarrow's ``isin`` does. Files are answered for as pyarrow.dataset reads them (see
    docs/bloom.md, "Datasets whose files differ"): a file lacking the column holds nulls there, a
    value its type cannot hold (2**40 in INT32) is in none of its rows, and a Dataset's hive
    partition columns can be looked up. Only footers and filter blocks are read; the result's ``.report``
    says how many row groups statistics and filters ruled out. use_statistics / use_filters=False
    leave min/max statistics or bloom filters unused; ``threads`` files are read at once
    (default: twice the CPU count, at most 8); ``progress``, if given, is called as
    ``progress(files_done, files_total)`` as files are done."""
    files, dataset = resolve(source)
    return prune_files(files, column, Values(values), use_statistics=use_statistics,
                       use_filters=use_filters, threads=threads, progress=progress,
                       partitions=partitions(dataset, column), column_type=column_type(files, dataset, column))


def _field_expr(column: str, schema=None):
    import pyarrow.compute as pc

    if "." not in column or (schema is not None and schema.get_field_index(column) >= 0):
        return pc.field(column)  # a top-level name may hold a dot itself
    return pc.field(*column.split("."))


def _walk(schema, column: str):
    """(The fields along ``column``'s path in ``schema``, the path's parts), the path resolved as
    lookups resolve it: a top-level name, dots and all, first; else one struct field per dotted
    part. The walk stops at a missing name and at a field that is not a struct."""
    import pyarrow as pa

    if schema.get_field_index(column) >= 0:
        return [schema.field(column)], [column]
    parts = column.split(".")
    fields: list = []
    holder = schema
    for part in parts:
        idx = holder.get_field_index(part)
        if idx < 0:
            break
        fields.append(holder.field(idx))
        if not pa.types.is_struct(fields[-1].type):
            break
        holder = fields[-1].type
    return fields, parts


def _schema_field(schema, column: str):
    fields, parts = _walk(schema, column)
    return fields[-1].type if len(fields) == len(parts) else None


def _path_conflict(schema, column: str) -> str | None:
    """Why a file whose Parquet leaves do not include ``column`` cannot be read as holding
    nulls there (its schema holds the path as a struct, list or map, or a prefix of it as a
    non-struct: pyarrow cannot cast that into the column), or None when it simply lacks it."""
    import pyarrow as pa

    fields, parts = _walk(schema, column)
    if len(fields) == len(parts) and pa.types.is_nested(fields[-1].type):
        return f"{column!r} is {fields[-1].type} there, not a column of values"
    if fields and len(fields) < len(parts) and not pa.types.is_struct(fields[-1].type):
        return f"{'.'.join(parts[:len(fields)])!r} is {fields[-1].type} there, not a struct"
    return None


def lookup_path(schema, column: str) -> None:
    """ValueError for a column path that goes into a list or map ("l.list.element",
    "m.key_value.key", a struct field inside a list): a row holds many such values, and lookup
    answers rows equal to a value, as ``pyarrow.dataset.field(column).isin`` does, which has no
    such column either. prune answers for the leaf's values (its filters hold the elements)."""
    if _into_repeated(schema, column):
        fields, parts = _walk(schema, column)
        name = ".".join(parts[:len(fields)])
        raise ValueError(f"column {column!r} is inside {name!r} ({fields[-1].type}): lookup matches whole rows "
                         "by a column's value, which the values of a list or map are not; nested lookups are "
                         "supported through structs only (prune() answers which row groups hold the elements)")


def _into_repeated(schema, column: str) -> bool:
    """Whether ``column``'s path goes into a list or map of ``schema``."""
    fields, parts = _walk(schema, column)
    return bool(fields) and len(fields) < len(parts) and _is_repeated(fields[-1].type)


def _is_repeated(t) -> bool:
    import pyarrow as pa

    return (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
            or pa.types.is_map(t) or pa.types.is_list_view(t) or pa.types.is_large_list_view(t))


def _comparable_type(arrow_type):
    """The type lookups compare a column's values in: a dictionary column's value type, an
    extension type's storage (arrow.uuid: 16 bytes), float32 for float16 (is_in has no kernel
    for either of the last two; float16 widens exactly)."""
    import pyarrow as pa

    if pa.types.is_dictionary(arrow_type):
        arrow_type = arrow_type.value_type
    if isinstance(arrow_type, pa.BaseExtensionType):
        arrow_type = arrow_type.storage_type
    if pa.types.is_float16(arrow_type):
        arrow_type = pa.float32()
    return arrow_type


def _comparable(chunk):
    """A column chunk in _comparable_type's type."""
    import pyarrow as pa

    if isinstance(chunk.type, pa.BaseExtensionType):
        chunk = chunk.storage
    if pa.types.is_float16(chunk.type):
        chunk = chunk.cast(pa.float32())
    return chunk


def value_set(values: Values, arrow_type):
    """The values as a pyarrow array of the column's type (the isin value set)."""
    import pyarrow as pa

    arrow_type = _comparable_type(arrow_type)
    try:
        vals = values.values
        if pa.types.is_integer(arrow_type):  # values the type cannot hold match no row, as in isin
            info = np.iinfo(arrow_type.to_pandas_dtype())
            vals = in_range(vals, int(info.min), int(info.max) + 1)
        elif pa.types.is_date(arrow_type) or pa.types.is_timestamp(arrow_type):  # not truncated into it
            vals = in_unit(vals, "D" if pa.types.is_date(arrow_type) else arrow_type.unit)
        if _values.is_pyarrow(vals):
            if pa.types.is_date(vals.type) and pa.types.is_timestamp(arrow_type):
                vals = vals.cast(pa.timestamp("s"))  # midnight, as the filters hash it
            arr = vals.cast(arrow_type)
        else:
            ready = _values.arrow_ready(vals, arrow_type)
            arr = ready.cast(arrow_type) if _values.is_pyarrow(ready) else pa.array(ready, type=arrow_type)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError, OverflowError) as e:
        raise ValueError(f"values do not fit the column's type {arrow_type}: {e}") from None
    if values.has_null:
        arr = pa.concat_arrays([arr, pa.nulls(1, arrow_type)])
    return arr


def _column_list(columns):
    """``columns=`` as a list (one name given as a string), None for all."""
    if columns is None:
        return None
    return [columns] if isinstance(columns, str) else list(columns)


_KEY = "\0simdex key"  # the lookup column's name in a scan's projection (no column is named so)


def read_pruned(pruned: Pruned, column: str, values: Values, columns=None, dataset=None,
                files=None, schema=None) -> object:
    """The matching rows of the surviving row groups (one pyarrow scan, the same predicate a
    full scan would use); sets report.matched and report.rows. The result's schema is
    ``schema``, else lookup_schema's of the dataset or ``files`` (the source's, in order) with
    ``columns`` in it."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as pds

    fmt = pds.ParquetFileFormat()
    partition = {}
    columns = _column_list(columns)
    if dataset is not None:
        schema = dataset.schema
        fs = dataset.filesystem
        partition = {f.path: f.partition_expression for f in dataset.get_fragments()}
    else:
        import pyarrow.fs as pafs

        fs = pafs.LocalFileSystem()
        # The source's files give the schema, as pyarrow.dataset infers it: the first surviving
        # file's made the columns and their types depend on the values looked up (another
        # file's extra column dropped, or kept, and Dask batches that disagreed).
        if schema is None:
            schema = lookup_schema(files or [path for path, _ in pruned[:1]], None, column, columns)
    lookup_path(schema, column)
    typ = _schema_field(schema, column)
    if typ is None:
        raise ValueError(f"no column {column!r} in the dataset's schema ({', '.join(schema.names)})")
    if columns is not None:
        missing = [c for c in columns if _schema_field(schema, c) is None]
        if missing:
            raise ValueError(f"no column(s) {', '.join(map(repr, missing))} in the dataset's schema "
                             f"({', '.join(schema.names)})")
    if dataset is None and pruned:
        got = _read_direct(pruned, column, values, schema, columns)
        if got is not None:
            pruned.report.rows, pruned.report.matched = got[0].num_rows, got[1]
            return got[0]
    vs = value_set(values, typ)
    frags = [fmt.make_fragment(path, filesystem=fs, row_groups=[rg],
                               **({"partition_expression": partition[path]} if path in partition else {}))
             for path, rg in pruned]
    ds = pds.FileSystemDataset(frags, schema, fmt, filesystem=fs) if frags else None
    if ds is None:
        # The columns as a scan projects them ("a.b" is a struct field, named "b"), no rows.
        table = pds.dataset(schema.empty_table()).to_table(columns=columns)
        pruned.report.matched, pruned.report.rows = 0, 0
        return table
    # The rows are matched after the scan, not by a scanner filter: pyarrow's scanner first
    # rules row groups out by their statistics, wrongly for floats (a row group holding NaN,
    # which min/max leave out, or 0.0 where min and max are -0.0 and 0.0), and lost rows that
    # a read of the same row groups holds. So the key column is projected beside those asked for.
    out_schema = ds.scanner(columns=columns).projected_schema
    key = _field_expr(column, schema)
    projection, match = None, key.isin(vs)
    if columns is not None:
        projection = {name: _field_expr(c, schema) for name, c in zip(out_schema.names, columns)}
        projection[_KEY] = key
        match = pc.field(_KEY).isin(vs)
        if len(projection) != len(columns) + 1:  # a column asked for twice: as the scanner names them
            projection, match = None, key.isin(vs)
    batches, matched = [], set()
    for tagged in ds.scanner(columns=projection, use_threads=True).scan_batches():
        b = tagged.record_batch
        if not b.num_rows:
            continue
        found = pa.Table.from_batches([b]).filter(match)
        if found.num_rows:
            matched.add((tagged.fragment.path, tagged.fragment.row_groups[0].id))
            batches += found.select(out_schema.names if projection is not None or columns is None
                                    else columns).to_batches()
    table = pa.Table.from_batches(batches, schema=out_schema)
    pruned.report.matched, pruned.report.rows = len(matched), table.num_rows
    return table


class Matcher:
    """Which rows of a key column hold one of the looked-up values: ``pyarrow.compute.is_in``'s
    answer (nulls never match unless the set holds a null), computed by the native small-set
    kernel for integers, temporal types and byte strings (about ten times faster than is_in
    for a hundred keys), and by is_in itself for anything else."""

    _LAYOUTS = {"string": 4, "binary": 4, "large_string": 8, "large_binary": 8}

    def __init__(self, value_set):
        import pyarrow as pa

        self.value_set = value_set
        self.type = value_set.type
        self.width = self.offset_width = None
        if value_set.null_count:
            return
        t = value_set.type
        if _fixed_bits(t):
            self.width = t.bit_width // 8
            self.keys = _fixed_bytes(value_set, self.width)
        elif str(t) in self._LAYOUTS:
            self.offset_width = self._LAYOUTS[str(t)]
            k = value_set.cast(pa.large_binary())
            self.key_offsets = np.frombuffer(k.buffers()[1], dtype=np.int64)[k.offset:k.offset + len(k) + 1]
            self.key_data = _bytes_of(k.buffers()[2])

    def rows(self, key) -> np.ndarray:
        """A numpy bool mask over ``key`` (an Array or ChunkedArray of the set's type)."""
        chunks = key.chunks if hasattr(key, "chunks") else [key]
        parts = [self._chunk(c) for c in chunks]
        if not parts:
            return np.zeros(0, dtype=bool)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _chunk(self, c) -> np.ndarray:
        import pyarrow.compute as pc

        c = _comparable(c)
        if c.type != self.type or (self.width is None and self.offset_width is None):
            return pc.is_in(c, value_set=self.value_set).fill_null(False).to_numpy(zero_copy_only=False)
        if self.width is not None:
            mask, _ = _native.match_fixed(_fixed_bytes(c, self.width), self.width, self.keys)
        else:
            ow = self.offset_width
            offsets = np.frombuffer(c.buffers()[1], dtype=np.int32 if ow == 4 else np.int64)
            offsets = offsets[c.offset:c.offset + len(c) + 1]
            if not offsets.flags.aligned:
                offsets = offsets.copy()
            mask, _ = _native.match_binary(_bytes_of(c.buffers()[2]), offsets.view(np.uint8), ow,
                                           self.key_data, self.key_offsets)
        mask = mask.view(bool)
        if c.null_count:
            mask &= c.is_valid().to_numpy(zero_copy_only=False)
        return mask


def _fixed_bits(t) -> bool:
    """Types whose equality is equality of their bits (not floats: -0.0 == 0.0, NaN != NaN)."""
    import pyarrow as pa

    return (pa.types.is_integer(t) or pa.types.is_date(t) or pa.types.is_time(t)
            or pa.types.is_timestamp(t) or pa.types.is_duration(t))


def _bytes_of(buf) -> np.ndarray:
    return np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, dtype=np.uint8)


def _fixed_bytes(a, width: int) -> np.ndarray:
    """The bytes of a fixed-width array's values (its offset applied)."""
    return _bytes_of(a.buffers()[1])[a.offset * width:(a.offset + len(a)) * width]


def _read_direct(pruned: Pruned, column: str, values: Values, schema, columns, threads=None):
    """The surviving row groups read with pyarrow.parquet, several at a time: first the lookup
    column alone, matched as a dataset scan's ``isin`` filter matches (:class:`Matcher`; a
    string or binary key is matched in its pages, :func:`_bloom_pages.chunk_matches`); the
    other columns only for row groups that hold a match. None where this path does not apply
    (a nested column, files whose schemas differ): the dataset scanner does it then."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if schema.get_field_index(column) < 0:  # a nested field: the dataset scanner reads it
        return None
    want = list(schema.names) if columns is None else list(columns)
    if any(schema.get_field_index(c) < 0 for c in want):
        return None
    match = Matcher(value_set(values, schema.field(column).type))

    out_schema = pa.schema([schema.field(c) for c in want])
    others = [c for c in want if c != column]

    def key_rows(pf, fd, rg, leaf):
        """(the rows holding a key, ascending, and their key column) of one row group, or None
        when none does: matched in the chunk's pages where the page walker takes them, else
        decoded by pyarrow."""
        if leaf is not None:
            meta = pf.metadata.row_group(rg)
            try:
                which = _pages.chunk_matches(fd, meta.column(leaf[0]), leaf[1], leaf[2],
                                             match.key_data, match.key_offsets)
            except _pages.Unsupported:
                which = None
            if which is not None and len(which) == meta.num_rows:  # else pyarrow says what is wrong
                rows = np.flatnonzero(which >= 0)
                return (rows, match.value_set.take(which[rows])) if len(rows) else None
        key = pf.read_row_group(rg, columns=[column], use_threads=False).column(0)
        rows = np.flatnonzero(match.rows(key))
        return (rows, key.take(rows)) if len(rows) else None

    def one(item):
        path, rgs = item
        pf = pq.ParquetFile(path)
        if not pf.schema_arrow.equals(schema):
            return None
        leaf = _page_leaf(pf, column) if match.offset_width else None
        fd = os.open(path, os.O_RDONLY) if leaf is not None else None
        out = []
        try:
            for rg in rgs:
                found = key_rows(pf, fd, rg, leaf)
                if found is None:
                    continue
                rows, keys = found
                cols = {column: keys}
                if others:
                    rest = _read_through_row(pf, rg, others, int(rows[-1]), pf.metadata.row_group(rg).num_rows)
                    cols.update((c, rest.column(c).take(rows)) for c in others)
                out.append(pa.table([cols[c] for c in want], schema=out_schema))
        finally:
            if fd is not None:
                os.close(fd)
        return out

    items = list(pruned.by_file().items())
    results = list(_pool(threads).map(one, items)) if len(items) > 1 else [one(i) for i in items]
    if any(r is None for r in results):
        return None
    parts = [t for r in results for t in r]
    if not parts:
        return out_schema.empty_table(), 0
    return pa.concat_tables(parts), len(parts)


def _page_leaf(pf, column: str):
    """(leaf index, max definition level, max repetition level) of a top-level column, for the
    page walker; None when the column is not one leaf."""
    schema = pf.schema
    found = [i for i in range(len(schema)) if schema.column(i).path == column]
    if len(found) != 1:
        return None
    c = schema.column(found[0])
    return found[0], c.max_definition_level, c.max_repetition_level


def _fixed_width(t) -> bool:
    import pyarrow as pa

    return pa.types.is_primitive(t) or pa.types.is_decimal(t) or pa.types.is_fixed_size_binary(t)


# Rows decoded at a time when a row group's other columns are read only up to its last match.
_READ_BATCH = 8192


def _read_through_row(pf, rg: int, columns: list, last: int, num_rows: int):
    """Row group ``rg``'s ``columns``, decoded at least through row ``last`` (of ``num_rows``).
    Parquet without a page index cannot skip the rows before a match, but decoding can stop
    after it: on average half a row group's strings are not decoded for a single match.
    Fixed-width columns decode faster than a batch reader starts (a 64K-row double column:
    0.41 ms whole against 0.88 through half of it), so they are read whole. The caller runs
    several row groups at once: no threads of pyarrow's own."""
    import pyarrow as pa

    fields = pf.schema_arrow
    if last >= num_rows - _READ_BATCH or all(_fixed_width(fields.field(c).type) for c in columns):
        return pf.read_row_group(rg, columns=columns, use_threads=False)
    batches, got = [], 0
    for b in pf.iter_batches(batch_size=_READ_BATCH, row_groups=[rg], columns=columns, use_threads=False):
        batches.append(b)
        got += b.num_rows
        if got > last:
            break
    return pa.Table.from_batches(batches)


_POOLS: dict = {}


def _pool(threads=None) -> ThreadPoolExecutor:
    """A thread pool kept for the process (starting threads per call costs more than a small
    lookup's reads)."""
    n = threads or min(8, (os.cpu_count() or 1) * 2)
    ex = _POOLS.get(n)
    if ex is None:
        ex = _POOLS[n] = ThreadPoolExecutor(n, thread_name_prefix="simdex-bloom")
    return ex


def lookup(source, column: str, values, columns=None, *, use_statistics: bool = True,
           use_filters: bool = True, threads: int | None = None, progress=None,
           return_report: bool = False):
    """The rows whose ``column`` is one of ``values``, as a pyarrow.Table, reading only the row
    groups :func:`prune` keeps. Exactly the rows of a full scan with
    ``pyarrow.dataset.field(column).isin(values)``, in file and row-group order. ``source``,
    ``values`` and the keyword arguments are :func:`prune`'s. ``columns`` selects the columns
    returned; the schema is the Dataset's, else the first file's (as pyarrow.dataset infers a
    directory's), with the column and ``columns`` added where it lacks them (lookup_schema).
    With return_report=True: (table, PruneReport)."""
    t0 = time.perf_counter()
    files, dataset = resolve(source)
    vals = Values(values)
    pruned = prune_files(files, column, vals, use_statistics=use_statistics, use_filters=use_filters,
                         threads=threads, progress=progress, partitions=partitions(dataset, column),
                         column_type=column_type(files, dataset, column, lookup=True, columns=columns))
    table = read_pruned(pruned, column, vals, columns, dataset, files)
    pruned.report.seconds = time.perf_counter() - t0
    return (table, pruned.report) if return_report else table
