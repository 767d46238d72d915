"""Adding bloom filters to Parquet files that lack them, without rewriting their data.

The new file is the old one's bytes up to its footer, unchanged (so every page, index and
offset stays valid), then one BloomFilterHeader + bitset per column chunk, then the old footer
with ``bloom_filter_offset`` / ``bloom_filter_length`` set (every other footer byte copied
through). By simdex._output's rules, a regular target is written under a temporary name in its
directory (a symlink's target's: the link stays), synced, checked and renamed into place, so a
failure leaves it as it was; a device or FIFO is written in place, never replaced by a file.
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from . import _bloom_pages as _pages
from . import _bloom_values as _values
from ._simdex import bloom as _native

_COPY_CHUNK = 1 << 24


def column_hashes(array, t: str, logical: str, type_length) -> np.ndarray:
    """XXH64 of each non-null value of a pyarrow (Chunked)Array read from a column chunk, in
    the column's physical form. Binary and string arrays are hashed straight from their buffers."""
    import pyarrow as pa

    if isinstance(array, pa.ChunkedArray):
        parts = [column_hashes(c, t, logical, type_length) for c in array.chunks]
        return np.concatenate(parts) if parts else np.zeros(0, np.uint64)
    if array.null_count:
        array = array.drop_null()
    if len(array) == 0:
        return np.zeros(0, np.uint64)
    typ = array.type
    if pa.types.is_duration(typ):  # INT64 ticks of its unit, as pyarrow writes it
        array, typ = array.cast(pa.int64()), pa.int64()
    if t == "BYTE_ARRAY" and (pa.types.is_string(typ) or pa.types.is_binary(typ)
                              or pa.types.is_large_string(typ) or pa.types.is_large_binary(typ)):
        large = pa.types.is_large_string(typ) or pa.types.is_large_binary(typ)
        _, offsets_buf, data_buf = array.buffers()
        offsets = np.frombuffer(offsets_buf, dtype=np.int64 if large else np.int32)
        offsets = offsets[array.offset:array.offset + len(array) + 1].astype(np.int64)
        data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
        return _native.hash_offsets(data, np.ascontiguousarray(offsets))
    if t == "BOOLEAN":
        array = array.unique()  # two values at most: hash each once
    native = _PLAIN_INTEGERS.get((t, str(typ)))
    if native is not None:  # the physical value's bits as they lie in the buffer
        width = 8 if t == "INT64" else 4
        values = np.frombuffer(array.buffers()[1], dtype=f"<i{width}")[array.offset:array.offset + len(array)]
        return native(np.ascontiguousarray(values))
    return _values.hash_values(array, t, logical, type_length)[0]


def _leaf(array, parts: list):
    """The values of the Parquet leaf column at path parts below a top-level column as pyarrow
    reads it (structs, lists and maps around the leaf): only values whose ancestors are all
    present, which are the values the column chunk stores."""
    import pyarrow as pa

    chunks = array.chunks if isinstance(array, pa.ChunkedArray) else [array]
    if not chunks:
        return array
    i = 0
    while i < len(parts):
        typ = chunks[0].type
        if pa.types.is_struct(typ):
            j = typ.get_field_index(parts[i])
            if j < 0:
                raise ValueError(f"no field {parts[i]!r} in {typ}")
            chunks = [c.flatten()[j] for c in chunks]  # flatten() applies the struct's nulls
        elif pa.types.is_map(typ):  # key_value, then key or value
            if i + 1 < len(parts):
                i += 1
            chunks = [c.keys if parts[i] == "key" else c.items for c in chunks]
        elif pa.types.is_list(typ) or pa.types.is_large_list(typ) or pa.types.is_fixed_size_list(typ):
            # parts[i] names the repeated group; a three-level list names its element next.
            element = typ.value_field.name
            chunks = [c.flatten() for c in chunks]  # the values of the lists that are present
            if i + 1 < len(parts) and parts[i + 1] == element:
                i += 1
        else:
            raise ValueError(f"column path part {parts[i]!r} below a {typ} value")
        i += 1
    return pa.chunked_array(chunks, type=chunks[0].type)


