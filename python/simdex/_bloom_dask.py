"""simdex.bloom on a Dask cluster: add filters to many files, prune and look up large key sets.

Needs the ``dask`` extra (``pip install simdex[dask]``). Every function takes ``client`` (a
``dask.distributed.Client``) or ``scheduler`` (an address such as ``tcp://host:8786``); with
neither, it starts a LocalCluster of ``n_workers`` single-threaded worker processes for the
call. Results are the same as the single-process functions' (same order, same rows).
"""

from __future__ import annotations

import contextlib
import os

from . import _bloom_add, _bloom_dataset

__all__ = ["cluster", "add_filters", "prune", "lookup"]


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ImportError("simdex.bloom.dask needs dask.distributed: pip install 'simdex[dask]'") from None
    return distributed


@contextlib.contextmanager
def cluster(client=None, scheduler: str | None = None, n_workers: int | None = None):
    """A Client: the one given, one connected to ``scheduler``, or a new LocalCluster of
    ``n_workers`` processes (default: the CPU count) closed on exit."""
    if client is not None:
        yield client
        return
    distributed = _distributed()
    if scheduler:
        with distributed.Client(scheduler) as c:
            yield c
        return
    n = n_workers or os.cpu_count() or 1
    with distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                  dashboard_address=":0", silence_logs=40) as lc, distributed.Client(lc) as c:
        yield c


def _batches(items: list, n: int) -> list:
    """n contiguous slices (fewer if there are fewer items), keeping order."""
    n = max(1, min(n, len(items)))
    size, extra = divmod(len(items), n)
    out, at = [], 0
    for i in range(n):
        step = size + (i < extra)
        out.append(items[at:at + step])
        at += step
    return out


def _workers(c) -> int:
    return max(1, len(c.scheduler_info().get("workers", {})))


def _add_batch(pairs, columns, kw):
    # One thread per task: the cluster's workers are the parallelism.
    return [_bloom_add.add_filters_file(p, columns, o, **{"threads": 1, **kw}) for p, o in pairs]


def add_filters(source, columns, *, out=None, in_place: bool = False, client=None, scheduler=None,
                n_workers: int | None = None, **kw) -> list:
    """simdex.bloom.add_filters with the files spread over the cluster's workers (one task per
    file; the output paths must be reachable by the workers under the same names)."""
    files, outs = _bloom_add.plan(source, out, in_place, columns)
    pairs = list(zip(files, outs))
    with cluster(client, scheduler, n_workers) as c:
        futures = c.map(_add_batch, [[p] for p in pairs], columns=columns, kw=kw, pure=False)
        results = c.gather(futures)
    return [r for batch in results for r in batch]


def _prune_batch(files, column, values, kw, partitions=None):
    vals = _values(values)
    return _bloom_dataset.prune_files(files, column, vals, partitions=partitions, whole=False, **kw)


def prune(source, column: str, values, *, client=None, scheduler=None, n_workers: int | None = None,
          tasks_per_worker: int = 4, **kw):
    """simdex.bloom.prune with the files split into contiguous batches, one task each; the
    values are sent to every worker once."""
    files, dataset = _bloom_dataset.resolve(source)
    vals = _bloom_dataset.Values(values)  # refuses bad values here, before any task runs
    with cluster(client, scheduler, n_workers) as c:
        return _prune_on(c, files, column, vals, _share(c, vals), tasks_per_worker, kw, dataset)


def _prune_on(c, files, column, vals, shared, tasks_per_worker, kw, dataset=None, lookup=False, columns=None):
    parts_of = _bloom_dataset.partitions(dataset, column) or {}  # each batch gets its files' own
    kw = {**kw, "column_type": _bloom_dataset.column_type(files, dataset, column, lookup, columns)}
    batches = _batches(files, _workers(c) * tasks_per_worker)
    futures = [c.submit(_prune_batch, b, column, shared, kw, {f: parts_of[f] for f in b if f in parts_of} or None,
                        pure=False) for b in batches]
    parts = c.gather(futures)
    out = _bloom_dataset.Pruned()
    for p in parts:
        out += p
        out.report.merge(p.report)
    out.report.values = len(vals)
    # A batch may lack the column and others not: only all the files together tell a typo.
    _bloom_dataset.refuse_missing_column(files, column, out.report)
    return out


class _Shared:
    """The checked values (a Values) as one opaque object. Dask walks the lists, tuples, dicts
    and sets it is given, to scatter or to look for futures in, item by item: a list of 10,000
    ints took a second to send to two workers and a list of a million two minutes, where this
    object is pickled once (milliseconds), and the workers use the values as checked and
    deduplicated here instead of doing it again in every task."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = values

    def __reduce__(self):
        return (_Shared, (self.values,))


def _values(values) -> _bloom_dataset.Values:
    """A task's values: the shared Values, or raw values checked here."""
    if isinstance(values, _Shared):
        values = values.values
    return values if isinstance(values, _bloom_dataset.Values) else _bloom_dataset.Values(values)


def _share(c, vals):
    """The values, sent to every worker once (inside a one-element list: a list given to
    scatter is scattered element by element)."""
    return c.scatter([_Shared(vals)], broadcast=True, hash=False)[0]


def _read_batch(pairs, column, values, columns, schema, dataset=None):
    vals = _values(values)
    pr = _bloom_dataset.Pruned(pairs)
    table = _bloom_dataset.read_pruned(pr, column, vals, columns, dataset, schema=schema)
    return table, pr.report.matched, pr.report.rows


def lookup(source, column: str, values, columns=None, *, client=None, scheduler=None,
           n_workers: int | None = None, tasks_per_worker: int = 4, return_report: bool = False, **kw):
    """simdex.bloom.lookup on the cluster: pruning and the reads of surviving row groups run on
    the workers; the tables come back in file order and are concatenated."""
    import time

    import pyarrow as pa

    t0 = time.perf_counter()
    files, dataset = _bloom_dataset.resolve(source)
    vals = _bloom_dataset.Values(values)  # refuses bad values here, before any task runs
    with cluster(client, scheduler, n_workers) as c:
        shared = _share(c, vals)  # once, for the pruning and the reads
        pruned = _prune_on(c, files, column, vals, shared, tasks_per_worker, kw, dataset, lookup=True,
                           columns=columns)
        # Every batch reads in the schema of the whole source (lookup_schema), not its own.
        schema = _bloom_dataset.lookup_schema(files, None, column, columns) if dataset is None else None
        # A Dataset (its schema, and hive partitions' columns) goes to the reads once.
        ds = c.scatter([dataset], broadcast=True, hash=False)[0] if dataset is not None else None
        batches = [b for b in _batches(list(pruned), _workers(c) * tasks_per_worker) if b] or [[]]
        futures = [c.submit(_read_batch, b, column, shared, columns, schema, ds, pure=False) for b in batches]
        parts = c.gather(futures)
    tables = [t for t, _, _ in parts]
    table = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
    rep = pruned.report
    rep.matched = sum(m for _, m, _ in parts)
    rep.rows = sum(r for _, _, r in parts)
    rep.seconds = time.perf_counter() - t0
    return (table, rep) if return_report else table
