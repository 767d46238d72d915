"""`simdex report` and the files it and `simdex lab list --markdown --update` write, against damage:
malformed benchmark JSON is named with what is wrong (never a traceback), a FIFO named *.json is
refused without being opened, and a failed write (a file size limit, a full disk) leaves every
old file as it was, never a truncated one or a new REPORT.md beside an old report.html. And
`simdex bench datasets --only` honours --only (found by an audit, 2026-11-28)."""

from __future__ import annotations

import copy
import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from simdex import bench, report
from simdex.benchmarks import lab


def simdex(*args, limit: int | None = None, timeout: float = 120):
    """``python -m simdex *args``; with ``limit``, under RLIMIT_FSIZE of that many bytes (Python
    ignores SIGXFSZ, so a write past it fails with EFBIG, as on a full disk)."""
    def cap():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run([sys.executable, "-m", "simdex", *args], capture_output=True, text=True, timeout=timeout,
                          preexec_fn=cap if limit is not None else None)


def result(workload, params, contender, median, unit="GiB/s", better="higher", reference=None, ref_median=None):
    r = {"workload": workload, "params": params, "contender": contender, "version": "", "unit": unit, "better": better,
         "samples": [median], "median": median, "min": median, "max": median, "noisy": False}
    if reference:
        r["ratio"] = {"reference": reference, "value": median / ref_median}
    return r


MACHINE = {"cycle_ns": 0.25, "ghz_estimate": 4.0, "probe_bytes": 1 << 28,
           "memcpy_gib_s": {"4k": {"median": 12.0}, "2m": {"median": 14.0}},
           "latency_ns": {"4k": {"chains_1": {"median": 110.0}, "chains_16": {"median": 9.0}},
                          "2m": {"chains_1": {"median": 80.0}, "chains_16": {"median": 6.0}}}}


def base85_doc() -> dict:
    """A well-formed base85 run, with sizes enough for its scaling plots."""
    rs = []
    for n in (64, 4096, 1 << 20):
        for c, v in (("scalar", 1.0), ("avx2", 6.0), ("base85-simd", 2.0)):
            rs.append(result("b85_encode", {"variant": "b85", "bytes": n}, c, v, reference="base85-simd", ref_median=2.0))
    return {"schema": report.SCHEMA, "component": "base85", "mode": "quick", "repetitions": 5,
            "started": "2026-11-28T00:00:00Z", "finished": "2026-11-28T00:01:00Z",
            "environment": {"cpu_model": "Test CPU", "cores": 2, "isa_active": "avx2",
                            "caches": [{"level": 1, "type": "Data", "size": "32K"}]},
            "machine": copy.deepcopy(MACHINE), "notes": ["a note"], "results": rs}


def lab_doc() -> dict:
    """A well-formed lab run of one experiment."""
    experiment = {"id": "aliasing", "study": 1, "group": "memory", "title": "Aliasing", "question": "q?",
                  "study_figure": "2x", "range": {"lo": 1, "hi": 3, "unit": "x", "basis": "b"}, "checks": ["c"],
                  "figure": {"value": 1.5, "unit": "x", "label": "l"}, "verdict": "confirmed", "reason": "r",
                  "validity": [{"name": "c", "status": "pass", "detail": "d"}], "counters": [],
                  "curves": [{"section": "latency", "title": "t", "x_label": "working set (bytes)", "y_label": "ns",
                              "lines": [{"label": "4k", "points": [[1024, 1.0], [4096, 2.0]]}],
                              "markers": [{"x": 2048, "label": "L1"}]}],
                  "notes": ["n"]}
    return {"schema": report.SCHEMA, "component": "lab", "mode": "quick", "repetitions": 5,
            "started": "2026-11-28T00:00:00Z", "finished": "2026-11-28T00:01:00Z", "environment": {},
            "machine": None, "notes": [], "results": [],
            "lab": {"clock": {}, "counters": "none", "study": [{"number": n, "name": str(n), "group": "memory"}
                                                              for n in range(1, 38)],
                    "experiments": [experiment]}}


def _set(doc: dict, path: tuple, value) -> dict:
    doc = copy.deepcopy(doc)
    node = doc
    for key in path[:-1]:
        node = node[key]
    if value is _DROP:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return doc


_DROP = object()
R0 = ("results", 0)
E0 = ("lab", "experiments", 0)