# Arrow types whose buffer holds a column's physical integers unchanged (no nulls by now).
_PLAIN_INTEGERS = {("INT64", "int64"): _native.hash_int64, ("INT64", "uint64"): _native.hash_int64,
                   ("INT32", "int32"): _native.hash_int32, ("INT32", "uint32"): _native.hash_int32}


def _output_path(path: str, out, in_place: bool, many: bool, name: str | None = None) -> str:
    """Where ``path`` is written: itself (in_place), ``out``, or ``out/name`` for many files or a
    directory ``out`` (``name``: the file's path below the source directory, default its base
    name; its folders are made)."""
    if in_place:
        if out is not None:
            raise ValueError("give either out or in_place, not both")
        return path
    if out is None:
        raise ValueError("give out (a file, or a directory for many files) or in_place=True; "
                         "the original file is never modified unless asked")
    # "DIR/" names a directory (made if missing), as "cp f DIR/" does: writing a file "DIR"
    # there was a surprise.
    as_dir = str(out).endswith(("/", os.sep))
    out = Path(out)
    if many or as_dir or out.is_dir():
        out.mkdir(parents=True, exist_ok=True)
        out = out / (name or Path(path).name)
        out.parent.mkdir(parents=True, exist_ok=True)
    if out.exists() and os.path.samefile(out, path):
        raise ValueError(f"{path}: the output is the input file; pass in_place=True (--in-place) "
                         "to replace it")
    return str(out)


def plan(source, out, in_place: bool, columns) -> tuple[list[str], list[str]]:
    """(input files, output paths) of an add_filters call, every file checked to take filters
    for ``columns`` before any is written. A directory's files keep their
    place below it in ``out`` (year=2024/part-0.parquet stays there: flattened, the partition
    folders, and the columns they stand for, were lost, and partitions' same-named files
    collided)."""
    from ._bloom_dataset import resolve_named

    files, names, _ = resolve_named(source)
    if not files:
        raise ValueError("no Parquet files in the source")
    # Every file's footer first (a few KB each): a file the filters cannot go into (not Parquet,
    # without a column, encrypted) stopped a run part way, some files written and the rest not.
    for f in files:
        check_file(f, columns)
    many = len(files) > 1 or (isinstance(source, (str, os.PathLike)) and Path(source).is_dir())
    outs = [_output_path(f, out, in_place, many, n) for f, n in zip(files, names)]
    if len(set(map(os.path.abspath, outs))) != len(outs):
        raise ValueError("two source files would be written to the same output path")
    return files, outs


