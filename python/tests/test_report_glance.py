"""The report at a glance, on made-up runs: the summary table, the run's time span, charts that
never cut a label, one colour per contender, ratios on the charts, readable sizes, labelled axes,
scaling plots with the machine limit, the README block, and the components' report hooks."""

from __future__ import annotations

import json
import re
import sys
import types

import pytest

from simdex import headlines, plots, report

MACHINE = {"cycle_ns": 0.25, "ghz_estimate": 4.0, "probe_bytes": 1 << 28,
           "memcpy_gib_s": {"4k": {"median": 12.0}, "2m": {"median": 14.0}},
           "latency_ns": {"4k": {"chains_1": {"median": 110.0}, "chains_16": {"median": 9.0}},
                          "2m": {"chains_1": {"median": 80.0}, "chains_16": {"median": 6.0}}}}


def result(workload, params, contender, median, unit="ns/op", better="lower", reference=None, ref_median=None):
    r = {"workload": workload, "params": params, "contender": contender, "version": "", "unit": unit, "better": better,
         "samples": [median], "median": median, "min": median, "max": median, "noisy": False}
    if reference and ref_median:
        r["ratio"] = {"reference": reference,
                      "value": ref_median / median if better == "lower" else median / ref_median}
    return r


def doc(component, results, started="2026-01-01T10:00:00Z", finished="2026-01-01T10:05:00Z", machine=MACHINE):
    return {"schema": report.SCHEMA, "component": component, "mode": "quick", "repetitions": 5, "started": started,
            "finished": finished, "environment": {"cpu_model": "Test CPU", "cores": 2, "isa_active": "avx512"},
            "machine": machine, "notes": [], "results": results}


def base85_doc():
    rs = []
    for n in (64, 4096, 1 << 20, 64 << 20):
        f = 1 + n / 2**30  # exact in binary, so the ratios are too
        for c, v in (("scalar", 1.0), ("avx2", 6.0), ("avx512", 9.0), ("simdex alloc", 3.0), ("memcpy", 13.0),
                     ("base85-simd", 1.0)):
            rs.append(result("b85_encode", {"variant": "b85", "bytes": n}, c, v * f, "GiB/s", "higher", "base85-simd", f))
    return doc("base85", rs, started="2026-01-01T10:06:00Z", finished="2026-01-01T10:09:30Z")


def btree_doc():
    p = {"n": 1048576, "key": "u64", "keys": "sparse", "pages": "2m"}
    rs = []
    for w, vals in (("contains_hit", (50.0, 100.0, 300.0)), ("seq_insert", (20.0, 30.0, 90.0))):
        for c, v in zip(("simdex::btree_set", "absl::btree_set", "std::set"), vals):
            rs.append(result(w, {**p, "ops": 100000}, c, v, reference="absl::btree_set", ref_median=vals[1]))
    for c, v in (("simdex::btree_set", 10.0), ("absl::btree_set", 9.0)):
        rs.append(result("bytes_per_key", p, c, v, "B/key"))
        rs.append(result("huge_page_share", p, c, 0.0, "fraction", "higher"))
    return doc("btree", rs, started="2026-01-01T09:59:00Z", finished="2026-01-01T10:01:00Z")


def test_sizes_read_as_binary_units():
    assert report.fmt_bytes(64) == "64 B"
    assert report.fmt_bytes(32768) == "32 KiB"
    assert report.fmt_bytes(64 << 20) == "64 MiB"
    assert report.fmt_bytes(3 << 30) == "3 GiB"
    assert report.fmt_bytes(1536) == "1.5 KiB"
    assert report.param_label({"filter_bytes": 33554432, "keys": 1000000, "n": 256}) == "filter_bytes=32 MiB, keys=1,000,000, n=256"


