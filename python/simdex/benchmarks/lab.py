"""The lab's report section: the verdict for each of the study's 37 experiments and for the lab's
own machine experiments (no study number: verdict ``measured`` or ``inconclusive``), the validity
checks behind each, and pictures (latency against working-set size with the cache sizes marked,
bandwidth against size, stride, thread scaling, queue and lock scaling).

Reads the ``lab`` block ``bench_lab`` adds to its JSON (docs/bench-json.md); every number shown
comes from there. ``mapping_markdown(registry)`` renders the study-to-lab table that
``simdex lab list --markdown`` prints and docs/lab.md carries.
"""

from __future__ import annotations

import html
import math

from .. import plots, report

VERDICTS = ("confirmed", "contradicted", "inconclusive", "measured")
# An experiment of no study has no claim to confirm or contradict: its figure is "measured" once
# every check passed, else "inconclusive"; a study experiment is never just "measured".
OWN_VERDICTS = ("measured", "inconclusive")
CHECK_STATUSES = ("pass", "warn", "fail")
# Where the report puts an experiment's pictures, by the curve's "section".
SECTIONS = (
    ("latency", "Latency against working-set size"),
    ("bandwidth", "Bandwidth against size"),
    ("stride", "Stride"),
    ("threads", "Thread scaling"),
    ("queues", "Queue and lock scaling"),
    ("loaded", "Loaded latency"),
    ("core_to_core", "Core-to-core latency"),
)


# What a lab run's document carries beside its "lab" block (docs/bench-json.md), and its type.
RUN_FIELDS = (("schema", str), ("component", str), ("mode", str), ("repetitions", int), ("started", str), ("finished", str),
              ("environment", dict), ("results", list))
LAB_FIELDS = (("clock", dict), ("counters", str), ("study", list), ("experiments", list))


_KINDS = {str: "a string", int: "a whole number", dict: "an object", list: "a list"}


def _missing(where: dict, fields, prefix: str = "") -> list[str]:
    out = []
    for key, kind in fields:
        if key not in where:
            out.append(f"no '{prefix}{key}'")
        elif not isinstance(where[key], kind) or isinstance(where[key], bool):
            out.append(f"'{prefix}{key}' is not {_KINDS[kind]}")
    return out


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _finite(v) -> bool:
    return _number(v) and math.isfinite(v)


def _strings(v) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


def _curve_problems(name: str, j: int, c) -> list[str]:
    """What the report's pictures and tables need of a curve (finite points: an infinite one
    broke the axis ticks)."""
    where = f"{name}: curve {j}"
    if not isinstance(c, dict):
        return [f"{where} is not an object"]
    out = [f"{where}: '{key}' is not a string" for key in ("title", "x_label", "y_label") if not isinstance(c.get(key), str)]
    if not isinstance(c.get("section", ""), str):
        out.append(f"{where}: 'section' is not a string")
    lines = c.get("lines")
    if not isinstance(lines, list):
        return out + [f"{where}: 'lines' is not a list"]
    for k, line in enumerate(lines):
        if not isinstance(line, dict) or not isinstance(line.get("label"), str) or not isinstance(line.get("points"), list):
            out.append(f"{where}: line {k} is not an object with a label and points")
            continue
        for p in line["points"]:
            if (not isinstance(p, list) or len(p) < 2 or not _finite(p[0])
                    or not all(v is None or _finite(v) for v in p[1:])):
                out.append(f"{where}: line {k} has a point {p!r}, not [x, y, ...] of finite numbers")
                break
    markers = c.get("markers", [])
    if not isinstance(markers, list) or not all(isinstance(m, dict) and _finite(m.get("x")) and isinstance(m.get("label"), str)
                                                for m in markers):
        out.append(f"{where}: 'markers' is not a list of {{x, label}}")
    return out


