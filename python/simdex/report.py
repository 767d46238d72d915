"""``simdex report DIR``: REPORT.md and a self-contained report.html (inline SVG plots) from the
benchmark JSON files in DIR. Every number printed comes from those files; ratios are the ones
the benchmark computed between figures of the same run."""

from __future__ import annotations

import html
import json
import math
from collections import OrderedDict
from pathlib import Path

from . import components

SCHEMA = "simdex-bench/1"
ORDER = components.ALL
PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5", "#9c6b4e", "#9498a0")


def load(directory: str | Path) -> list[dict]:
    d = Path(directory)
    if not d.is_dir():
        raise OSError(f"{d}: not a directory")
    docs = []
    for p in sorted(d.glob("*.json")):
        try:
            doc = json.loads(p.read_text())
        except json.JSONDecodeError as e:
            raise ValueError(f"{p}: not valid JSON ({e})") from None
        if isinstance(doc, dict) and doc.get("schema") == SCHEMA:
            docs.append(doc)
    if not docs:
        raise ValueError(f"{d}: no benchmark JSON files (schema {SCHEMA})")
    docs.sort(key=lambda doc: (ORDER.index(doc["component"]) if doc["component"] in ORDER else len(ORDER), doc["component"]))
    return docs


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


def param_label(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items()) or "–"


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


def env_rows(doc: dict) -> list[tuple[str, str]]:
    e = doc.get("environment", {})
    caches = ", ".join(f"L{c['level']} {c['type'].lower()} {c['size']}" for c in e.get("caches", []))
    return [
        ("CPU", f"{e.get('cpu_model', '?')} ({e.get('cpu_vendor', '?')}), {e.get('cores', '?')} cores"
                + (", hypervisor" if e.get("hypervisor") else "")),
        ("caches", caches or "?"),
        ("memory", f"{e.get('memory_bytes', 0) / 2**30:.1f} GiB"),
        ("kernel / THP", f"{e.get('kernel', '?')} / {e.get('thp', '?')}"),
        ("compiler", f"{e.get('compiler', '?')} {e.get('build_type', '')}".strip()),
        ("simdex", f"{e.get('simdex_version', '?')} commit {e.get('simdex_commit', '?')}"),
        ("ISA", f"detected {e.get('isa_detected', '?')}, active {e.get('isa_active', '?')}"),
        ("run", f"{doc.get('mode')} mode, {doc.get('repetitions')} repetitions, {doc.get('started')} – {doc.get('finished')}"),
    ]


def machine_rows(docs: list[dict]) -> list[list[str]]:
    rows = []
    for doc in docs:
        m = doc.get("machine")
        if not m:
            continue
        lat = m.get("latency_ns", {})
        g = lambda page, chains: fmt(lat.get(page, {}).get(f"chains_{chains}", {}).get("median"))  # noqa: E731
        mc = m.get("memcpy_gib_s", {})
        rows.append([doc["component"], fmt(mc.get("4k", {}).get("median")), fmt(mc.get("2m", {}).get("median")), g("4k", 1), g("2m", 1),
                     g("4k", 16), g("2m", 16), fmt(m.get("ghz_estimate")), f"{m.get('probe_bytes', 0) / 2**20:.0f} MiB"])
    return rows


MACHINE_HEAD = ["run", "memcpy 4k GiB/s", "memcpy 2m GiB/s", "DRAM 1 chain 4k ns", "1 chain 2m ns", "16 chains 4k ns/access",
                "16 chains 2m ns/access", "GHz (add chain)", "probe set"]


def section_hook(component: str, name: str):
    """A component's own report section: ``markdown_section(doc)`` or ``html_section(doc)`` in
    ``simdex.benchmarks.<component>``, returning text placed after its tables; None if absent."""
    mod = components.part("benchmarks", component)
    return getattr(mod, name, None) if mod is not None else None


