"""The command line's answers to mistakes: a message and an exit code, never a traceback
(found by an audit of the CLI, 2026-11-28)."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest


def _fake_bench(tmp_path, monkeypatch, component, script):
    """A shell script in tmp_path/bin standing in for bench_<component>, where simdex bench
    looks for its programs."""
    prog = tmp_path / "bin" / f"bench_{component}"
    prog.parent.mkdir(exist_ok=True)
    prog.write_text("#!/bin/sh\n" + script)
    prog.chmod(0o755)
    monkeypatch.setenv("SIMDEX_BENCH_DIR", str(prog.parent))
    return prog


def _simdex(*args, env=None, stdout=subprocess.PIPE):
    return subprocess.run([sys.executable, "-m", "simdex", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env={**os.environ, **(env or {})}, timeout=300)


@pytest.mark.parametrize("args,code,message", [
    (["bench", "--reps", "0", "primitives"], 2, "--reps: wants 1 to 1000, got 0"),
    (["bench", "--reps", "x", "primitives"], 2, "--reps: wants a whole number"),
    (["lab", "--reps", "-3", "branch"], 2, "--reps: wants 1 to 1000, got -3"),
    (["lab", "--markdown"], 2, "--markdown goes with 'list'"),
    (["lab", "--json", "branch"], 2, "--json goes with 'list'"),
    (["lab", "list", "nosuch"], 2, "'list' takes no experiment names"),
    (["lab", "list", "--update", "README.md"], 2, "give 'list --markdown --update FILE'"),
    (["bench", "primitives", "--out", "/proc/no/such", "--no-probe"], 2, "cannot create /proc/no/such"),
    # An argument a subcommand did not take was reported with `simdex`'s usage, which names none of its options.
    (["bench", "--frob", "primitives"], 2, "usage: simdex bench [-h]"),
    (["lab", "--lsit"], 2, "simdex lab: error: unrecognized arguments: --lsit"),
    (["bloom", "inspect", "--frob", "x.parquet"], 2, "simdex bloom inspect: error: unrecognized arguments: --frob"),
])
def test_argument_mistakes(args, code, message):
    r = _simdex(*args)
    assert r.returncode == code, r.stderr
    assert message in r.stderr and "Traceback" not in r.stderr


def test_a_failing_benchmark_is_reported_without_a_traceback(tmp_path):
    """datasets refuses a shape too small: the run says so, writes no report, exits 1."""
    r = _simdex("bench", "datasets", "--out", str(tmp_path / "out"),
                env={"SIMDEX_DATASETS_SHAPE": "2,2,1000", "SIMDEX_DATASETS_DIR": str(tmp_path / "data")})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "datasets: benchmark failed" in r.stderr and "no report" in r.stderr
    assert not (tmp_path / "out" / "REPORT.md").exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["--include-dir"], ["info"], ["--help"], ["--version"], [], ["kv", "--help"]])
@pytest.mark.parametrize("unbuffered", ["", "1"])
def test_a_full_disk_on_stdout_is_a_message(args, unbuffered):
    """Help and --version went through argparse, which drops a failed write: with stdout
    unbuffered (PYTHONUNBUFFERED) `simdex --help > /dev/full` exited 0 having written nothing."""
    with open("/dev/full", "w") as full:
        r = subprocess.run([sys.executable, "-m", "simdex", *args], stdout=full, capture_output=False,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": unbuffered})
    assert r.returncode == 1 and "No space left on device" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_report_names_the_damaged_file(tmp_path):
    import json

    good = {"schema": "simdex-bench/1", "component": "base85", "mode": "quick", "repetitions": 5,
            "started": "2026-11-28T00:00:00Z", "finished": "2026-11-28T00:01:00Z", "environment": {},
            "results": [{"workload": "w", "contender": "c", "median": 1.0, "unit": "ns"}]}
    for name, doc, message in [
        ("nocomp", {**good, "component": None}, 'no "component" name'),
        # A run's own fields: a file holding only its schema and component rendered "None mode".
        ("bare", {"schema": "simdex-bench/1", "component": "base85", "results": []}, '"mode" is None'),
        ("reps", {**good, "repetitions": 0}, '"repetitions" is 0'),
        ("noenv", {k: v for k, v in good.items() if k != "environment"}, 'no "environment" block'),
        ("inf", {**good, "results": [{**good["results"][0], "median": float("inf")}]}, "median inf is not a finite"),
        ("str", {**good, "results": [{**good["results"][0], "median": "fast"}]}, "median 'fast' is not a finite"),
    ]:
        d = tmp_path / name
        d.mkdir()
        (d / "base85.json").write_text(json.dumps(doc))
        r = _simdex("report", str(d))
        assert r.returncode == 1 and message in r.stderr and "base85.json" in r.stderr, r.stderr
    d = tmp_path / "two"
    d.mkdir()
    for n in ("base85.json", "base85-copy.json"):
        (d / n).write_text(json.dumps(good))
    r = _simdex("report", str(d))
    assert r.returncode == 1 and "two runs of base85" in r.stderr


def test_primitives_imports_as_a_module():
    r = subprocess.run([sys.executable, "-c", "import simdex.primitives as p; from simdex.primitives import lower_bound;"
                        " print(p.__name__)"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "simdex.primitives", r.stderr


def test_only_reaches_the_python_side_peers():
    """--only named no Python-side workload, yet every py_* row was measured."""
    from simdex import benchmarks

    doc = {}
    try:
        benchmarks.ONLY = ("py_contains",)
        benchmarks.group(doc, "py_add", {}, "ns", "lower", {"a": ("", lambda: 1.0)}, "a", 2)
        assert "results" not in doc
        benchmarks.group(doc, "py_contains_hit", {}, "ns", "lower", {"a": ("", lambda: 1.0)}, "a", 2)
        assert [r["workload"] for r in doc["results"]] == ["py_contains_hit"]
        assert benchmarks.wanted("py_add", "py_contains_miss") and not benchmarks.wanted("python_b85encode")
    finally:
        benchmarks.ONLY = ()
    assert benchmarks.wanted("anything")


def test_probe_of_a_parquet_file_points_to_inspect(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    p = tmp_path / "d.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), p)
    r = _simdex("bloom", "probe", str(p), "1")
    assert r.returncode == 1 and "is a Parquet file" in r.stderr and "bloom inspect" in r.stderr
    r = _simdex("bloom")
    assert r.returncode == 2 and "required: COMMAND" in r.stderr


def test_bench_only_that_matches_nothing_fails(tmp_path):
    """`simdex bench primitives --only zzz` said no workload matched, wrote an empty report and exited 0."""
    from simdex import bench

    if "primitives" not in bench.available():
        pytest.skip(f"bench_primitives not built in {bench.bench_dir()}")
    r = _simdex("bench", "primitives", "--only", "zzz", "--no-probe", "--out", str(tmp_path / "out"))
    assert r.returncode == 1 and "nothing measured" in r.stderr, r.stderr
    assert not (tmp_path / "out" / "REPORT.md").exists()


def test_bench_scratch_is_removed_even_when_interrupted(tmp_path, monkeypatch):
    """bench_kv keeps its databases under $TMPDIR; a Ctrl-C used to leave /tmp/simdex_bench_kv_<pid>/
    behind. The runner now gives each program a folder of its own and removes it in every case,
    after stopping the program."""
    from simdex import bench

    prog = _fake_bench(tmp_path, monkeypatch, "kv", 'echo "$TMPDIR" > "$SEEN"\ntouch "$TMPDIR/db"\n'
                       'echo $$ > "$SEEN.pid"\necho "PROGRESS 1 2 working" >&2\nexec sleep 30\n')
    seen = tmp_path / "seen"
    monkeypatch.setenv("SEEN", str(seen))

    class Interrupting:
        def update(self, *a, **k):
            raise KeyboardInterrupt

    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        bench._run_native("kv", [], tmp_path / "kv.log", Interrupting(), None)
    scratch = Path(seen.read_text().strip())
    assert scratch.name.startswith("simdex_bench_kv_") and not scratch.exists()
    assert time.monotonic() - t0 < 20  # the program was stopped, not waited out
    with pytest.raises(ProcessLookupError):  # and is gone, not left running beside its deleted folder
        os.kill(int((tmp_path / "seen.pid").read_text()), 0)

    prog.write_text('#!/bin/sh\necho "$TMPDIR" > "$SEEN"\ntouch "$TMPDIR/db"\nexit 3\n')
    assert bench._run_native("kv", [], tmp_path / "kv.log", Interrupting(), None) == 3
    assert not Path(seen.read_text().strip()).exists()


@pytest.mark.parametrize("command", ["info", "kv stat x.kv", "lab list", "--include-dir"])
def test_a_closed_stdout_is_refused(command):
    """With stdout closed (`>&-`) the answers went nowhere and the command exited 0."""
    r = subprocess.run(f"{sys.executable} -m simdex {command} >&-", shell=True, capture_output=True, text=True)
    assert r.returncode == 2 and "stdout is closed" in r.stderr, r.stderr


def test_sigterm_leaves_no_temporary_file(tmp_path):
    """SIGTERM (kill, a timeout) ended the interpreter at once, leaving the staged .simdex-tmp
    file of the output being written beside it; it now unwinds, discards it, and exits 143."""
    import os
    import signal
    import time

    out = tmp_path / "out.b85"
    # As a context manager the pipes are closed on every way out (the stderr pipe, read only
    # when the assertion fails, was left open: a ResourceWarning under python -X dev).
    with subprocess.Popen([sys.executable, "-m", "simdex", "base85", "encode", "-o", str(out)],
                          stdin=subprocess.PIPE, stderr=subprocess.PIPE) as p:
        p.stdin.write(b"x" * (3 << 20))  # more than a chunk: the staged file is being written
        p.stdin.flush()
        deadline = time.monotonic() + 60
        while not os.listdir(tmp_path) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert os.listdir(tmp_path), "no staged output appeared"
        p.send_signal(signal.SIGTERM)
        _, said = p.communicate(timeout=60)  # closes stdin, reads stderr to its end
    assert p.returncode == 128 + signal.SIGTERM, said
    assert os.listdir(tmp_path) == []


def test_a_closed_pipe_ends_any_command_by_sigpipe():
    """`simdex info | head -1` exited 1 (a failure under `set -o pipefail`); commands end as cat
    does, by SIGPIPE, silently."""
    import os
    import signal

    for args in (["info"], ["info", "--help"], ["kv", "--help"]):
        r_end, w_end = os.pipe()
        os.close(r_end)  # the reader is gone before the first write
        try:
            r = subprocess.run([sys.executable, "-m", "simdex", *args], stdout=w_end, stderr=subprocess.PIPE, text=True)
        finally:
            os.close(w_end)
        assert r.returncode == -signal.SIGPIPE and r.stderr == "", (args, r)


def test_bench_out_that_is_a_file(tmp_path):
    """--out naming a file said only "cannot create F: File exists"."""
    f = tmp_path / "results"
    f.write_text("keep me")
    r = _simdex("bench", "primitives", "--no-probe", "--out", str(f))
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"cannot write into {f}: it is a file, not a directory" in r.stderr, r.stderr
    assert f.read_text() == "keep me"


def test_report_errors_read_as_path_and_reason(tmp_path, monkeypatch, capsys):
    """An unwritable DIR read "[Errno 13] Permission denied: 'DIR/plots'" (root can write
    anywhere, so the failure is injected)."""
    from simdex import cli, report

    def refuse(directory):
        raise PermissionError(13, "Permission denied", f"{directory}/plots")

    monkeypatch.setattr(report, "render", refuse)
    assert cli.main(["report", str(tmp_path)]) == 1
    assert capsys.readouterr().err == f"simdex report: {tmp_path}/plots: Permission denied\n"


def test_ctrl_c_names_the_json_files_that_are_not_this_runs(tmp_path, monkeypatch, capsys):
    """After Ctrl-C, `simdex bench base85 primitives` said "a base85.json already in DIR is an
    earlier run's" where there was none, and nothing of the earlier primitives.json that the
    report it then rendered showed."""
    from simdex import bench

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for c in ("primitives", "base85", "btree"):
        (bin_dir / f"bench_{c}").write_text("")
    monkeypatch.setenv("SIMDEX_BENCH_DIR", str(bin_dir))
    out = tmp_path / "out"
    out.mkdir()
    (out / "primitives.json").write_text("{}")
    os.utime(out / "primitives.json", (1, 1))

    def interrupted(console, wanted, have, python_only, args, outdir, *rest):
        (outdir / "btree.json").write_text("{}")  # a native run whose Python side did not finish
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "_run_all", interrupted)
    assert bench.run(["base85", "primitives", "btree"], out=str(out), report=False) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert (f"interrupted: no component finished; not finished: base85, primitives, btree; primitives.json in {out} "
            "is from an earlier run; btree.json holds only what this run finished") in err, err
    assert "base85.json" not in err


def test_a_component_named_twice_runs_once(tmp_path, monkeypatch):
    from simdex import bench

    (tmp_path / "bench_primitives").write_text("")
    monkeypatch.setenv("SIMDEX_BENCH_DIR", str(tmp_path))
    ran = []
    monkeypatch.setattr(bench, "_run_native", lambda c, *a: ran.append(c) or 1)
    assert bench.run(["primitives", "primitives"], out=str(tmp_path / "out"), report=False) == 1
    assert ran == ["primitives"]


def test_only_that_measures_nothing_keeps_the_earlier_json(tmp_path, monkeypatch, capsys):
    """`simdex bench primitives --only typo` replaced the earlier primitives.json, every figure
    of a whole run, with one holding no results."""
    import json

    from simdex import bench

    # What the real program does when --only matches nothing: a run without results.
    _fake_bench(tmp_path, monkeypatch, "primitives", 'while [ "$1" != "--out" ]; do shift; done\n'
                'echo \'{"schema": "simdex-bench/1", "results": []}\' > "$2/primitives.json"\n')
    out = tmp_path / "out"
    out.mkdir()
    earlier = json.dumps({"schema": "simdex-bench/1", "results": [{"workload": "lower_bound"}]})
    (out / "primitives.json").write_text(earlier)
    assert bench.run(["primitives"], out=str(out), only=["typo"], report=False) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert f"primitives: kept the earlier {out / 'primitives.json'}, as --only measured nothing" in err, err
    assert "no workload of primitives matches --only typo: nothing measured" in err, err
    assert (out / "primitives.json").read_text() == earlier
    (out / "primitives.json").unlink()  # with none before, the empty run is what there is
    assert bench.run(["primitives"], out=str(out), only=["typo"], report=False) == 1
    assert json.loads((out / "primitives.json").read_text())["results"] == []