def check_file(path: str, columns):
    """(native file, footer, column paths) of a file filters can be added to; else the error
    (missing, not Parquet, encrypted, a column it lacks or cannot tell apart)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}")
    try:
        nf = _native.ParquetFile(path, None, None, False)
    except ValueError as e:
        raise ValueError(f"cannot add filters to {path}: {e}") from None
    footer = nf.footer()
    if footer["encrypted"]:
        raise ValueError(f"cannot add filters to {path}: its metadata is encrypted")
    names = [c["path"] for c in footer["columns"]]
    wanted = [columns] if isinstance(columns, str) else list(columns)
    for c in wanted:
        if c not in names:
            raise ValueError(f"{path}: no column {c!r}; the file has: {', '.join(names)}")
    _values.refuse_ambiguous(path, footer, wanted)
    for c in footer["chunks"]:
        if c["path"] in wanted and c["encrypted"]:
            raise ValueError(f"cannot add filters to {path}: column {c['path']!r} is encrypted")
    return nf, footer, wanted


def add_filters_file(path: str, columns, out: str, *, fpp: float = 0.01, ndv: int | None = None,
                     sizing: str = "arrow", replace: bool = False, threads: int | None = None) -> dict:
    """Adds filters for ``columns`` to one file, writing ``out`` (may equal ``path``)."""
    import pyarrow.parquet as pq

    if not 0.0 < fpp < 1.0:
        raise ValueError(f"fpp must be in (0, 1), got {fpp}")
    if ndv is not None and ndv < 1:
        raise ValueError(f"ndv must be at least 1, got {ndv}")
    path = str(path)
    nf, footer, wanted = check_file(path, columns)
    chunks = [c for c in footer["chunks"] if c["path"] in wanted]
    todo = [c for c in chunks if replace or c["bloom_filter_offset"] < 0]
    kept = len(chunks) - len(todo)

    # Filters, in row-group order: each from that chunk's decoded values. A chunk is read and
    # hashed by one of `threads` threads (pyarrow reads one column on one thread).
    local = threading.local()

    def hashes_of(c) -> np.ndarray:
        if not hasattr(local, "reader"):
            local.reader = pq.ParquetFile(path)
        if c["physical_type"] in ("BYTE_ARRAY", "INT96"):
            try:
                # Strings: hashed from the pages where they lie, not decoded into Arrow arrays.
                # INT96 too: pyarrow decodes it into nanoseconds, wrapping years outside
                # 1677-2262 into other values (a filter of those would miss the real ones).
                return _pages.chunk_hashes(fd, local.reader.metadata.row_group(c["row_group"]).column(c["column"]),
                                           local.reader.schema.column(c["column"]).max_definition_level,
                                           local.reader.schema.column(c["column"]).max_repetition_level)
            except _pages.Unsupported:
                pass
        arr = _leaf(local.reader.read_row_group(c["row_group"], columns=[c["path"]]).column(0),
                    c["path"].split(".")[1:])
        logical = c["logical_type"] if c["logical_type"] != "OTHER" else ""
        return column_hashes(arr, c["physical_type"], logical, c["type_length"] or None)

    def build(c) -> tuple[int, int, bytes]:
        hashes = np.ascontiguousarray(hashes_of(c), dtype=np.uint64)
        distinct = ndv if ndv is not None else max(_native.count_distinct_hashes(hashes), 1)
        f = _native.Filter.for_ndv(int(distinct), float(fpp), sizing)
        f.insert_hashes(hashes)
        return c["row_group"], c["column"], f.serialize()

    workers = max(1, min(threads or os.cpu_count() or 1, len(todo)))
    with open(path, "rb") as src, _parquet_output(out, src) as dst:
        fd = src.fileno()  # read by position only, so shared by the hashing threads and the copy
        start = nf.footer_offset
        old_footer = os.pread(fd, nf.footer_length, start)
        # The data pages go over in the kernel, and on to the disk, while the filters are
        # built: the final sync then waits only for the filters and the footer.
        with ThreadPoolExecutor(workers + 1) as ex:
            copied = ex.submit(_copy_and_sync, src, dst, start, out)
            blobs = list(ex.map(build, todo))
            copied.result()
        locs, at = [], start
        for rg, col, blob in blobs:
            locs.append((rg, col, at, len(blob)))
            at += len(blob)
        try:
            new_footer = _native.set_bloom_locations(old_footer, locs)
        except ValueError as e:
            raise ValueError(f"cannot add filters to {path}: {e}") from None
        with _naming(out):
            for _, _, b in blobs:
                dst.write(b)
            dst.write(new_footer)
            dst.write(struct.pack("<I", len(new_footer)) + b"PAR1")
    return {"path": path, "out": out, "row_groups": footer["num_row_groups"], "filters_added": len(blobs),
            "filters_kept": kept, "filter_bytes": sum(len(b) for _, _, b in blobs)}


@contextlib.contextmanager
def _naming(path: str, tmp: str | None = None, *, every: bool = False):
    """OSErrors raised in the block name ``path`` (the user's name for the file being written)
    where they named no file (a write, a sync) or the temporary file ``tmp``; with ``every``,
    all of them (a block that only writes ``path``)."""
    try:
        yield
    except OSError as e:
        if not every and e.filename is not None and e.filename != tmp:
            raise
        if e.errno is None:
            raise OSError(f"{path}: {e}") from None
        raise OSError(e.errno, e.strerror, path) from None


@contextlib.contextmanager
def _parquet_output(out: str, src):
    """The file to write ``out`` through, by simdex._output's rules (staged beside it, or beside
    a symlink's target, renamed only complete; a device or FIFO written in place; a directory
    refused). A staged file also gets ``src``'s permissions, is synced, and must parse as
    Parquet before it replaces anything. Errors name ``out``, never the temporary file."""
    from ._output import Output

    def reads_back(tmp: str) -> None:
        try:
            _native.ParquetFile(tmp, [], None, True)
        except ValueError as e:
            raise ValueError(f"{out}: the new file does not read back ({str(e).replace(tmp, out)}); "
                             "nothing was replaced") from None

    with _naming(out, every=True):
        o = Output(out, mode=stat.S_IMODE(os.fstat(src.fileno()).st_mode), sync=True, check=reads_back)
    try:
        yield o.file
        with _naming(out, o.temporary):
            o.commit()  # the last buffered bytes: a write error surfaces here
    finally:
        o.discard()


def _copy_and_sync(src, dst, n: int, name: str) -> None:
    regular = stat.S_ISREG(os.fstat(dst.fileno()).st_mode)
    _copy_prefix(src, dst, n, name, regular)
    if regular and hasattr(os, "fdatasync"):
        with _naming(name):
            os.fdatasync(dst.fileno())


def _copy_prefix(src, dst, n: int, name: str | None = None, regular: bool = True) -> None:
    """The first n bytes of src into dst: in the kernel where it can (no user-space copy).
    ``regular``: dst is a regular file (else a device or pipe: written in order, never sought).
    Errors writing dst name ``name``."""
    name = name if name is not None else str(dst.name)
    done = 0
    sfd, dfd = src.fileno(), dst.fileno()
    with _naming(name):
        dst.flush()
    if regular and hasattr(os, "copy_file_range"):
        try:
            while done < n:
                got = os.copy_file_range(sfd, dfd, min(n - done, 1 << 30), done)
                if got == 0:
                    break
                done += got
        except OSError:
            done = 0  # the copy below starts over (and meets a write error again, if it was one)
            with _naming(name):
                os.lseek(dfd, 0, os.SEEK_SET)
                os.ftruncate(dfd, 0)
    while done < n:
        with _naming(str(src.name)):
            buf = os.pread(sfd, min(_COPY_CHUNK, n - done), done)
        if not buf:
            raise OSError(f"{src.name} shrank while being copied")
        view = memoryview(buf)
        with _naming(name):
            while view:  # os.write may take only part of it
                view = view[os.write(dfd, view):]
        done += len(buf)
    if regular:
        with _naming(name):
            os.lseek(dfd, n, os.SEEK_SET)


def add_filters(source, columns, *, out=None, in_place: bool = False, fpp: float = 0.01,
                ndv: int | None = None, sizing: str = "arrow", replace: bool = False,
                threads: int | None = None, progress=None, on_file=None) -> list:
    """Adds bloom filters for ``columns`` to Parquet files that lack them.

    source: a file, a directory, a list of them, or a pyarrow.dataset.Dataset. Each row group's
    filter holds that chunk's distinct values, sized by ``ndv`` (default: the distinct values
    counted) and ``fpp`` with Arrow's formula (``sizing="model"``: the exact SBBF model). Data
    pages are copied byte for byte. out: the new file (one source file) or a directory (a
    directory's files keep their paths below it, partition folders and all); or in_place=True
    to replace the originals (atomically). Chunks that already have a filter keep it unless
    replace=True. ``threads`` (default: the CPU count) read and hash row groups in parallel.
    Returns one dict per file: path, out, row_groups, filters_added, filters_kept,
    filter_bytes; ``on_file``, if given, gets each one as its file is complete (so a caller can
    report the finished files of a run that fails or is interrupted later); ``progress``, if
    given, is called as ``progress(files_done, files_total)``, first with 0 done."""
    files, outs = plan(source, out, in_place, columns)
    results = []
    if progress:
        progress(0, len(files))
    for i, (f, o) in enumerate(zip(files, outs)):
        results.append(add_filters_file(f, columns, o, fpp=fpp, ndv=ndv, sizing=sizing, replace=replace,
                                        threads=threads))
        if on_file:
            on_file(results[-1])
        if progress:
            progress(i + 1, len(files))
    return results
