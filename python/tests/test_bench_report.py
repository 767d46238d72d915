"""The benchmark pipeline end to end: a native program writes JSON, the report renders it."""

import json
import re
import subprocess
import sys

import pytest

from simdex import report


@pytest.fixture(scope="module")
def primitives_run(bench_run):
    return bench_run("primitives", "bench", "primitives", "--reps", "2", "--no-probe",
                     "--only", "find_u32x16", "--only", "rank_table")


def test_json_schema(primitives_run):
    doc = json.loads((primitives_run / "primitives.json").read_text())
    assert doc["schema"] == "simdex-bench/1"
    assert doc["component"] == "primitives"
    env = doc["environment"]
    for key in ("cpu_model", "cpu_flags", "caches", "cores", "memory_bytes", "kernel", "thp", "hypervisor",
                "compiler", "cxx_flags", "simdex_commit", "isa_active", "kernels"):
        assert key in env, key
    workloads = {r["workload"] for r in doc["results"]}
    assert workloads == {"find_u32x16", "rank_table"}
    for r in doc["results"]:
        assert len(r["samples"]) == 2
        assert r["min"] <= r["median"] <= r["max"]
        assert r["unit"] == "ns/call"
        if r["contender"] != "scalar":
            assert r["ratio"]["reference"] == "scalar"
            ref = next(x for x in doc["results"] if x["workload"] == r["workload"] and x["contender"] == "scalar")
            assert r["ratio"]["value"] == pytest.approx(ref["median"] / r["median"], rel=1e-3)


def test_report_numbers_come_from_json(primitives_run):
    md = (primitives_run / "REPORT.md").read_text()
    page = (primitives_run / "report.html").read_text()
    assert "<svg" in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    doc = json.loads((primitives_run / "primitives.json").read_text())
    allowed = {report.fmt(r["median"]) for r in doc["results"]}
    allowed |= {report.fmt(r["ratio"]["value"]) for r in doc["results"] if "ratio" in r}
    table = md.split("## primitives", 1)[1]
    for cell in re.findall(r"\| ([0-9][0-9.,]*)~?(?: \(([0-9.,]+)×\))? ", table):
        assert cell[0] in allowed
        if cell[1]:
            assert cell[1] in allowed


