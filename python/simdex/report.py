"""``simdex report DIR``: REPORT.md and a self-contained report.html (inline SVG plots) from the
benchmark JSON files in DIR. Every number printed comes from those files; ratios are the ones
the benchmark computed between figures of the same run. ``simdex report A B``: two lab runs side
by side (compare_labs), the one place where figures of two runs meet."""

from __future__ import annotations

import html
import json
import math
import os
import re
import signal
import stat
import threading
from collections import OrderedDict
from contextlib import contextmanager
from pathlib import Path

from . import agreement, components, headlines, plots
from ._output import Output, write_all

SCHEMA = "simdex-bench/1"
ORDER = components.ALL
PALETTE = plots.PALETTE


def load(directory: str | Path) -> list[dict]:
    """The benchmark documents of DIR (schema simdex-bench/1), checked, in component order."""
    return [doc for _, doc in _load(directory)]


def _read_regular(path: Path) -> bytes:
    """The bytes of the regular file at ``path``. Opened without blocking and checked before
    reading: a FIFO named ``*.json`` hung the report, waiting for a writer."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = "a FIFO" if stat.S_ISFIFO(mode) else "a directory" if stat.S_ISDIR(mode) else "a device or socket"
            raise ValueError(f"{path}: is {kind}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    with os.fdopen(fd, "rb") as f:
        return f.read()


def read_text(path: str | Path) -> str:
    """A regular file's text (UTF-8), or an error naming the file."""
    data = _read_regular(Path(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text ({e})") from None


def _load(directory: str | Path) -> list[tuple[Path, dict]]:
    """The benchmark documents of DIR with their files, checked: every problem names its file."""
    d = Path(directory)
    if not d.is_dir():
        raise OSError(f"{d}: {'not a directory' if d.exists() else 'no such directory'}")
    found, seen = [], {}
    for p in sorted(d.glob("*.json")):
        data = _read_regular(p)
        try:
            doc = json.loads(data.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as e:
            raise ValueError(f"{p}: not valid JSON ({e})") from None
        except RecursionError:
            raise ValueError(f"{p}: not valid JSON (nested too deeply)") from None
        schema = doc.get("schema") if isinstance(doc, dict) else None
        if isinstance(schema, str) and schema.startswith("simdex-bench/") and schema != SCHEMA:
            # Another version's run: skipping it left its component out of the report unsaid.
            raise ValueError(f"{p}: a run of schema {schema}, which this simdex does not read ({SCHEMA}); "
                             f"rerun its benchmark or move the file out of {d}")
        if schema == SCHEMA:
            _check_component(p, doc)
            if doc["component"] in seen:
                raise ValueError(f"{d}: two runs of {doc['component']} ({seen[doc['component']].name} and "
                                 f"{p.name}); a report shows one per component")
            seen[doc["component"]] = p
            found.append((p, doc))
    if not found:
        raise ValueError(f"{d}: no benchmark JSON files (schema {SCHEMA})")
    for p, doc in found:
        _check(p, doc)
    found.sort(key=lambda pd: (ORDER.index(pd[1]["component"]) if pd[1]["component"] in ORDER else len(ORDER), pd[1]["component"]))
    return found


def known_components() -> tuple[str, ...]:
    """The components a benchmark document may name: every component, and the Python-only
    benchmarks (datasets)."""
    from .bench import PYTHON_ONLY

    return tuple(components.ALL) + tuple(c for c in PYTHON_ONLY if c not in components.ALL)


def _check_component(path: Path, doc: dict) -> None:
    """The document's component: a name, and one this simdex knows (the name picks the module
    whose report hooks run: "../../x" reached the import system)."""
    c = doc.get("component")
    if not isinstance(c, str) or not c:
        raise ValueError(f'{path}: no "component" name')
    if c not in known_components():
        raise ValueError(f'{path}: "component" is {c!r}, not one of {", ".join(known_components())}')


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v) -> bool:
    return _number(v) and math.isfinite(v)


def _shown(where: dict, key: str) -> str:
    return repr(where[key]) if key in where else "missing"


def _machine_problem(m) -> str | None:
    """What is wrong with a run's "machine" block (null: not measured), as the report reads it."""
    if m is None:
        return None
    if not isinstance(m, dict):
        return f'"machine" is {type(m).__name__}, not an object or null'
    for key in ("cycle_ns", "ghz_estimate"):
        if m.get(key) is not None and not _finite(m[key]):
            return f'"machine.{key}" is {m[key]!r}, not a finite number'
    if "probe_bytes" in m and not _finite(m["probe_bytes"]):
        return f'"machine.probe_bytes" is {m["probe_bytes"]!r}, not a finite number'

    def stat_problem(where: str, v) -> str | None:
        if not isinstance(v, dict):
            return f'"{where}" is not an object'
        if v.get("median") is not None and not _finite(v["median"]):
            return f'"{where}.median" is {v["median"]!r}, not a finite number'
        return None

    for key, depth in (("memcpy_gib_s", 1), ("latency_ns", 2)):
        if key not in m:
            continue
        if not isinstance(m[key], dict):
            return f'"machine.{key}" is not an object'
        for page, v in m[key].items():
            where = f"machine.{key}.{page}"
            if depth == 1:
                problem = stat_problem(where, v)
            elif not isinstance(v, dict):
                problem = f'"{where}" is not an object'
            else:
                problem = next((p for chains, s in v.items() if (p := stat_problem(f"{where}.{chains}", s))), None)
            if problem:
                return problem
    return None


def _check(path: Path, doc: dict) -> None:
    """What rendering relies on, so that a damaged file is named instead of failing deep inside."""
    def bad(what: str):
        raise ValueError(f"{path}: {what}")

    _check_component(path, doc)
    component = doc["component"]
    # A component's own check of its document (the lab's block), else the run's own fields:
    # rendered in every report's header, where a gap once read "None mode".
    validate = section_hook(component, "validate")
    if validate is not None:
        problems = validate(doc)
        if problems:
            raise ValueError(f"{path} is not a complete {component} run: {'; '.join(problems)}")
    else:
        if doc.get("mode") not in ("quick", "full"):
            bad(f'"mode" is {doc.get("mode")!r}, not "quick" or "full"')
        reps = doc.get("repetitions")
        if isinstance(reps, bool) or not isinstance(reps, int) or reps < 1:
            bad(f'"repetitions" is {reps!r}, not a whole number of at least 1')
        for key in ("started", "finished"):
            if not isinstance(doc.get(key), str):
                bad(f'no "{key}" time')
        if not isinstance(doc.get("environment"), dict):
            bad('no "environment" block')
    env = doc.get("environment", {})
    if not isinstance(env, dict):
        bad('"environment" is not an object')
    caches = env.get("caches", [])
    if not isinstance(caches, list):
        bad(f'"environment.caches" is {type(caches).__name__}, not a list')
    for i, c in enumerate(caches):
        if not isinstance(c, dict) or "level" not in c or "size" not in c or not isinstance(c.get("type"), str):
            bad(f'"environment.caches" entry {i} is not an object with a level, a type and a size')
    problem = _machine_problem(doc.get("machine"))
    if problem:
        bad(problem)
    notes = doc.get("notes", [])
    if not isinstance(notes, list) or not all(isinstance(n, str) for n in notes):
        bad('"notes" is not a list of strings')
    results = doc.get("results", [])
    if not isinstance(results, list):
        bad('"results" is not a list')
    # The params the component plots against (its SCALING): numbers on an axis.
    axes = {s.get("x") for s in (headlines.declared(component, "SCALING") or []) if isinstance(s, dict)}
    for i, r in enumerate(results):
        if not isinstance(r, dict) or not isinstance(r.get("workload"), str) or not isinstance(r.get("contender"), str):
            bad(f"result {i} lacks its workload or contender name")
        m = r.get("median")
        name = f"result {i} ({r['workload']}, {r['contender']})"
        if isinstance(m, bool) or not isinstance(m, (int, float)) or not math.isfinite(m):
            bad(f"{name}: median {m!r} is not a finite number")
        params = r.get("params")
        if not isinstance(params, dict):
            bad(f'{name}: "params" is {_shown(r, "params")}, not an object')
        for key in axes & params.keys():
            if not _finite(params[key]):
                bad(f'{name}: param {key} is {params[key]!r}, not a finite number')
        if not isinstance(r.get("unit"), str):
            bad(f'{name}: "unit" is {_shown(r, "unit")}, not a string')
        if r.get("better") not in ("lower", "higher"):
            bad(f'{name}: "better" is {_shown(r, "better")}, not "lower" or "higher"')
        for key in ("min", "max"):
            if not _number(r.get(key)):
                bad(f'{name}: "{key}" is {_shown(r, key)}, not a number')
        ratio = r.get("ratio", {})
        if not isinstance(ratio, dict):
            bad(f'{name}: "ratio" is {ratio!r}, not an object')
        if ratio and not isinstance(ratio.get("reference"), str):
            bad(f'{name}: "ratio" names no reference contender')
        if ratio.get("value") is not None and not _number(ratio["value"]):
            bad(f'{name}: ratio {ratio["value"]!r} is not a number')


def fmt(x) -> str:
    if x is None:
        return "–"
    if x == 0:
        return "0"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.3g}"


def fmt_bytes(n: float) -> str:
    """A byte count as B, KiB, MiB or GiB (exact where it divides, else three digits)."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if abs(n) >= size:
            v = n / size
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.3g} {unit}"
    return f"{n:g} B"


def is_size_param(key: str) -> bool:
    return key == "bytes" or key.endswith("_bytes")


def param_value(key: str, v) -> str:
    if isinstance(v, (list, tuple)):  # a plot's "any of these" (headlines.py)
        return " or ".join(param_value(key, x) for x in v)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return str(v)
    if is_size_param(key):
        return fmt_bytes(v)
    if isinstance(v, int) and abs(v) >= 10000:
        return f"{v:,}"
    return str(v)


def param_label(params: dict) -> str:
    return ", ".join(f"{k}={param_value(k, v)}" for k, v in params.items()) or "–"


def tables(doc: dict):
    """Per workload: (unit, better, contenders in order, rows of (params label, {contender: result}))."""
    groups: OrderedDict[str, dict] = OrderedDict()
    for r in doc.get("results", []):
        g = groups.setdefault(r["workload"], {"unit": r["unit"], "better": r["better"], "contenders": [], "rows": OrderedDict()})
        if r["contender"] not in g["contenders"]:
            g["contenders"].append(r["contender"])
        g["rows"].setdefault(param_label(r["params"]), {})[r["contender"]] = r
    return groups


def cell(r: dict | None) -> str:
    if r is None:
        return "–"
    s = fmt(r["median"])
    if r.get("noisy"):
        s += "~"
    if r.get("below_one_cycle"):
        s += "!"
    ratio = r.get("ratio")
    if ratio and ratio.get("value") is not None and r["contender"] != ratio.get("reference"):
        s += f" ({fmt(ratio['value'])}×)"
    return s


def run_span(docs: list[dict]) -> str:
    """From the first component's start to the last one's finish (ISO times sort as strings)."""
    starts = [d["started"] for d in docs if d.get("started")]
    ends = [d["finished"] for d in docs if d.get("finished")]
    return f"{min(starts) if starts else '?'} – {max(ends) if ends else '?'}"


def _cache_size(size) -> str:
    """A cache size as the kernel writes it ("32768K") in KiB/MiB/GiB; anything else as it is."""
    text = str(size)
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:].upper())
    return fmt_bytes(int(text[:-1]) * scale) if scale and text[:-1].isdigit() else text


def _run_environment(doc: dict) -> list[tuple[str, str]]:
    """One run's environment rows, its mode and repetitions last."""
    e = doc.get("environment", {})
    caches = ", ".join(f"L{c['level']} {c['type'].lower()} {_cache_size(c['size'])}" for c in e.get("caches", []))
    return [
        ("CPU", f"{e.get('cpu_model', '?')} ({e.get('cpu_vendor', '?')}), {e.get('cores', '?')} cores"
                + (", hypervisor" if e.get("hypervisor") else "")),
        ("caches", caches or "?"),
        ("memory", fmt_bytes(e["memory_bytes"]) if isinstance(e.get("memory_bytes"), int) else "?"),
        ("kernel / THP", f"{e.get('kernel', '?')} / {e.get('thp', '?')}"),
        ("compiler", f"{e.get('compiler', '?')} {e.get('build_type', '')}".strip()),
        ("simdex", f"{e.get('simdex_version', '?')} commit {e.get('simdex_commit', '?')}"
                   + (f" (programs older than the source tree, at {e['source_head']})" if e.get("source_head") else "")),
        ("ISA", f"detected {e.get('isa_detected', '?')}, active {e.get('isa_active', '?')}"),
        ("run", f"{doc.get('mode')} mode, {doc.get('repetitions')} repetitions"),
    ]


def per_run(docs: list[dict], describe) -> str:
    """``describe(doc)`` when every run agrees, else each value with the components it holds
    for: runs copied in from another machine or commit must not read as this one's."""
    values: dict[str, list[str]] = {}
    for d in docs:
        values.setdefault(describe(d), []).append(str(d.get("component", "?")))
    if len(values) == 1:
        return next(iter(values))
    return "; ".join(f"{v} ({', '.join(cs)})" for v, cs in values.items())


def env_rows(doc: dict, docs: list[dict] | None = None) -> list[tuple[str, str]]:
    """The environment of the runs in ``docs`` (default: ``doc`` alone), a row each, with the
    time span of them all."""
    docs = docs or [doc]
    labels = [label for label, _ in _run_environment(docs[0])]
    rows = [(label, per_run(docs, lambda d, i=i: _run_environment(d)[i][1])) for i, label in enumerate(labels)]
    label, run = rows[-1]
    split = len({_run_environment(d)[-1][1] for d in docs}) > 1  # "; " then: the span is every run's
    rows[-1] = (label, f"{run}{'; ' if split else ', '}{run_span(docs)}" + (f" ({len(docs)} components)" if len(docs) > 1 else ""))
    return rows


def _stat(v: dict) -> str:
    """A machine figure's median, marked "~" when noisy as every other figure is."""
    return fmt(v.get("median")) + ("~" if v.get("noisy") is True else "")


def machine_rows(docs: list[dict]) -> list[list[str]]:
    rows = []
    for doc in docs:
        m = doc.get("machine")
        if not m:
            continue
        lat = m.get("latency_ns", {})
        g = lambda page, chains: _stat(lat.get(page, {}).get(f"chains_{chains}", {}))  # noqa: E731
        mc = m.get("memcpy_gib_s", {})
        rows.append([doc["component"], _stat(mc.get("4k", {})), _stat(mc.get("2m", {})), g("4k", 1), g("2m", 1),
                     g("4k", 16), g("2m", 16), fmt(m.get("ghz_estimate")), fmt_bytes(m.get("probe_bytes", 0))])
    return rows


MACHINE_HEAD = ["run", "memcpy 4k GiB/s", "memcpy 2m GiB/s", "DRAM 1 chain 4k ns", "1 chain 2m ns", "16 chains 4k ns/access",
                "16 chains 2m ns/access", "GHz (add chain)", "probe set"]


def section_hook(component: str, name: str):
    """A component's own report section: ``markdown_section(doc)`` or ``html_section(doc)`` in
    ``simdex.benchmarks.<component>``, returning text placed after its tables; None if absent.
    (``validate(doc)``, a list of problems, is the component's own check of its document.)"""
    mod = components.part("benchmarks", component)
    return getattr(mod, name, None) if mod is not None else None


def _section(doc: dict, name: str, sources: dict | None) -> str | None:
    """The component's section hook's text, or None without one. A document shaped in a way the
    hook does not expect (its own fields, which the report's checks do not know) is named with
    what went wrong rather than failing with a traceback."""
    hook = section_hook(doc["component"], name)
    if hook is None:
        return None
    try:
        return hook(doc)
    except (KeyError, TypeError, AttributeError, IndexError, ZeroDivisionError, OverflowError) as e:
        where = (sources or {}).get(doc["component"]) or f"{doc['component']}.json"
        raise ValueError(f"{where}: its {doc['component']} section cannot be rendered "
                         f"({type(e).__name__}: {e})") from None


def md_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


# --- the summary at the top ------------------------------------------------------------------

SUMMARY_HEAD = ["component", "workload", "params", "simdex", "best peer", "ratio", "machine limit"]
SUMMARY_NOTE = ("ratio > 1: simdex is better than the best of the peers its component compares that "
                "headline with (same run, same inputs; every contender is in the component's tables); "
                "where a row has no peer the comparison is with its reference, marked (reference).")


def summary_note(docs: list[dict]) -> str:
    """SUMMARY_NOTE, then what each component compares its headlines with (HEADLINE_NOTE), or
    that its run measured none of them (a run with --only): a component missing from the table
    without a word read as one that has no figures to show."""
    shown = {h.component for h in headlines.headlines(docs)}
    notes = []
    for d in docs:
        c = d["component"]
        if c not in shown and headlines.declared(c, "HEADLINES"):
            notes.append(f"{c}: none of its headline workloads is in this run (its tables show what it measured).")
        elif isinstance(n := headlines.declared(c, "HEADLINE_NOTE"), str):
            notes.append(f"{c}: {n}")
    return " ".join([SUMMARY_NOTE, *notes])


def _figure(f: headlines.Figure, unit: str = "") -> str:
    marks = ("~" if f.noisy else "") + ("!" if f.below_one_cycle else "")  # as the tables mark them (cell)
    return f"{f.contender} {fmt(f.median)}{marks}" + (f" {unit}" if unit else "")


def summary_rows(heads: list[headlines.Headline]) -> list[list[str]]:
    rows = []
    for h in heads:
        peer = "–" if h.peer is None else _figure(h.peer) + (" (reference)" if h.peer_is_reference else "")
        limit = f"{h.limit[0]} {fmt(h.limit[2])}{'~' if h.limit[3] else ''} {h.limit[1]}" if h.limit else "–"
        rows.append([h.component, h.workload, param_label(h.params), _figure(h.simdex, h.unit), peer,
                     f"{fmt(h.ratio)}×" if h.ratio else "–", limit])
    return rows


def summary_chart(heads: list[headlines.Headline]) -> str:
    rows = [(f"{h.component} {h.workload}", h.ratio, f"{fmt(h.ratio)}× vs {h.peer.contender}")
            for h in heads if h.ratio and h.peer is not None]
    return plots.ratio_chart("simdex against the best peer, headline workloads", rows)


# --- charts --------------------------------------------------------------------------------------

def report_colours(docs: list[dict]) -> plots.Colours:
    """Every chart's contenders, so that each keeps one colour across the report."""
    together = [g["contenders"] for doc in docs for g in tables(doc).values()]
    together += [list(s.series) for doc in docs for s in headlines.scalings(doc, doc.get("machine"))]
    return plots.Colours(together)


def _ratio_reference(g: dict) -> str | None:
    return next((r.get("ratio", {}).get("reference") for row in g["rows"].values() for r in row.values() if r.get("ratio")), None)


def svg_chart(workload: str, g: dict, width: int = 820, colours: plots.Colours | None = None) -> str:
    """Grouped horizontal bars for one workload (a group of :func:`tables`): one group per
    parameter row, one bar per contender, each labelled with its median and ratio."""
    colours = colours or plots.Colours([g["contenders"]])
    groups = []
    for label, row in g["rows"].items():
        bars = [plots.Bar(c, row[c]["median"], cell(row[c]),
                          f"{c}: {fmt(row[c]['median'])} {g['unit']} (min {fmt(row[c]['min'])}, max {fmt(row[c]['max'])})")
                for c in g["contenders"] if c in row and row[c].get("median")]
        groups.append((label, bars))
    ref = _ratio_reference(g)
    title = workload + (f" (ratios vs {ref})" if ref else "")
    return plots.bar_chart(title, f"{g['unit']}, {g['better']} is better", groups, colours, width)


def _size_format(key: str):
    return fmt_bytes if is_size_param(key) else (lambda v: param_value(key, int(v)))


def scaling_svg(s: headlines.Scaling, colours: plots.Colours) -> str:
    fixed = f" ({param_label(s.params)})" if s.params else ""
    return plots.line_chart(s.title + fixed, s.x, f"{s.unit}, {s.better} is better", s.series, colours,
                            x_format=_size_format(s.x), limits=s.limits)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-")


def plot_svgs(docs: list[dict], colours: plots.Colours) -> tuple[list[tuple[str, str]], dict[str, list[str]]]:
    """The summary chart and every scaling plot: (file name under DIR/plots, SVG) pairs, and
    component -> their paths relative to DIR ("" for the summary), for REPORT.md to show."""
    out: dict[str, list[str]] = {}
    svgs: list[tuple[str, str]] = []
    chart = summary_chart(headlines.headlines(docs))
    if chart:
        svgs.append(("summary.svg", chart))
        out.setdefault("", []).append("plots/summary.svg")
    for doc in docs:
        for s in headlines.scalings(doc, headlines.machine_of(doc, docs)):
            name = _slug(f"{doc['component']}-{s.title}-{param_label(s.params)}") + ".svg"
            svgs.append((name, scaling_svg(s, colours)))
            out.setdefault(doc["component"], []).append(f"plots/{name}")
    return svgs, out


# The second line of every plot file a report writes under DIR/plots: how a later render tells
# its own files, which it may remove, from anything else kept there.
PLOT_MARK = "<!-- written by simdex report; removed by a later render once the runs no longer have it -->"


def plot_files(directory: Path, svgs: list[tuple[str, str]]) -> list[tuple[Path, str]]:
    """(path under DIR/plots, text) for each (name, SVG), marked as simdex's (PLOT_MARK)."""
    if svgs:
        (directory / "plots").mkdir(exist_ok=True)
    return [(directory / "plots" / name, svg.replace("\n", f"\n{PLOT_MARK}\n", 1) + "\n") for name, svg in svgs]


def remove_stale_plots(directory: Path, keep: set[str]) -> list[str]:
    """Removes the plot files an earlier render wrote under DIR/plots (those that carry
    PLOT_MARK) that this one did not: a workload or component no longer in the runs left its
    plot beside the report. Anything else there stays; returns the names removed."""
    folder = directory / "plots"
    try:
        candidates = sorted(p for p in folder.glob("*.svg") if p.name not in keep)
    except OSError:
        return []
    removed = []
    for p in candidates:
        try:
            if p.is_symlink() or not p.is_file():  # a link or a FIFO is the user's
                continue
            with open(p, "rb") as f:
                head = f.read(4096).split(b"\n", 2)[:2]
            if PLOT_MARK.encode() in head:
                p.unlink()
                removed.append(p.name)
        except OSError:
            pass  # unreadable or not removable: left as it is, as anything not ours
    return removed


def write_plots(docs: list[dict], directory: Path, colours: plots.Colours) -> dict[str, list[str]]:
    """The summary chart and every scaling plot as SVG files under DIR/plots, for REPORT.md to
    show; returns component -> relative paths ("" for the summary)."""
    svgs, out = plot_svgs(docs, colours)
    write_texts(plot_files(directory, svgs))
    return out


@contextmanager
def interrupts_held():
    """Ctrl-C (SIGINT) held back until the block ends, then handled as it would have been: the
    renames that put a report's files in place take microseconds, and an interrupt between two
    of them left a new REPORT.md beside an old report.html. Outside the main thread (where no
    handler can be set, or one not set from Python could not be put back) the block runs as
    it is."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield
        return
    caught = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught and callable(previous):
            previous(signal.SIGINT, caught[0])
        elif caught and previous == signal.SIG_DFL:
            signal.raise_signal(signal.SIGINT)


def write_texts(files: list[tuple[str | Path, str]]) -> None:
    """Writes each (path, text) as UTF-8 through :class:`simdex._output.Output`: every regular
    file is staged beside itself and all of them are renamed into place only once every one was
    written, so a failed write (a full disk, a file size limit) leaves each old file as it was,
    never a truncated one nor a new file beside an old one that belongs with it. Errors name the
    user's path."""
    outs: list[tuple[str | Path, Output]] = []
    try:
        for path, text in files:
            try:
                o = Output(path)
            except OSError as e:
                raise OSError(e.errno, e.strerror, str(path)) from None
            outs.append((path, o))
            try:
                write_all(o.file, text.encode("utf-8"))
                o.file.close()  # the last buffered bytes: an error here is a failed write too
            except OSError as e:
                raise OSError(e.errno, e.strerror, str(path)) from None
        with interrupts_held():  # all renamed or none
            for path, o in outs:
                try:
                    o.commit()
                except OSError as e:
                    raise OSError(e.errno, e.strerror, str(path)) from None
    finally:
        for _, o in outs:
            o.discard()


# --- the two documents ---------------------------------------------------------------------------

def render_markdown(docs: list[dict], plot_files: dict[str, list[str]] | None = None, *, sources: dict | None = None) -> str:
    plot_files = plot_files or {}
    first = docs[0]
    parts = ["# simdex benchmark report", ""]
    heads = headlines.headlines(docs)
    if heads:
        parts += ["## Summary", "", summary_note(docs), "", md_table(SUMMARY_HEAD, summary_rows(heads)), ""]
        parts += [f"![simdex against the best peer]({p})" for p in plot_files.get("", [])] + [""]
    parts += ["## Environment", "", md_table(["", ""], [[k, v] for k, v in env_rows(first, docs)])]
    parts += ["", "Medians of interleaved repetitions; `~` marks a noisy figure (max/min > 1.5); "
              "`(N×)` is the ratio to the group's reference contender, measured in the same run "
              "(> 1 means better than the reference); `!` marks a time under one core cycle per "
              "operation (a broken measurement).", ""]
    mrows = machine_rows(docs)
    if mrows:
        parts += ["## Machine limits (measured in each run)", "", md_table(MACHINE_HEAD, mrows), ""]
    arows = agreement.rows(docs)
    if arows:
        parts += ["### The lab against the other runs", "", agreement.NOTE, "", md_table(agreement.HEAD, arows), ""]
    for doc in docs:
        parts += [f"## {doc['component']}", ""]
        for n in doc.get("notes", []):
            parts.append(f"- {n}")
        if doc.get("notes"):
            parts.append("")
        for p in plot_files.get(doc["component"], []):
            parts += [f"![{doc['component']} scaling]({p})", ""]
        for workload, g in tables(doc).items():
            ref = _ratio_reference(g)
            parts.append(f"### {workload} ({g['unit']}, {g['better']} is better" + (f"; ratios vs {ref}" if ref else "") + ")")
            parts.append("")
            rows = [[label] + [cell(row.get(c)) for c in g["contenders"]] for label, row in g["rows"].items()]
            parts += [md_table(["params"] + g["contenders"], rows), ""]
        section = _section(doc, "markdown_section", sources)
        if section is not None:
            parts += [section, ""]
    return "\n".join(parts) + "\n"


def html_table(head: list[str], rows: list[list[str]]) -> str:
    h = "".join(f"<th>{html.escape(x)}</th>" for x in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>"


def render_html(docs: list[dict], *, sources: dict | None = None) -> str:
    colours = report_colours(docs)
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>simdex benchmark report</title><style>",
             "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}",
             "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right;font-size:13px}",
             "th{background:#f3f3f3}td:first-child{text-align:left}h2{border-bottom:2px solid #4269d0}svg{display:block;margin:.5em 0}",
             "</style></head><body><h1>simdex benchmark report</h1>"]
    heads = headlines.headlines(docs)
    if heads:
        parts += ["<h2>Summary</h2>", f"<p>{html.escape(summary_note(docs))}</p>", html_table(SUMMARY_HEAD, summary_rows(heads)),
                  summary_chart(heads)]
    parts += ["<h2>Environment</h2>", html_table(["", ""], [[k, v] for k, v in env_rows(docs[0], docs)])]
    parts.append("<p>Medians of interleaved repetitions; ~ marks a noisy figure (max/min &gt; 1.5); (N×) is the ratio "
                 "to the group's reference contender from the same run (&gt; 1 means better); ! marks a time under one "
                 "core cycle per operation (a broken measurement).</p>")
    mrows = machine_rows(docs)
    if mrows:
        parts += ["<h2>Machine limits</h2>", html_table(MACHINE_HEAD, mrows)]
    arows = agreement.rows(docs)
    if arows:
        parts += ["<h3>The lab against the other runs</h3>", f"<p>{html.escape(agreement.NOTE)}</p>",
                  html_table(agreement.HEAD, arows)]
    for doc in docs:
        parts.append(f"<h2>{html.escape(doc['component'])}</h2>")
        if doc.get("notes"):
            parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in doc["notes"]) + "</ul>")
        for s in headlines.scalings(doc, headlines.machine_of(doc, docs)):
            parts.append(scaling_svg(s, colours))
        for workload, g in tables(doc).items():
            parts.append(svg_chart(workload, g, colours=colours))
            rows = [[label] + [cell(row.get(c)) for c in g["contenders"]] for label, row in g["rows"].items()]
            parts.append(html_table(["params"] + g["contenders"], rows))
        section = _section(doc, "html_section", sources)
        if section is not None:
            parts.append(section)
    parts.append("</body></html>")
    return "\n".join(parts)


