"""The lab end to end: the registry, a run's JSON (schema and lab block), the report section,
the generated docs table. Checks structure and validity logic, never a time."""

import copy
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simdex import bench, plots, report
from simdex.benchmarks import lab
from simdex.commands import lab as lab_cmd

DOCS = Path(__file__).resolve().parents[2] / "docs" / "lab.md"
needs_bench = pytest.mark.skipif("lab" not in bench.available(), reason=f"bench_lab not built in {bench.bench_dir()}")


def simdex(*args):
    return subprocess.run([sys.executable, "-m", "simdex", *args], capture_output=True, text=True)


def bench_lab(*args, **kw):
    return subprocess.run([str(bench.bench_dir() / "bench_lab"), *args], capture_output=True, text=True, **kw)


# The fields of a lab run beside its "lab" block, for documents built in a test.
RUN = {"schema": "simdex-bench/1", "component": "lab", "mode": "quick", "repetitions": 5, "started": "2026-11-28T00:00:00Z",
       "finished": "2026-11-28T00:01:00Z", "environment": {}, "results": []}


def lab_doc(experiments) -> dict:
    return {**RUN, "lab": {"clock": {}, "counters": "", "study": [{"number": n, "name": str(n), "group": "memory"} for n in range(1, 38)],
                           "experiments": experiments}}


@pytest.fixture(scope="module")
def registry():
    if "lab" not in bench.available():
        pytest.skip(f"bench_lab not built in {bench.bench_dir()}")
    return lab_cmd.registry()


@pytest.fixture(scope="module")
def lab_run(bench_run):
    return bench_run("lab", "lab", "ilp", "branch", "--reps", "2", "--no-probe")


def test_registry_declares_every_field(registry):
    assert [s["number"] for s in registry["study"]] == list(range(1, 38))
    ids = [e["id"] for e in registry["experiments"]]
    assert len(ids) == len(set(ids))
    for e in registry["experiments"]:
        if e["study"] is None:  # the lab's own: no study figure to print beside ours
            assert e["group"] == "machine" and e["study_figure"] == "", e["id"]
        else:
            assert 1 <= e["study"] <= 37 and e["study_figure"].strip(), e["id"]
            assert e["group"] in {"memory", "concurrency", "language"}
        for key in ("title", "question"):
            assert e[key].strip(), (e["id"], key)
        assert e["range"]["lo"] < e["range"]["hi"] and e["range"]["unit"] and e["range"]["basis"], e["id"]
        assert e["checks"], f"{e['id']} declares no validity check"


def test_docs_table_is_the_generated_one(registry):
    text = DOCS.read_text()
    assert lab.table_in(text) == lab.mapping_markdown(registry), "run: simdex lab list --markdown --update docs/lab.md"
    assert len(lab.table_in(text).splitlines()) >= 2 + 37


def test_docs_verdicts_are_a_whole_run_as_the_report_prints_it(registry):
    """docs/lab.md's "Verdicts from one run" was pasted from a report older than the verdict
    table's "(warned: ...)" and its rows for the lab's own experiments: it must be the table
    lab.verdict_rows prints for a run of every experiment."""
    block = DOCS.read_text().split("<!-- lab-verdicts:begin -->", 1)[1].split("<!-- lab-verdicts:end -->", 1)[0]
    lines = [ln for ln in block.splitlines() if ln.startswith("| ")]
    assert [c.strip() for c in lines[0].strip("|").split("|")] == lab.VERDICT_HEAD
    rows = [[c.strip() for c in re.split(r"(?<!\\)\|", ln.strip("|"))] for ln in lines[1:]]
    every = lab_doc([{**e, "verdict": "measured"} for e in registry["experiments"]])  # the rows' order is the run's
    assert [r[3] for r in rows] == [r[3] for r in lab.verdict_rows(every)]
    for r in rows:
        assert r[6] in lab.VERDICTS, r
        if r[6] == "inconclusive":  # a failed check says why; warnings are named only beside a verdict that stands
            assert "(warned: " not in r[7], r


