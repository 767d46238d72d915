"""SVG charts for the benchmark report: grouped bars, lines against a size, and a ratio overview.

Each function returns one self-contained ``<svg>`` element (no script, no external resource),
so a component's ``html_section(doc)`` hook can use them for charts of its own. Every chart kind
has one scale: bars run from zero on a linear axis, lines against a size use log-log axes, ratios
a log axis centred on 1x; every axis is labelled. Labels are never shortened: margins grow to fit
them. :class:`Colours` gives a contender the same colour in every chart of a report.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple, Optional

# Distinguishable on white, and for the common kinds of colour blindness in its first eight.
PALETTE = ("#4269d0", "#efb118", "#ff725c", "#6cc5b0", "#3ca951", "#ff8ab7", "#a463f2", "#97bbf5",
           "#9c6b4e", "#9498a0", "#1b5e20", "#b71c1c", "#00838f", "#6d4c41", "#ad1457", "#283593")
FONT = 11
FONT_FAMILY = "Helvetica, Arial, sans-serif"


class Bar(NamedTuple):
    """One bar: its contender (legend and colour), length, the text printed after it and the
    tooltip (min, max, ...)."""

    contender: str
    value: float
    text: str
    tooltip: str = ""


class Colours:
    """One colour per contender for a whole report.

    Built from the sets of contenders drawn together (one set per chart): a name keeps its colour
    in every chart, and names that share a chart never share a colour. Colours go to names in the
    order they first appear, so the same runs colour the same way.
    """

    def __init__(self, together: Iterable[Sequence[str]] = ()):
        self._colour: dict[str, int] = {}
        self._neighbours: dict[str, set[str]] = {}
        for names in together:
            self.add(names)

    def add(self, names: Sequence[str]) -> None:
        names = list(dict.fromkeys(names))
        for n in names:
            self._neighbours.setdefault(n, set()).update(m for m in names if m != n)
        for n in names:
            if n not in self._colour:
                taken = {self._colour[m] for m in self._neighbours[n] if m in self._colour}
                free = [i for i in range(len(PALETTE)) if i not in taken]
                self._colour[n] = free[0] if free else len(self._colour) % len(PALETTE)

    def __call__(self, name: str) -> str:
        if name not in self._colour:
            self.add([name])
        return PALETTE[self._colour[name]]


# Advance widths in em, each at least that of DejaVu Sans (what "sans-serif" is on many Linux
# desktops, and the widest of the common ones) and of Helvetica/Arial: an estimate from
# Helvetica's alone cut the start of labels full of "=" and digits where DejaVu drew them.
_NARROW, _SEMI, _WIDE, _WIDEST = "ijl.,:;'| ", "frtI()[]/\\-!", "=+<>~^#×", "mwMW%@&"


def text_width(text: str, size: float = FONT) -> float:
    """A generous estimate of the rendered width of ``text`` in a sans-serif font, so that
    margins computed from it always hold the text."""
    w = 0.0
    for ch in text:
        if ch in _NARROW:
            w += 0.34
        elif ch in _SEMI:
            w += 0.42
        elif ch in _WIDEST or ord(ch) >= 0x2E80:  # CJK and beyond: a full em
            w += 1.02
        elif ch in _WIDE or ch.isupper():
            w += 0.84
        else:
            w += 0.64
    return w * size


def _esc(s: object) -> str:
    return html.escape(str(s))


def _svg_open(width: float, height: float, title: str) -> list[str]:
    return [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT_FAMILY}" font-size="{FONT}" role="img">',
            f'<title>{_esc(title)}</title>',
            f'<text x="4" y="15" font-weight="bold" font-size="{FONT + 1}">{_esc(title)}</text>']


def _legend(names: Sequence[str], colours: Colours, x0: float, y0: float, width: float) -> tuple[list[str], float]:
    """Swatches with names, flowing left to right; returns the SVG and the height used."""
    out, x, y = [], x0, y0
    for name in names:
        w = 16 + text_width(name) + 14
        if x > x0 and x + w > width:
            x, y = x0, y + 16
        out.append(f'<rect x="{x:.1f}" y="{y}" width="11" height="11" fill="{colours(name)}"/>')
        out.append(f'<text x="{x + 16:.1f}" y="{y + 10}">{_esc(name)}</text>')
        x += w
    return out, ((y - y0) + 18 if names else 0)


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least ``top`` (steps of 1, 2, 2.5 or 5 times a power of 10)."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    mag = 10 ** math.floor(math.log10(raw))
    step = next(s * mag for s in (1, 2, 2.5, 5, 10) if s * mag >= raw)
    n = math.ceil(top / step - 1e-9)
    return [i * step for i in range(n + 1)]


def log_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks per decade covering [lo, hi] (only decades when the range is wide)."""
    steps = (1, 2, 5) if hi / lo <= 300 else (1,)
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        for s in steps:
            v = s * 10.0 ** e
            if lo <= v <= hi:
                out.append(v)
    return out or [lo, hi]


