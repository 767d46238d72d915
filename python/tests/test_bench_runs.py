"""Runs into one folder: one at a time, each component's log beside the JSON it describes, a
subset run that replaces a fuller one says so, and a program that cannot write its JSON says why.
Fake bench programs (shell scripts) stand in for the real ones, except in the last test."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simdex import bench


def _doc(*workloads: str) -> dict:
    return {"schema": "simdex-bench/1", "component": "primitives", "mode": "quick", "repetitions": 1,
            "results": [{"workload": w, "contender": "scalar", "median": 1.0} for w in workloads]}


def _fake(bin_dir: Path, script: str) -> None:
    """bin_dir/bench_primitives running ``script`` (sh; $3 is the --out folder)."""
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "bench_primitives"
    exe.write_text(f"#!/bin/sh\n{script}\n")
    exe.chmod(0o755)


def _writes(*workloads: str) -> str:
    """A fake program's lines that write its JSON as the real ones do: beside, then renamed over."""
    return f"echo '{json.dumps(_doc(*workloads))}' > \"$3/primitives.json.tmp\"; mv \"$3/primitives.json.tmp\" \"$3/primitives.json\""


@pytest.fixture
def fake_bin(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMDEX_BENCH_DIR", str(tmp_path / "bin"))
    return tmp_path / "bin"


@pytest.fixture
def earlier(tmp_path):
    """An output folder holding an earlier run of primitives: its JSON (three workloads) and log."""
    out = tmp_path / "out"
    out.mkdir()
    (out / "primitives.json").write_text(json.dumps(_doc("lower_bound", "rank_table", "find_u32x16")))
    (out / "primitives.log").write_text("the earlier run's log\n")
    return out


def _err(capsys) -> str:
    return " ".join(capsys.readouterr().err.split())


def test_a_second_simdex_bench_into_the_same_folder_is_refused(tmp_path, fake_bin):
    """Two `simdex bench` runs into one folder measured each other, and the one that ended last
    silently replaced the other's JSON and report, both exiting 0."""
    out = tmp_path / "out"
    # The first run's program waits until told to end; any later one writes its JSON at once.
    _fake(fake_bin, f'if mkdir "{tmp_path}/first" 2>/dev/null; then\n'
                    f'  while [ ! -e "{tmp_path}/go" ]; do sleep 0.02; done\nfi\n{_writes("rank_table")}')
    simdex = [sys.executable, "-m", "simdex", "bench", "primitives", "--no-report", "--out", str(out)]
    first = subprocess.Popen(simdex, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        while not (tmp_path / "first").exists() and first.poll() is None:
            time.sleep(0.02)
        second = subprocess.run(simdex, capture_output=True, text=True, timeout=120)
    finally:
        (tmp_path / "go").touch()
        err = first.communicate(timeout=120)[1]
    assert first.returncode == 0, err
    assert second.returncode == 1, second.stderr
    said = " ".join(second.stderr.split())
    assert f"another simdex bench or simdex lab run is writing into {out}" in said, said
    # once the first has ended, the folder is free again
    assert subprocess.run(simdex, capture_output=True, text=True, timeout=120).returncode == 0


def test_simdex_bench_is_refused_while_simdex_lab_writes_the_folder(tmp_path, fake_bin, monkeypatch, capsys):
    """simdex lab locked its folder against another simdex lab only: a simdex bench into it ran
    beside it. The lab now takes bench.run's lock, and bench.run inside the lab takes it again."""
    from simdex import cli
    from simdex.commands import lab as lab_cmd

    _fake(fake_bin, "exit 0")
    (fake_bin / "bench_lab").write_text("")
    out = tmp_path / "out"
    seen = []

    def run_all(console, wanted, have, python_only, args, outdir, *rest):  # the lab's run, under way
        (outdir / "lab.json").write_text(json.dumps({"results": [{"workload": "ilp.chains"}]}))
        seen.append(subprocess.run([sys.executable, "-m", "simdex", "bench", "primitives", "--no-report", "--out", str(out)],
                                   capture_output=True, text=True, timeout=120))

    monkeypatch.setattr(bench, "_run_all", run_all)
    monkeypatch.setattr(lab_cmd, "registry", lambda: {"study": [], "experiments": [{"id": "ilp", "study": 7, "group": "memory"}]})
    args = cli.build_parser().parse_args(["lab", "ilp", "--out", str(out), "--no-report"])
    assert args.func(args) == 0, _err(capsys)
    [other] = seen
    assert other.returncode == 1 and f"run is writing into {out}" in " ".join(other.stderr.split()), other.stderr


def test_a_folder_locked_by_another_process_stops_bench_run_before_anything_runs(tmp_path, fake_bin, monkeypatch, capsys):
    _fake(fake_bin, "exit 0")
    ran = []
    monkeypatch.setattr(bench, "_run_all", lambda *a: ran.append(a))
    out = tmp_path / "out"
    out.mkdir()
    held = os.open(out, os.O_RDONLY)  # as another process's run holds it
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert bench.run(["primitives"], out=str(out), report=False) == 1
    finally:
        os.close(held)
    assert ran == [] and f"writing into {out}" in _err(capsys)
    lock = bench.FolderLock(out)  # held in this process (as simdex lab does): granted again
    lock.acquire()
    try:
        assert bench.run(["primitives"], out=str(out), report=False) == 0 and len(ran) == 1
    finally:
        lock.release()


def _interrupting(before: str = "") -> str:
    """A fake program's script: ``before``, then Ctrl-C reaches simdex (the program's parent), and
    the program waits to be stopped, as a real one finishing the step under way."""
    return (f"trap 'exit 143' TERM\n{before}\necho 'the interrupted run says this' >&2\n"
            # (a moment first, so that simdex is reading its output; ended by simdex, or at last by itself)
            "sleep 0.3; kill -INT $PPID\ni=0; while [ $i -lt 1000 ]; do sleep 0.02; i=$((i+1)); done")


def test_ctrl_c_before_a_run_keeps_anything_keeps_the_earlier_log(earlier, fake_bin, capsys):
    """<component>.log was opened with "w" at the start: Ctrl-C before the program wrote its JSON
    kept the earlier run's JSON but wiped the log beside it."""
    _fake(fake_bin, _interrupting())
    json_before = (earlier / "primitives.json").read_text()
    assert bench.run(["primitives"], out=str(earlier), report=False) == 130
    assert (earlier / "primitives.json").read_text() == json_before
    assert (earlier / "primitives.log").read_text() == "the earlier run's log\n"
    assert sorted(p.name for p in earlier.iterdir()) == ["primitives.json", "primitives.log"]


def test_ctrl_c_after_a_run_kept_its_json_keeps_its_log(earlier, fake_bin, capsys):
    """The lab keeps the experiments it finished when interrupted: the log beside them is theirs."""
    _fake(fake_bin, _interrupting(_writes("lower_bound", "rank_table", "find_u32x16")))
    assert bench.run(["primitives"], out=str(earlier), report=False) == 130
    assert "the interrupted run says this" in (earlier / "primitives.log").read_text()
    assert not (earlier / "primitives.log.new").exists()


def test_a_failed_run_keeps_the_earlier_log_and_says_where_its_own_is(earlier, fake_bin, capsys):
    _fake(fake_bin, "echo 'it went wrong here' >&2; exit 3")
    assert bench.run(["primitives"], out=str(earlier), report=False) == 1
    assert (earlier / "primitives.log").read_text() == "the earlier run's log\n"
    failed_log = earlier / "primitives.failed.log"
    assert failed_log.read_text() == "it went wrong here\n"
    err = _err(capsys)
    assert f"see {failed_log}" in err and "it went wrong here" in err, err
    # the next run that keeps its JSON replaces both logs with its own
    _fake(fake_bin, f"echo 'a good run' >&2\n{_writes('rank_table')}")
    assert bench.run(["primitives"], out=str(earlier), report=False) == 0
    assert (earlier / "primitives.log").read_text() == "a good run\n" and not failed_log.exists()


def test_a_failed_first_run_leaves_its_log_as_the_log(tmp_path, fake_bin, capsys):
    """With no earlier JSON there is nothing for the log to disagree with: the failure's log is
    <component>.log, as before."""
    _fake(fake_bin, "echo 'it went wrong here' >&2; exit 3")
    out = tmp_path / "out"
    assert bench.run(["primitives"], out=str(out), report=False) == 1
    assert (out / "primitives.log").read_text() == "it went wrong here\n"
    assert f"see {out / 'primitives.log'}" in _err(capsys)


def _fake_lab(bin_dir: Path) -> None:
    """bin_dir/bench_lab writing a lab.json (no Python side, nothing rendered with --no-report)."""
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "bench_lab"
    doc = json.dumps({**_doc("ilp"), "component": "lab"})
    exe.write_text(f"#!/bin/sh\necho '{doc}' > \"$3/lab.json.tmp\"; mv \"$3/lab.json.tmp\" \"$3/lab.json\"\n")
    exe.chmod(0o755)


def test_component_names_may_follow_options(tmp_path, fake_bin):
    """`simdex bench primitives --no-report lab` was a usage error ("unrecognized arguments:
    lab"): argparse took the names before the first option only."""
    from simdex import cli

    _fake(fake_bin, _writes("rank_table"))
    _fake_lab(fake_bin)
    out = tmp_path / "out"
    assert cli.main(["bench", "primitives", "--no-report", "--out", str(out), "lab"]) == 0
    assert (out / "primitives.json").is_file() and (out / "lab.json").is_file()


def test_the_log_a_killed_run_left_is_placed_by_the_next_run(tmp_path, fake_bin, capsys):
    """A `simdex bench` killed outright (SIGKILL) left <component>.log.new in its folder, and no
    later run into that folder removed it. The next run, which holds the folder's lock, places it
    as a failed run's log and says so."""
    out = tmp_path / "out"
    _fake(fake_bin, f"echo 'the killed run' >&2; touch '{tmp_path}/started'; sleep 60")
    p = subprocess.Popen([sys.executable, "-m", "simdex", "bench", "primitives", "--no-report", "--out", str(out)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "started").exists() and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.02)
        assert (tmp_path / "started").exists(), "the fake program did not start"
    finally:
        os.killpg(p.pid, signal.SIGKILL)  # simdex and its program at once, as the OOM killer would
        p.wait(timeout=60)
    assert (out / "primitives.log.new").is_file()
    _fake_lab(fake_bin)
    assert bench.run(["lab"], out=str(out), report=False) == 0
    assert not (out / "primitives.log.new").exists()
    assert (out / "primitives.log").read_text() == "the killed run\n"  # no JSON of primitives: its log
    assert (f"{out / 'primitives.log.new'}: the log of a primitives run that was killed before it ended; "
            f"now {out / 'primitives.log'}") in _err(capsys)


def test_a_killed_runs_log_beside_an_earlier_json_is_a_failed_log(earlier, fake_bin, capsys):
    """Where an earlier run's JSON stays, its log stays too: the killed run's is kept as a failed
    run's is."""
    (earlier / "primitives.log.new").write_text("the killed run\n")
    (earlier / "notes.log.new").write_text("not ours\n")  # no component's: left alone
    _fake_lab(fake_bin)
    assert bench.run(["lab"], out=str(earlier), report=False) == 0
    assert (earlier / "primitives.failed.log").read_text() == "the killed run\n"
    assert (earlier / "primitives.log").read_text() == "the earlier run's log\n"
    assert not (earlier / "primitives.log.new").exists() and (earlier / "notes.log.new").exists()
    assert f"now {earlier / 'primitives.failed.log'}" in _err(capsys)


def test_the_json_temporaries_of_killed_runs_are_removed_by_the_next_run(earlier, fake_bin, capsys):
    """A bench program killed outright while writing its JSON left <component>.json.tmp.<pid>
    (it writes beside the JSON and renames over it), and no later run removed it. The next run
    removes those whose process is gone, and says so in one line."""
    dead = subprocess.Popen(["true"])
    dead.wait()  # reaped: its pid names no process now
    killed = earlier / f"primitives.json.tmp.{dead.pid}"
    killed.write_text('{"results": [')
    alive = earlier / f"kv.json.tmp.{os.getpid()}"  # a program run by hand may be writing it now
    alive.write_text("{")
    other = earlier / f"notes.json.tmp.{dead.pid}"  # no component's: left alone
    other.write_text("{")
    _fake_lab(fake_bin)
    assert bench.run(["lab"], out=str(earlier), report=False) == 0
    assert not killed.exists() and alive.exists() and other.exists()
    said = [line for line in capsys.readouterr().err.splitlines() if "killed while writing" in line]
    assert len(said) == 1 and said[0].endswith(f"removed what runs killed while writing their JSON left: {killed.name}")
    assert (earlier / "primitives.json").is_file()


def test_an_only_that_measures_nothing_keeps_the_earlier_log(earlier, fake_bin, capsys):
    _fake(fake_bin, f"echo 'measured nothing' >&2\n{_writes()}")
    json_before = (earlier / "primitives.json").read_text()
    assert bench.run(["primitives"], out=str(earlier), only=["typo"], report=False) == 1
    assert (earlier / "primitives.json").read_text() == json_before
    assert (earlier / "primitives.log").read_text() == "the earlier run's log\n"


def test_a_subset_run_says_what_it_replaced_and_keeps_the_earlier_file(earlier, fake_bin, capsys):
    """`simdex bench primitives --only rank_table` (or `simdex lab tlb`) into a folder holding a
    full run replaced that run's JSON with the subset's without a word."""
    _fake(fake_bin, f"echo 'the subset run' >&2\n{_writes('rank_table')}")
    full = (earlier / "primitives.json").read_bytes()
    assert bench.run(["primitives"], out=str(earlier), only=["rank_table"], report=False) == 0
    assert [r["workload"] for r in json.loads((earlier / "primitives.json").read_text())["results"]] == ["rank_table"]
    assert (earlier / "primitives.json.prev").read_bytes() == full
    assert (earlier / "primitives.log.prev").read_text() == "the earlier run's log\n"
    assert (earlier / "primitives.log").read_text() == "the subset run\n"
    err = _err(capsys)
    assert (f"primitives: this run measured only rank_table and replaced {earlier / 'primitives.json'}, which held an earlier run of "
            "3 workloads; 2 of them (lower_bound, find_u32x16) were not measured now and are no longer in the report; "
            f"the earlier file is now {earlier / 'primitives.json.prev'}") in err, err
    # the same subset again replaces nothing the folder had: no word, and the kept file stays
    capsys.readouterr()
    assert bench.run(["primitives"], out=str(earlier), only=["rank_table"], report=False) == 0
    assert "replaced" not in _err(capsys) and (earlier / "primitives.json.prev").read_bytes() == full


def _no_file_size_signal():
    resource.setrlimit(resource.RLIMIT_FSIZE, (256, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails with EFBIG


@pytest.mark.parametrize("case", ["json is a folder", "out under a file", "file too large"])
def test_a_program_that_cannot_write_its_json_says_why(tmp_path, case):
    """bench_<component> said "cannot write DIR/lab.json" and not why; an --out it could not
    create ended in an uncaught exception (abort)."""
    exe = bench.bench_dir() / "bench_primitives"
    if not exe.is_file():
        pytest.skip(f"bench_primitives not built in {bench.bench_dir()}")
    out, preexec = tmp_path / "out", None
    if case == "json is a folder":
        (out / "primitives.json").mkdir(parents=True)
        want = f"cannot write {out / 'primitives.json'}: {os.strerror(errno.EISDIR)}"
    elif case == "out under a file":
        (tmp_path / "file").write_text("")
        out = tmp_path / "file" / "out"
        want = f"cannot create {out}: {os.strerror(errno.ENOTDIR)}"
    else:
        out.mkdir()
        preexec = _no_file_size_signal
        want = f"cannot write {out / 'primitives.json'}: {os.strerror(errno.EFBIG)}"
    r = subprocess.run([str(exe), "--quick", "--reps", "1", "--no-probe", "--only", "no-such-workload", "--out", str(out)],
                       capture_output=True, text=True, timeout=120, preexec_fn=preexec)
    assert r.returncode == 1 and want in r.stderr, r.stderr
    if out.is_dir():  # and no temporary file left
        assert not list(out.glob("primitives.json.tmp*"))