def test_readme_shows_how_to_compare_two_lab_runs(tmp_path):
    """README's lab commands had no `simdex report A B` (docs/lab.md, docs/bench-json.md and
    `simdex report --help` have it). Its line, given lab runs in the two folders it names,
    prints them side by side."""
    readme = (DOCS.parents[1] / "README.md").read_text()
    block = next(b for b in re.findall(r"^```sh\n(.*?)^```", readme, re.S | re.M) if "simdex lab list" in b)
    lines = [re.sub(r"\s+#\s.*$", "", raw.strip()) for raw in block.splitlines()]
    line = next((x for x in lines if re.fullmatch(r"simdex report \S+ \S+", x)), None)
    assert line, block
    folders = [tmp_path / name for name in line.split()[2:]]
    for value, folder in zip((3.0, 1.5), folders):
        e = {"id": "ilp", "study": 7, "group": "memory", "title": "ILP", "question": "q", "study_figure": "f",
             "range": {"lo": 1, "hi": 4, "unit": "x", "basis": "b"}, "checks": [], "verdict": "confirmed",
             "reason": "r", "validity": [], "counters": [], "curves": [], "notes": [],
             "figure": {"value": value, "unit": "x", "label": "l"}}
        doc = lab_doc([e])
        assert lab.validate(doc) == []
        folder.mkdir()
        (folder / "lab.json").write_text(json.dumps(doc))
    r = simdex(*line.split()[1:2], *map(str, folders))
    assert r.returncode == 0, r.stderr
    assert "| ilp | 7 | 3.00 x | 1.50 x | 0.5× |" in r.stdout, r.stdout


def test_list_commands(registry):
    r = simdex("lab", "list")
    assert r.returncode == 0 and "ilp" in r.stdout
    r = simdex("lab", "list", "--json")
    assert json.loads(r.stdout) == registry
    r = simdex("lab", "list", "--markdown")
    assert r.stdout.strip() == lab.mapping_markdown(registry)
    # bench_lab's spelling: `simdex lab --list` was "simdex: error: unrecognized arguments: --list"
    r = simdex("lab", "--list", "--json")
    assert r.returncode == 0 and json.loads(r.stdout) == registry, r.stderr


@needs_bench
def test_unknown_experiment_is_an_error(tmp_path):
    r = simdex("lab", "no_such_experiment", "--out", str(tmp_path), "--no-report")
    assert r.returncode == 2 and "no_such_experiment" in r.stderr


def test_run_json_is_valid(lab_run):
    doc = json.loads((lab_run / "lab.json").read_text())
    assert doc["schema"] == "simdex-bench/1" and doc["component"] == "lab"
    assert lab.validate(doc) == []
    ids = {e["id"] for e in doc["lab"]["experiments"]}
    assert ids == {"ilp", "branch"}
    assert {r["workload"].split(".")[0] for r in doc["results"]} == ids
    for e in doc["lab"]["experiments"]:
        assert e["verdict"] in lab.VERDICTS and e["reason"]
        for group in e["counters"]:
            for r in group["readings"]:
                assert r["value"] is not None or r["status"].startswith(("unavailable", "untrusted"))


def test_every_experiment_says_whether_its_repetitions_agree(lab_run):
    """docs/lab.md lists a "steady" check (max/min above 1.5 warns) that no experiment ran: a
    figure whose repetitions spread 3x read as firmly as a steady one, and 1 or 2 repetitions
    as if they had agreed."""
    for e in json.loads((lab_run / "lab.json").read_text())["lab"]["experiments"]:
        steady = [c for c in e["validity"] if c["name"] == "steady"]
        assert [c["status"] for c in steady] == ["warn"], (e["id"], e["validity"])
        assert steady[0]["detail"].startswith("2 repetitions per figure: too few"), steady


def test_below_one_cycle_agrees_with_the_cycles_column(bench_run):
    """The harness's "below one cycle" flag and the lab's cycles/op divide by the same cycle time:
    a time is flagged exactly where its cycles/op figure is under 1."""
    out = bench_run("lab", "lab", "inlining", "--reps", "2", "--no-probe")
    results = json.loads((out / "lab.json").read_text())["results"]
    ns = {(x["workload"], x["contender"]): x for x in results if x["unit"] == "ns/op"}
    pairs = [(ns[(c["workload"].removesuffix(" cycles"), c["contender"])], c)
             for c in results if c["unit"] == "cycles/op"]
    assert pairs
    for t, c in pairs:
        assert bool(t.get("below_one_cycle")) == (c["median"] < 1), (t, c)
        # one cycle time for every pair (to the JSON's printed precision)
        assert t["median"] / c["median"] == pytest.approx(pairs[0][0]["median"] / pairs[0][1]["median"], rel=1e-4)