def test_report_rejects_empty_dir(tmp_path):
    with pytest.raises(ValueError):
        report.render(tmp_path)
    r = subprocess.run([sys.executable, "-m", "simdex", "report", str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 1 and "no benchmark JSON" in r.stderr


def test_bench_rejects_unknown_component(tmp_path):
    r = subprocess.run([sys.executable, "-m", "simdex", "bench", "nosuch", "--out", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "nosuch" in r.stderr


def _limits_doc(component, memcpy, latency, results=()):
    stat = lambda v: {"median": v, "min": v, "max": v, "noisy": False, "samples": [v]}  # noqa: E731
    return {"component": component, "results": list(results),
            "machine": {"memcpy_gib_s": {"4k": stat(memcpy), "2m": stat(memcpy)},
                        "latency_ns": {p: {"chains_1": stat(latency)} for p in ("4k", "2m")}}}


def test_lab_agreement_with_other_runs():
    from simdex import agreement
    chase = [{"workload": "pointer_chase.latency", "contender": f"1 chain, {p} pages", "median": 200.0,
              "min": 200.0, "max": 200.0, "params": {}, "unit": "ns/access", "better": "lower"} for p in ("4k", "2m")]
    others = [_limits_doc("bloom", 10.0, 180.0), _limits_doc("btree", 12.0, 190.0), _limits_doc("kv", 11.0, 185.0)]
    near = agreement.rows(others + [_limits_doc("lab", 10.5, 999.0, chase)])
    # latency comes from the lab's own experiment, not its probe; 200 vs 185 is 8.1% apart
    assert [r[-1] for r in near] == ["yes"] * 4
    assert near[2][1] == "200" and near[2][3] == "8.1%" and "pointer_chase" in near[2][0]
    far = agreement.rows(others + [_limits_doc("lab", 8.0, 999.0)])
    # without the experiment the probe's own 999 ns stands for the lab, and memcpy 8 vs 11 is 27% apart
    assert [r[-1] for r in far] == ["no"] * 4 and "probe" in far[2][0]
    assert agreement.rows(others) == [] and agreement.rows([_limits_doc("lab", 1.0, 1.0)]) == []
    md = report.render_markdown(others + [_limits_doc("lab", 10.5, 999.0, chase)])
    assert "The lab against the other runs" in md


def test_environment_sizes_read_as_kib_mib_gib():
    doc = {"mode": "quick", "repetitions": 5, "environment": {
        "caches": [{"level": 1, "type": "Data", "size": "32K"}, {"level": 3, "type": "Unified", "size": "32768K"}],
        "memory_bytes": 24 << 30}}
    rows = dict(report.env_rows(doc))
    assert rows["caches"] == "L1 data 32 KiB, L3 unified 32 MiB" and rows["memory"] == "24 GiB"
    assert dict(report.env_rows({"environment": {}}))["memory"] == "?"  # never an invented 0.0 GiB


@pytest.mark.skipif(not {"primitives", "btree"} <= set(__import__("simdex.bench").bench.available()),
                    reason="bench_primitives and bench_btree not built")
def test_ctrl_c_in_simdex_bench_says_what_finished(tmp_path):
    """Ctrl-C on `simdex bench` exited 130 without a word and rendered nothing, though the
    components before it had finished."""
    import os
    import signal
    import time

    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "simdex", "bench", "primitives", "btree", "--no-probe", "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120  # primitives takes seconds, btree's quick run minutes
    while p.poll() is None and time.monotonic() < deadline and not (out / "btree.log.new").exists():  # btree's log, while it runs
        time.sleep(0.05)
    time.sleep(0.5)
    assert p.poll() is None, p.communicate()[1]
    os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    err = p.communicate(timeout=120)[1]
    assert p.returncode == 130, err
    assert "interrupted: primitives finished; not finished: btree" in err
    assert (out / "REPORT.md").is_file() and "primitives" in (out / "REPORT.md").read_text()
    assert not (out / "btree.json").exists()


def test_a_bench_program_run_leaves_no_open_pipe(tmp_path, monkeypatch):
    """simdex bench never closed the pipe it read a program's progress from: every component
    run left a ResourceWarning (shown under python -X dev)."""
    import gc
    import warnings

    from simdex import bench

    fake = tmp_path / "bench_fake"
    fake.write_text("#!/bin/sh\necho 'PROGRESS 1 2 half' >&2\necho 'a log line' >&2\necho out\n")
    fake.chmod(0o755)
    monkeypatch.setattr(bench, "bench_dir", lambda: tmp_path)

    class Progress:
        def update(self, task, **kw):
            self.last = kw

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert bench._run_native("fake", [], tmp_path / "fake.log", Progress(), 0) == 0
        gc.collect()
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []
    assert sorted((tmp_path / "fake.log").read_text().splitlines()) == ["a log line", "out"]


def test_an_interrupted_bench_program_is_heard_out(tmp_path, monkeypatch):
    """After Ctrl-C, simdex bench stopped reading the program's stderr and waited for it: what
    the program said as it stopped never reached its log, and more than a pipe's worth of it
    would block the program, and simdex with it, for ever."""
    import threading

    from simdex import bench

    fake = tmp_path / "bench_fake"
    fake.write_text("#!/bin/sh\n"
                    "trap 'i=0; while [ $i -lt 3000 ]; do echo \"stopping, line $i: "
                    "..................................................\" >&2; i=$((i+1)); done; "
                    "echo \"stopped cleanly\" >&2; exit 143' TERM\n"
                    "echo 'PROGRESS 1 2 half' >&2\n"
                    "while :; do sleep 0.05; done\n")
    fake.chmod(0o755)
    monkeypatch.setattr(bench, "bench_dir", lambda: tmp_path)

    class Progress:  # Ctrl-C arrives while the first progress line is shown
        calls = 0

        def update(self, task, **kw):
            self.calls += 1
            if self.calls == 1:
                raise KeyboardInterrupt

    outcome = []

    def run():
        try:
            bench._run_native("fake", [], tmp_path / "fake.log", Progress(), 0)
        except KeyboardInterrupt:
            outcome.append("interrupted")

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "simdex bench waits for a program blocked on its full pipe"
    assert outcome == ["interrupted"]
    log = (tmp_path / "fake.log").read_text()
    assert "stopping, line 2999" in log and log.rstrip().endswith("stopped cleanly")


def _b85_run(sizes, machine=None):
    """A made-up base85 run: b85_encode at each size (base85 plots it against bytes)."""
    def r(contender, n, v):
        return {"workload": "b85_encode", "params": {"variant": "b85", "bytes": n}, "contender": contender,
                "unit": "GiB/s", "better": "higher", "median": v, "min": v, "max": v, "noisy": False, "samples": [v]}
    return {"schema": report.SCHEMA, "component": "base85", "mode": "quick", "repetitions": 5,
            "started": "2026-01-01T10:00:00Z", "finished": "2026-01-01T10:01:00Z",
            "environment": {"cpu_model": "Test CPU", "cores": 2, "isa_active": "avx512"}, "machine": machine,
            "notes": [], "results": [x for n in sizes for x in (r("avx512", n, 9.0), r("base85-simd", n, 1.0))]}


def test_rendering_again_removes_the_plots_it_no_longer_has(tmp_path):
    """Rendering a folder again left the SVGs of plots its runs no longer have in DIR/plots,
    beside the report; what simdex did not write there stays."""
    (tmp_path / "base85.json").write_text(json.dumps(_b85_run([4096, 1 << 20])))
    report.render(tmp_path)
    scaling = [p.name for p in (tmp_path / "plots").glob("base85-*.svg")]
    assert len(scaling) == 1
    mine = tmp_path / "plots" / "base85-my-own.svg"  # the user's, named like one of ours
    mine.write_text("<svg xmlns='http://www.w3.org/2000/svg'/>\n")
    (tmp_path / "base85.json").write_text(json.dumps(_b85_run([4096])))  # one size: no scaling plot
    report.render(tmp_path)
    left = {p.name for p in (tmp_path / "plots").iterdir()}
    linked = set(re.findall(r"\]\(plots/([^)]+)\)", (tmp_path / "REPORT.md").read_text()))
    assert scaling[0] not in left and left == linked | {mine.name}, (left, linked)


def test_a_noisy_limit_line_is_marked_noisy():
    """A scaling plot's machine-limit line printed its figure without the "~" that marks every
    other noisy figure of the report."""
    from simdex import headlines, plots

    machine = {"memcpy_gib_s": {"4k": {"median": 12.0, "noisy": True}, "2m": {"median": 14.0, "noisy": False}}}
    doc = _b85_run([4096, 1 << 20], machine)
    [s] = headlines.scalings(doc, machine)
    svg = report.scaling_svg(s, plots.Colours([list(s.series)]))
    assert "memcpy (4k pages) 12~<" in svg and "memcpy (4k pages): 12~<" in svg
    machine["memcpy_gib_s"]["4k"]["noisy"] = False
    [s] = headlines.scalings(doc, machine)
    assert "memcpy (4k pages) 12<" in report.scaling_svg(s, plots.Colours([list(s.series)]))


def test_ctrl_c_while_the_report_renames_its_files_keeps_them_together(tmp_path, monkeypatch):
    """Ctrl-C between two renames of write_texts left a new REPORT.md beside an old report.html."""
    import os
    import signal

    from simdex import _output

    files = [tmp_path / "REPORT.md", tmp_path / "report.html"]
    for f in files:
        f.write_text("old")
    commit = _output.Output.commit

    def commit_then_ctrl_c(self):
        commit(self)
        os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(_output.Output, "commit", commit_then_ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        report.write_texts([(f, "new") for f in files])
    assert [f.read_text() for f in files] == ["new", "new"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["REPORT.md", "report.html"]


@pytest.mark.parametrize("earlier", [True, False])
def test_ctrl_c_during_the_final_render_says_what_was_kept(tmp_path, monkeypatch, capsys, earlier):
    """Ctrl-C while simdex bench rendered its report exited 130 without a word, though every
    figure had been written."""
    from simdex import bench

    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "bench_base85").write_text("")
    monkeypatch.setenv("SIMDEX_BENCH_DIR", str(tmp_path / "bin"))
    out = tmp_path / "out"
    out.mkdir()
    if earlier:
        (out / "REPORT.md").write_text("an earlier report")

    def ran(console, wanted, have, python_only, args, outdir, mode, reps, only, failed, unmatched, finished):
        (outdir / "base85.json").write_text(json.dumps(_b85_run([4096])))
        finished.append("base85")

    def ctrl_c(directory):
        raise KeyboardInterrupt

    monkeypatch.setattr(bench, "_run_all", ran)
    monkeypatch.setattr(report, "render", ctrl_c)
    assert bench.run(["base85"], out=str(out)) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert f"interrupted while writing the report: the figures this run measured are in {out}" in err, err
    if earlier:
        assert f"{out / 'REPORT.md'} and {out / 'report.html'} are still an earlier report's, not this run's" in err, err
        assert (out / "REPORT.md").read_text() == "an earlier report"
    else:
        assert f"no report was written (`simdex report {out}` renders it)" in err, err
    assert sorted(p.name for p in out.iterdir()) == sorted(["base85.json"] + (["REPORT.md"] if earlier else []))


def test_ctrl_c_during_simdex_report_says_what_dir_holds(tmp_path, monkeypatch, capsys):
    """`simdex report DIR` interrupted while rendering exited 130 without a word."""
    from simdex import cli

    (tmp_path / "base85.json").write_text(json.dumps(_b85_run([4096])))
    (tmp_path / "REPORT.md").write_text("an earlier report")

    def ctrl_c(directory):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "render", ctrl_c)
    assert cli.main(["report", str(tmp_path)]) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert "simdex report: interrupted:" in err and "are still an earlier report's, not this run's" in err, err
    assert (tmp_path / "REPORT.md").read_text() == "an earlier report"


def test_bench_sh_names_a_dirty_tree(tmp_path):
    """scripts/bench.sh stamped HEAD on a run of a working tree with uncommitted changes: the
    report then named a commit that was not what ran."""
    import os
    import shutil
    from pathlib import Path

    if shutil.which("git") is None:
        pytest.skip("no git")
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(Path(__file__).resolve().parents[2] / "scripts" / "bench.sh", repo / "scripts")
    # setup.sh stands in for the real one (which installs and builds): it only goes to the root.
    (repo / "scripts" / "setup.sh").write_text(f"simdex_setup() {{ cd '{repo}'; }}\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "simdex").write_text('#!/bin/sh\n[ "$1" = bench ] && echo "commit=$SIMDEX_COMMIT"\nexit 0\n')
    (tmp_path / "bin" / "simdex").chmod(0o755)
    env = {**os.environ, "PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}

    def git(*args):
        return subprocess.run(["git", "-C", str(repo), *args], env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    def commit():
        r = subprocess.run(["bash", str(repo / "scripts" / "bench.sh")], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return r.stdout.strip().removeprefix("commit=")

    git("init", "-q")
    git("add", "scripts")
    git("commit", "-q", "-m", "one")
    head = git("rev-parse", "--short=12", "HEAD")
    assert commit() == head
    (repo / "scratch.txt").write_text("untracked")  # used by nothing tracked: still HEAD's code
    assert commit() == head
    with open(repo / "scripts" / "setup.sh", "a") as f:
        f.write("# changed\n")
    assert commit() == f"{head}+dirty"
    git("add", "scripts/setup.sh")  # staged, not committed
    assert commit() == f"{head}+dirty"


def test_a_dirty_commit_shows_wherever_the_commit_does():
    """What scripts/bench.sh records for a tree with uncommitted changes reaches the report's
    environment and the README's results line as it is."""
    doc = _b85_run([4096])
    doc["environment"]["simdex_commit"] = "0123456789ab+dirty"
    assert dict(report.env_rows(doc))["simdex"].endswith("commit 0123456789ab+dirty")
    assert "commit 0123456789ab+dirty, by `bash scripts/bench.sh`" in report.readme_block([doc], "bash scripts/bench.sh")