def test_summary_table_opens_both_documents(tmp_path):
    docs = [base85_doc(), btree_doc()]
    for d in docs:
        (tmp_path / f"{d['component']}.json").write_text(json.dumps(d))
    md_path, html_path = report.render(tmp_path)
    md, page = md_path.read_text(), html_path.read_text()
    # The summary comes before everything else, the environment after it.
    assert md.index("## Summary") < md.index("## Environment") < md.index("## btree")
    assert page.index("<h2>Summary</h2>") < page.index("<h2>Environment</h2>")
    rows = [line for line in md.split("## Summary", 1)[1].split("##", 1)[0].splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| component | workload | params | simdex | best peer | ratio | machine limit |")
    b85 = next(r for r in rows if "b85_encode" in r)
    # b85 against base85-simd: simdex with its output allocated per call as the crate's is, at
    # 1 MiB (64 MiB measures page faults on both sides); its ratio; memcpy beside it.
    assert "bytes=1 MiB" in b85 and "simdex alloc 3.00 GiB/s" in b85 and "base85-simd 1.00" in b85 and "| 3.00× |" in b85
    assert "memcpy (4k pages) 12.0 GiB/s" in b85
    hit = next(r for r in rows if "contains_hit" in r)
    assert "simdex::btree_set 50.0 ns/op" in hit and "absl::btree_set 100" in hit and "| 2.00× |" in hit
    assert "DRAM latency, 1 chain (2m pages) 80.0 ns" in hit
    # Memory rows and an all-zero huge-page row are no headline.
    assert not any("bytes_per_key" in r or "huge_page_share" in r for r in rows)


def test_header_run_time_spans_all_components():
    rows = dict(report.env_rows(btree_doc(), [base85_doc(), btree_doc()]))
    assert "2026-01-01T09:59:00Z – 2026-01-01T10:09:30Z" in rows["run"]
    assert "(2 components)" in rows["run"]


def test_chart_labels_are_never_cut():
    long = "a_very_long_parameter_name=12345, another_long_parameter=quite a long value indeed, third=3"
    g = {"unit": "ns/op", "better": "lower", "contenders": ["simdex", "peer"],
         "rows": {long: {"simdex": result("w", {}, "simdex", 1.0, reference="peer", ref_median=2.0),
                         "peer": result("w", {}, "peer", 2.0)},
                  long + ", x=1": {"simdex": result("w", {}, "simdex", 1.5), "peer": result("w", {}, "peer", 2.5)}}}
    svg = report.svg_chart("w", g)
    text = re.sub(r"<[^>]+>", "\n", svg)
    for part in long.split(", "):
        assert part in text, part
    assert "x=1" in text
    # The widest label fits left of the bars: the left margin holds its estimated width.
    x = float(re.search(r'<rect x="([0-9.]+)" y="[0-9.]+" width="[0-9.]+" height="9"', svg).group(1))
    assert x >= max(plots.text_width(line) for line in plots._wrap(long))


def test_ratios_are_on_the_bars():
    g = report.tables(btree_doc())["contains_hit"]
    svg = report.svg_chart("contains_hit", g)
    assert "50.0 (2.00×)" in svg and "300 (0.333×)" in svg


def test_one_colour_per_contender_across_the_report():
    docs = [btree_doc(), base85_doc()]
    colours = report.report_colours(docs)
    seen = {}
    for d in docs:
        for workload, g in report.tables(d).items():
            svg = report.svg_chart(workload, g, colours=colours)
            found = dict(re.findall(r'<rect x="[0-9.]+" y="[0-9.]+" width="11" height="11" fill="(#[0-9a-f]+)"/>\s*<text[^>]*>([^<]+)<', svg))
            by_name = {name: colour for colour, name in found.items()}
            assert len(set(by_name.values())) == len(by_name), by_name  # distinct within a chart
            for name, colour in by_name.items():
                assert seen.setdefault(name, colour) == colour, name  # the same in every chart
    assert seen["simdex::btree_set"] and len(seen) >= 4


def test_bar_axis_is_linear_from_zero_and_labelled():
    svg = report.svg_chart("contains_hit", report.tables(btree_doc())["contains_hit"])
    assert ">ns/op, lower is better<" in svg
    ticks = [t for t in re.findall(r'text-anchor="middle" font-size="10">([0-9.,]+)<', svg)]
    assert ticks[0] == "0" and len(ticks) >= 3
    assert "log scale" not in svg


def test_scaling_plot_has_the_machine_limit_as_a_line():
    d = base85_doc()
    plots_ = headlines.scalings(d, d["machine"])
    assert plots_, "base85 declares a scaling plot of b85_encode against bytes"
    s = plots_[0]
    assert s.x == "bytes" and len(s.series["avx512"]) == 4
    svg = report.scaling_svg(s, plots.Colours([list(s.series)]))
    assert 'stroke-dasharray="5 3"' in svg and "memcpy (4k pages) 12" in svg
    assert "bytes (log scale)" in svg and "GiB/s, higher is better (log scale)" in svg
    assert ">64 MiB<" in svg and ">4 KiB<" in svg


def test_markdown_links_the_plots(tmp_path):
    d = base85_doc()
    (tmp_path / "base85.json").write_text(json.dumps(d))
    md, _ = report.render(tmp_path)
    links = re.findall(r"!\[[^]]*\]\((plots/[^)]+\.svg)\)", md.read_text())
    assert "plots/summary.svg" in links and len(links) == 2
    for link in links:
        assert (tmp_path / link).read_text().startswith("<svg")


def test_readme_block_shows_headline_rows_only(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{report.README_BEGIN}\nold\n{report.README_END}\noutro\n")
    report.update_readme(readme, [btree_doc(), base85_doc()], "bash scripts/bench.sh")
    text = readme.read_text()
    assert text.startswith("intro\n") and text.endswith("\noutro\n") and "old" not in text
    assert "| btree | contains_hit |" in text and "| base85 | b85_encode |" in text
    assert "bytes_per_key" not in text and "huge_page_share" not in text
    # A component rerun at another commit is named with it.
    a, b = btree_doc(), base85_doc()
    a["environment"]["simdex_commit"], b["environment"]["simdex_commit"] = "aaaaaaaaaaaa", "bbbbbbbbbbbb"
    report.update_readme(readme, [a, b], "bash scripts/bench.sh")
    assert "commit aaaaaaaaaaaa, base85 at bbbbbbbbbbbb," in readme.read_text()


def test_component_hooks_and_default_headlines(monkeypatch):
    mod = types.ModuleType("simdex.benchmarks.fakelab")
    mod.markdown_section = lambda d: "FAKELAB MARKDOWN " + plots.tick_label(2.5)
    mod.html_section = lambda d: "<p>FAKELAB HTML</p>" + plots.bar_chart(
        "own", "x", [("row", [plots.Bar("simdex", 1.0, "1")])], plots.Colours())
    monkeypatch.setitem(sys.modules, "simdex.benchmarks.fakelab", mod)
    rs = [result("op", {"size": 1}, "simdex", 5.0, reference="other", ref_median=10.0), result("op", {"size": 1}, "other", 10.0),
          result("op", {"size": 1}, "in-memory ceiling", 1.0, reference="other", ref_median=10.0),
          result("mem", {"size": 1}, "simdex", 8.0, "B/key")]
    d = doc("fakelab", rs)
    md, page = report.render_markdown([d]), report.render_html([d])
    assert "FAKELAB MARKDOWN 2.5" in md and "<p>FAKELAB HTML</p><svg" in page
    # No HEADLINES declared: time and throughput workloads, against the peer the benchmark made
    # its reference (not a faster contender it shows for scale).
    heads = headlines.headlines([d])
    assert [(h.workload, h.simdex.contender, h.peer.contender, h.ratio) for h in heads] == [("op", "simdex", "other", 2.0)]


@pytest.mark.parametrize("ratio_rows", [[("a", 3.0, None), ("b", 0.5, None)]])
def test_ratio_chart_centres_on_one(ratio_rows):
    svg = plots.ratio_chart("t", ratio_rows)
    assert ">1×<" in svg and "3×" in svg and "0.5×" in svg and "right of 1× is better" in svg


def test_a_headline_contender_missing_from_the_run_falls_back_to_the_dispatched_level():
    """b85's headline names 'simdex alloc', which runs only beside base85-simd: a run without
    the crate (no cargo) lost its b85 summary rows instead of showing the dispatched level."""
    d = base85_doc()
    d["results"] = [r for r in d["results"] if r["contender"] not in ("simdex alloc", "base85-simd")]
    heads = [h for h in headlines.headlines([d]) if h.workload == "b85_encode"]
    assert len(heads) == 1 and heads[0].simdex.contender == "avx512"


def _elsewhere(d: dict, cpu: str = "Other CPU", commit: str = "bbbbbbbbbbbb") -> dict:
    d["environment"] = {**d["environment"], "cpu_model": cpu, "cores": 16, "simdex_commit": commit}
    return d


def test_runs_from_another_machine_are_named_with_it(tmp_path):
    """A run copied in from another machine read as measured on the first run's: the
    environment table and the README line showed one CPU and one commit for every component."""
    here, there = btree_doc(), _elsewhere(base85_doc())
    here["environment"]["simdex_commit"] = "aaaaaaaaaaaa"
    rows = dict(report.env_rows(here, [here, there]))
    assert rows["CPU"] == "Test CPU (?), 2 cores (btree); Other CPU (?), 16 cores (base85)"
    assert rows["simdex"] == "? commit aaaaaaaaaaaa (btree); ? commit bbbbbbbbbbbb (base85)"
    assert rows["compiler"] == "?"  # what the runs share is shown once
    same = dict(report.env_rows(here, [here, btree_doc()]))
    assert same["CPU"] == "Test CPU (?), 2 cores"
    readme = tmp_path / "README.md"
    readme.write_text(f"{report.README_BEGIN}\n{report.README_END}\n")
    there["mode"] = "full"
    report.update_readme(readme, [here, there], "simdex bench")
    line = next(ln for ln in readme.read_text().splitlines() if ln.startswith("Measured"))
    assert "on Test CPU (2 cores, THP ?), base85 on Other CPU (16 cores, THP ?)," in line
    assert "(quick mode, base85 in full mode)" in line


def test_the_readme_says_only_what_the_runs_record():
    """The README line called every hypervisor "KVM": the runs record only that there is one."""
    d = btree_doc()
    d["environment"]["hypervisor"] = True
    block = report.readme_block([d], "simdex bench")
    assert "KVM" not in block and "(2 cores, virtual machine, THP ?)" in block


def test_a_run_without_limits_borrows_none_from_another_machine():
    """A --no-probe run took the machine limits of the first run that had them, even one from
    another machine, and showed them beside its own figures."""
    here, there = btree_doc(), _elsewhere(btree_doc())
    there["machine"] = None

    def limits(docs):
        return {h.limit for h in headlines.headlines(docs)[len(headlines.headlines(docs[:1])):]}

    assert limits([here, there]) == {None}
    there["environment"] = dict(here["environment"])  # the same machine: its limits hold
    assert limits([here, there]) == {("DRAM latency, 1 chain (2m pages)", "ns", 80.0, False)}


# DejaVu Sans advance widths (em), read from DejaVuSans.ttf: "sans-serif" on many Linux desktops.
DEJAVU = {**dict.fromkeys("abdghnopqu", 0.635), **dict.fromkeys("0123456789", 0.636), **dict.fromkeys("=+<>~×", 0.838),
          "c": 0.55, "e": 0.615, "f": 0.352, "i": 0.278, "k": 0.579, "l": 0.278, "m": 0.974, "r": 0.411, "s": 0.521,
          "t": 0.392, "v": 0.592, "w": 0.818, "x": 0.592, "y": 0.592, "z": 0.525, "M": 0.863, "W": 0.989, "D": 0.77,
          "O": 0.787, "_": 0.5, "-": 0.361, "/": 0.337, ":": 0.337, ",": 0.318, ".": 0.318, " ": 0.318, "(": 0.39,
          ")": 0.39, "%": 0.95}


@pytest.mark.parametrize("label", ["gen=rand, keys=2,000,000, threads=1", "simdex::btree_set 37.0~ (5.72×)",
                                   "lmdb-writemap", "MOW www mmm", "bytes_per_key=100%"])
def test_label_width_estimates_hold_in_dejavu_sans(label):
    """The kv chart's row label "gen=rand, keys=2,000,000, threads=1" lost its first letters
    where sans-serif is DejaVu Sans: the estimate took "=" and digits for narrower than they are."""
    assert plots.text_width(label, 1) >= sum(DEJAVU[ch] for ch in label)


def test_a_headline_under_one_cycle_is_marked_as_in_the_tables(tmp_path):
    """The tables mark a time under one core cycle with "!"; the summary row and the README, the
    figures a user shows, printed it unmarked."""
    d = btree_doc()
    for r in d["results"]:
        if r["workload"] == "contains_hit" and r["contender"] == "simdex::btree_set":
            r["below_one_cycle"] = True
    row = next(r for r in report.summary_rows(headlines.headlines([d])) if r[1] == "contains_hit")
    assert row[3] == "simdex::btree_set 50.0! ns/op"
    block = report.readme_block([d], "simdex bench")
    assert "| simdex::btree_set 50.0! ns/op |" in block and "`!` under one core cycle" in block
    assert "`!`" not in report.readme_block([btree_doc()], "simdex bench")


def test_noisy_machine_figures_are_marked():
    """A noisy memcpy or latency probe was printed unmarked, in the machine table and beside
    the headlines, though "~" marks every other noisy figure."""
    d = base85_doc()
    d["machine"] = json.loads(json.dumps(MACHINE))
    d["machine"]["memcpy_gib_s"]["4k"]["noisy"] = True
    d["machine"]["latency_ns"]["2m"]["chains_1"]["noisy"] = True
    row = report.machine_rows([d])[0]
    assert row[1:5] == ["12.0~", "14.0", "110", "80.0~"]
    b85 = next(r for r in report.summary_rows(headlines.headlines([d])) if r[1] == "b85_encode")
    assert b85[6] == "memcpy (4k pages) 12.0~ GiB/s"


def test_a_component_without_headline_rows_says_so():
    """A btree run with none of its headline workloads (--only) was missing from the summary
    without a word, under a note on how its headlines compare."""
    only_memory = btree_doc()
    only_memory["results"] = [r for r in only_memory["results"] if r["workload"] == "bytes_per_key"]
    note = report.summary_note([base85_doc(), only_memory])
    assert "btree: none of its headline workloads is in this run" in note
    assert "ordered indexes" not in note and "base85: b85 rows compare" in note
    assert "btree: none" not in report.summary_note([base85_doc(), btree_doc()])