def tick_label(v: float) -> str:
    if v == 0:
        return "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.10g}" if abs(v) >= 1 else f"{v:.3g}"


def _sig3(v: float) -> str:
    """Three significant digits, without exponent notation for everyday magnitudes."""
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def _wrap(label: str, limit: int = 44) -> list[str]:
    """Break a long label after commas so that no line exceeds ``limit`` characters (a single
    part longer than that keeps its own line, uncut)."""
    parts = label.split(", ")
    lines, cur = [], ""
    for p in parts:
        cand = f"{cur}, {p}" if cur else p
        if cur and len(cand) > limit:
            lines.append(cur + ",")
            cur = p
        else:
            cur = cand
    lines.append(cur)
    return lines


def bar_chart(title: str, axis_label: str, groups: Sequence[tuple[str, Sequence[Bar]]], colours: Colours,
              width: float = 820) -> str:
    """Horizontal grouped bars: one group per label (a parameter row), one bar per contender,
    on one linear axis from zero with ticks and ``axis_label`` under it."""
    bars = [b for _, bs in groups for b in bs if b.value is not None and b.value > 0]
    if not bars:
        return ""
    names = list(dict.fromkeys(b.contender for b in bars))
    bar_h, gap, top = 11, 10, 30
    wrapped = [(_wrap(label), bs) for label, bs in groups]
    left = 10 + max(text_width(line) for lines, _ in wrapped for line in lines)
    right = 14 + max(text_width(b.text, FONT - 1) for b in bars)
    plot_w = max(width - left - right, 240)
    width = left + plot_w + right
    ticks = nice_ticks(max(b.value for b in bars))
    vmax = ticks[-1]

    def sx(v: float) -> float:
        return left + plot_w * max(v, 0) / vmax

    out: list[str] = []
    y = top
    for lines, bs in wrapped:
        shown = [b for b in bs if b.value is not None and b.value > 0]
        h = max(len(shown) * bar_h, len(lines) * 13)
        ly = y + h / 2 - (len(lines) - 1) * 6.5 + 4
        out.append(f'<text x="{left - 6:.1f}" y="{ly:.1f}" text-anchor="end">'
                   + "".join(f'<tspan x="{left - 6:.1f}" dy="{0 if i == 0 else 13}">{_esc(t)}</tspan>'
                             for i, t in enumerate(lines)) + "</text>")
        for i, b in enumerate(shown):
            by = y + i * bar_h
            w = max(sx(b.value) - left, 1)
            tip = f"<title>{_esc(b.tooltip)}</title>" if b.tooltip else ""
            out.append(f'<rect x="{left:.1f}" y="{by}" width="{w:.1f}" height="{bar_h - 2}" fill="{colours(b.contender)}">{tip}</rect>')
            out.append(f'<text x="{left + w + 3:.1f}" y="{by + bar_h - 2.5}" font-size="{FONT - 1}">{_esc(b.text)}</text>')
        y += h + gap
    plot_bottom = y - gap / 2
    grid = []
    for t in ticks:
        x = sx(t)
        grid.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{plot_bottom:.1f}" stroke="#e4e4e4"/>')
        grid.append(f'<text x="{x:.1f}" y="{plot_bottom + 13:.1f}" text-anchor="middle" font-size="{FONT - 1}">{_esc(tick_label(t))}</text>')
    grid.append(f'<line x1="{left:.1f}" y1="{top - 4}" x2="{left:.1f}" y2="{plot_bottom:.1f}" stroke="#888"/>')
    y = plot_bottom + 30
    grid.append(f'<text x="{left + plot_w / 2:.1f}" y="{y - 2:.1f}" text-anchor="middle">{_esc(axis_label)}</text>')
    legend, lh = _legend(names, colours, 4, y + 8, width)
    height = y + 8 + lh + 4
    return "\n".join(_svg_open(width, height, title) + grid + out + legend + ["</svg>"])