def _experiment_problems(i: int, e) -> list[str]:
    """The shape of one experiment: every field the report reads, of the type it reads it as."""
    if not isinstance(e, dict):
        return [f"experiment {i} is {type(e).__name__}, not an object"]
    name = e.get("id", "?") if isinstance(e.get("id", "?"), str) else f"experiment {i}"
    problems = []
    for key in ("id", "study", "group", "title", "question", "study_figure", "range", "checks", "verdict", "reason", "validity",
                "counters", "curves", "notes"):
        if key not in e:
            problems.append(f"{name}: no '{key}'")
    for key in ("id", "group", "title", "question", "study_figure", "reason"):
        if key in e and not isinstance(e[key], str):
            problems.append(f"{name}: '{key}' is not a string")
    if e.get("verdict") not in VERDICTS:
        problems.append(f"{name}: verdict {e.get('verdict')!r}")
    study = e.get("study", 0)
    if study is None:  # one of the lab's own: no study figure, no claim
        if e.get("study_figure"):
            problems.append(f"{name}: a study figure without a study number")
        if e.get("verdict") in VERDICTS and e["verdict"] not in OWN_VERDICTS:
            problems.append(f"{name}: verdict {e['verdict']!r} on a claim no study made")
    elif not isinstance(study, int) or isinstance(study, bool) or not 1 <= study <= 37:
        problems.append(f"{name}: study number {e.get('study')!r}")
    elif e.get("verdict") == "measured":
        problems.append(f"{name}: a study experiment's verdict is 'measured', not a verdict on its claim")
    r = e.get("range", {})
    if not isinstance(r, dict):
        problems.append(f"{name}: 'range' is not an object")
    else:
        for key in ("lo", "hi"):
            if r.get(key) is not None and not _number(r[key]):
                problems.append(f"{name}: 'range.{key}' is {r[key]!r}, not a number")
        for key in ("unit", "basis"):
            if r.get(key) is not None and not isinstance(r[key], str):
                problems.append(f"{name}: 'range.{key}' is not a string")
    f = e.get("figure")
    if f is not None and not isinstance(f, dict):
        problems.append(f"{name}: 'figure' is not an object or null")
    elif f:
        if f.get("value") is not None and not _number(f["value"]):
            problems.append(f"{name}: 'figure.value' is {f['value']!r}, not a number")
        if (f.get("value") is not None or f.get("not_measured")) and not isinstance(f.get("unit"), str):
            problems.append(f"{name}: 'figure.unit' is not a string")
        ms = f.get("measurements", [])
        if not isinstance(ms, list) or not all(isinstance(m, dict) and "label" in m and (m.get("median") is None or _number(m["median"]))
                                               for m in ms):
            problems.append(f"{name}: 'figure.measurements' is not a list of {{label, median}}")
    checks = e.get("checks", [])
    if not _strings(checks):
        problems.append(f"{name}: 'checks' is not a list of names")
        checks = []
    validity = e.get("validity", [])
    if not isinstance(validity, list) or not all(isinstance(c, dict) for c in validity):
        problems.append(f"{name}: 'validity' is not a list of objects")
        validity = []
    seen = {c.get("name") for c in validity if isinstance(c.get("name"), str)}
    for c in validity:
        if c.get("status") not in CHECK_STATUSES:
            problems.append(f"{name}: check {c.get('name')} status {c.get('status')!r}")
        if not isinstance(c.get("name"), str) or not isinstance(c.get("detail"), str):
            problems.append(f"{name}: a check lacks its name or detail")
    for declared in checks:
        if declared not in seen:
            problems.append(f"{name}: declared check {declared!r} has no result")
    if any(c.get("status") == "fail" for c in validity) and e.get("verdict") != "inconclusive":
        problems.append(f"{name}: a check failed but the verdict is {e.get('verdict')}")
    counters = e.get("counters", [])
    if not isinstance(counters, list):
        problems.append(f"{name}: 'counters' is not a list")
        counters = []
    for group in counters:
        if not isinstance(group, dict) or not isinstance(group.get("label"), str) or not isinstance(group.get("readings", []), list):
            problems.append(f"{name}: a counter group is not an object with a label and readings")
            continue
        for r in group.get("readings", []):
            if (not isinstance(r, dict) or not isinstance(r.get("name"), str) or not isinstance(r.get("status"), str)
                    or (r.get("value") is not None and not _number(r["value"]))):
                problems.append(f"{name}: a counter reading is not an object with a name, a numeric value or null, and a status")
            elif r.get("value") is None and not str(r.get("status", "")).startswith(("unavailable", "untrusted")):
                problems.append(f"{name}: counter {r.get('name')} has no value and no reason")
    curves = e.get("curves", [])
    if not isinstance(curves, list):
        problems.append(f"{name}: 'curves' is not a list")
    else:
        for j, c in enumerate(curves):
            problems += _curve_problems(name, j, c)
    if not _strings(e.get("notes", [])):
        problems.append(f"{name}: 'notes' is not a list of strings")
    return problems


