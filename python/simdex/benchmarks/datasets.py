"""``simdex bench datasets``: bloom filters at dataset scale, against pyarrow.dataset and DuckDB.

Two generated datasets, one after the other (quick: 32 files x 8 row groups x 64K rows each;
full: 256 x 16 x 256K): random int64 keys ``k`` with a payload ``v``, then random digit strings
``s`` with ``v``. Each is written by pyarrow without filters and given filters on its key by
``simdex.bloom.add_filters`` (1% FPP, Arrow sizing). On the files with filters, in one run with
interleaved repetitions:

- lookups of 1, 100 and 10,000 keys (drawn from the data, different keys every repetition):
  ``simdex.bloom.lookup``, ``pyarrow.dataset`` with ``field(k).isin(keys)`` (dataset discovered
  once, outside the timing) and DuckDB ``SELECT * ... WHERE k IN (...)`` over ``read_parquet``,
  all returning an Arrow table; every contender's row count is checked against the others;
- the row groups simdex reads: those holding a match plus the filters' false positives, against
  the number the filters' FPP predicts;
- adding filters to a file without them (``add_filters``) against rewriting it with pyarrow
  (``read_table`` + ``write_table`` with ``bloom_filter_options``, same row groups), and that
  rewrite followed by an fsync (add_filters syncs its output before it renames it into place,
  as a rewrite meant to replace a file safely must), each repetition on another file; the added
  files' data bytes are compared with the originals';
- int64 keys only: a Dask LocalCluster of 1 and of 2 worker processes rebuilding the filters of
  half the files (``replace=True``), and the 10,000-key lookup over all of them.

Disk: one key type's files at a time, and of the files without filters only those the
add-filters repetitions use (each other one is deleted once its copy with filters exists).
Full mode peaks at about 37 GB (the int64 files with filters and the Dask output for half of
them; the string phase needs about 34 GB) and takes some 7 hours on a loaded 2-vCPU machine;
docs/bloom.md has each phase's share. Quick mode's data is kept under
``$SIMDEX_DATASETS_DIR`` (default: the output directory's ``datasets-<mode>``) and reused while
its parameters match; other runs delete each key type's files after its phases unless
``SIMDEX_DATASETS_KEEP=1``. ``$SIMDEX_DATASETS_SHAPE=files,row_groups,rows`` runs another shape,
``$SIMDEX_DATASETS_PHASES=lookups,add_filters,dask_add,dask_lookup`` a subset of the phases, and
``$SIMDEX_DATASETS_DASK_WORKERS=1,2,4,8`` more worker counts than the target's 1 and 2 (on a
machine with the cores for them; each LocalCluster's workers run one thread each).
Progress lines (files generated, disk in use, phase times) go to the log: the progress bar of
``simdex bench``, or stderr.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from .._output import Output, write_all
from . import group

SHAPES = {"quick": (32, 8, 1 << 16), "full": (256, 16, 1 << 18)}
FPP = 0.01
POOL_PER_ROW_GROUP = 64


# ---- machine load --------------------------------------------------------------------------------

def _cpu_times():
    with open("/proc/stat") as f:
        parts = f.readline().split()[1:]
    vals = [int(x) for x in parts]
    steal = vals[7] if len(vals) > 7 else 0
    return sum(vals), vals[3] + (vals[4] if len(vals) > 4 else 0), steal


class LoadMeter:
    """Load average and the share of CPU time that was busy (anyone's) or stolen by the host,
    over a stretch of the run: says how loaded the shared machine was while we measured."""

    def __init__(self):
        self.t0 = _cpu_times()
        self.load0 = os.getloadavg()

    def read(self) -> dict:
        t1 = _cpu_times()
        total = max(t1[0] - self.t0[0], 1)
        return {"loadavg_1m_start": round(self.load0[0], 2), "loadavg_1m_end": round(os.getloadavg()[0], 2),
                "busy_share": round(1 - (t1[1] - self.t0[1]) / total, 3),
                "steal_share": round((t1[2] - self.t0[2]) / total, 3), "cpus": os.cpu_count()}


def _shape(mode: str) -> tuple:
    """(files, row groups per file, rows per row group): the mode's, or $SIMDEX_DATASETS_SHAPE
    ("files,row_groups,rows") for a run of another size (the report names the shape used)."""
    env = os.environ.get("SIMDEX_DATASETS_SHAPE")
    if env:
        try:
            f, g, r = (int(x) for x in env.split(","))
        except ValueError:
            raise ValueError(f"SIMDEX_DATASETS_SHAPE={env!r}: expected files,row_groups,rows") from None
        return f, g, r
    return SHAPES[mode]


# ---- data ----------------------------------------------------------------------------------------

KEYS = (("int64", "k"), ("string", "s"))
PHASES = ("lookups", "add_filters", "dask_add", "dask_lookup")
DASK_PHASES = ("dask_add", "dask_lookup")


# The workloads each phase measures (benchmarks.group): what `simdex bench --only` picks from.
PHASE_WORKLOADS = {"lookups": ("lookup",), "add_filters": ("add_filters",), "dask_add": ("dask_add_filters",),
                   "dask_lookup": ("dask_lookup",)}


def _selected_phases(only=()) -> tuple:
    """The phases to run: those of :func:`_phases` with a workload that --only leaves in (a name
    containing one of ``only``, as benchmarks.group filters; every phase without --only)."""
    only = tuple(only)
    return tuple(p for p in _phases() if not only or any(o in w for w in PHASE_WORKLOADS[p] for o in only))


def _phases() -> tuple:
    """The phases to run: all, or those $SIMDEX_DATASETS_PHASES names (comma-separated; ``dask``
    is both Dask phases), e.g. ``dask_add`` alone on a machine lent for a scaling run (the string
    key type is skipped when only Dask phases run: they use the int64 keys)."""
    env = os.environ.get("SIMDEX_DATASETS_PHASES")
    if not env:
        return PHASES
    asked = [x.strip() for x in env.split(",") if x.strip()]
    bad = [x for x in asked if x not in PHASES + ("dask",)]
    if bad or not asked:
        raise ValueError(f"SIMDEX_DATASETS_PHASES={env!r}: expected a comma-separated list of "
                         f"{', '.join(PHASES)} (dask: both Dask phases)")
    return tuple(p for p in PHASES if p in asked or (p in DASK_PHASES and "dask" in asked))


LOOKUP_KEYS = (1, 100, 10000)


def _check_shape(files: int, rgs: int, rows: int, phases: tuple) -> None:
    """Refuses, before any file is written, a shape too small for the keys the lookups draw
    (distinct keys from a pool of POOL_PER_ROW_GROUP per row group)."""
    if min(files, rgs) < 1 or rows < POOL_PER_ROW_GROUP:
        raise ValueError(f"dataset shape {files},{rgs},{rows}: needs at least one file and row group, and "
                         f"{POOL_PER_ROW_GROUP} rows per row group")
    need = -(-max(LOOKUP_KEYS) // POOL_PER_ROW_GROUP)
    if files * rgs < need and ("lookups" in phases or "dask_lookup" in phases):
        raise ValueError(f"dataset shape {files},{rgs},{rows}: the {max(LOOKUP_KEYS):,}-key lookups need at least "
                         f"{need} row groups in all (files x row groups), this has {files * rgs}")


def _dask_workers() -> tuple:
    """Worker counts of the Dask phase: 1 and 2 (the target's), or $SIMDEX_DATASETS_DASK_WORKERS
    ("1,2,4,8") on a machine with the cores for more."""
    env = os.environ.get("SIMDEX_DATASETS_DASK_WORKERS")
    if not env:
        return (1, 2)
    try:
        counts = tuple(sorted({int(x) for x in env.split(",")}))
    except ValueError:
        counts = ()
    if not counts or counts[0] != 1:
        raise ValueError(f"SIMDEX_DATASETS_DASK_WORKERS={env!r}: expected worker counts starting at 1, e.g. 1,2,4,8")
    return counts


def _workers_name(n: int) -> str:
    return f"dask {n} worker" + ("s" if n > 1 else "")


def _gb(n: float) -> str:
    return f"{n / 1e9:.1f} GB"


def _plain_kept(reps: int) -> int:
    """Files kept without filters: one per add-filters repetition, plus one."""
    return reps + 1


def _generate(root: Path, mode: str, key_type: str, col: str, keep_plain: int, log) -> dict:
    """One key type's dataset under root/<key_type>: every file with filters on its key column
    (filtered/), and the first `keep_plain` files also without (plain/, for timing add_filters).
    The other plain files are deleted as soon as their filtered copy is written."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from .. import bloom

    files, rgs, rows = _shape(mode)
    root = root / key_type
    meta_path = root / "meta.json"
    want = {"files": files, "row_groups": rgs, "rows": rows, "fpp": FPP, "key_type": key_type,
            "keep_plain": keep_plain, "version": 2}
    if meta_path.exists():
        try:
            meta = json.loads(meta_path.read_text())
            if meta.get("params") == want and all((root / "filtered" / f).exists() for f in meta["names"]):
                return meta
        except (OSError, ValueError, KeyError):
            pass
    shutil.rmtree(root, ignore_errors=True)
    (root / "plain").mkdir(parents=True)
    (root / "filtered").mkdir()
    rng = np.random.default_rng(20261124 + (key_type == "string"))
    names, pool, identical, disk = [], [], True, 0
    for i in range(files):
        n = rgs * rows
        if key_type == "int64":
            key = rng.integers(-(2**63), 2**63 - 1, n, dtype=np.int64, endpoint=True)
        else:
            key = pc.cast(pa.array(rng.integers(0, 2**63 - 1, n, dtype=np.int64)), pa.string())
        v = rng.random(n)
        pick = np.concatenate([rng.choice(rows, POOL_PER_ROW_GROUP, replace=False) + g * rows for g in range(rgs)])
        if key_type == "int64":
            pool.append(key[pick])
        else:
            pool += key.take(pa.array(pick)).to_pylist()
        name = f"part-{i:05d}.parquet"
        plain, filtered = root / "plain" / name, root / "filtered" / name
        pq.write_table(pa.table({col: key, "v": v}), plain, row_group_size=rows)
        bloom.add_filters(plain, [col], out=filtered, fpp=FPP)
        identical = identical and _data_prefix_equal(plain, filtered)
        disk += filtered.stat().st_size
        if i < keep_plain:
            disk += plain.stat().st_size
        else:
            plain.unlink()
        names.append(name)
        log(f"generating {key_type} keys: {i + 1}/{files} files, {_gb(disk)} on disk")
    if key_type == "int64":
        np.save(root / "pool.npy", np.concatenate(pool))
    else:
        (root / "pool.json").write_text(json.dumps(pool))
    meta = {"params": want, "names": names, "data_identical": identical, "disk_bytes": disk}
    meta_path.write_text(json.dumps(meta))
    return meta


def _load_pool(root: Path, key_type: str):
    if key_type == "int64":
        return np.load(root / key_type / "pool.npy")
    return json.loads((root / key_type / "pool.json").read_text())


def _tree_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def _data_prefix_equal(original: Path, added: Path) -> bool:
    """True when the added file starts with every byte of the original up to its footer."""
    with open(original, "rb") as a, open(added, "rb") as b:
        a.seek(-8, 2)
        n = struct.unpack("<I", a.read(4))[0]
        size = a.seek(0, 2) - 8 - n
        a.seek(0)
        left = size
        while left:
            chunk = min(left, 1 << 24)
            if a.read(chunk) != b.read(chunk):
                return False
            left -= chunk
    return True


# ---- contenders ----------------------------------------------------------------------------------

def _sql_list(keys) -> str:
    if isinstance(keys[0], str):
        return ", ".join("'" + k.replace("'", "''") + "'" for k in keys)
    return ", ".join(str(int(k)) for k in keys)


def _lookups(doc, root: Path, files: list, key_type: str, col: str, reps: int, rng, log) -> None:
    import duckdb
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as pds

    from .. import bloom

    pool = _load_pool(root, key_type)
    ds = pds.dataset(str(root / key_type / "filtered"), format="parquet")
    con = duckdb.connect()
    glob = str(root / key_type / "filtered" / "*.parquet")
    versions = {"simdex": doc["environment"].get("simdex_version", "?"), "pyarrow": pa.__version__,
                "duckdb": duckdb.__version__}
    pruning = doc.setdefault("pruning", [])
    for n in LOOKUP_KEYS:
        counts: dict = {}
        reports: list = []
        state = {"keys": None}

        def fresh():
            idx = rng.choice(len(pool), n, replace=False)
            state["keys"] = [int(x) for x in pool[idx]] if key_type == "int64" else [pool[i] for i in idx]

        def timed(name, fn):
            def sample():
                if name == "simdex":  # each repetition's keys are new: simdex draws them first
                    fresh()
                t0 = time.perf_counter()
                table = fn(state["keys"])
                dt = time.perf_counter() - t0
                counts.setdefault(name, []).append(table.num_rows)
                return dt * 1e3
            return sample

        def ours(keys):
            table, rep = bloom.lookup(files, col, keys, return_report=True)
            reports.append(rep)
            return table

        def arrow(keys):
            return ds.to_table(filter=pc.field(col).isin(pa.array(keys)))

        def duck(keys):
            return con.sql(f"SELECT * FROM read_parquet('{glob}') WHERE {col} IN ({_sql_list(keys)})").to_arrow_table()

        log(f"lookup: {n} {key_type} keys")
        meter = LoadMeter()
        group(doc, "lookup", {"keys": n, "key_type": key_type}, "ms", "lower",
              {"simdex": (versions["simdex"], timed("simdex", ours)),
               "pyarrow.dataset isin": (versions["pyarrow"], timed("pyarrow", arrow)),
               "duckdb WHERE IN": (versions["duckdb"], timed("duckdb", duck))},
              "simdex", reps)
        if not (counts["simdex"] == counts["pyarrow"] == counts["duckdb"]):
            raise RuntimeError(f"lookup of {n} {key_type} keys: contenders disagree on row counts {counts}")
        extra = [r.read - r.matched for r in reports]
        expected = statistics.mean(r.expected_false_positives for r in reports)
        pruning.append({"keys": n, "key_type": key_type, "row_groups": reports[0].row_groups,
                        "read": statistics.median(r.read for r in reports),
                        "matched": statistics.median(r.matched for r in reports),
                        "extra_max": max(extra), "extra_mean": statistics.mean(extra),
                        "expected_false_positives": expected,
                        "filter_bytes": statistics.median(r.filter_bytes for r in reports),
                        "footer_bytes": reports[0].footer_bytes, "load": meter.read()})


def _rewrite_with_pyarrow(src: Path, dst: Path, col: str, rows: int) -> None:
    import pyarrow.parquet as pq

    pq.write_table(pq.read_table(src), dst, row_group_size=rows,
                   bloom_filter_options={col: {"ndv": rows, "fpp": FPP}})


def _add_filters(doc, root: Path, names: list, key_type: str, col: str, rows: int, reps: int, log) -> None:
    """add_filters against a pyarrow rewrite, each repetition on the next file kept without filters."""
    import pyarrow as pa

    from .. import bloom

    tmp = Path(tempfile.mkdtemp(prefix="add-", dir=root))
    identical = doc.setdefault("_add_identical", [])
    try:
        turn = {"i": 0}

        def current():
            return root / key_type / "plain" / names[turn["i"] % len(names)]

        def ours():
            turn["i"] += 1
            src = current()
            out = tmp / "ours.parquet"
            t0 = time.perf_counter()
            bloom.add_filters(src, [col], out=out, fpp=FPP)
            dt = time.perf_counter() - t0
            identical.append(_data_prefix_equal(src, out))
            return dt

        def theirs():
            t0 = time.perf_counter()
            _rewrite_with_pyarrow(current(), tmp / "theirs.parquet", col, rows)  # the file simdex just did
            return time.perf_counter() - t0

        def theirs_synced():
            # add_filters syncs its output before the rename; a rewrite meant to replace a
            # file safely has to as well.
            t0 = time.perf_counter()
            dst = tmp / "theirs-synced.parquet"
            _rewrite_with_pyarrow(current(), dst, col, rows)
            fd = os.open(dst, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            return time.perf_counter() - t0

        log(f"adding filters to column {col}")
        group(doc, "add_filters", {"column": col, "key_type": key_type,
                                   "rows": rows * doc["params"]["row_groups"]}, "s/file", "lower",
              {"simdex add_filters": (doc["environment"].get("simdex_version", "?"), ours),
               "pyarrow rewrite": (pa.__version__, theirs),
               "pyarrow rewrite + fsync": (pa.__version__, theirs_synced)},
              "simdex add_filters", reps)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _dask(doc, root: Path, files: list, reps: int, rng, log, phases: tuple = DASK_PHASES) -> None:
    """1 and 2 workers (or $SIMDEX_DATASETS_DASK_WORKERS): filters for k rebuilt for the first
    half of the files (replace=True: the same reading, hashing and writing as adding them,
    without a copy of the data kept unfiltered; half, so that the output copy stays smaller than
    the dataset), and the 10,000-key lookup over all of them."""
    try:
        import distributed
    except ImportError:
        doc.setdefault("notes", []).append("dask: not installed (pip install simdex[dask]); Dask figures skipped")
        return
    from contextlib import ExitStack

    from ..bloom import dask as bd

    pool = _load_pool(root, "int64")
    out = root / "int64" / "dask-out"
    adds = files[: max(2, len(files) // 2)]
    counts = _dask_workers()
    names = [_workers_name(n) for n in counts]
    try:
        with ExitStack() as stack:
            clients = {_workers_name(n): stack.enter_context(bd.cluster(n_workers=n)) for n in counts}

            def adder(name):
                def sample():
                    shutil.rmtree(out, ignore_errors=True)
                    t0 = time.perf_counter()
                    bd.add_filters(adds, ["k"], out=out, fpp=FPP, replace=True, client=clients[name])
                    return time.perf_counter() - t0
                return sample

            state: dict = {}

            def looker(name):
                def sample():
                    if name == names[0]:
                        keys = rng.choice(len(pool), max(LOOKUP_KEYS), replace=False)
                        state["keys"] = [int(x) for x in pool[keys]]
                    t0 = time.perf_counter()
                    t = bd.lookup(files, "k", state["keys"], client=clients[name])
                    state.setdefault(name, []).append(t.num_rows)
                    return time.perf_counter() - t0
                return sample

            v = distributed.__version__
            if "dask_add" in phases:
                log(f"dask: adding filters, {', '.join(map(str, counts))} workers")
                meter = LoadMeter()
                group(doc, "dask_add_filters", {"files": len(adds), "column": "k"}, "s", "lower",
                      {name: (v, adder(name)) for name in names}, names[0], reps)
                doc["dask_load"] = meter.read()
                doc["_disk_peak"] = max(doc.get("_disk_peak", 0), _tree_bytes(root))
                shutil.rmtree(out, ignore_errors=True)
            if "dask_lookup" not in phases:
                return
            log(f"dask: {max(LOOKUP_KEYS):,}-key lookup, {', '.join(map(str, counts))} workers")
            group(doc, "dask_lookup", {"keys": max(LOOKUP_KEYS), "key_type": "int64"}, "s", "lower",
                  {name: (v, looker(name)) for name in names}, names[0], reps)
            if any(state[name] != state[names[0]] for name in names):
                raise RuntimeError("dask lookups with different worker counts returned different row counts")
    finally:
        shutil.rmtree(out, ignore_errors=True)


# ---- the run -------------------------------------------------------------------------------------

def _environment() -> dict:
    from .. import __version__, cpu_info

    info = cpu_info()
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, timeout=5).stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        commit = "?"
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return {"cpu_model": info.get("brand", "?"), "cpu_vendor": info.get("vendor", "?"), "cores": os.cpu_count(),
            "memory_bytes": mem, "kernel": f"{platform.system()} {platform.release()} {platform.machine()}",
            "python": platform.python_version(), "simdex_version": __version__, "simdex_commit": commit,
            "isa_detected": info.get("detected_isa"), "isa_active": info.get("isa")}


def _keep_data(mode: str) -> bool:
    """Quick mode's data is kept for the next run; larger runs delete each key type's files once
    its phases are done, so that only one key type's dataset is on disk at a time."""
    env = os.environ.get("SIMDEX_DATASETS_KEEP")
    if env is not None:
        return env not in ("", "0")
    return mode == "quick" and not os.environ.get("SIMDEX_DATASETS_SHAPE")


def run_standalone(out: Path, mode: str = "quick", reps: int = 0, log=None, only=()) -> Path | None:
    """Runs the benchmark and writes ``<out>/datasets.json``; ``only`` (``simdex bench --only``)
    keeps the phases and workloads whose names contain one of its strings. None, with nothing
    generated or written, when it leaves no workload."""
    from .. import benchmarks as suite

    only = tuple(only)
    phases = _selected_phases(only)
    if not phases:
        return None
    previous = suite.ONLY
    if only:
        suite.ONLY = only
    try:
        return _run(out, mode, reps, log, phases)
    finally:
        suite.ONLY = previous


def _run(out: Path, mode: str, reps: int, log, phases: tuple) -> Path:
    log = log or (lambda msg: print(msg, file=sys.stderr))
    reps = reps or (5 if mode == "quick" else 10)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    root = Path(os.environ.get("SIMDEX_DATASETS_DIR") or out / f"datasets-{mode}")
    root.mkdir(parents=True, exist_ok=True)
    for stale in ("plain", "filtered"):  # an earlier layout: both key types in one set of files
        shutil.rmtree(root / stale, ignore_errors=True)
    files_n, rgs, rows = _shape(mode)
    doc = {"schema": "simdex-bench/1", "component": "datasets", "mode": mode, "repetitions": reps,
           "started": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "environment": _environment(),
           "machine": None, "notes": [], "results": [], "phases": [],
           "params": {"files": files_n, "row_groups": rgs, "rows_per_row_group": rows, "fpp": FPP}}
    meter = LoadMeter()
    rng = np.random.default_rng(int(time.time()))
    identical = True
    _check_shape(files_n, rgs, rows, phases)
    doc["params"]["phases"] = list(phases)
    dask_phases = tuple(p for p in phases if p in DASK_PHASES)
    if dask_phases:
        doc["params"]["dask_workers"] = list(_dask_workers())
    for key_type, col in KEYS:
        if key_type != "int64" and dask_phases == phases:
            continue
        phase = {"key_type": key_type}
        t0 = time.perf_counter()
        meta = _generate(root, mode, key_type, col, _plain_kept(reps), log)
        phase["generate_seconds"] = round(time.perf_counter() - t0, 1)
        phase["disk_bytes"] = _tree_bytes(root)
        doc["_disk_peak"] = max(doc.get("_disk_peak", 0), phase["disk_bytes"])
        identical = identical and meta["data_identical"]
        files = [str(root / key_type / "filtered" / n) for n in meta["names"]]
        if "lookups" in phases:
            t0 = time.perf_counter()
            _lookups(doc, root, files, key_type, col, reps, rng, log)
            phase["lookup_seconds"] = round(time.perf_counter() - t0, 1)
        if "add_filters" in phases:
            t0 = time.perf_counter()
            _add_filters(doc, root, meta["names"][:_plain_kept(reps)], key_type, col, rows, reps, log)
            phase["add_filters_seconds"] = round(time.perf_counter() - t0, 1)
        if key_type == "int64" and dask_phases:
            t0 = time.perf_counter()
            _dask(doc, root, files, reps, rng, log, dask_phases)
            phase["dask_seconds"] = round(time.perf_counter() - t0, 1)
        if not _keep_data(mode):
            shutil.rmtree(root / key_type, ignore_errors=True)
        doc["phases"].append(phase)
        log(f"{key_type} keys done: {phase}")
    doc["data_identical_after_add"] = identical
    added = doc.pop("_add_identical", [])
    if "add_filters" in phases:
        doc["add_filters_data_identical"] = bool(added) and all(added)
    doc["disk_peak_bytes"] = doc.pop("_disk_peak", 0)
    doc["load"] = meter.read()
    doc["notes"].append(
        f"{files_n} files x {rgs} row groups x {rows} rows, twice: key k (random int64) with payload v, then "
        f"key s (random digits as strings) with payload v; filters on the key at {FPP:.0%} FPP (Arrow "
        f"sizing), added by simdex; at most {_gb(doc['disk_peak_bytes'])} on disk at once")
    doc["notes"].append(
        f"machine during the run: load average {doc['load']['loadavg_1m_start']} -> {doc['load']['loadavg_1m_end']} "
        f"on {doc['load']['cpus']} CPUs, busy {doc['load']['busy_share']:.0%}, stolen {doc['load']['steal_share']:.0%}")
    doc["finished"] = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    path = out / "datasets.json"
    with Output(path) as o:  # renamed into place only complete
        write_all(o.file, (json.dumps(doc, indent=1) + "\n").encode())
    return path


# ---- report --------------------------------------------------------------------------------------

def _median(doc, workload, contender, **params):
    for r in doc.get("results", []):
        if r["workload"] == workload and r["contender"] == contender and all(r["params"].get(k) == v for k, v in params.items()):
            return r["median"]
    return None


def bar_rows(doc) -> list[list[str]]:
    """The dataset targets, as table rows: item, figure, target, met."""
    rows = []
    for key_type in ("int64", "string"):
        for n in (1, 100):
            s = _median(doc, "lookup", "simdex", keys=n, key_type=key_type)
            a = _median(doc, "lookup", "pyarrow.dataset isin", keys=n, key_type=key_type)
            d = _median(doc, "lookup", "duckdb WHERE IN", keys=n, key_type=key_type)
            if s and a and d:
                rows.append([f"lookup {n} {key_type} key(s) vs pyarrow.dataset isin", f"{a / s:.1f}x", ">= 10x",
                             "yes" if a / s >= 10 else "no"])
                rows.append([f"lookup {n} {key_type} key(s) vs DuckDB WHERE IN", f"{d / s:.2f}x", ">= 1x",
                             "yes" if d / s >= 1 else "no"])
    for p in doc.get("pruning", []):
        bound = p["expected_false_positives"] + 3 * p["expected_false_positives"] ** 0.5 + 1
        rows.append([f"row groups read, {p['keys']} {p['key_type']} keys",
                     f"{p['read']:g} read = {p['matched']:g} with a match + {p['extra_mean']:.2f} extra (max {p['extra_max']})",
                     f"extra <= FPP's {p['expected_false_positives']:.2f} expected (+3 sd + 1 = {bound:.1f})",
                     "yes" if p["extra_max"] <= bound else "no"])
    for key_type, col in (("int64", "k"), ("string", "s")):
        s = _median(doc, "add_filters", "simdex add_filters", column=col)
        for rewrite in ("pyarrow rewrite", "pyarrow rewrite + fsync"):
            a = _median(doc, "add_filters", rewrite, column=col)
            if s and a:
                rows.append([f"add filters ({key_type} column, synced) vs {rewrite}", f"{a / s:.1f}x", ">= 3x",
                             "yes" if a / s >= 3 else "no"])
    ident = doc.get("add_filters_data_identical")
    if ident is not None:
        rows.append(["data pages byte-identical after adding filters", str(bool(ident and doc.get("data_identical_after_add"))),
                     "True", "yes" if ident and doc.get("data_identical_after_add") else "no"])
    one = _median(doc, "dask_add_filters", _workers_name(1))
    load = doc.get("dask_load", {})
    seen = f"load {load.get('loadavg_1m_start')}->{load.get('loadavg_1m_end')} on {load.get('cpus')} CPUs, " \
           f"busy {load.get('busy_share', 0):.0%}"
    for n in doc.get("params", {}).get("dask_workers", [1, 2])[1:]:
        many = _median(doc, "dask_add_filters", _workers_name(n))
        if one and many:
            rows.append([f"Dask {n} workers vs 1, adding filters", f"{one / many:.2f}x ({seen})",
                         ">= 1.6x" if n == 2 else f"(scaling; {n}x ideal)",
                         ("yes" if one / many >= 1.6 else "no") if n == 2 else "-"])
    return rows


def markdown_section(doc) -> str:
    from ..report import md_table

    rows = bar_rows(doc)
    if not rows:
        return ""
    return "### The dataset targets\n\n" + md_table(["item", "figure", "target", "met"], rows)


def html_section(doc) -> str:
    import html

    rows = bar_rows(doc)
    if not rows:
        return ""
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in rows)
    return ("<h3>The dataset targets</h3><table><tr><th>item</th><th>figure</th><th>target</th><th>met</th></tr>"
            + body + "</table>")
