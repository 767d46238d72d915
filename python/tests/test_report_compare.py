"""`simdex report A B`: two lab runs side by side (there was no way to compare two lab runs:
`simdex report` took one folder and refused a second lab.json in it). Small lab documents
built here; no benchmark runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from simdex import cli
from simdex.benchmarks import lab

ENV = {"cpu_model": "AMD EPYC 9R14", "cpu_vendor": "AuthenticAMD", "cores": 2, "memory_bytes": 8 << 30,
       "hypervisor": True, "kernel": "Linux 6.1.0", "thp": "madvise", "simdex_version": "0.1.0", "simdex_commit": "aaaaaaa"}


def _experiment(eid: str, study, value, unit: str, verdict: str) -> dict:
    return {"id": eid, "study": study, "group": "memory", "title": eid, "question": "q", "study_figure": "" if study is None else "f",
            "range": {"lo": 1, "hi": 2, "unit": unit, "basis": "b"}, "checks": [], "verdict": verdict, "reason": "r",
            "validity": [], "counters": [], "curves": [], "notes": [],
            "figure": None if value is None else {"value": value, "unit": unit, "label": "l"}}


def _run(folder: Path, experiments: list[dict], **env) -> Path:
    doc = {"schema": "simdex-bench/1", "component": "lab", "mode": "quick", "repetitions": 5,
           "started": "2026-11-28T00:00:00Z", "finished": "2026-11-28T00:01:00Z", "environment": {**ENV, **env},
           "results": [], "lab": {"clock": {}, "counters": "", "experiments": experiments,
                                  "study": [{"number": n, "name": str(n), "group": "memory"} for n in range(1, 38)]}}
    assert lab.validate(doc) == []
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "lab.json").write_text(json.dumps(doc))
    return folder / "lab.json"


@pytest.fixture
def runs(tmp_path):
    a = _run(tmp_path / "a", [_experiment("ilp", 7, 3.0, "x", "confirmed"), _experiment("tlb", 22, None, "ns", "inconclusive"),
                              _experiment("branch", 8, 20.0, "cycles", "contradicted"),
                              _experiment("core_to_core", None, 300.0, "ns", "measured")])
    b = _run(tmp_path / "b", [_experiment("ilp", 7, 1.5, "x", "contradicted"), _experiment("tlb", 22, 40.0, "ns", "inconclusive"),
                              _experiment("branch", 8, 20.0, "cycles", "contradicted"),
                              _experiment("stride", 1, 11.0, "x", "confirmed")])
    return a, b


def _rows(text: str) -> dict[str, list[str]]:
    """The comparison table's rows by experiment id."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("| ")]
    return {r[0]: r[1:] for r in rows[1:]}


def test_two_lab_runs_side_by_side(runs, capsys):
    a, b = runs
    assert cli.main(["report", str(a), str(b.parent)]) == 0  # a lab.json, or the folder holding one
    out = capsys.readouterr().out
    rows = _rows(out)
    # #, A's figure, B's, B / A, A's verdict, B's, whether it changed
    assert rows["ilp"] == ["7", "3.00 x", "1.50 x", "0.5×", "confirmed", "contradicted", "**changed**"]
    assert rows["branch"] == ["8", "20.0 cycles", "20.0 cycles", "1.00×", "contradicted", "contradicted", "same"]
    assert rows["tlb"] == ["22", "–", "40.0 ns", "–", "inconclusive", "inconclusive", "same"]  # A measured no figure
    assert rows["core_to_core"] == ["–", "300 ns", "not in B", "–", "measured", "–", "–"]
    assert rows["stride"][:3] == ["1", "not in A", "11.0 x"]
    assert list(rows) == ["stride", "ilp", "branch", "tlb", "core_to_core"]  # study order, the lab's own last
    assert f"- A: {a}: 2026-11-28T00:00:00Z, quick mode, 5 repetitions" in out
    assert "3 experiments in both runs; 1 verdict changed (ilp); only in A: core_to_core; only in B: stride." in out
    assert "Both on one machine: AMD EPYC 9R14 (2 cores, virtual machine, THP madvise)." in out


def test_runs_from_two_machines_say_how_they_differ(tmp_path, capsys):
    e = [_experiment("ilp", 7, 3.0, "x", "confirmed")]
    a = _run(tmp_path / "a", e)
    b = _run(tmp_path / "b", e, cpu_model="Intel Xeon", cores=16, hypervisor=False)
    assert cli.main(["report", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "The runs are from different machines" in out
    assert "| CPU | AMD EPYC 9R14 | Intel Xeon |" in out and "| cores | 2 | 16 |" in out
    assert "| virtual machine | yes | no |" in out and "| kernel |" not in out  # only what differs


def test_what_is_not_two_lab_runs_is_refused(runs, tmp_path, capsys):
    a, b = runs
    other = tmp_path / "bench"
    other.mkdir()
    (other / "primitives.json").write_text(json.dumps(
        {"schema": "simdex-bench/1", "component": "primitives", "mode": "quick", "repetitions": 5,
         "started": "s", "finished": "f", "environment": {}, "results": []}))
    for args, code, said in [([str(a), str(other)], 1, f"{other}: no lab run (lab.json)"),
                             ([str(a), str(other / "primitives.json")], 1, "not a lab run"),
                             ([str(a), str(tmp_path / "nosuch.json")], 1, "No such file or directory"),
                             ([str(a), str(b), str(a)], 2, "one DIR to render, or two lab runs to compare; got 3"),
                             ([str(a), str(b), "--readme", "README.md"], 2, "--readme takes one DIR")]:
        assert cli.main(["report", *args]) == code, args
        captured = capsys.readouterr()
        assert said in captured.err and captured.out == "", (args, captured)


def test_a_folder_is_still_rendered(runs, capsys):
    """One DIR renders REPORT.md and report.html as before."""
    a, _ = runs
    assert cli.main(["report", str(a.parent)]) == 0
    assert (a.parent / "REPORT.md").is_file() and (a.parent / "report.html").is_file()


def test_help_says_how_to_compare(capsys):
    assert cli.main(["report", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "simdex report A B" in out and "Given two lab runs A and B" in out


def test_no_ratio_between_two_different_figures(tmp_path, capsys):
    """A figure's label may name what the machine allowed ("2 threads"): another label is
    another figure, and B / A would compare unlike things."""
    a = _run(tmp_path / "a", [_experiment("queue", 11, 2.0, "x", "confirmed")])
    other = _experiment("queue", 11, 4.0, "x", "confirmed")
    other["figure"]["label"] = "another figure"
    b = _run(tmp_path / "b", [other])
    assert cli.main(["report", str(a), str(b)]) == 0
    assert _rows(capsys.readouterr().out)["queue"][3] == "–"