# (case, well-formed document, the damage: path -> value, what the message says)
DAMAGE = [
    ("params_missing", base85_doc, R0 + ("params",), _DROP, '"params" is missing'),
    ("params_list", base85_doc, R0 + ("params",), [1, 2], '"params" is [1, 2]'),
    ("params_null", base85_doc, R0 + ("params",), None, '"params" is None'),
    ("scaling_x_str", base85_doc, R0 + ("params", "bytes"), "big", "param bytes is 'big'"),
    ("unit_missing", base85_doc, R0 + ("unit",), _DROP, '"unit" is missing'),
    ("better_missing", base85_doc, R0 + ("better",), _DROP, '"better" is missing'),
    ("min_missing", base85_doc, R0 + ("min",), _DROP, '"min" is missing'),
    ("ratio_str", base85_doc, R0 + ("ratio",), "x", '"ratio" is \'x\''),
    ("ratio_value_str", base85_doc, R0 + ("ratio", "value"), "x", "ratio 'x' is not a number"),
    ("machine_str", base85_doc, ("machine",), "fast", '"machine" is str'),
    ("machine_list", base85_doc, ("machine",), [1], '"machine" is list'),
    ("machine_latency_list", base85_doc, ("machine", "latency_ns", "4k"), [], '"machine.latency_ns.4k" is not an object'),
    ("machine_median_inf", base85_doc, ("machine", "memcpy_gib_s", "4k", "median"), float("inf"), "not a finite number"),
    ("notes_int", base85_doc, ("notes",), 5, '"notes" is not a list of strings'),
    ("caches_str", base85_doc, ("environment", "caches"), "32K", '"environment.caches" is str'),
    ("component_path", base85_doc, ("component",), "../../x", "\"component\" is '../../x', not one of"),
    ("component_unknown", base85_doc, ("component",), "zzz", "\"component\" is 'zzz', not one of"),
    ("lab_experiment_str", lab_doc, E0, "aliasing", "experiment 0 is str, not an object"),
    ("lab_range_str", lab_doc, E0 + ("range",), "1-3", "aliasing: 'range' is not an object"),
    ("lab_range_lo_str", lab_doc, E0 + ("range", "lo"), "one", "aliasing: 'range.lo' is 'one', not a number"),
    ("lab_figure_value_str", lab_doc, E0 + ("figure", "value"), "big", "aliasing: 'figure.value' is 'big', not a number"),
    ("lab_study_str", lab_doc, E0 + ("study",), "1", "aliasing: study number '1'"),
    ("lab_checks_dicts", lab_doc, E0 + ("checks",), [{}], "aliasing: 'checks' is not a list of names"),
    ("lab_point_str", lab_doc, E0 + ("curves", 0, "lines", 0, "points", 0), ["a", 1], "aliasing: curve 0: line 0 has a point"),
    ("lab_counter_str", lab_doc, E0 + ("counters",), ["cycles"], "aliasing: a counter group is not an object"),
    ("lab_clock_str", lab_doc, ("lab", "clock", "tsc_ghz"), "fast", "'lab.clock.tsc_ghz' is 'fast', not a number"),
]


@pytest.mark.parametrize("make", [base85_doc, lab_doc], ids=["base85", "lab"])
def test_the_well_formed_documents_render(tmp_path, make):
    doc = make()
    (tmp_path / f"{doc['component']}.json").write_text(json.dumps(doc))
    r = simdex("report", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "REPORT.md").exists() and (tmp_path / "report.html").exists()


@pytest.mark.parametrize("case,make,path,value,message", DAMAGE, ids=[d[0] for d in DAMAGE])
def test_malformed_json_is_named_not_a_traceback(tmp_path, case, make, path, value, message):
    """Each of these crashed `simdex report` with a traceback (KeyError, AttributeError,
    TypeError from abs(), ModuleNotFoundError for a component of "../../x")."""
    doc = _set(make(), path, value)
    name = f"{make()['component']}.json"
    (tmp_path / name).write_text(json.dumps(doc))
    r = simdex("report", str(tmp_path))
    assert r.returncode == 1, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    assert str(tmp_path / name) in r.stderr and message in r.stderr, r.stderr
    assert not (tmp_path / "REPORT.md").exists() and not (tmp_path / "report.html").exists()


def test_lab_validate_never_raises_on_wrong_types():
    """lab.validate itself read an experiment that is a string with .get(), and int("x")."""
    for _, make, path, value, message in DAMAGE:
        if make is lab_doc:
            problems = lab.validate(_set(lab_doc(), path, value))
            assert any(message.split(": ", 1)[-1] in p for p in problems), (path, problems)
    assert lab.validate(lab_doc()) == []


def test_a_component_section_that_fails_is_named(tmp_path, monkeypatch):
    """A component's own report section reads fields the report's checks do not know; a damaged
    one is named with what went wrong."""
    from simdex.benchmarks import base85

    monkeypatch.setattr(base85, "markdown_section", lambda doc: doc["no such field"], raising=False)
    (tmp_path / "base85.json").write_text(json.dumps(base85_doc()))
    with pytest.raises(ValueError, match=r"base85\.json: its base85 section cannot be rendered \(KeyError"):
        report.render(tmp_path)
    assert not (tmp_path / "REPORT.md").exists()


