"""``simdex lab``: the hardware lab. Measures what a performance engineer wants to know about a
new machine (latency per cache level and page size, bandwidth, branch and TLB costs, thread and
queue behaviour, ...), each experiment with validity checks and a verdict on a published claim.

  simdex lab                          # every experiment, quick mode, into lab-results/
  simdex lab pointer_chase 6 memory   # by id, by the study's number, or by group
  simdex lab machine                  # bandwidth across threads, loaded latency, core-to-core
  simdex lab --full --out DIR         # larger working sets, 10 repetitions
  simdex lab list                     # what there is
  simdex lab list --markdown          # the study-to-lab table
  simdex lab list --markdown --update docs/lab.md   # ... written into docs/lab.md
  simdex report A B                   # two runs side by side (A, B: a lab.json or its DIR)

Writes DIR/lab.json (the benchmark schema plus a "lab" block) and renders DIR/REPORT.md and
DIR/report.html from every JSON in DIR, so a lab run can share a directory with `simdex bench`.
Ctrl-C stops after the experiment under way and keeps (and reports) the experiments done;
Ctrl-C again stops at once and keeps nothing. Experiment names and options go in any order; a
second run (`simdex lab` or `simdex bench`) into the same DIR is refused while one runs.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
from pathlib import Path

from ..cli import names_among_options
from . import repetitions

OUT = "lab-results"  # where a run writes when --out is not given


def registry() -> dict:
    """The experiments bench_lab knows (``bench_lab --list --json``)."""
    from .. import bench

    exe = bench.bench_dir() / "bench_lab"
    if not exe.is_file():
        raise OSError(f"bench_lab not found in {bench.bench_dir()} (set SIMDEX_BENCH_DIR or reinstall)")
    out = subprocess.run([str(exe), "--list", "--json"], capture_output=True, text=True)
    # A broken installation (a library missing, a program of another version) says why on its
    # stderr: that is the message, not a traceback.
    said = " ".join(out.stderr.split()[-40:])
    if out.returncode != 0:
        raise OSError(f"{exe} --list --json failed (exit {out.returncode}){': ' + said if said else ''}")
    try:
        reg = json.loads(out.stdout)
    except ValueError as e:
        raise OSError(f"{exe} --list --json printed no registry ({e})") from None
    if not isinstance(reg, dict) or not isinstance(reg.get("experiments"), list):
        raise OSError(f"{exe} --list --json printed no registry (no list of experiments)")
    return reg


def _cmd_list(args) -> int:
    from ..benchmarks import lab

    try:
        reg = registry()
    except OSError as e:
        print(f"simdex lab: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(reg, indent=1))
    elif args.markdown and args.update:
        try:
            lab.update_table(args.update, lab.mapping_markdown(reg))
        except (OSError, ValueError) as e:
            print(f"simdex lab: {e}", file=sys.stderr)
            return 1
        print(f"updated the study-to-lab table in {args.update}")
    elif args.markdown:
        print(lab.mapping_markdown(reg))
    else:
        names = {s["number"]: s["name"] for s in reg["study"]}
        for e in reg["experiments"]:
            number = "–" if e["study"] is None else e["study"]
            print(f"{number:>2}  {e['id']:<24} {e['group']:<12} {e['question']}")
        covered = {e["study"] for e in reg["experiments"]} - {None}
        own = sum(e["study"] is None for e in reg["experiments"])
        print(f"{len(covered)} of {len(names)} study experiments covered by {len(reg['experiments']) - own} lab experiments; "
              f"{own} more of the lab's own (no study figure)")
    return 0


def _given(args, options) -> list[str]:
    """Those of ``options`` (flag, attribute) that the command line set."""
    return [flag for flag, attr in options if getattr(args, attr) not in (None, False, 0)]


def _usage_error(text: str) -> int:
    print(f"simdex lab: {text}", file=sys.stderr)
    return 2


# Options of a run, which 'list' refuses, and options of 'list', which a run refuses.
_RUN_OPTIONS = (("--quick", "quick"), ("--full", "full"), ("--out", "out"), ("--reps", "reps"), ("--no-report", "no_report"),
                ("--no-probe", "no_probe"))
_LIST_OPTIONS = (("--markdown", "markdown"), ("--json", "json"), ("--update", "update"))


def _cmd_lab(args) -> int:
    if args.list_option:  # bench_lab's spelling of 'list'
        args.experiments = ["list", *args.experiments]
    listing = args.experiments[:1] == ["list"]
    if listing and len(args.experiments) > 1:
        return _usage_error(f"'list' takes no experiment names, got {' '.join(args.experiments[1:])}")
    if listing and _given(args, _RUN_OPTIONS):
        given = _given(args, _RUN_OPTIONS)
        return _usage_error(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to 'list' "
                            "(it takes --json, or --markdown with an optional --update FILE)")
    misplaced = _given(args, _LIST_OPTIONS)
    if not listing and misplaced:
        return _usage_error(f"{', '.join(misplaced)} {'goes' if len(misplaced) == 1 else 'go'} with 'list' "
                            f"(simdex lab list {misplaced[0]} ...)")
    if args.json and args.markdown:
        return _usage_error("--json and --markdown exclude each other: 'list' prints one format")
    if args.update and not args.markdown:
        return _usage_error("--update replaces the Markdown table: give 'list --markdown --update FILE'")
    if listing:
        return _cmd_list(args)
    from .. import bench

    if "lab" not in bench.available():
        print(f"simdex lab: bench_lab not found in {bench.bench_dir()} (set SIMDEX_BENCH_DIR or reinstall)", file=sys.stderr)
        return 2
    try:
        reg = registry()
    except OSError as e:
        print(f"simdex lab: {e}", file=sys.stderr)
        return 2
    names = ({e["id"] for e in reg["experiments"]} | {str(e["study"]) for e in reg["experiments"] if e["study"] is not None}
             | {e["group"] for e in reg["experiments"]})
    unknown = [x for x in args.experiments if x not in names]
    if unknown:
        print(f"simdex lab: no experiment {', '.join(unknown)}; `simdex lab list` shows them", file=sys.stderr)
        return 2
    out = Path(args.out or OUT)
    # bench.run takes this lock too; held here, it also covers the report rendered after it.
    lock = bench.FolderLock(out)
    try:
        lock.acquire()
    except bench.FolderBusy as e:
        print(f"simdex lab: {e}", file=sys.stderr)
        return 1
    try:
        return _run(args, out)
    finally:
        lock.release()


def _run(args, out: Path) -> int:
    from .. import bench

    before = bench.file_identity(out / "lab.json")
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _first_interrupt)
    try:
        # The report is rendered below, once bench_lab has ended: a Ctrl-C there interrupts the
        # render, and "finishing the experiment under way" would not be true.
        rc = bench.run(["lab"], mode="full" if args.full else "quick", out=str(out), only=args.experiments, reps=args.reps,
                       probe=not args.no_probe, report=False, catch_interrupt=False)
    except KeyboardInterrupt as e:
        return _interrupted(out, before, report=not args.no_report, at_once=isinstance(e, _StoppedAtOnce))
    finally:
        signal.signal(signal.SIGINT, previous)
    if rc == 2 or args.no_report or not any(out.glob("*.json")):
        return rc
    return _render(out) or rc


def _render(out: Path) -> int:
    """Renders the report of ``out`` after the run; its exit status (130 after Ctrl-C)."""
    from .. import bench

    outcome, said = bench.render_report(out)
    if outcome == "interrupted":
        print(f"simdex lab: interrupted while writing the report: the figures this run measured are in {out}; {said}",
              file=sys.stderr)
        return 130
    print(said if outcome == "wrote" else f"simdex lab: {said}", file=sys.stderr)
    return 0 if outcome == "wrote" else 1


def _first_interrupt(signum, frame):
    """Ctrl-C reaches bench_lab too, which finishes the experiment under way and writes the ones
    done; say so before waiting for it. A second Ctrl-C stops both at once (_second_interrupt)."""
    signal.signal(signal.SIGINT, _second_interrupt)
    print("\nsimdex lab: interrupted: finishing the experiment under way to keep the ones done "
          "(Ctrl-C again to stop at once)", file=sys.stderr, flush=True)
    raise KeyboardInterrupt


class _StoppedAtOnce(KeyboardInterrupt):
    """The second Ctrl-C: bench_lab dies without writing the experiments it had finished."""


def _second_interrupt(signum, frame):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    raise _StoppedAtOnce


def _interrupted(out: Path, before: tuple[int, int] | None, report: bool = True, at_once: bool = False) -> int:
    """After Ctrl-C (``at_once``: a second one, which keeps nothing): what the interrupted run
    kept in ``out`` (``before``: the lab.json there before it, by bench.file_identity),
    reported; exit status 130."""
    from .. import bench

    path = out / "lab.json"
    try:
        doc = json.loads(path.read_text()) if bench.file_identity(path) not in (None, before) else None
        block = doc.get("lab") if isinstance(doc, dict) else None
    except (OSError, ValueError):
        block = None
    if not isinstance(block, dict):
        why = "stopped at once by a second Ctrl-C" if at_once else "interrupted before an experiment finished"
        earlier = " (it holds an earlier run's)" if path.exists() else ""
        print(f"simdex lab: {why}: nothing written to {path}{earlier}", file=sys.stderr)
        return 130
    done, left = len(block.get("experiments", [])), len(block.get("not_run", []))
    if block.get("interrupted"):
        text = f"simdex lab: interrupted: {done} of {done + left} experiments ran and are in {path}"
    else:  # the run had ended; the report may not have been written
        text = f"simdex lab: interrupted after the run: all {done} experiments are in {path}"
    if report:
        outcome, said = bench.render_report(out)
        text += f"; {'interrupted again while writing the report: ' if outcome == 'interrupted' else ''}{said}"
    print(text, file=sys.stderr)
    return 130


def register(subparsers) -> None:
    p = subparsers.add_parser("lab", help="the hardware lab: measured machine facts with validity checks and verdicts",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    names_among_options(p)
    p.add_argument("experiments", nargs="*", metavar="EXPERIMENT",
                   help="experiment ids, study numbers or groups (default: all); 'list' lists them")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="small working sets, 5 repetitions (default)")
    g.add_argument("--full", action="store_true", help="working sets to 1 GiB, 10 repetitions")
    p.add_argument("--out", metavar="DIR", help=f"directory for lab.json and the report (default: {OUT})")
    p.add_argument("--reps", type=repetitions, default=0, metavar="N",
                   help="repetitions per figure, 1 to 1000 (default: 5 quick, 10 full); below 3 every experiment warns that "
                        "its repetitions' agreement cannot be told, below 5 tlb measures no TLB cost")
    p.add_argument("--no-report", action="store_true", help="do not render REPORT.md / report.html")
    p.add_argument("--no-probe", action="store_true",
                   help="skip the machine-limits probe (quicker; the report then has no machine limits, and "
                        "pointer_chase's sequential read no memcpy figure to check against: the other bandwidth "
                        "checks sample memcpy themselves)")
    p.add_argument("--markdown", action="store_true", help="with 'list': the study-to-lab table in Markdown")
    p.add_argument("--update", metavar="FILE", help="with 'list --markdown': replace the table between the lab-table markers in FILE")
    p.add_argument("--json", action="store_true", help="with 'list': the registry as JSON")
    # `bench_lab --list` lists the experiments, and `simdex lab --list` was an unknown option.
    p.add_argument("--list", dest="list_option", action="store_true", help="the same as 'list'")
    p.set_defaults(func=_cmd_lab)