def test_json_round_trip_renders_the_same(lab_run, tmp_path):
    doc = json.loads((lab_run / "lab.json").read_text())
    again = json.loads(json.dumps(doc))
    assert again == doc
    (tmp_path / "lab.json").write_text(json.dumps(again))
    md, page = report.render(tmp_path)
    assert md.read_text() == (lab_run / "REPORT.md").read_text()
    assert page.read_text() == (lab_run / "report.html").read_text()


def test_report_has_the_verdict_table(lab_run):
    md = (lab_run / "REPORT.md").read_text()
    section = md.split("### Verdicts", 1)[1]
    rows = [line for line in section.split("### ", 1)[0].splitlines() if re.match(r"\| \d+ \|", line)]
    assert len(rows) == 37
    doc = json.loads((lab_run / "lab.json").read_text())
    for e in doc["lab"]["experiments"]:
        row = next(r for r in rows if f"| {e['id']} |" in r)
        assert f"| {e['verdict']} |" in row
    assert "not run" in md  # the other 35 say so
    page = (lab_run / "report.html").read_text()
    for _, title in lab.SECTIONS:
        assert title in page


def test_a_standing_verdict_names_the_checks_that_warned():
    """The verdict table gave "confirmed" alike to a figure whose repetitions agreed and to one
    measured once or spread 3x: the warnings were only in the list of checks further down."""
    def experiment(eid, study, verdict, statuses):
        return {"id": eid, "study": study, "verdict": verdict, "reason": "why", "figure": None, "range": {},
                "validity": [{"name": n, "status": st, "detail": ""} for n, st in statuses]}

    doc = lab_doc([experiment("ilp", 7, "confirmed", [("work_done", "pass"), ("steady", "warn"), ("plausible_range", "warn")]),
                   experiment("branch", 8, "contradicted", [("steady", "pass")]),
                   experiment("queue", 11, "inconclusive", [("run_queue", "fail"), ("steady", "warn")]),
                   experiment("core_to_core", None, "measured", [("steady", "warn")])])
    reasons = {r[3]: r[7] for r in lab.verdict_rows(doc)}
    assert reasons["ilp"] == "why (warned: steady, plausible_range)"
    assert reasons["branch"] == "why" and reasons["queue"] == "why"  # nothing warned; a failed check says why
    assert reasons["core_to_core"] == "why (warned: steady)"


def test_an_unmeasured_difference_is_never_printed_as_a_figure():
    """tlb's TLB-miss cost is 4 KiB minus 2 MiB pages; on a busy guest it came out -39.3 ns and
    was printed as the figure. bench_lab now writes no value for a difference the samples do not
    show, and the report says so with the two measurements."""
    e = {"id": "tlb", "study": 22, "group": "memory", "title": "TLB pressure", "question": "q", "study_figure": "f",
         "range": {"lo": 5, "hi": 150, "unit": "ns", "basis": "b"}, "checks": [], "verdict": "inconclusive",
         "reason": "the TLB cost is not measurable here", "validity": [], "counters": [], "curves": [], "notes": [],
         "figure": {"value": None, "unit": "ns", "label": "4 KiB minus 2 MiB pages at 256 MiB span",
                    "not_measured": "2 MiB pages measured slower than 4 KiB pages (-39.3 ns): a negative difference is no cost",
                    "measurements": [{"label": "4 KiB pages", "median": 101.2, "min": 98, "max": 104},
                                     {"label": "2 MiB pages", "median": 140.5, "min": 139, "max": 150}]}}
    doc = lab_doc([e])
    assert lab.validate(doc) == []
    row = next(r for r in lab.verdict_rows(doc) if r[3] == "tlb")
    assert row[4] == "not measurable (4 KiB pages 101 ns, 2 MiB pages 140 ns)"
    for text in (lab.markdown_section(doc), lab.html_section(doc)):
        assert "not measurable (4 KiB pages 101 ns, 2 MiB pages 140 ns)" in text and "-39.3 ns |" not in text
    measured = copy.deepcopy(e)
    measured["figure"] = {"value": 12.5, "unit": "ns", "label": "l"}
    assert next(r for r in lab.verdict_rows({"lab": {**doc["lab"], "experiments": [measured]}}) if r[3] == "tlb")[4] == "12.5 ns"


