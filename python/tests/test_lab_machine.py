"""The lab's machine group (bandwidth across threads, loaded latency, core-to-core latency):
experiments that answer no study experiment. Their JSON has no study number and a verdict of
``measured`` or ``inconclusive``, and the report shows them without claiming a study figure.
Structure only, never a time."""

import json

import pytest

from simdex.benchmarks import lab


def lab_doc(experiments) -> dict:
    return {"schema": "simdex-bench/1", "component": "lab", "mode": "quick", "repetitions": 2, "started": "s", "finished": "f",
            "environment": {}, "results": [],
            "lab": {"clock": {}, "counters": "", "study": [{"number": n, "name": str(n), "group": "memory"} for n in range(1, 38)],
                    "experiments": experiments}}

MACHINE = ("bandwidth_threads", "loaded_latency", "core_to_core")


def _own(verdict="measured", **kw):
    return {"id": "core_to_core", "study": None, "group": "machine", "title": "Core-to-core latency", "question": "q",
            "study_figure": "", "range": {"lo": 30, "hi": 1500, "unit": "ns", "basis": "b"}, "checks": ["placement"],
            "figure": {"value": 300, "unit": "ns", "label": "median"}, "verdict": verdict, "reason": "r",
            "validity": [{"name": "placement", "status": "pass", "detail": "d"}], "counters": [], "curves": [], "notes": [], **kw}


def test_validate_takes_an_experiment_of_no_study():
    assert lab.validate(lab_doc([_own()])) == []
    assert lab.validate(lab_doc([_own("inconclusive")])) == []
    # No claim to confirm, and no study figure to claim.
    assert any("no study made" in p for p in lab.validate(lab_doc([_own("confirmed")])))
    assert any("study figure without" in p for p in lab.validate(lab_doc([_own(study_figure="x")])))
    # A study experiment must judge its claim.
    assert any("'measured'" in p for p in lab.validate(lab_doc([_own(study=3, study_figure="f")])))
    doc = lab_doc([_own()])
    doc["lab"].update(interrupted=True, not_run=[{"id": "loaded_latency", "study": None}])
    assert lab.validate(doc) == []


def test_tables_show_it_without_a_study_figure():
    doc = lab_doc([_own()])
    doc["lab"].update(interrupted=True, not_run=[{"id": "loaded_latency", "study": None}])
    rows = lab.verdict_rows(doc)
    assert len(rows) == 37 + 2
    own = {r[3]: r for r in rows[37:]}
    assert own["core_to_core"][:3] == ["–", "lab's own", "–"] and own["core_to_core"][6] == "measured"
    assert own["loaded_latency"][6] == "not run"
    registry = {"study": doc["lab"]["study"], "experiments": [_own()]}
    table = lab.mapping_markdown(registry).splitlines()
    assert len(table) == 2 + 37 + 1 and "| – | lab's own | – | `core_to_core` |" in table[-1]
    page = lab.html_section(doc)
    assert "measured" in page and "Study: " not in page.split("core_to_core", 1)[1].split("</details>", 1)[0]
    assert lab.concurrency_rows(doc)[0][:2] == ["core_to_core", "measured"]


@pytest.fixture(scope="module")
def machine_run(bench_run):
    return bench_run("lab", "lab", *MACHINE, "--reps", "2", "--no-probe")


def test_run_json_validates(machine_run):
    doc = json.loads((machine_run / "lab.json").read_text())
    assert lab.validate(doc) == []
    exps = {e["id"]: e for e in doc["lab"]["experiments"]}
    assert set(exps) == set(MACHINE)
    for e in exps.values():
        assert e["study"] is None and e["study_figure"] == "" and e["group"] == "machine"
        assert e["verdict"] in lab.OWN_VERDICTS and e["reason"]
        names = {c["name"] for c in e["validity"]}
        assert set(e["checks"]) <= names and {"placement", "run_queue", "overlap"} <= names, e["id"]
        if any(c["status"] == "fail" for c in e["validity"]):
            assert e["verdict"] == "inconclusive", e["id"]
        assert e["curves"] and all(line["points"] for c in e["curves"] for line in c["lines"]), e["id"]
    assert {c["name"] for c in exps["bandwidth_threads"]["validity"]} >= {"bytes_touched", "below_memcpy", "wall_clock"}
    assert {c["name"] for c in exps["loaded_latency"]["validity"]} >= {"on_chain", "bytes_touched"}
    assert {c["name"] for c in exps["core_to_core"]["validity"]} >= {"delivered"}
    # The bandwidth curve has a point per thread count, 1 first; the matrix a line per CPU.
    bw = exps["bandwidth_threads"]["curves"][0]
    assert bw["section"] == "threads" and bw["lines"][0]["points"][0][0] == 1
    c2c = exps["core_to_core"]["curves"][0]
    assert c2c["section"] == "core_to_core" and len(c2c["lines"]) >= 2
    loaded = exps["loaded_latency"]["curves"][0]
    assert loaded["section"] == "loaded" and all(line["points"][0][0] == 0 for line in loaded["lines"])


def test_report_renders_them(machine_run):
    md = (machine_run / "REPORT.md").read_text()
    for eid in MACHINE:
        assert f"| – | lab's own | – | {eid} |" in md
    assert "### Loaded latency" in md and "### Core-to-core latency" in md
    page = (machine_run / "report.html").read_text()
    assert "Core-to-core latency" in page and "Bandwidth across threads" in page


def test_list_shows_them_without_a_number(registry):
    own = [e for e in registry["experiments"] if e["study"] is None]
    assert {e["id"] for e in own} >= set(MACHINE)
    assert registry["experiments"][-len(own):] == own  # after the study's 37
    assert len(registry["study"]) == 37


@pytest.fixture(scope="module")
def registry():
    from simdex import bench
    from simdex.commands import lab as lab_cmd

    if "lab" not in bench.available():
        pytest.skip(f"bench_lab not built in {bench.bench_dir()}")
    return lab_cmd.registry()
