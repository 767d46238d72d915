"""``simdex bench``: runs the native benchmark programs with a progress display, lets Python-side
peers join each component's JSON, then renders the report."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import components as _components
from ._output import Output, write_all

# A component's benchmark program is bench/<component>/'s bench_<component>; available() says
# which of them this installation has. cpu has none (its probe runs inside every program).
COMPONENTS = _components.BENCHED
# Benchmarks with no native program (simdex.benchmarks.<name>.run_standalone): run when named.
PYTHON_ONLY = ("datasets",)


def bench_dir() -> Path:
    """Where the bench programs live: $SIMDEX_BENCH_DIR, else the package's _bin folder."""
    env = os.environ.get("SIMDEX_BENCH_DIR")
    return Path(env) if env else Path(__file__).resolve().parent / "_bin"


def available() -> list[str]:
    d = bench_dir()
    return [c for c in COMPONENTS if (d / f"bench_{c}").is_file()]


def missing() -> dict[str, list[tuple[str, str]]]:
    """What this installation's build left out, per component: (a peer or a whole program, why),
    from the bench-missing.tsv that CMake writes beside the programs."""
    out: dict[str, list[tuple[str, str]]] = {}
    try:
        text = (bench_dir() / "bench-missing.tsv").read_text()
    except OSError:
        return out
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 3:
            out.setdefault(parts[0], []).append((parts[1], parts[2]))
    return out


def _run_native(component: str, args: list[str], log_path: Path, progress, task) -> int:
    exe = bench_dir() / f"bench_{component}"
    # The program's scratch files (kv databases, lab files) go under TMPDIR; giving it a folder
    # of our own means an interrupted run (Ctrl-C reaches the program too) leaves nothing behind.
    # The log is line-buffered: what the program said must be in it when this process is killed
    # outright (the next run places that log, _adopt_killed_logs), and in order with the
    # program's stdout, which goes to the file directly.
    with tempfile.TemporaryDirectory(prefix=f"simdex_bench_{component}_") as scratch, \
            open(log_path, "w", buffering=1) as log:
        proc = subprocess.Popen([str(exe), *args], stdout=log, stderr=subprocess.PIPE, text=True, bufsize=1,
                                env={**os.environ, "TMPDIR": scratch})
        assert proc.stderr is not None
        try:
            for line in proc.stderr:
                if line.startswith("PROGRESS "):
                    parts = line.rstrip("\n").split(" ", 3)
                    try:
                        done, total = int(parts[1]), int(parts[2])
                    except (IndexError, ValueError):
                        continue
                    label = parts[3] if len(parts) > 3 else ""
                    progress.update(task, completed=done, total=max(total, done, 1),
                                    description=f"{component}: {label[:48]}")
                else:
                    log.write(line)
            return proc.wait()
        finally:
            if proc.poll() is None:  # interrupted here: the folder goes only after the program
                proc.terminate()
                try:  # a second Ctrl-C on the status line must not skip the wait below
                    progress.update(task, description=f"{component}: stopping (the step under way ends first)")
                except BaseException:  # the interrupt under way goes on after this block
                    pass
                # What it says while it stops belongs in its log, and reading it keeps a full
                # pipe from blocking the program, and so this wait, for ever.
                for line in proc.stderr:
                    if not line.startswith("PROGRESS "):
                        log.write(line)
                proc.wait()
            proc.stderr.close()  # else a ResourceWarning under python -X dev


def _run_python_side(component: str, json_path: Path, mode: str, reps: int, only=()) -> None:
    mod = _components.part("benchmarks", component)
    if mod is None or not hasattr(mod, "run"):
        return
    from . import benchmarks

    doc = json.loads(json_path.read_text())
    benchmarks.ONLY = tuple(only)
    try:
        mod.run(doc, mode, reps or (5 if mode == "quick" else 10))
    finally:
        benchmarks.ONLY = ()
    # Staged and renamed into place: a failed write must not truncate the native figures.
    with Output(json_path) as o:
        write_all(o.file, (json.dumps(doc, indent=1) + "\n").encode())


def _has_results(path: Path) -> bool:
    try:
        return bool(json.loads(path.read_text()).get("results"))
    except (OSError, ValueError, AttributeError):
        return False


def _earlier_results(path: Path) -> bytes | None:
    """An earlier run's JSON that has figures, to put back if this run measures none."""
    try:
        return path.read_bytes() if _has_results(path) else None
    except OSError:
        return None


def _log_tail(path: Path, lines: int = 3) -> str:
    """The last lines of a failed program's log: usually what went wrong."""
    try:
        text = [ln for ln in path.read_text(errors="replace").splitlines() if ln.strip()]
    except OSError:
        return ""
    return "\n".join(text[-lines:])