def validate(doc: dict) -> list[str]:
    """Problems with a lab run's JSON document: the run's own fields and the ``lab`` block (empty
    when it is well formed), down to the type of every field the report reads."""
    problems = _missing(doc, RUN_FIELDS)
    if doc.get("mode") not in (None, "quick", "full"):
        problems.append(f"mode {doc.get('mode')!r}")
    if isinstance(doc.get("repetitions"), int) and doc["repetitions"] < 1:
        problems.append(f"repetitions {doc['repetitions']!r}")
    lab = doc.get("lab")
    if not isinstance(lab, dict):
        return problems + ["no 'lab' block"]
    problems += _missing(lab, LAB_FIELDS, "lab.")
    if problems:
        return problems
    for key in ("tsc_ghz", "now_ns_cost", "core_ghz"):
        if lab["clock"].get(key) is not None and not _number(lab["clock"][key]):
            problems.append(f"'lab.clock.{key}' is {lab['clock'][key]!r}, not a number")
    study = lab["study"]
    if not all(isinstance(s, dict) and isinstance(s.get("number"), int) and not isinstance(s["number"], bool)
               and isinstance(s.get("name"), str) for s in study):
        problems.append("'study' is not a list of {number, name}")
    elif sorted(s["number"] for s in study) != list(range(1, 38)):
        problems.append("'study' does not list experiments 1..37")
    for i, e in enumerate(lab["experiments"]):
        problems += _experiment_problems(i, e)
    # An interrupted run (Ctrl-C) lists the experiments it did not get to.
    if not isinstance(lab.get("interrupted", False), bool):
        problems.append("'lab.interrupted' is not true or false")
    not_run = lab.get("not_run", [])
    if not isinstance(not_run, list) or not all(
            isinstance(x, dict) and isinstance(x.get("id"), str)
            and (x.get("study") is None or isinstance(x.get("study"), int)) for x in not_run):
        problems.append("'lab.not_run' is not a list of {id, study}")
    return problems


def figure_text(e: dict) -> str:
    """An experiment's headline figure as the tables print it (this report's and simdex report's
    comparison of two runs)."""
    f = e.get("figure")
    if f and f.get("value") is None and f.get("not_measured"):
        # A difference the samples did not show (negative, or within the noise): the two
        # measurements it would have come from, never the difference as a figure.
        parts = [f"{m['label']} {report.fmt(m.get('median'))} {f['unit']}" for m in f.get("measurements", [])]
        return "not measurable" + (f" ({', '.join(parts)})" if parts else "")
    if not f or f.get("value") is None:
        return "–"
    return f"{report.fmt(f['value'])} {f['unit']}"


def _range(e: dict) -> str:
    r = e.get("range") or {}
    if not r.get("unit"):
        return "–"
    return f"{report.fmt(r.get('lo'))}–{report.fmt(r.get('hi'))} {r['unit']}"


