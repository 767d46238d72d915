"""The lab's concurrency and IPC group: its JSON carries the checks that say whether threads ran
where, when and how they were meant to, and the report shows them. Structure only, never a time."""

import json

import pytest

from simdex.benchmarks import lab

CONCURRENCY = ("placement", "wall_clock", "run_queue")


def _doc(experiments):
    return {"lab": {"study": [{"number": n, "name": str(n), "group": "x"} for n in range(1, 38)],
                    "experiments": experiments}}


def _experiment(eid, group, checks, verdict="inconclusive"):
    return {"id": eid, "study": 3, "group": group, "title": eid, "verdict": verdict,
            "validity": [{"name": n, "status": s, "detail": ""} for n, s in checks]}


def test_rows_take_the_worst_status_of_each_check():
    doc = _doc([
        _experiment("false_sharing", "concurrency", [("placement", "pass"), ("overlap", "pass"), ("overlap", "fail")]),
        _experiment("pointer_chase", "memory", [("on_chain", "pass")]),
        _experiment("memory_order", "concurrency", [("raced", "pass"), ("run_queue", "warn")], "confirmed"),
    ])
    rows = lab.concurrency_rows(doc)
    names = [name for name, _ in lab.CONCURRENCY_CHECKS]
    assert [r[0] for r in rows] == ["false_sharing", "memory_order"]
    fs = dict(zip(names, rows[0][2:]))
    assert fs["placement"] == "pass" and fs["overlap"] == "fail" and fs["raced"] == "–"
    mo = dict(zip(names, rows[1][2:]))
    assert rows[1][1] == "confirmed" and mo["run_queue"] == "warn" and mo["raced"] == "pass"
    md = "\n".join(lab.concurrency_markdown(doc))
    assert "Were the threads really concurrent?" in md and "| false_sharing | inconclusive |" in md
    assert "#ff725c" in "".join(lab.concurrency_html(doc))
    assert lab.concurrency_markdown(_doc([])) == []


def test_count_axes_print_whole_numbers():
    assert lab._x_fmt({"x_label": "threads"})(4.0) == "4"
    assert lab._x_fmt({"x_label": "batch"})(64.0) == "64"
    assert lab._x_fmt({"x_label": "working set (bytes)"})(2048.0) == "2.00 KiB"


@pytest.fixture(scope="module")
def concurrency_run(bench_run):
    return bench_run("lab", "lab", "blocking_spinning", "pipe_socketpair", "--reps", "2", "--no-probe")


def test_run_carries_the_concurrency_checks(concurrency_run):
    doc = json.loads((concurrency_run / "lab.json").read_text())
    assert lab.validate(doc) == []
    exps = {e["id"]: e for e in doc["lab"]["experiments"]}
    assert set(exps) == {"blocking_spinning", "pipe_socketpair"}
    for e in exps.values():
        names = {c["name"] for c in e["validity"]}
        assert set(CONCURRENCY) <= names, e["id"]
        if any(c["status"] == "fail" for c in e["validity"]):
            assert e["verdict"] == "inconclusive", e["id"]
        # Software counters always carry a value; hardware ones a value or the reason they have none.
        readings = [r for g in e["counters"] for r in g["readings"]]
        switches = [r for r in readings if r["name"] == "context-switches"]
        assert switches and all(r["value"] is not None for r in switches), e["id"]
        assert all(r["value"] is not None or r["status"].startswith(("unavailable", "untrusted")) for r in readings)
    assert {c["name"] for c in exps["blocking_spinning"]["validity"]} >= {"context_switches", "overlap", "delivered"}


def test_report_shows_the_concurrency_table(concurrency_run):
    md = (concurrency_run / "REPORT.md").read_text()
    assert "Were the threads really concurrent?" in md
    assert "| blocking_spinning |" in md and "| pipe_socketpair |" in md


def _lab_on_one_cpu(tmp_path, *experiments):
    """bench_lab's JSON of a quick run of the experiments with one CPU allowed, as `taskset -c N`
    gives it, and that CPU."""
    import os
    import subprocess

    from simdex import bench

    exe = bench.bench_dir() / "bench_lab"
    if not exe.is_file():
        pytest.skip(f"bench_lab not built in {bench.bench_dir()}")
    cpu = min(os.sched_getaffinity(0))
    only = [a for e in experiments for a in ("--only", e)]
    r = subprocess.run([str(exe), "--quick", "--reps", "1", "--no-probe", *only, "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=300, preexec_fn=lambda: os.sched_setaffinity(0, {cpu}))
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / "lab.json").read_text()), cpu


def test_thread_placement_on_one_cpu_says_what_ran(tmp_path):
    """`taskset -c 0 simdex lab thread_placement` labelled the split team "split (two CPUs)"
    although both its threads were pinned to CPU 0: the labels now say what ran."""
    doc, cpu = _lab_on_one_cpu(tmp_path, "thread_placement")
    contenders = {x["contender"] for x in doc["results"]}
    e = next(x for x in doc["lab"]["experiments"] if x["id"] == "thread_placement")
    said = json.dumps(e) + " ".join(contenders)
    assert "two CPUs" not in said, sorted(contenders)
    assert f"split asked, one CPU allowed (both on CPU {cpu}, as shared), spin" in contenders
    assert e["verdict"] == "inconclusive"
    _one_cpu_is_the_reason(e, cpu)


def _one_cpu_is_the_reason(e: dict, cpu: int) -> None:
    """The failed checks on one CPU decided the verdict ("not a valid measurement: run_queue
    failed: ... other tasks held the CPUs") before the experiment could say that only one CPU
    was allowed; the reason now says so, and run_queue says the team's threads waited for one
    another."""
    assert e["reason"].startswith(f"one CPU allowed (CPU {cpu})"), e["reason"]
    queue = next(c for c in e["validity"] if c["name"] == "run_queue")
    assert "other tasks held the CPUs" not in queue["detail"], queue


def test_contention_on_one_cpu_says_what_ran(tmp_path):
    """`taskset -c 0 simdex lab false_sharing` labelled its split contenders "2 CPUs" although
    both threads were pinned to CPU 0, and the verdicts of the experiments that need two CPUs
    said "on two CPUs": the labels now say what ran, and no verdict claims two CPUs."""
    wanted = ("false_sharing", "mutex_atomic", "lock_variants", "blocking_spinning", "pipe_shm")
    doc, cpu = _lab_on_one_cpu(tmp_path, *wanted)
    contenders = {x["contender"] for x in doc["results"] if x["workload"].startswith("false_sharing.")}
    assert f"adjacent, fetch_add, 2 CPUs asked, 1 allowed (both on CPU {cpu})" in contenders, sorted(contenders)
    assert not any(c.endswith(", 2 CPUs") for c in contenders), sorted(contenders)
    exps = {e["id"]: e for e in doc["lab"]["experiments"]}
    assert set(exps) == set(wanted)
    for e in exps.values():
        assert "two CPUs" not in e["reason"] and ", 2 CPUs:" not in e["reason"], e["reason"]
        assert e["verdict"] == "inconclusive", e["id"]
        _one_cpu_is_the_reason(e, cpu)
    assert exps["false_sharing"]["figure"]["label"].endswith(f"both on CPU {cpu})")