def md_table(head: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def render_markdown(docs: list[dict]) -> str:
    first = docs[0]
    parts = ["# simdex benchmark report", ""]
    parts.append(md_table(["", ""], [[k, v] for k, v in env_rows(first)]))
    parts += ["", "Medians of interleaved repetitions; `~` marks a noisy figure (max/min > 1.5); "
              "`(N×)` is the ratio to the group's reference contender, measured in the same run "
              "(> 1 means better than the reference); `!` marks a time under one core cycle per "
              "operation (a broken measurement).", ""]
    mrows = machine_rows(docs)
    if mrows:
        parts += ["## Machine limits (measured in each run)", "", md_table(MACHINE_HEAD, mrows), ""]
    for doc in docs:
        parts += [f"## {doc['component']}", ""]
        for n in doc.get("notes", []):
            parts.append(f"- {n}")
        if doc.get("notes"):
            parts.append("")
        for workload, g in tables(doc).items():
            ref = next((r.get("ratio", {}).get("reference") for row in g["rows"].values() for r in row.values() if r.get("ratio")), None)
            parts.append(f"### {workload} ({g['unit']}, {g['better']} is better" + (f"; ratios vs {ref}" if ref else "") + ")")
            parts.append("")
            rows = [[label] + [cell(row.get(c)) for c in g["contenders"]] for label, row in g["rows"].items()]
            parts += [md_table(["params"] + g["contenders"], rows), ""]
        hook = section_hook(doc["component"], "markdown_section")
        if hook is not None:
            parts += [hook(doc), ""]
    return "\n".join(parts) + "\n"


def svg_chart(workload: str, g: dict, width: int = 760) -> str:
    """Grouped horizontal bars: one group per parameter row, one bar per contender."""
    contenders = g["contenders"]
    rows = list(g["rows"].items())
    values = [r["median"] for _, row in rows for r in row.values() if r.get("median")]
    if not values:
        return ""
    vmax, vmin = max(values), min(v for v in values if v > 0)
    log = vmax / vmin > 50
    bar_h, gap, left, right, top = 9, 8, 170, 70, 24
    height = top + len(rows) * (len(contenders) * bar_h + gap) + 20 + 16 * ((len(contenders) + 3) // 4)
    plot_w = width - left - right

    def scale(v: float) -> float:
        if v <= 0:
            return 0
        if log:
            lo = math.log10(vmin) - 0.3
            return plot_w * (math.log10(v) - lo) / (math.log10(vmax) - lo)
        return plot_w * v / vmax

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="4" y="14" font-weight="bold">{html.escape(workload)} — {html.escape(g["unit"])}'
           f'{" (log scale)" if log else ""}, {g["better"]} is better</text>']
    y = top
    for label, row in rows:
        out.append(f'<text x="{left - 6}" y="{y + len(contenders) * bar_h / 2 + 4}" text-anchor="end">{html.escape(label[:28])}</text>')
        for i, c in enumerate(contenders):
            r = row.get(c)
            if r and r.get("median"):
                w = max(scale(r["median"]), 1)
                out.append(f'<rect x="{left}" y="{y}" width="{w:.1f}" height="{bar_h - 1}" fill="{PALETTE[i % len(PALETTE)]}">'
                           f'<title>{html.escape(c)}: {fmt(r["median"])} {html.escape(g["unit"])} (min {fmt(r["min"])}, max {fmt(r["max"])})</title></rect>')
                out.append(f'<text x="{left + w + 3:.1f}" y="{y + bar_h - 1}" font-size="9">{fmt(r["median"])}</text>')
            y += bar_h
        y += gap
    y += 6
    for i, c in enumerate(contenders):
        x = 4 + (i % 4) * (width // 4)
        yy = y + 16 * (i // 4)
        out.append(f'<rect x="{x}" y="{yy}" width="10" height="10" fill="{PALETTE[i % len(PALETTE)]}"/>'
                   f'<text x="{x + 14}" y="{yy + 9}">{html.escape(c)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    if log:
        a, b = math.floor(math.log2(lo)), math.ceil(math.log2(hi))
        step = max(1, math.ceil((b - a) / 10))
        return [2.0 ** e for e in range(a, b + 1, step)]
    span = hi - lo or abs(hi) or 1
    unit = 10 ** math.floor(math.log10(span / 5))
    step = next(m * unit for m in (1, 2, 5, 10) if span / (m * unit) <= 6)
    return [k * step for k in range(math.floor(lo / step), math.ceil(hi / step) + 1)]


def svg_lines(title: str, x_label: str, y_label: str, lines: list[tuple[str, list[tuple]]], markers=(), x_log=True,
              y_log=False, x_fmt=fmt, width: int = 760, height: int = 340) -> str:
    """Lines through (x, y[, lo, hi]) points, one colour per line (min..max as a band when given),
    vertical markers at (x, label): latency against working-set size with the cache sizes, say."""
    pts = [p for _, ps in lines for p in ps if p[1] is not None and (not y_log or p[1] > 0) and (not x_log or p[0] > 0)]
    if not pts:
        return ""
    left, right, top, bottom = 64, 16, 26, 46 + 16 * ((len(lines) + 2) // 3)
    xs = [p[0] for p in pts] + [m[0] for m in markers if min(p[0] for p in pts) <= m[0] <= max(p[0] for p in pts)]
    ys = [p[1] for p in pts] + [v for p in pts if len(p) > 3 for v in p[2:4] if v and (not y_log or v > 0)]
    x0, x1, y0, y1 = min(xs), max(xs), 0 if not y_log else min(ys), max(ys)
    if x1 == x0:
        x1 = x0 * 2 if x_log else x0 + 1
    if y1 == y0:
        y1 = y0 * 2 if y_log else y0 + 1
    ax = (lambda v: math.log2(v)) if x_log else (lambda v: v)
    ay = (lambda v: math.log2(v)) if y_log else (lambda v: v)
    pw, ph = width - left - right, height - top - bottom

    def X(v):
        return left + pw * (ax(v) - ax(x0)) / (ax(x1) - ax(x0))

    def Y(v):
        v = max(v, y0) if y_log else v
        return top + ph * (1 - (ay(v) - ay(y0)) / (ay(y1) - ay(y0)))

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="11">',
           f'<text x="4" y="14" font-weight="bold">{html.escape(title)}</text>',
           f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#bbb"/>']
    for t in _ticks(x0, x1, x_log):
        if x0 <= t <= x1:
            out.append(f'<line x1="{X(t):.1f}" y1="{top + ph}" x2="{X(t):.1f}" y2="{top + ph + 4}" stroke="#888"/>'
                       f'<text x="{X(t):.1f}" y="{top + ph + 15}" text-anchor="middle" font-size="9">{html.escape(x_fmt(t))}</text>')
    for t in _ticks(y0, y1, y_log):
        if y0 <= t <= y1:
            out.append(f'<line x1="{left}" y1="{Y(t):.1f}" x2="{left + pw}" y2="{Y(t):.1f}" stroke="#eee"/>'
                       f'<text x="{left - 4}" y="{Y(t) + 3:.1f}" text-anchor="end" font-size="9">{fmt(t)}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{top + ph + 30}" text-anchor="middle">{html.escape(x_label)}</text>'
               f'<text x="12" y="{top + ph / 2}" transform="rotate(-90 12 {top + ph / 2})" text-anchor="middle">{html.escape(y_label)}</text>')
    for mx, label in markers:
        if x0 <= mx <= x1:
            out.append(f'<line x1="{X(mx):.1f}" y1="{top}" x2="{X(mx):.1f}" y2="{top + ph}" stroke="#999" stroke-dasharray="4 3"/>'
                       f'<text x="{X(mx) + 3:.1f}" y="{top + 10}" font-size="9" fill="#666">{html.escape(label)}</text>')
    for i, (label, ps) in enumerate(lines):
        colour = PALETTE[i % len(PALETTE)]
        ps = [p for p in ps if p[1] is not None and (not y_log or p[1] > 0) and (not x_log or p[0] > 0)]
        band = [p for p in ps if len(p) > 3 and p[2] and p[3]]
        if len(band) > 1:
            edge = [f"{X(p[0]):.1f},{Y(p[3]):.1f}" for p in band] + [f"{X(p[0]):.1f},{Y(p[2]):.1f}" for p in reversed(band)]
            out.append(f'<polygon points="{" ".join(edge)}" fill="{colour}" fill-opacity="0.1" stroke="none"/>')
        path = " ".join(f"{X(p[0]):.1f},{Y(p[1]):.1f}" for p in ps)
        out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
        for p in ps:
            out.append(f'<circle cx="{X(p[0]):.1f}" cy="{Y(p[1]):.1f}" r="2.2" fill="{colour}">'
                       f'<title>{html.escape(label)}: {html.escape(x_fmt(p[0]))} → {fmt(p[1])}</title></circle>')
        lx, ly = 4 + (i % 3) * (width // 3), top + ph + 38 + 16 * (i // 3)
        out.append(f'<rect x="{lx}" y="{ly}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{lx + 14}" y="{ly + 9}">{html.escape(label)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def html_table(head: list[str], rows: list[list[str]]) -> str:
    h = "".join(f"<th>{html.escape(x)}</th>" for x in head)
    b = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in r) + "</tr>" for r in rows)
    return f"<table><thead><tr>{h}</tr></thead><tbody>{b}</tbody></table>"


def render_html(docs: list[dict]) -> str:
    parts = ["<!doctype html><html><head><meta charset='utf-8'><title>simdex benchmark report</title><style>",
             "body{font-family:sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}",
             "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right;font-size:13px}",
             "th{background:#f3f3f3}td:first-child{text-align:left}h2{border-bottom:2px solid #4269d0}",
             "</style></head><body><h1>simdex benchmark report</h1>"]
    parts.append(html_table(["", ""], [[k, v] for k, v in env_rows(docs[0])]))
    parts.append("<p>Medians of interleaved repetitions; ~ marks a noisy figure (max/min &gt; 1.5); (N×) is the ratio "
                 "to the group's reference contender from the same run (&gt; 1 means better).</p>")
    mrows = machine_rows(docs)
    if mrows:
        parts += ["<h2>Machine limits</h2>", html_table(MACHINE_HEAD, mrows)]
    for doc in docs:
        parts.append(f"<h2>{html.escape(doc['component'])}</h2>")
        if doc.get("notes"):
            parts.append("<ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in doc["notes"]) + "</ul>")
        for workload, g in tables(doc).items():
            parts.append(svg_chart(workload, g))
            rows = [[label] + [cell(row.get(c)) for c in g["contenders"]] for label, row in g["rows"].items()]
            parts.append(html_table(["params"] + g["contenders"], rows))
        hook = section_hook(doc["component"], "html_section")
        if hook is not None:
            parts.append(hook(doc))
    parts.append("</body></html>")
    return "\n".join(parts)


README_BEGIN = "<!-- results:begin (generated by `simdex report DIR --readme README.md`) -->"
README_END = "<!-- results:end -->"


def readme_block(docs: list[dict], command: str, per_component: int = 6) -> str:
    """A short summary for the README: the largest-parameter row of the first workloads of
    each component, every contender's median with its ratio, plus date, machine and command."""
    e = docs[0].get("environment", {})
    lines = [README_BEGIN, "",
             f"Measured {docs[0].get('started', '?')[:10]} on {e.get('cpu_model', '?')} ({e.get('cores', '?')} cores, "
             f"{'KVM guest, ' if e.get('hypervisor') else ''}THP {e.get('thp', '?')}), commit {e.get('simdex_commit', '?')}, "
             f"by `{command}`; medians, `(N×)` = ratio to the reference named in the row, same run.", "",
             "| component | workload | params | figures (unit) | reference |", "|---|---|---|---|---|"]
    for doc in docs:
        for workload, g in list(tables(doc).items())[:per_component]:
            label, row = list(g["rows"].items())[-1]
            ref = next((r["ratio"]["reference"] for r in row.values() if r.get("ratio")), "–")
            figs = "; ".join(f"{c} {cell(row.get(c))}" for c in g["contenders"] if c in row)
            lines.append(f"| {doc['component']} | {workload} | {label} | {figs} ({g['unit']}) | {ref} |")
    lines += ["", README_END]
    return "\n".join(lines)


def update_readme(readme: str | Path, docs: list[dict], command: str) -> None:
    path = Path(readme)
    text = path.read_text()
    if README_BEGIN.split(" (")[0] not in text or README_END not in text:
        raise ValueError(f"{path}: no results markers ({README_END})")
    head = text[: text.index(README_BEGIN.split(" (")[0])]
    tail = text[text.index(README_END) + len(README_END):]
    path.write_text(head + readme_block(docs, command) + tail)


def render(directory: str | Path) -> tuple[Path, Path]:
    docs = load(directory)
    d = Path(directory)
    md, page = d / "REPORT.md", d / "report.html"
    md.write_text(render_markdown(docs))
    page.write_text(render_html(docs))
    return md, page