def _by_study(entries: list[dict], experiments: list[dict]) -> list[tuple[dict, list[dict]]]:
    return [(s, [e for e in experiments if e.get("study") == s["number"]]) for s in sorted(entries, key=lambda s: s["number"])]


def _own(experiments: list[dict]) -> list[dict]:
    """The lab's own experiments (no study number), in the order given."""
    return [e for e in experiments if e.get("study") is None]


OWN_ROW = ("–", "lab's own")  # the "#" and "study experiment" cells of an experiment of no study


def table_cell(text: str) -> str:
    """text as one cell of a Markdown table, or one line of a Markdown list."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _reason(e: dict) -> str:
    """The verdict's reason, and for a verdict that stands, the checks that warned: a confirmed
    figure whose repetitions disagree must not read like one whose agree."""
    reason = e.get("reason", "")
    if e.get("verdict") == "inconclusive":  # a failed check or no decision: already said
        return reason
    warned = list(dict.fromkeys(c.get("name", "?") for c in e.get("validity", []) if c.get("status") == "warn"))
    return f"{reason} (warned: {', '.join(warned)})" if warned else reason


def verdict_rows(doc: dict) -> list[list[str]]:
    """One row per study experiment: #, study name, study figure, lab experiment, our figure,
    plausible range, verdict, reason; then one per experiment of the lab's own ("–", "lab's own")."""
    lab = doc.get("lab", {})
    cut = {}  # study number -> the experiments an interrupted run did not get to
    for x in lab.get("not_run", []):
        cut.setdefault(x["study"], []).append(x["id"])
    rows = []
    for s, es in _by_study(lab.get("study", []), lab.get("experiments", [])):
        for eid in cut.get(s["number"], []):
            rows.append([str(s["number"]), s["name"], "–", eid, "–", "–", "not run", "the run was interrupted before it"])
        if not es and s["number"] not in cut:
            rows.append([str(s["number"]), s["name"], "–", "–", "–", "–", "not run", "not part of this run"])
        for e in es:
            rows.append([str(s["number"]), s["name"], e.get("study_figure", ""), e["id"], figure_text(e), _range(e), e["verdict"],
                         _reason(e)])
    for e in _own(lab.get("experiments", [])):
        rows.append([*OWN_ROW, "–", e["id"], figure_text(e), _range(e), e["verdict"], _reason(e)])
    for eid in cut.get(None, []):
        rows.append([*OWN_ROW, "–", eid, "–", "–", "not run", "the run was interrupted before it"])
    return rows


VERDICT_HEAD = ["#", "study experiment", "study's figure", "lab experiment", "our figure", "plausible here", "verdict", "reason"]


def mapping_markdown(registry: dict) -> str:
    """The study-to-lab table from ``bench_lab --list --json``: every study experiment, the lab
    experiment that answers it, the question, the plausible range and the checks; then the lab's
    own experiments, which answer no study experiment ("–", "lab's own", no study figure)."""
    head = ["#", "study experiment", "study's figure", "lab experiment", "question", "plausible range", "validity checks"]
    rows = []
    for s, es in _by_study(registry.get("study", []), registry.get("experiments", [])):
        if not es:
            rows.append([str(s["number"]), s["name"], "–", f"not in the lab yet ({s['group']} group)", "–", "–", "–"])
        for e in es:
            rows.append([str(s["number"]), s["name"], e["study_figure"], f"`{e['id']}`", e["question"], _range(e),
                         ", ".join(e.get("checks", [])) or "–"])
    for e in _own(registry.get("experiments", [])):
        rows.append([*OWN_ROW, "–", f"`{e['id']}`", e["question"], _range(e), ", ".join(e.get("checks", [])) or "–"])
    return report.md_table(head, [[table_cell(c) for c in r] for r in rows])


TABLE_BEGIN, TABLE_END = "<!-- lab-table:begin -->", "<!-- lab-table:end -->"