# --- two lab runs side by side (simdex report A B) ----------------------------------------------

def lab_run(path: str | Path) -> tuple[Path, dict]:
    """A lab run and its file: ``path`` is its lab.json, or a folder holding one lab run (a
    ``simdex lab --out`` or ``simdex bench --out`` folder), checked as the report checks it."""
    p = Path(path)
    if p.is_dir():
        found = [(f, doc) for f, doc in _load(p) if doc["component"] == "lab"]
        if not found:
            raise ValueError(f"{p}: no lab run (lab.json) among its benchmark JSON files")
        return found[0]
    try:
        doc = json.loads(_read_regular(p).decode("utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise ValueError(f"{p}: not valid JSON ({e})") from None
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or doc.get("component") != "lab":
        raise ValueError(f"{p}: not a lab run (a simdex lab.json, schema {SCHEMA}, component lab)")
    _check(p, doc)
    return p, doc


# What tells two machines apart, as a run records it (environment fields and their labels).
MACHINE_FIELDS = (("cpu_model", "CPU"), ("cores", "cores"), ("memory_bytes", "memory"), ("hypervisor", "virtual machine"),
                  ("kernel", "kernel"), ("thp", "THP"))


def _machine_value(env: dict, key: str) -> str:
    v = env.get(key)
    if v is None:
        return "?"
    if key == "memory_bytes" and _number(v):
        return fmt_bytes(v)
    if key == "hypervisor":
        return "yes" if v else "no"
    return str(v)


def _run_line(name: str, path: Path, doc: dict) -> str:
    e = doc.get("environment", {})
    lab = doc.get("lab", {})
    cut = " (interrupted: some experiments did not run)" if lab.get("interrupted") else ""
    reps = doc.get("repetitions")
    return (f"- {name}: {path}: {doc.get('started')}, {doc.get('mode')} mode, {reps} repetition{'' if reps == 1 else 's'}, "
            f"simdex {e.get('simdex_version', '?')} commit {e.get('simdex_commit', '?')}{cut}")


def _ratio(a: dict, b: dict) -> str:
    """B's figure over A's, where both are numbers of one figure: one unit and one label (a label
    may name what a machine allowed, "2 threads", and a figure not measured has no number)."""
    fa, fb = a.get("figure") or {}, b.get("figure") or {}
    va, vb = fa.get("value"), fb.get("value")
    if not (_finite(va) and _finite(vb)) or va == 0 or (fa.get("unit"), fa.get("label")) != (fb.get("unit"), fb.get("label")):
        return "–"
    return f"{fmt(vb / va)}×"


def compare_labs(a: tuple[Path, dict], b: tuple[Path, dict]) -> str:
    """Two lab runs (lab_run's pairs) side by side, in Markdown: per experiment the two figures,
    B's over A's, the two verdicts and whether the verdict changed; each run's file, time, mode
    and commit, and the two machines wherever they differ (figures from another machine are
    another machine's, not a change)."""
    from .benchmarks import lab as lab_section

    (pa, da), (pb, db) = a, b
    ea, eb = da.get("environment", {}), db.get("environment", {})
    lines = ["# Two lab runs compared", "", _run_line("A", pa, da), _run_line("B", pb, db), ""]
    differ = [(label, _machine_value(ea, key), _machine_value(eb, key))
              for key, label in MACHINE_FIELDS if _machine_value(ea, key) != _machine_value(eb, key)]
    if differ:
        lines += ["The runs are from different machines: a changed figure may be the machine's, not the code's.", "",
                  md_table(["machine", "A", "B"], [[label, x, y] for label, x, y in differ]), ""]
    else:
        lines += [f"Both on one machine: {_machine(da)}.", ""]
    by_a = {e["id"]: e for e in da["lab"]["experiments"]}
    by_b = {e["id"]: e for e in db["lab"]["experiments"]}

    def place(i: str) -> tuple:  # as the verdict table: by study number, the lab's own last
        e = by_a.get(i) or by_b[i]
        return e.get("study") is None, e.get("study") or 0

    order = sorted(dict.fromkeys([*by_a, *by_b]), key=place)
    cut = {n: {x.get("id") for x in d["lab"].get("not_run", [])} for n, d in (("A", da), ("B", db))}

    def absent(n: str, i: str) -> str:
        return "not run (interrupted)" if i in cut[n] else f"not in {n}"

    rows, changed = [], []
    for i in order:
        x, y = by_a.get(i), by_b.get(i)
        study = (x or y).get("study")
        if x is None or y is None:
            rows.append([i, "–" if study is None else str(study),
                         lab_section.figure_text(x) if x else absent("A", i), lab_section.figure_text(y) if y else absent("B", i),
                         "–", x["verdict"] if x else "–", y["verdict"] if y else "–", "–"])
            continue
        same = x["verdict"] == y["verdict"]
        if not same:
            changed.append(i)
        rows.append([i, "–" if study is None else str(study), lab_section.figure_text(x), lab_section.figure_text(y), _ratio(x, y),
                     x["verdict"], y["verdict"], "same" if same else "**changed**"])
    both = sum(1 for i in order if i in by_a and i in by_b)
    only = []
    for n, mine, other in (("A", by_a, by_b), ("B", by_b, by_a)):
        ids = [i for i in order if i in mine and i not in other]
        if ids:  # a subset run against a whole one: the table has them all, the line a few
            only.append(f"only in {n}: {', '.join(ids[:5])}" + (f" and {len(ids) - 5} more" if len(ids) > 5 else ""))
    lines += ["B / A is B's figure over A's (– where either has no figure, or the two are not one figure: another "
              "unit or label). The verdicts are each run's own; `simdex report DIR` on either folder gives the reasons "
              "and checks.", "",
              md_table(["experiment", "#", "A: figure", "B: figure", "B / A", "A: verdict", "B: verdict", "verdict"],
                       [[lab_section.table_cell(c) for c in r] for r in rows]), "",
              f"{both} experiment{'s' if both != 1 else ''} in both runs; "
              f"{len(changed)} verdict{'s' if len(changed) != 1 else ''} changed"
              + (f" ({', '.join(changed)})" if changed else "") + "".join(f"; {o}" for o in only) + "."]
    return "\n".join(lines) + "\n"


README_BEGIN = "<!-- results:begin (generated by `simdex report DIR --readme README.md`) -->"
README_END = "<!-- results:end -->"


def _and_others(docs: list[dict], describe, others: str) -> str:
    """The first run's ``describe(doc)``, then each component whose own differs: ``others``
    formats (component, value)."""
    first = describe(docs[0])
    return first + "".join(others.format(d.get("component", "?"), v) for d in docs[1:] if (v := describe(d)) != first)


def _machine(doc: dict) -> str:
    e = doc.get("environment", {})
    # "hypervisor" is all the run records: which one is not known.
    return (f"{e.get('cpu_model', '?')} ({e.get('cores', '?')} cores, "
            f"{'virtual machine, ' if e.get('hypervisor') else ''}THP {e.get('thp', '?')})")


def readme_block(docs: list[dict], command: str) -> str:
    """The README's summary: each component's headline rows (as the report's summary table),
    with the dates, machine, commit and mode; a component run elsewhere, at another commit or
    in another mode says so rather than borrow the first one's."""
    days = sorted({d["started"][:10] for d in docs if isinstance(d.get("started"), str)}) or ["?"]
    when = days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"
    machine = _and_others(docs, _machine, ", {} on {}")
    commit = _and_others(docs, lambda d: str(d.get("environment", {}).get("simdex_commit", "?")), ", {} at {}")
    mode = _and_others(docs, lambda d: f"{d.get('mode', '?')} mode", ", {} in {}")
    heads = headlines.headlines(docs)
    broken = any(f.below_one_cycle for h in heads for f in (h.simdex, h.peer) if f is not None)
    marks = "`~` noisy" + (", `!` under one core cycle per operation (not to be trusted)" if broken else "")
    lines = [README_BEGIN, "",
             f"Measured {when} on {machine}, commit {commit}, by `{command}` ({mode}); medians, {marks}; {summary_note(docs)}",
             "", md_table(SUMMARY_HEAD, summary_rows(heads)), "", README_END]
    return "\n".join(lines)


def readme_parts(readme: str | Path) -> tuple[str, str]:
    """The README's text before and after its results block, or an error saying what to add:
    checked before any report file is written, so a wrong --readme changes nothing."""
    path = Path(readme)
    text = read_text(path)
    begin = README_BEGIN.split(" (")[0]
    counts = (text.count(begin), text.count(README_END))
    if counts != (1, 1) or text.index(begin) > text.index(README_END):
        found = "in the wrong order" if counts == (1, 1) else f"{counts[0]} and {counts[1]} of them"
        raise ValueError(f"{path}: no results block to replace: it needs one line {README_BEGIN} and, after it, "
                         f"one line {README_END} (found {found})")
    return text[: text.index(begin)], text[text.index(README_END) + len(README_END):]


def update_readme(readme: str | Path, docs: list[dict], command: str) -> None:
    head, tail = readme_parts(readme)
    write_texts([(Path(readme), head + readme_block(docs, command) + tail)])


def render(directory: str | Path) -> tuple[Path, Path]:
    """REPORT.md, report.html and the plots under DIR/plots, all rendered before any is written
    and renamed into place together (:func:`write_texts`); then the plots an earlier render
    wrote that this one did not are removed (:func:`remove_stale_plots`)."""
    found = _load(directory)
    docs = [doc for _, doc in found]
    sources = {doc["component"]: p for p, doc in found}
    d = Path(directory)
    md, page = d / "REPORT.md", d / "report.html"
    svgs, files = plot_svgs(docs, report_colours(docs))
    texts = [(md, render_markdown(docs, files, sources=sources)), (page, render_html(docs, sources=sources))]
    write_texts(plot_files(d, svgs) + texts)
    remove_stale_plots(d, {name for name, _ in svgs})
    return md, page