class FolderBusy(Exception):
    """Another run holds the output folder (FolderLock.acquire); the message names it."""


class FolderLock:
    """An exclusive lock on a run's output folder, so that one run at a time writes there: two
    runs into one folder measure each other, and the one that ends last replaces the other's
    JSON and report. It is a flock on the folder itself, so it ends with the process however the
    process ends. Taken again in the process that holds it, it is granted (simdex lab holds it
    across its own report, and bench.run inside takes it too)."""

    _held: dict = {}  # (st_dev, st_ino) of a folder this process holds: [descriptor, holders]

    def __init__(self, folder: Path):
        self.folder = Path(folder)
        self._key = None

    def acquire(self) -> None:
        """Takes the lock (making the folder), or raises FolderBusy. A folder that cannot be made
        or opened, or a file system without locks, leaves the run unguarded: the run then says
        what is wrong with the folder, or goes ahead."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY)
        except OSError:
            return
        st = os.fstat(fd)
        key = (st.st_dev, st.st_ino)
        held = FolderLock._held.get(key)
        if held is not None:
            os.close(fd)
            held[1] += 1
            self._key = key
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise FolderBusy(f"another simdex bench or simdex lab run is writing into {self.folder}: its JSON and "
                             "report would replace this run's, and the two runs would measure each other; wait for "
                             "it to end, or give another --out") from None
        except OSError:
            os.close(fd)
            return
        FolderLock._held[key] = [fd, 1]
        self._key = key

    def release(self) -> None:
        if self._key is None:
            return
        held = FolderLock._held[self._key]
        held[1] -= 1
        if held[1] == 0:
            del FolderLock._held[self._key]
            os.close(held[0])  # closing the last descriptor ends the flock
        self._key = None


def run(components: list[str], mode: str = "quick", out: str = "bench-results", only=(), reps: int = 0,
        probe: bool = True, report: bool = True, catch_interrupt: bool = True) -> int:
    """Runs the components' benchmarks into ``out`` and renders the report; the exit status.
    Ctrl-C ends the run with status 130 after saying which components finished and rendering
    what is there, unless catch_interrupt is False (a caller with its own account of it)."""
    from rich.console import Console

    console = Console(stderr=True, soft_wrap=True)
    components = list(dict.fromkeys(components))  # `simdex bench kv kv` ran kv twice
    unknown = [c for c in components if c not in COMPONENTS and c not in PYTHON_ONLY]
    if unknown:
        console.print(f"[red]unknown component(s): {', '.join(unknown)}[/]; choose from "
                      f"{', '.join(COMPONENTS + PYTHON_ONLY)}")
        return 2
    python_only = [c for c in components if c in PYTHON_ONLY]
    components = [c for c in components if c not in PYTHON_ONLY]
    have = available()
    left_out = missing()
    if python_only and not components:
        have = wanted = []
    else:
        wanted = components or [c for c in COMPONENTS if c in have or c in left_out]
    for c in wanted:
        for what, why in left_out.get(c, []):
            if what == f"bench_{c}":
                console.print(f"[yellow]skipping {c}: bench_{c} is not in this installation: {why}[/]", highlight=False)
            else:
                console.print(f"[yellow]{c}: without the {what} peer: {why}[/]", highlight=False)
        if c not in have and not any(what == f"bench_{c}" for what, _ in left_out.get(c, [])):
            console.print(f"[yellow]skipping {c}: bench_{c} was not built[/]", highlight=False)
    if wanted and not have:
        console.print(f"[red]no benchmark programs found in {bench_dir()}[/] (set SIMDEX_BENCH_DIR or reinstall)")
        return 2
    if wanted and not any(c in have for c in wanted):
        console.print("[red]nothing to run[/]")
        return 2
    outdir = Path(out)
    if outdir.exists() and not outdir.is_dir():  # mkdir would say only "File exists"
        console.print(f"[red]cannot write into {outdir}: it is a file, not a directory[/]", highlight=False)
        return 2
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        console.print(f"[red]cannot create {outdir}: {e.strerror or e}[/]", highlight=False)
        return 2
    args = [f"--{mode}", "--out", str(outdir)]
    for o in only:
        args += ["--only", o]
    if reps:
        args += ["--reps", str(reps)]
    if not probe:
        args.append("--no-probe")
    lock = FolderLock(outdir)
    try:
        lock.acquire()
    except FolderBusy as e:
        console.print(str(e), style="red", highlight=False, markup=False)
        return 1
    try:
        return _run_locked(console, wanted, have, python_only, args, outdir, mode, reps, only, report, catch_interrupt)
    finally:
        lock.release()


def _run_locked(console, wanted, have, python_only, args, outdir, mode, reps, only, report, catch_interrupt) -> int:
    """The run itself, once it holds outdir (run's exit status)."""
    _adopt_killed_logs(console, outdir)
    _remove_killed_json_temporaries(console, outdir)
    failed = []
    unmatched = []  # components that --only left nothing to measure (their JSON is an earlier run's or empty)
    finished = []  # components whose figures this run wrote in full
    since = time.time()  # a JSON file older than this is an earlier run's
    try:
        _run_all(console, wanted, have, python_only, args, outdir, mode, reps, only, failed, unmatched, finished)
    except KeyboardInterrupt:
        if not catch_interrupt:
            raise
        return _interrupted(console, outdir, [c for c in wanted if c in have] + python_only, finished, report, since)
    if only:
        ran = [c for c in wanted if c in have and c not in failed] + [c for c in python_only if c not in failed]
        # (an unmatched component's JSON, if any, is an earlier run's)
        empty = [c for c in ran if c in unmatched or not _has_results(outdir / f"{c}.json")]
        if empty and len(empty) == len(ran):  # nothing measured at all: a typo, not a filter
            console.print(f"[red]no workload of {', '.join(empty)} matches --only {' '.join(only)}: nothing measured[/]",
                          highlight=False)
            return 1
        if empty:
            console.print(f"[yellow]{', '.join(empty)}: no workload matches --only {' '.join(only)}[/]", highlight=False)
    if report and any(outdir.glob("*.json")):
        outcome, text = render_report(outdir)
        if outcome == "interrupted":
            console.print(f"interrupted while writing the report: the figures this run measured are in {outdir}; "
                          f"{text}", highlight=False)
            return 130
        console.print(text if outcome == "wrote" else f"[red]{text}[/]", highlight=False)
        if outcome == "failed":
            failed.append("report")
    elif report:
        console.print("[yellow]no report: no benchmark wrote its JSON[/]")
    if failed:
        console.print(f"[red]failed: {', '.join(failed)}")
        return 1
    return 0


def _run_all(console, wanted, have, python_only, args, outdir, mode, reps, only, failed, unmatched, finished):
    """Runs each component's program and Python side, recording what failed and what finished."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description:<60}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=console, transient=False) as progress:
        for c in [c for c in wanted if c in have]:
            _run_component(console, progress, c, args, outdir, mode, reps, only, failed, unmatched, finished)
        for c in python_only:
            task = progress.add_task(f"{c}: starting", total=None)
            t0 = time.monotonic()
            earlier = _earlier_results(outdir / f"{c}.json") if only else None
            try:
                written = _components.part("benchmarks", c).run_standalone(
                    outdir, mode, reps, log=lambda msg, c=c, task=task: progress.update(task, description=f"{c}: {msg}"),
                    only=tuple(only))
            except Exception as e:  # one benchmark failing must not lose the others' figures
                failed.append(c)
                console.print(f"[red]{c}: benchmark failed: {e}[/]", highlight=False)
                progress.update(task, description=f"[red]{c}: failed", total=1, completed=1)
                continue
            if written is None:  # --only matched none of its workloads: nothing ran, nothing written
                unmatched.append(c)
                progress.update(task, description=f"{c}: no workload matches --only", total=1, completed=1)
                continue
            finished.append(c)
            _say_what_a_subset_replaced(console, outdir, c, earlier, only)
            progress.update(task, description=f"{c}: done in {time.monotonic() - t0:.0f} s", total=1, completed=1)


def _run_component(console, progress, c, args, outdir, mode, reps, only, failed, unmatched, finished):
    """Runs component c's program and Python side (see _run_all); its log goes where _place_log
    says, also after Ctrl-C."""
    task = progress.add_task(f"{c}: starting", total=1)
    t0 = time.monotonic()
    json_path = outdir / f"{c}.json"
    before = file_identity(json_path)
    earlier = _earlier_results(json_path) if only else None
    staged = outdir / f"{c}.log.new"  # the log while the program runs (see _place_log)
    restored = native_failed = False
    try:
        rc = _run_native(c, args, staged, progress, task)
        # A program's JSON is renamed into place, so this run's file is another file than before.
        native_failed = rc != 0 or file_identity(json_path) in (None, before)
        if native_failed:
            failed.append(c)
        else:
            progress.update(task, description=f"{c}: python-side peers")
            try:
                _run_python_side(c, json_path, mode, reps, only)
            except Exception as e:  # a Python peer failing must not lose the native figures
                failed.append(c)
                console.print(f"[red]{c}: python-side benchmark failed: {e!r}")
            else:
                finished.append(c)
                if only and not _has_results(json_path):
                    unmatched.append(c)
                    if earlier is not None:  # a typo in --only replaced a whole run with nothing
                        with Output(json_path) as o:
                            write_all(o.file, earlier)
                        restored = True
                        console.print(f"{c}: kept the earlier {json_path}, as --only measured nothing", highlight=False)
    finally:  # after Ctrl-C too: the lab keeps the experiments it finished, and their log with them
        kept = not restored and file_identity(json_path) not in (None, before)
        if kept:
            _say_what_a_subset_replaced(console, outdir, c, earlier, only)
        log = _place_log(outdir, c, staged, kept=kept, failed=native_failed)
    if native_failed:
        said = f"exit {rc}" if rc != 0 else "exit 0 without writing its JSON"
        progress.update(task, description=f"[red]{c}: failed ({said})")
        # On a line of its own: the status column cuts a long path short.
        console.print(f"{c}: failed ({said}), see {log}", style="red", highlight=False, markup=False)
        tail = _log_tail(log)
        if tail:
            console.print(tail, highlight=False, markup=False)
        return
    progress.update(task, description=f"{c}: done in {time.monotonic() - t0:.0f} s")


def _adopt_killed_logs(console, outdir: Path) -> None:
    """Places the staged logs (<c>.log.new) that a run killed outright (SIGKILL, the OOM killer,
    a machine going down) left in outdir, which stayed there for ever: with outdir's lock held
    no other run is writing one. A killed run is a failed one, so its log goes where a failed
    run's goes (_place_log), and the move is said in one line."""
    for staged in sorted(outdir.glob("*.log.new")):
        c = staged.name[: -len(".log.new")]
        if c not in COMPONENTS or staged.is_symlink() or not staged.is_file():
            continue  # not a log this program stages
        log = _place_log(outdir, c, staged, kept=False, failed=True)
        if not staged.exists():
            console.print(f"{staged}: the log of a {c} run that was killed before it ended; now {log}",
                          style="yellow", highlight=False, markup=False)


def _remove_killed_json_temporaries(console, outdir: Path) -> None:
    """Removes the <c>.json.tmp.<pid> files that a bench program killed outright while writing
    its JSON left in outdir (it writes beside the JSON and renames over it, bench/common's
    write_replacing): the rename never came, and nothing would ever remove them. A program run
    by hand takes no folder lock, so only a file whose pid is no live process goes; the removal
    is said in one line."""
    gone = []
    for tmp in sorted(outdir.glob("*.json.tmp.*")):
        c, _, pid = tmp.name.rpartition(".json.tmp.")
        if c not in COMPONENTS or not pid.isdigit() or tmp.is_symlink() or not tmp.is_file():
            continue  # not a file a bench program writes
        if _process_lives(int(pid)):
            continue  # its program may be writing it now
        try:
            tmp.unlink()
        except OSError:
            continue
        gone.append(tmp.name)
    if gone:
        console.print(f"{outdir}: removed what runs killed while writing their JSON left: {', '.join(gone)}",
                      style="yellow", highlight=False, markup=False)


def _process_lives(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process, or a pid no signal can name: leave its file alone
    return True


def _place_log(outdir: Path, c: str, staged: Path, kept: bool, failed: bool) -> Path:
    """Puts this run's log of c (written to ``staged``) where it belongs; where it went. The
    log beside a JSON is that JSON's: this run's becomes <c>.log when this run's JSON is kept or
    no JSON is there. Where an earlier run's JSON stays, its log stays too, and this run's is
    kept as <c>.failed.log when the program failed (it says why), else dropped (Ctrl-C before
    anything was kept, an --only that measured nothing)."""
    log, failed_log = outdir / f"{c}.log", outdir / f"{c}.failed.log"
    try:
        if kept or not (outdir / f"{c}.json").exists():
            os.replace(staged, log)
            failed_log.unlink(missing_ok=True)  # about a run whose JSON this one replaces
            return log
        if failed:
            os.replace(staged, failed_log)
            return failed_log
        staged.unlink(missing_ok=True)
    except OSError:  # the folder went away or turned read-only: nothing better to do with the log
        pass
    return log


def _workloads(doc: bytes | Path) -> list[str]:
    """The workloads a benchmark JSON (its bytes, or its path) has figures of, in order."""
    try:
        results = json.loads(doc.read_bytes() if isinstance(doc, Path) else doc).get("results") or []
        return list(dict.fromkeys(str(r.get("workload")) for r in results if isinstance(r, dict)))
    except (OSError, ValueError, AttributeError):
        return []


def _say_what_a_subset_replaced(console, outdir: Path, c: str, earlier: bytes | None, only) -> None:
    """After an --only run replaced c's JSON: when the earlier one had workloads this run did not
    measure, keeps it as <c>.json.prev (with its log as <c>.log.prev) and says so. Runs are not
    merged: every figure of one JSON comes from one run, its environment and its interleaving."""
    if not only or earlier is None:
        return
    now = set(_workloads(outdir / f"{c}.json"))
    before = _workloads(earlier)
    lost = [w for w in before if w not in now]
    if not lost:
        return
    prev = outdir / f"{c}.json.prev"  # not *.json: the report does not read it
    try:
        with Output(prev) as o:
            write_all(o.file, earlier)
        if (outdir / f"{c}.log").exists():
            os.replace(outdir / f"{c}.log", outdir / f"{c}.log.prev")
        else:  # one left from an older run would read as this earlier run's
            (outdir / f"{c}.log.prev").unlink(missing_ok=True)
        kept = f"the earlier file is now {prev} (move it back over {c}.json to restore it)"
    except OSError as e:
        kept = f"it could not be kept ({e.strerror or e})"
    named = ", ".join(lost[:4]) + (f" and {len(lost) - 4} more" if len(lost) > 4 else "")
    console.print(f"{c}: this run measured only {', '.join(only)} and replaced {outdir / (c + '.json')}, which held an "
                  f"earlier run of {len(before)} workload{'s' if len(before) != 1 else ''}; {len(lost)} of them "
                  f"({named}) {'was' if len(lost) == 1 else 'were'} not measured now and {'is' if len(lost) == 1 else 'are'} "
                  f"no longer in the report; {kept}", style="yellow", highlight=False, markup=False)


def _interrupted(console, outdir: Path, planned: list, finished: list, report: bool, since: float) -> int:
    """After Ctrl-C: which components this run finished, whose JSON in outdir is an earlier
    run's or only part of this one's, and the report of what is in outdir."""
    left = [c for c in planned if c not in finished]
    text = (f"interrupted: {', '.join(finished) or 'no component'} finished"
            f"{'; not finished: ' + ', '.join(left) if left else ''}")
    earlier, partial = [], []
    for c in left:
        try:
            (earlier if (outdir / f"{c}.json").stat().st_mtime < since else partial).append(f"{c}.json")
        except OSError:
            pass  # none: nothing of it in the report
    if earlier:
        text += f"; {', '.join(earlier)} in {outdir} {'is' if len(earlier) == 1 else 'are'} from an earlier run"
    if partial:  # the lab keeps the experiments it finished; a native run without its Python side
        text += f"; {', '.join(partial)} {'holds' if len(partial) == 1 else 'hold'} only what this run finished"
    console.print(text, highlight=False)
    if report and any(outdir.glob("*.json")):
        outcome, text = render_report(outdir)
        if outcome == "interrupted":
            text = f"interrupted again while writing the report: {text}"
        console.print(text if outcome == "wrote" else f"[red]{text}[/]", highlight=False)
    return 130


def file_identity(path: Path) -> tuple[int, int] | None:
    """Which file is at ``path`` (inode, mtime), or None: a program writes its JSON beside and
    renames it over, so a file this run wrote differs from the one there before, however soon
    after."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns


def render_report(outdir: Path, catch: tuple = (ValueError, OSError)) -> tuple[str, str]:
    """Renders the report of outdir: ("wrote", what), ("failed", why) for the errors in ``catch``
    (others propagate) or, after Ctrl-C, ("interrupted", which report files outdir holds). The
    report's files are staged and renamed into place all together (report.write_texts), so an
    interrupted render leaves the earlier report (or none), or, once the renames began, this
    one: never a part of each."""
    from . import report as rep

    md, html = outdir / "REPORT.md", outdir / "report.html"
    before = file_identity(md)
    try:
        rep.render(outdir)
    except catch as e:
        return "failed", f"no report: {e}"
    except KeyboardInterrupt:
        after = file_identity(md)
        if after is not None and after != before:  # renamed in before the interrupt was let through
            return "interrupted", f"the report was written first: {md} and {html}"
        rerun = f"`simdex report {outdir}` renders it"
        if after is None:
            return "interrupted", f"no report was written ({rerun})"
        return "interrupted", f"{md} and {html} are still an earlier report's, not this run's ({rerun})"
    return "wrote", f"wrote {md} and {html}"


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