def table_in(text: str) -> str:
    """The Markdown between the lab-table markers of ``text``."""
    if TABLE_BEGIN not in text or TABLE_END not in text:
        raise ValueError(f"no {TABLE_BEGIN} ... {TABLE_END} markers")
    return text.split(TABLE_BEGIN, 1)[1].split(TABLE_END, 1)[0].strip()


def update_table(path, table: str) -> None:
    """Replaces the table between the lab-table markers in the file at ``path``: written beside
    it and renamed into place (:func:`simdex.report.write_texts`), so a failed write leaves the
    old file as it was."""
    from pathlib import Path

    p = Path(path)
    text = report.read_text(p)
    try:
        table_in(text)  # raises without markers
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None
    head, rest = text.split(TABLE_BEGIN, 1)
    report.write_texts([(p, head + TABLE_BEGIN + "\n" + table + "\n" + TABLE_END + rest.split(TABLE_END, 1)[1])])


def _bytes(v: float) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if v >= size:
            return f"{report.fmt(v / size)} {unit}"
    return f"{report.fmt(v)} B"


def _x_fmt(curve: dict):
    if _counted_axis(curve):
        return _count
    return _bytes if "bytes" in curve.get("x_label", "").lower() else report.fmt


def _curves(doc: dict) -> list[tuple[dict, dict]]:
    return [(e, c) for e in doc.get("lab", {}).get("experiments", []) for c in e.get("curves", [])]


def _sections(doc: dict) -> list[tuple[str, str]]:
    known = [k for k, _ in SECTIONS]
    extra = sorted({c.get("section", "") for _, c in _curves(doc)} - set(known))
    return list(SECTIONS) + [(k, k) for k in extra]


def _svg(curve: dict) -> str:
    lines = [(line["label"], [tuple(p) for p in line["points"]]) for line in curve.get("lines", [])]
    markers = [(m["x"], m["label"]) for m in curve.get("markers", [])]
    return plots.line_chart(curve["title"], curve["x_label"], curve["y_label"], dict(lines), plots.Colours([[n for n, _ in lines]]),
                            x_format=_x_fmt(curve), markers=markers, x_log=curve.get("x_log", True), y_log=curve.get("y_log", False))


def _curve_markdown(curve: dict) -> str:
    xf = _x_fmt(curve)
    xs = sorted({p[0] for line in curve["lines"] for p in line["points"]})
    cols = [line["label"] for line in curve["lines"]]
    index = [{p[0]: p[1] for p in line["points"]} for line in curve["lines"]]
    rows = [[xf(x)] + [report.fmt(ix.get(x)) for ix in index] for x in xs]
    return report.md_table([curve["x_label"]] + [f"{c} ({curve['y_label']})" for c in cols], rows)


def _check_line(c: dict) -> str:
    return f"{c['status']}: {c['name']}: {c['detail']}"


def _clock_line(lab: dict) -> str:
    c = lab.get("clock", {})
    return (f"Timer: CLOCK_MONOTONIC (clocksource {c.get('clocksource', '?')}, invariant TSC "
            f"{'yes' if c.get('invariant_tsc') else 'no'} at {report.fmt(c.get('tsc_ghz'))} GHz, "
            f"{report.fmt(c.get('now_ns_cost'))} ns per reading); core {report.fmt(c.get('core_ghz'))} GHz from a chain of "
            f"dependent adds. Counters: {lab.get('counters', '?')}.")


def checked(doc: dict) -> dict | None:
    """``doc["lab"]``, or ValueError naming everything ``validate`` finds wrong: a malformed lab.json
    is refused rather than rendered with its gaps as "None". Judged are the documents that claim
    the benchmark schema, as every file ``simdex report`` reads does (``report.load`` skips the
    others); a fragment built in memory to test another part of the report renders as far as it
    goes."""
    if "schema" not in doc:
        return doc.get("lab") or None
    problems = validate(doc)
    if problems:
        raise ValueError(f"{doc.get('component', 'lab')}.json is not a complete lab run: {'; '.join(problems)}")
    return doc["lab"]