def test_validate_catches_a_bad_document():
    good = lab_doc([{
        "id": "x", "study": 1, "group": "memory", "title": "t", "question": "q", "study_figure": "f",
        "range": {"lo": 1, "hi": 2, "unit": "ns", "basis": "b"}, "checks": ["on_chain"], "verdict": "confirmed", "reason": "r",
        "validity": [{"name": "on_chain", "status": "pass", "detail": "d"}], "counters": [], "curves": [], "notes": []}])
    assert lab.validate(good) == []
    failed = copy.deepcopy(good)
    failed["lab"]["experiments"][0]["validity"][0]["status"] = "fail"
    assert any("verdict" in p for p in lab.validate(failed))
    undeclared = copy.deepcopy(good)
    undeclared["lab"]["experiments"][0]["validity"] = []
    assert any("declared check" in p for p in lab.validate(undeclared))
    silent = copy.deepcopy(good)
    silent["lab"]["experiments"][0]["counters"] = [{"label": "l", "readings": [{"name": "cycles", "value": None, "status": ""}]}]
    assert any("no reason" in p for p in lab.validate(silent))
    assert lab.validate({**RUN}) == ["no 'lab' block"]


def test_line_chart_draws_lines_bands_and_markers():
    series = {"4k": [(4096, 1.0, 0.9, 1.1), (1 << 20, 4.0, 3.5, 4.5)], "2m": [(4096, 1.0), (1 << 20, 3.0)]}
    svg = plots.line_chart("latency", "working set (bytes)", "ns", series, plots.Colours([list(series)]),
                           x_format=lambda v: f"{v:g}", markers=[(32768, "L1 32 KiB")], y_log=False)
    assert svg.count("<polyline") == 2 and "<polygon" in svg and "L1 32 KiB" in svg and "stroke-dasharray" in svg
    assert plots.line_chart("empty", "x", "y", {}, plots.Colours()) == ""


def test_update_table(tmp_path):
    f = tmp_path / "doc.md"
    f.write_text(f"intro\n{lab.TABLE_BEGIN}\nold\n{lab.TABLE_END}\nafter\n")
    lab.update_table(f, "| new |")
    assert f.read_text() == f"intro\n{lab.TABLE_BEGIN}\n| new |\n{lab.TABLE_END}\nafter\n"
    (tmp_path / "none.md").write_text("no markers")
    with pytest.raises(ValueError):
        lab.update_table(tmp_path / "none.md", "x")


def test_a_malformed_lab_json_is_refused(tmp_path):
    """A lab.json holding only its schema and component rendered with exit 0 as "None mode, None
    repetitions". The report now names what is missing and renders nothing."""
    stub = {"schema": "simdex-bench/1", "component": "lab"}
    problems = lab.validate(stub)
    for want in ("no 'mode'", "no 'repetitions'", "no 'environment'", "no 'results'", "no 'lab' block"):
        assert want in problems, problems
    assert "'repetitions' is not a whole number" in lab.validate({**lab_doc([]), "repetitions": "5"})
    assert "no 'lab.experiments'" in lab.validate({**RUN, "lab": {"clock": {}, "counters": "", "study": []}})
    with pytest.raises(ValueError, match="no 'mode'"):
        lab.markdown_section(stub)
    (tmp_path / "lab.json").write_text(json.dumps(stub))
    r = simdex("report", str(tmp_path))
    assert r.returncode == 1, r.stdout
    assert "lab.json is not a complete lab run" in r.stderr and "no 'repetitions'" in r.stderr and "no 'lab' block" in r.stderr
    assert not (tmp_path / "REPORT.md").exists() and "None mode" not in r.stdout