def test_a_fifo_named_json_is_refused_without_blocking(tmp_path):
    """`simdex report DIR` hung forever opening DIR/x.json, a FIFO with no writer."""
    (tmp_path / "base85.json").write_text(json.dumps(base85_doc()))
    os.mkfifo(tmp_path / "x.json")
    r = simdex("report", str(tmp_path), timeout=60)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{tmp_path / 'x.json'}: is a FIFO, not a regular file" in r.stderr
    with pytest.raises(ValueError, match="is a FIFO"):
        report.read_text(tmp_path / "x.json")


def _temporaries(d: Path) -> list[Path]:
    return [p for p in d.rglob("*") if "simdex-tmp" in p.name]


def _readme(tmp_path: Path, size: int = 405_000) -> tuple[Path, bytes]:
    readme = tmp_path / "README.md"
    filler = ("x" * 99 + "\n") * (size // 100)
    old = f"# t\n\n{report.README_BEGIN}\nold table\n{report.README_END}\n\n{filler}".encode()
    readme.write_bytes(old)
    return readme, old


def test_a_failed_readme_update_leaves_the_old_readme(tmp_path):
    """A write that failed (EFBIG under RLIMIT_FSIZE here) truncated a 405 KB README to 204,800
    bytes: --readme rewrote the file in place."""
    d = tmp_path / "run"
    d.mkdir()
    (d / "base85.json").write_text(json.dumps(base85_doc()))
    readme, old = _readme(tmp_path)
    r = simdex("report", str(d), "--readme", str(readme), limit=200 * 1024)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(readme) in r.stderr and "File too large" in r.stderr, r.stderr
    assert readme.read_bytes() == old
    assert not _temporaries(tmp_path)
    # Without the limit it is replaced, and a README reached by a symlink keeps its link.
    link = tmp_path / "LINK.md"
    link.symlink_to(readme.name)
    r = simdex("report", str(d), "--readme", str(link))
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and "old table" not in readme.read_text() and "b85_encode" in readme.read_text()
    assert not _temporaries(tmp_path)


def test_a_failed_lab_table_update_leaves_the_old_file(tmp_path):
    """`simdex lab list --markdown --update FILE` (lab.update_table) rewrote FILE in place too."""
    f = tmp_path / "lab.md"
    old = (f"intro\n{lab.TABLE_BEGIN}\n| old |\n{lab.TABLE_END}\n" + "y" * 405_000 + "\n").encode()
    f.write_bytes(old)
    code = f"from simdex.benchmarks import lab; lab.update_table({str(f)!r}, '| new |')"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (200 * 1024, 200 * 1024)))
    assert r.returncode != 0 and "File too large" in r.stderr and str(f) in r.stderr, r.stderr
    assert f.read_bytes() == old and not _temporaries(tmp_path)
    lab.update_table(f, "| new |")
    assert f.read_bytes() == old.replace(b"| old |", b"| new |") and not _temporaries(tmp_path)
    with pytest.raises(ValueError, match=f"{f.parent / 'none.md'}: no "):
        (tmp_path / "none.md").write_text("no markers")
        lab.update_table(tmp_path / "none.md", "x")


@pytest.mark.skipif("lab" not in bench.available(), reason=f"bench_lab not built in {bench.bench_dir()}")
def test_a_failed_lab_list_update_leaves_the_old_file(tmp_path):
    f = tmp_path / "lab.md"
    old = (f"intro\n{lab.TABLE_BEGIN}\n| old |\n{lab.TABLE_END}\n" + "y" * 405_000 + "\n").encode()
    f.write_bytes(old)
    r = simdex("lab", "list", "--markdown", "--update", str(f), limit=200 * 1024)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(f) in r.stderr and "File too large" in r.stderr, r.stderr
    assert f.read_bytes() == old and not _temporaries(tmp_path)


def test_report_md_and_html_are_replaced_together_or_not_at_all(tmp_path):
    """render() wrote REPORT.md, then report.html: a failure between them left a new REPORT.md
    beside an old (or truncated) report.html."""
    doc = json.dumps(base85_doc())
    probe = tmp_path / "probe"
    probe.mkdir()
    (probe / "base85.json").write_text(doc)
    report.render(probe)
    sizes = {p.name: p.stat().st_size for p in (probe / "REPORT.md", probe / "report.html")}
    svgs = [p.stat().st_size for p in (probe / "plots").glob("*.svg")]
    assert svgs and max(svgs) < max(sizes.values()) - 1
    d = tmp_path / "run"
    d.mkdir()
    (d / "base85.json").write_text(doc)
    (d / "REPORT.md").write_text("old report\n")
    (d / "report.html").write_text("<p>old report</p>\n")
    # Every plot fits, and one of the two documents does not.
    r = simdex("report", str(d), limit=max(sizes.values()) - 1)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "File too large" in r.stderr, r.stderr
    assert (d / "REPORT.md").read_text() == "old report\n"
    assert (d / "report.html").read_text() == "<p>old report</p>\n"
    assert not list((d / "plots").glob("*.svg")) and not _temporaries(d)
    r = simdex("report", str(d))
    assert r.returncode == 0, r.stderr
    assert (d / "REPORT.md").read_bytes() == (probe / "REPORT.md").read_bytes()
    assert (d / "report.html").read_bytes() == (probe / "report.html").read_bytes()
    assert not _temporaries(d)