def interrupted_line(lab: dict) -> str:
    """For a run stopped by Ctrl-C: how far it got (empty for a complete run)."""
    if not lab.get("interrupted"):
        return ""
    done, left = len(lab.get("experiments", [])), len(lab.get("not_run", []))
    return (f"This run was interrupted: {done} of {done + left} experiments ran; the other {left} are marked "
            "\"not run\".")


def markdown_section(doc: dict) -> str:
    lab = checked(doc)
    if not lab:
        return ""
    cut = interrupted_line(lab)
    parts = ["### Verdicts", ""] + ([f"**{cut}**", ""] if cut else []) + [_clock_line(lab), "",
             "A verdict is `inconclusive` whenever a validity check failed; the reason names the check. Any other "
             "verdict names the advisory checks that warned (below, under *Validity checks*).", "",
             report.md_table(VERDICT_HEAD, [[table_cell(c) for c in r] for r in verdict_rows(doc)]), ""]
    parts += concurrency_markdown(doc)
    for key, title in _sections(doc):
        cs = [c for _, c in _curves(doc) if c.get("section") == key]
        parts += [f"### {title}", ""]
        if not cs:
            parts += ["No experiment in this run drew one.", ""]
        for c in cs:
            parts += [f"**{c['title']}** (pictures in report.html)", "", _curve_markdown(c), ""]
    parts += ["### Validity checks", ""]
    for e in lab.get("experiments", []):
        parts.append(f"- `{e['id']}` ({e['verdict']}):")
        parts += [f"  - {table_cell(_check_line(c))}" for c in e.get("validity", [])]
        parts += [f"  - note: {table_cell(n)}" for n in e.get("notes", [])]
    return "\n".join(parts)


def _counter_table(groups: list[dict]) -> str:
    rows = [[g["label"], r["name"], report.fmt(r["value"]) if r.get("value") is not None else "–", r["status"]]
            for g in groups for r in g.get("readings", [])]
    return report.html_table(["measured", "counter", "value", "status"], rows) if rows else ""


def html_section(doc: dict) -> str:
    lab = checked(doc)
    if not lab:
        return ""
    colours = {"confirmed": "#3ca951", "contradicted": "#ff725c", "inconclusive": "#efb118", "measured": "#4269d0",
               "not run": "#9498a0"}
    head = "".join(f"<th>{html.escape(h)}</th>" for h in VERDICT_HEAD)
    body = []
    for r in verdict_rows(doc):
        cells = [f"<td>{html.escape(c)}</td>" for c in r]
        cells[6] = f'<td style="background:{colours.get(r[6], "#fff")};color:#fff;text-align:center">{html.escape(r[6])}</td>'
        cells[7] = f'<td style="text-align:left">{html.escape(r[7])}</td>'
        body.append("<tr>" + "".join(cells) + "</tr>")
    cut = interrupted_line(lab)
    parts = ["<h3>Verdicts</h3>"] + ([f"<p><b>{html.escape(cut)}</b></p>"] if cut else []) + [
             f"<p>{html.escape(_clock_line(lab))}</p>",
             f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"]
    parts += concurrency_html(doc)
    for key, title in _sections(doc):
        parts.append(f"<h3>{html.escape(title)}</h3>")
        cs = [c for _, c in _curves(doc) if c.get("section") == key]
        if not cs:
            parts.append("<p>No experiment in this run drew one.</p>")
        parts += [_svg(c) for c in cs]
    parts.append("<h3>Experiments</h3>")
    for e in lab.get("experiments", []):
        checks = "".join(f"<li><b>{html.escape(c['status'])}</b> {html.escape(c['name'])}: {html.escape(c['detail'])}</li>"
                         for c in e.get("validity", []))
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in e.get("notes", []))
        number = OWN_ROW[1] if e["study"] is None else e["study"]
        study = "no study figure (the lab's own)" if e["study"] is None else f"Study: {html.escape(e['study_figure'])}"
        parts.append(f"<details><summary>{number}. {html.escape(e['title'])} (<code>{html.escape(e['id'])}</code>): "
                     f"{html.escape(e['verdict'])}</summary><p>{html.escape(e['question'])}</p><p>{study}. "
                     f"Ours: {html.escape(figure_text(e))} (plausible {html.escape(_range(e))}; "
                     f"{html.escape(e.get('range', {}).get('basis', ''))}).</p><p>{html.escape(e.get('reason', ''))}</p>"
                     f"<ul>{checks}{notes}</ul>{_counter_table(e.get('counters', []))}</details>")
    return "\n".join(parts)