def _axis_ticks(lo: float, hi: float, log: bool, values: Sequence[float] = ()) -> list[float]:
    """Ticks for an axis: the measured x values themselves when there are few, else powers of two
    (log) or round steps (linear), at most about ten."""
    if values and len(values) <= 12:
        return list(values)
    if log:
        a, b = math.ceil(math.log2(lo)), math.floor(math.log2(hi))
        step = max(1, math.ceil((b - a + 1) / 10))
        return [2.0 ** e for e in range(a, b + 1, step)] or [lo, hi]
    return [t for t in nice_ticks(hi, 6) if t >= lo]


def line_chart(title: str, x_label: str, y_label: str, series: dict[str, Sequence[tuple]],
               colours: Colours, x_format: Callable[[float], str] = tick_label,
               limits: Sequence[tuple] = (), markers: Sequence[tuple[float, str]] = (),
               x_log: bool = True, y_log: bool = True, width: float = 820, height: float = 360) -> str:
    """Lines against a size, one per contender: points (x, y) or (x, y, lo, hi), the lo..hi spread
    drawn as a band. Each machine limit in ``limits`` (label, y), or (label, y, noisy) with its
    figure marked "~" when noisy as the report's tables mark theirs, is a dashed horizontal line,
    each marker (x, label) a dashed vertical one (a cache size, say). Log axes by default."""

    def usable(p: tuple) -> bool:
        return p[1] is not None and (not x_log or p[0] > 0) and (not y_log or p[1] > 0)

    pts = [p for s in series.values() for p in s if usable(p)]
    if not pts:
        return ""
    xs = sorted({p[0] for p in pts})
    ys = [p[1] for p in pts] + [v for p in pts if len(p) > 3 for v in p[2:4] if v and (not y_log or v > 0)]
    ys += [lim[1] for lim in limits if lim[1] and lim[1] > 0]
    if y_log:
        ylo, yhi = min(ys) / 1.3, max(ys) * 1.3
        yt = log_ticks(ylo, yhi)
        ylo, yhi = min(ylo, yt[0]), max(yhi, yt[-1])
    else:
        yt = nice_ticks(max(ys) * 1.05)
        ylo, yhi = 0.0, yt[-1]
    left = 16 + max(text_width(tick_label(t), FONT - 1) for t in yt) + 16
    right, top = 24, 30
    plot_w, plot_h = width - left - right, height - top - 60
    xlo, xhi = xs[0], xs[-1]
    ax = math.log2 if x_log else (lambda v: v)
    span = ax(xhi) - ax(xlo) if xhi > xlo else 1.0

    def sx(x: float) -> float:
        if xhi == xlo:
            return left + plot_w / 2
        return left + plot_w * (0.03 + 0.94 * (ax(x) - ax(xlo)) / span)

    def sy(y: float) -> float:
        if y_log:
            return top + plot_h * (1 - math.log10(max(y, ylo) / ylo) / math.log10(yhi / ylo))
        return top + plot_h * (1 - (y - ylo) / (yhi - ylo))

    out = []
    for t in yt:
        out.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{left + plot_w}" y2="{sy(t):.1f}" stroke="#e4e4e4"/>')
        out.append(f'<text x="{left - 4}" y="{sy(t) + 3.5:.1f}" text-anchor="end" font-size="{FONT - 1}">{_esc(tick_label(t))}</text>')
    for x in _axis_ticks(xlo, xhi, x_log, xs if len(xs) <= 12 else ()):
        out.append(f'<line x1="{sx(x):.1f}" y1="{top}" x2="{sx(x):.1f}" y2="{top + plot_h}" stroke="#f0f0f0"/>')
        out.append(f'<text x="{sx(x):.1f}" y="{top + plot_h + 13}" text-anchor="middle" font-size="{FONT - 1}">{_esc(x_format(x))}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#888"/>')
    out.append(f'<text x="{left + plot_w / 2:.1f}" y="{top + plot_h + 30}" text-anchor="middle">{_esc(x_label)}'
               f'{" (log scale)" if x_log else ""}</text>')
    out.append(f'<text transform="translate(12 {top + plot_h / 2:.1f}) rotate(-90)" text-anchor="middle">{_esc(y_label)}'
               f'{" (log scale)" if y_log else ""}</text>')
    for label, v, *noisy in limits:
        if v and v > 0:
            figure = _sig3(v) + ("~" if noisy and noisy[0] else "")
            out.append(f'<line x1="{left}" y1="{sy(v):.1f}" x2="{left + plot_w}" y2="{sy(v):.1f}" stroke="#555" stroke-dasharray="5 3">'
                       f'<title>{_esc(label)}: {_esc(figure)}</title></line>')
            out.append(f'<text x="{left + plot_w - 4}" y="{sy(v) - 3:.1f}" text-anchor="end" font-size="{FONT - 1}" fill="#555">'
                       f'{_esc(label)} {_esc(figure)}</text>')
    for x, label in markers:
        if xlo <= x <= xhi:
            out.append(f'<line x1="{sx(x):.1f}" y1="{top}" x2="{sx(x):.1f}" y2="{top + plot_h}" stroke="#999" stroke-dasharray="4 3"/>'
                       f'<text x="{sx(x) + 3:.1f}" y="{top + 10}" font-size="{FONT - 2}" fill="#666">{_esc(label)}</text>')
    for name, s in series.items():
        s = sorted(p for p in s if usable(p))
        if not s:
            continue
        c = colours(name)
        band = [p for p in s if len(p) > 3 and p[2] and p[3]]
        if len(band) > 1:
            edge = [f"{sx(p[0]):.1f},{sy(p[3]):.1f}" for p in band] + [f"{sx(p[0]):.1f},{sy(p[2]):.1f}" for p in reversed(band)]
            out.append(f'<polygon points="{" ".join(edge)}" fill="{c}" fill-opacity="0.12" stroke="none"/>')
        if len(s) > 1:
            d = " ".join(f"{sx(p[0]):.1f},{sy(p[1]):.1f}" for p in s)
            out.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"/>')
        for p in s:
            out.append(f'<circle cx="{sx(p[0]):.1f}" cy="{sy(p[1]):.1f}" r="3" fill="{c}"><title>{_esc(name)}: '
                       f'{_esc(_sig3(p[1]))} at {_esc(x_format(p[0]))}</title></circle>')
    legend, lh = _legend(list(series), colours, 4, top + plot_h + 42, width)
    return "\n".join(_svg_open(width, top + plot_h + 42 + lh + 4, title) + out + legend + ["</svg>"])