def test_list_refuses_options_that_do_not_apply():
    """`simdex lab list` took --quick, --full, --out, --reps, --no-probe and --no-report and ignored
    them, and printed JSON for --json --markdown."""
    for args in (["--quick"], ["--full"], ["--out", "x"], ["--reps", "3"], ["--no-probe"], ["--no-report"]):
        r = simdex("lab", "list", *args)
        assert r.returncode == 2 and f"{args[0]} does not apply to 'list'" in r.stderr, (args, r.stderr)
    r = simdex("lab", "list", "--quick", "--out", "x")
    assert r.returncode == 2 and "--quick, --out do not apply to 'list'" in r.stderr
    r = simdex("lab", "list", "--json", "--markdown")
    assert r.returncode == 2 and "exclude each other" in r.stderr and not r.stdout
    r = simdex("lab", "ilp", "--json")
    assert r.returncode == 2 and "--json goes with 'list'" in r.stderr
    r = simdex("lab", "ilp", "--json", "--markdown")
    assert r.returncode == 2 and "--markdown, --json go with 'list'" in r.stderr


@needs_bench
def test_bench_lab_options_are_strict_and_in_any_order(registry):
    """bench_lab started a full run for --quick --full, printed text for --json --list and took
    --list --bogus."""
    try:
        r = bench_lab("--quick", "--full", "--only", "ilp", "--no-probe", "--out", "unused", timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("bench_lab --quick --full started a run")
    assert r.returncode == 2 and "--quick and --full exclude each other" in r.stderr
    for args in (["--list", "--json"], ["--json", "--list"]):
        r = bench_lab(*args)
        assert r.returncode == 0 and json.loads(r.stdout) == registry, args
    for args in (["--list", "--bogus"], ["--bogus", "--list"], ["--list", "--quick"], ["--json"], ["--bogus"]):
        r = bench_lab(*args, timeout=60)
        assert r.returncode == 2 and r.stderr.strip(), (args, r.stderr)


@needs_bench
def test_a_killed_run_leaves_no_file(tmp_path):
    """mmap_read and mmap_write work on a scratch file in the temporary directory; a run killed
    while it was open left it there (128 MiB a time). The name is now removed as the file is
    created, so only the open descriptor keeps it."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    p = subprocess.Popen([str(bench.bench_dir() / "bench_lab"), "--only", "mmap_read", "--no-probe", "--reps", "50",
                          "--out", str(tmp_path / "out")], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen, deadline = False, time.monotonic() + 60
    try:
        while not seen and p.poll() is None and time.monotonic() < deadline:
            for fd in Path(f"/proc/{p.pid}/fd").iterdir():
                try:
                    seen |= "simdex-lab-" in os.readlink(fd)
                except OSError:
                    pass
            time.sleep(0.005)
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait()
    assert seen, "bench_lab ended before its scratch file was seen open"
    assert list(scratch.iterdir()) == []


@pytest.fixture(scope="module")
def memory_run(bench_run):
    return json.loads((bench_run("lab", "lab", "pointer_chase", "tlb", "mmap_write", "--reps", "1", "--no-probe") / "lab.json").read_text())


def _checks(doc, eid, name):
    e = next(e for e in doc["lab"]["experiments"] if e["id"] == eid)
    return e, [c for c in e["validity"] if c["name"] == name]


def test_on_chain_runs_the_timed_loops(memory_run):
    """The on-chain check ran a loop of its own beside the timed ones; it now runs the timed loop
    with every chain count pointer_chase times (1 and 16)."""
    _, checks = _checks(memory_run, "pointer_chase", "on_chain")
    assert len(checks) == 2
    for c in checks:
        assert c["status"] == "pass" and "the timed loop with 1 and 16 chains" in c["detail"], c


def test_pointer_chase_bytes_are_checked_against_the_layout(memory_run):
    """The sequential read's checksum was compared with the same sum_words over the same bytes."""
    _, checks = _checks(memory_run, "pointer_chase", "bytes_touched")
    assert [c["status"] for c in checks] == ["pass"]
    assert "node addresses" in checks[0]["detail"]


def test_plausible_range_names_its_unit_once(memory_run):
    for e in memory_run["lab"]["experiments"]:
        for c in e["validity"]:
            if c["name"] == "plausible_range":
                unit = e["range"]["unit"]
                assert c["detail"].count(f" {unit}") == 1 and c["detail"].endswith(")"), c["detail"]


def test_one_repetition_measures_no_tlb_cost(memory_run):
    """With --reps 1 a single sample a side decided the TLB cost, which noise does half the time."""
    e, _ = _checks(memory_run, "tlb", "on_chain")
    assert e["figure"]["value"] is None and e["verdict"] == "inconclusive"
    big4, big2 = (m["median"] for m in e["figure"]["measurements"])
    if big4 > big2:  # not negative: only too few repetitions keep it from being a figure
        assert "too few repetitions" in e["reason"] and "1 time in 2" in e["reason"], e["reason"]


def test_persisted_reads_back_from_storage(memory_run):
    """The read-back after msync came from the page cache, which holds a shared mapping's writes
    whether msync ran or not."""
    _, checks = _checks(memory_run, "mmap_write", "persisted")
    assert len(checks) == 1
    c = checks[0]
    if c["status"] == "pass":
        assert "dropped from the page cache" in c["detail"] and "from storage" in c["detail"], c
    else:  # tmpfs: nothing below the page cache to read from
        assert c["status"] == "warn" and "tmpfs" in c["detail"], c


def test_every_stride_runs_one_scalar_loop():
    """GCC vectorized the stride kernel for stride 1 only (its unit-stride version), so the
    headline divided a scalar time by a vector one. Needs objdump and a bench_lab with symbols."""
    exe = bench.bench_dir() / "bench_lab"
    if not exe.is_file() or not shutil.which("objdump"):
        pytest.skip("no bench_lab or no objdump")
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True).stdout
    body = re.search(r"<[^>]*strided_sum[^>]*>:\n(.*?)\n\n", asm, re.S)
    if not body:
        pytest.skip("bench_lab has no symbol for strided_sum (stripped)")
    code = body.group(1)
    assert not re.search(r"%[xyz]mm", code), "strided_sum has vector instructions"
    assert not re.search(r"cmp\s+\$0x1,", code), "strided_sum tests for stride 1"
    assert len(re.findall(r"\bj[a-z]+\s", code)) <= 3, code  # one loop: its branch and the n == 0 exits