# --- concurrency and IPC: whether threads that were meant to run together did ------------------

# The checks that decide whether a multi-threaded figure measured the threads or the machine's
# other tenants, in the order a reader should look at them.
CONCURRENCY_CHECKS = (
    ("placement", "pinned, seen there from inside"),
    ("wall_clock", "rate over wall-clock time"),
    ("run_queue", "got a CPU when runnable"),
    ("overlap", "ran side by side"),
    ("context_switches", "spun or slept as labelled"),
    ("raced", "litmus threads raced"),
    ("x86_tso", "no outcome x86 forbids"),
    ("nodelay", "TCP_NODELAY as labelled"),
)
_COUNT_AXES = ("threads", "producers", "batch", "CPU")


def _counted_axis(curve: dict) -> bool:
    """An x axis of counts (threads, producers, batch sizes): labelled as whole numbers."""
    return curve.get("x_label", "") in _COUNT_AXES


def _count(v: float) -> str:
    return f"{v:.0f}"


def _worst(checks: list[dict], name: str) -> str:
    statuses = [c.get("status") for c in checks if c.get("name") == name]
    for s in ("fail", "warn", "pass"):
        if s in statuses:
            return s
    return "–"


def concurrency_rows(doc: dict) -> list[list[str]]:
    """Per concurrency or machine experiment (both run pinned teams): its verdict and the worst
    status of each concurrency check."""
    rows = []
    for e in doc.get("lab", {}).get("experiments", []):
        if e.get("group") not in ("concurrency", "machine"):
            continue
        checks = e.get("validity", [])
        rows.append([e["id"], e["verdict"]] + [_worst(checks, name) for name, _ in CONCURRENCY_CHECKS])
    return rows


_CONCURRENCY_NOTE = ("A contention, queue or hand-off figure is only about the cores when its threads ran where they were "
                     "pinned, got a CPU whenever they were runnable and ran at the same time; on a shared or virtual machine "
                     "they often take turns instead, and the figure then measures the scheduler or the hypervisor. `fail` in "
                     "any column makes the experiment inconclusive; the checks' details are below.")


def concurrency_markdown(doc: dict) -> list[str]:
    rows = concurrency_rows(doc)
    if not rows:
        return []
    head = ["experiment", "verdict"] + [label for _, label in CONCURRENCY_CHECKS]
    return ["### Were the threads really concurrent?", "", _CONCURRENCY_NOTE, "", report.md_table(head, rows), ""]


def concurrency_html(doc: dict) -> list[str]:
    rows = concurrency_rows(doc)
    if not rows:
        return []
    colours = {"fail": "#ff725c", "warn": "#efb118", "pass": "#3ca951"}
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["experiment", "verdict"] + [label for _, label in CONCURRENCY_CHECKS])
    body = "".join("<tr>" + "".join(
        f'<td style="background:{colours[c]};color:#fff;text-align:center">{c}</td>' if c in colours else f"<td>{html.escape(c)}</td>"
        for c in r) + "</tr>" for r in rows)
    return ["<h3>Were the threads really concurrent?</h3>", f"<p>{html.escape(_CONCURRENCY_NOTE)}</p>",
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"]