def ratio_chart(title: str, rows: Sequence[tuple[str, float, Optional[str]]], width: float = 820) -> str:
    """One bar per row (label, ratio, text) from the 1x line on a log axis: right of it is
    better than the peer, left worse."""
    rows = [r for r in rows if r[1] and r[1] > 0]
    if not rows:
        return ""
    bar_h, top = 16, 30
    left = 10 + max(text_width(label) for label, _, _ in rows)
    texts = [t or f"{v:.3g}×" for _, v, t in rows]
    right = 14 + max(text_width(t, FONT - 1) for t in texts)
    plot_w = max(width - left - right, 240)
    width = left + plot_w + right
    lo = min(min(v for _, v, _ in rows), 1.0) / 1.5
    hi = max(max(v for _, v, _ in rows), 1.0) * 1.5
    ticks = [t for t in log_ticks(lo, hi) if t >= 1e-3]

    def sx(v: float) -> float:
        return left + plot_w * math.log(v / lo) / math.log(hi / lo)

    out = []
    y = top
    for (label, v, _), text in zip(rows, texts):
        x0, x1 = sorted((sx(1.0), sx(v)))
        fill = "#3ca951" if v >= 1 else "#ff725c"
        out.append(f'<text x="{left - 6:.1f}" y="{y + bar_h - 4}" text-anchor="end">{_esc(label)}</text>')
        out.append(f'<rect x="{x0:.1f}" y="{y}" width="{max(x1 - x0, 1):.1f}" height="{bar_h - 3}" fill="{fill}"/>')
        out.append(f'<text x="{max(x1, sx(1.0)) + 3:.1f}" y="{y + bar_h - 4}" font-size="{FONT - 1}">{_esc(text)}</text>')
        y += bar_h
    bottom = y + 4
    grid = []
    for t in ticks:
        grid.append(f'<line x1="{sx(t):.1f}" y1="{top - 4}" x2="{sx(t):.1f}" y2="{bottom}" stroke="{"#555" if t == 1 else "#e4e4e4"}"/>')
        grid.append(f'<text x="{sx(t):.1f}" y="{bottom + 13}" text-anchor="middle" font-size="{FONT - 1}">{tick_label(t)}×</text>')
    grid.append(f'<text x="{left + plot_w / 2:.1f}" y="{bottom + 30}" text-anchor="middle">'
                f'simdex against the best peer (log scale; right of 1× is better)</text>')
    return "\n".join(_svg_open(width, bottom + 38, title) + grid + out + ["</svg>"])