def test_bench_datasets_only_that_matches_nothing_runs_nothing(tmp_path, monkeypatch, capsys):
    """`simdex bench datasets --only x` ignored --only: it ran all four phases and exited 0."""
    from simdex.benchmarks import datasets

    def refuse(*a, **k):
        raise AssertionError("the dataset benchmark ran")

    monkeypatch.setattr(datasets, "_generate", refuse)
    monkeypatch.setattr(datasets, "_environment", refuse)
    monkeypatch.delenv("SIMDEX_DATASETS_PHASES", raising=False)
    monkeypatch.setenv("SIMDEX_DATASETS_DIR", str(tmp_path / "data"))
    out = tmp_path / "out"
    rc = bench.run(["datasets"], out=str(out), only=["x"], report=False)
    err = capsys.readouterr().err
    assert rc == 1, err
    assert "no workload of datasets matches --only x: nothing measured" in err and "benchmark failed" not in err, err
    assert not (out / "datasets.json").exists() and not (tmp_path / "data").exists()
    assert datasets.run_standalone(out, "quick", only=("x",), log=lambda m: None) is None


def test_bench_datasets_only_picks_the_phases(monkeypatch):
    from simdex.benchmarks import datasets

    monkeypatch.delenv("SIMDEX_DATASETS_PHASES", raising=False)
    assert datasets._selected_phases(()) == datasets.PHASES
    assert datasets._selected_phases(("x",)) == ()
    assert datasets._selected_phases(("dask_lookup",)) == ("dask_lookup",)
    # substrings, as benchmarks.group filters: "lookup" is in "dask_lookup" too
    assert datasets._selected_phases(("lookup",)) == ("lookups", "dask_lookup")
    assert datasets._selected_phases(("add_filters",)) == ("add_filters", "dask_add")
    monkeypatch.setenv("SIMDEX_DATASETS_PHASES", "lookups")
    assert datasets._selected_phases(("add",)) == ()


def test_a_run_of_another_schema_version_is_named(tmp_path):
    """A run of an older schema beside this one's was skipped without a word: its component was
    simply missing from the report."""
    (tmp_path / "base85.json").write_text(json.dumps(base85_doc()))
    old = {**lab_doc(), "schema": "simdex-bench/0"}
    (tmp_path / "lab.json").write_text(json.dumps(old))
    (tmp_path / "other.json").write_text(json.dumps({"name": "not a benchmark"}))  # still ignored
    r = simdex("report", str(tmp_path))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{tmp_path / 'lab.json'}: a run of schema simdex-bench/0" in r.stderr, r.stderr
    assert not (tmp_path / "REPORT.md").exists()
    (tmp_path / "lab.json").unlink()
    assert simdex("report", str(tmp_path)).returncode == 0


@pytest.mark.parametrize("text,found", [
    ("# no block\n", "found 0 and 0 of them"),
    (f"{report.README_END}\nx\n{report.README_BEGIN}\n", "found in the wrong order"),
    (f"{report.README_BEGIN}\n{report.README_END}\n{report.README_END}\n", "found 1 and 2 of them"),
])
def test_a_readme_without_its_block_changes_nothing(tmp_path, text, found):
    """--readme on a README without the markers wrote REPORT.md and report.html, then failed;
    with the end marker before the begin marker it copied the text between them twice."""
    d = tmp_path / "run"
    d.mkdir()
    (d / "base85.json").write_text(json.dumps(base85_doc()))
    readme = tmp_path / "README.md"
    readme.write_text(text)
    r = simdex("report", str(d), "--readme", str(readme))
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"{readme}: no results block to replace" in r.stderr and found in r.stderr, r.stderr
    assert report.README_END in r.stderr  # what to add
    assert sorted(p.name for p in d.iterdir()) == ["base85.json"] and readme.read_text() == text


def test_a_missing_directory_is_called_missing(tmp_path):
    r = simdex("report", str(tmp_path / "nosuch"))
    assert r.returncode == 1 and f"{tmp_path / 'nosuch'}: no such directory" in r.stderr, r.stderr
    (tmp_path / "f.json").write_text("{}")
    r = simdex("report", str(tmp_path / "f.json"))
    assert r.returncode == 1 and f"{tmp_path / 'f.json'}: not a directory" in r.stderr, r.stderr