def test_both_aliasing_loops_are_vector_loops():
    """Built RelWithDebInfo (-O2), GCC kept the may-alias loop scalar while it vectorized the
    restrict one: "restrict runs 3.86x the unannotated loop", contradicting the study on a
    compiler flag. Needs objdump and a bench_lab with symbols."""
    exe = bench.bench_dir() / "bench_lab"
    if not exe.is_file() or not shutil.which("objdump"):
        pytest.skip("no bench_lab or no objdump")
    asm = subprocess.run(["objdump", "-d", "--no-show-raw-insn", str(exe)], capture_output=True, text=True).stdout
    for name in ("add_may_alias", "add_restrict"):
        body = re.search(rf"<[^>]*{name}[^>]*>:\n(.*?)\n\n", asm, re.S)
        if not body:
            pytest.skip(f"bench_lab has no symbol for {name} (stripped)")
        assert re.search(r"\bv?addps\b", body.group(1)), f"{name} has no packed add: a scalar loop"


@needs_bench
def test_ctrl_c_in_bench_lab_keeps_the_experiments_done(tmp_path):
    """Ctrl-C killed bench_lab at once: the experiments it had finished were lost (it writes
    lab.json at the end). It now finishes the experiment under way, writes the ones done marked
    interrupted, and exits 130."""
    out = tmp_path / "out"
    p = subprocess.Popen([str(bench.bench_dir() / "bench_lab"), "--only", "ilp", "--only", "branch", "--only", "aliasing",
                          "--no-probe", "--reps", "3", "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    assert p.stderr is not None
    for line in p.stderr:
        if line.startswith("PROGRESS 1 "):  # the first experiment is under way
            p.send_signal(signal.SIGINT)
            break
    err = p.communicate(timeout=300)[1]
    assert p.returncode == 130, err
    assert "interrupted" in err
    doc = json.loads((out / "lab.json").read_text())
    assert lab.validate(doc) == []
    ran = [e["id"] for e in doc["lab"]["experiments"]]
    assert doc["lab"]["interrupted"] is True and ran == ["ilp"]
    assert [(x["id"], x["study"]) for x in doc["lab"]["not_run"]] == [("branch", 8), ("aliasing", 37)]
    rows = {r[3]: r for r in lab.verdict_rows(doc)}
    assert rows["branch"][6] == "not run" and "interrupted" in rows["branch"][7]
    assert "This run was interrupted: 1 of 3 experiments ran" in lab.markdown_section(doc)


def _cpu_seconds_of_child(pid: int) -> float:
    """CPU time of ``pid``'s first child so far (0 while it has none)."""
    try:
        child = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()[0]
        fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@needs_bench
def test_ctrl_c_in_simdex_lab_says_what_it_kept(tmp_path):
    """Ctrl-C on `simdex lab` exited 130 without a word, and no report of what had run."""
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "-m", "simdex", "lab", "ilp", "stride", "aliasing", "--no-probe", "--out", str(out)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    # Once bench_lab has worked a little it is past its start-up and into stride (study order: 1, 7, 37).
    deadline = time.monotonic() + 120
    while p.poll() is None and time.monotonic() < deadline and _cpu_seconds_of_child(p.pid) < 0.3:
        time.sleep(0.02)
    os.killpg(p.pid, signal.SIGINT)  # what Ctrl-C does: the whole foreground group
    err = p.communicate(timeout=300)[1]
    assert p.returncode == 130, err
    assert "finishing the experiment under way" in err
    assert (out / "lab.json").is_file(), err
    doc = json.loads((out / "lab.json").read_text())
    ran = len(doc["lab"]["experiments"])
    assert doc["lab"]["interrupted"] is True and ran >= 1
    assert "aliasing" in [x["id"] for x in doc["lab"]["not_run"]]
    assert f"interrupted: {ran} of 3 experiments ran" in err and (out / "REPORT.md").is_file()
    assert "This run was interrupted" in (out / "REPORT.md").read_text()


def test_ctrl_c_again_while_simdex_lab_renders_says_what_is_there(tmp_path, monkeypatch, capsys):
    """A second Ctrl-C while `simdex lab` rendered the report of an interrupted run ended it
    with status 130 and no word on what it kept."""
    (tmp_path / "lab.json").write_text(json.dumps({"lab": {"interrupted": True, "experiments": [{"id": "ilp"}],
                                                           "not_run": [{"id": "branch", "study": 8}]}}))

    def ctrl_c(directory):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "render", ctrl_c)
    assert lab_cmd._interrupted(tmp_path, before=None) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert (f"interrupted: 1 of 2 experiments ran and are in {tmp_path / 'lab.json'}; interrupted again while "
            f"writing the report: no report was written (`simdex report {tmp_path}` renders it)") in err, err


def test_ctrl_c_while_simdex_lab_renders_its_report_says_so(tmp_path, monkeypatch, capsys):
    """Ctrl-C while `simdex lab` rendered the report of a finished run said "finishing the
    experiment under way ... (Ctrl-C again to stop at once)": no experiment was under way, and
    that first Ctrl-C had already stopped the render."""
    from simdex import cli

    def run_all(console, wanted, have, python_only, args, outdir, *rest):
        (outdir / "lab.json").write_text(json.dumps({**lab_doc([]), "results": [{"workload": "ilp.chains"}]}))
        rest[-1].append("lab")  # finished

    def ctrl_c(directory):
        signal.raise_signal(signal.SIGINT)  # as the terminal sends it, to the handler in place
        raise AssertionError("the Ctrl-C did not stop the render")

    monkeypatch.setattr(bench, "available", lambda: ["lab"])
    monkeypatch.setattr(bench, "missing", lambda: {})
    monkeypatch.setattr(bench, "_run_all", run_all)
    monkeypatch.setattr(lab_cmd, "registry", lambda: {"study": [], "experiments": [{"id": "ilp", "study": 7, "group": "memory"}]})
    monkeypatch.setattr(report, "render", ctrl_c)
    args = cli.build_parser().parse_args(["lab", "ilp", "--out", str(tmp_path)])
    assert args.func(args) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert "experiment under way" not in err and "Ctrl-C again" not in err, err
    assert f"interrupted while writing the report: the figures this run measured are in {tmp_path}" in err, err
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_simdex_lab_into_the_same_folder_is_refused(tmp_path, monkeypatch, capsys):
    """Two `simdex lab` runs into one folder measured each other, and the one that ended last
    replaced the other's lab.json and report, both saying they wrote it."""
    import fcntl

    from simdex import cli

    ran = []
    monkeypatch.setattr(bench, "available", lambda: ["lab"])
    monkeypatch.setattr(bench, "run", lambda *a, **kw: ran.append(kw["out"]) or 0)
    monkeypatch.setattr(lab_cmd, "registry", lambda: {"study": [], "experiments": [{"id": "ilp", "study": 7, "group": "memory"}]})
    args = cli.build_parser().parse_args(["lab", "ilp", "--out", str(tmp_path), "--no-report"])
    held = os.open(tmp_path, os.O_RDONLY)  # the run already under way
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        assert args.func(args) == 1
    finally:
        os.close(held)
    assert ran == [] and f"another simdex bench or simdex lab run is writing into {tmp_path}" in capsys.readouterr().err
    assert args.func(args) == 0 and ran == [str(tmp_path)]  # once it has ended


def test_experiment_names_may_follow_options():
    """`simdex lab pointer_chase --reps 3 tlb` failed with "simdex: error: unrecognized arguments:
    tlb": argparse took the names before the first option only."""
    from simdex import cli

    args = cli.build_parser().parse_args(["lab", "pointer_chase", "--reps", "3", "tlb", "--no-probe", "6"])
    assert args.experiments == ["pointer_chase", "tlb", "6"] and args.reps == 3 and args.no_probe
    args = cli.build_parser().parse_args(["lab", "list", "--markdown", "--update", "x.md"])
    assert args.experiments == ["list"] and args.update == "x.md"


def test_a_second_ctrl_c_says_it_kept_nothing(tmp_path, capsys):
    """A second Ctrl-C kills bench_lab before it writes the experiments it finished; `simdex lab`
    then said "interrupted before an experiment finished", though some had."""
    previous = signal.signal(signal.SIGINT, lab_cmd._first_interrupt)
    caught = []
    try:
        for _ in range(2):
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt as e:
                caught.append(e)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert len(caught) == 2
    assert lab_cmd._interrupted(tmp_path, before=None, report=False,
                                at_once=isinstance(caught[1], lab_cmd._StoppedAtOnce)) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert f"stopped at once by a second Ctrl-C: nothing written to {tmp_path / 'lab.json'}" in err, err


def test_ctrl_c_soon_after_an_earlier_run_does_not_claim_its_lab_json(tmp_path, capsys):
    """Interrupted within a second of an earlier run's end, `simdex lab` took that run's lab.json
    for its own (by its mtime, with a second's slack): "all 0 experiments are in lab.json", and
    rendered the earlier report as this run's."""
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(lab_doc([])))
    before = bench.file_identity(path)
    assert lab_cmd._interrupted(tmp_path, before, report=False) == 130
    err = " ".join(capsys.readouterr().err.split())
    assert f"interrupted before an experiment finished: nothing written to {path} (it holds an earlier run's)" in err, err
    path.with_suffix(".tmp").write_text(json.dumps({**lab_doc([]), "lab": {"interrupted": True, "experiments": [],
                                                                           "not_run": [{"id": "ilp", "study": 7}]}}))
    path.with_suffix(".tmp").rename(path)  # as bench_lab writes it: beside, then renamed over
    assert lab_cmd._interrupted(tmp_path, before, report=False) == 130
    assert "interrupted: 0 of 1 experiments ran" in capsys.readouterr().err


@pytest.mark.parametrize("program", ['echo "error while loading shared libraries: libfoo.so" >&2; exit 127', 'echo "{not json"'])
def test_a_broken_bench_lab_is_a_message(tmp_path, monkeypatch, capsys, program):
    """A bench_lab that could not start (a library missing) or printed no registry made
    `simdex lab ilp` end in a traceback, and `simdex lab list` hid the program's own reason."""
    from simdex import cli

    fake = tmp_path / "bench_lab"
    fake.write_text(f"#!/bin/sh\n{program}\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SIMDEX_BENCH_DIR", str(tmp_path))
    for argv in (["lab", "ilp", "--out", str(tmp_path / "out")], ["lab", "list"]):
        args = cli.build_parser().parse_args(argv)
        assert args.func(args) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"simdex lab: {fake} --list --json "), err
        assert ("libfoo.so" in err) if "libfoo" in program else ("printed no registry" in err), err
