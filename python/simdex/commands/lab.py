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

Writes DIR/lab.json (the benchmark schema plus a "lab" block) and renders DIR/REPORT.md and
DIR/report.html from every JSON in DIR, so a lab run can share a directory with `simdex bench`.
Ctrl-C stops after the experiment under way and keeps (and reports) the experiments done;
Ctrl-C again stops at once.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import repetitions

OUT = "lab-results"  # where a run writes when --out is not given


def registry() -> dict:
    """The experiments bench_lab knows (``bench_lab --list --json``)."""
    from .. import bench

    exe = bench.bench_dir() / "bench_lab"
    if not exe.is_file():
        raise OSError(f"bench_lab not found in {bench.bench_dir()} (set SIMDEX_BENCH_DIR or reinstall)")
    out = subprocess.run([str(exe), "--list", "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _cmd_list(args) -> int:
    from ..benchmarks import lab

    try:
        reg = registry()
    except (OSError, subprocess.CalledProcessError) as e:
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
    reg = registry()
    names = ({e["id"] for e in reg["experiments"]} | {str(e["study"]) for e in reg["experiments"] if e["study"] is not None}
             | {e["group"] for e in reg["experiments"]})
    unknown = [x for x in args.experiments if x not in names]
    if unknown:
        print(f"simdex lab: no experiment {', '.join(unknown)}; `simdex lab list` shows them", file=sys.stderr)
        return 2
    out = Path(args.out or OUT)
    started = time.time()
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, _first_interrupt)
    try:
        return bench.run(["lab"], mode="full" if args.full else "quick", out=str(out), only=args.experiments, reps=args.reps,
                         probe=not args.no_probe, report=not args.no_report, catch_interrupt=False)
    except KeyboardInterrupt:
        return _interrupted(out, started, report=not args.no_report)
    finally:
        signal.signal(signal.SIGINT, previous)


def _first_interrupt(signum, frame):
    """Ctrl-C reaches bench_lab too, which finishes the experiment under way and writes the ones
    done; say so before waiting for it. A second Ctrl-C is a plain KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    print("\nsimdex lab: interrupted: finishing the experiment under way to keep the ones done "
          "(Ctrl-C again to stop at once)", file=sys.stderr, flush=True)
    raise KeyboardInterrupt


def _interrupted(out: Path, started: float, report: bool = True) -> int:
    """After Ctrl-C: what the interrupted run kept in ``out``, reported; exit status 130."""
    path = out / "lab.json"
    try:
        doc = json.loads(path.read_text()) if path.stat().st_mtime >= started - 1 else None
        block = doc.get("lab") if isinstance(doc, dict) else None
    except (OSError, ValueError):
        block = None
    if not isinstance(block, dict):
        print(f"simdex lab: interrupted before an experiment finished: nothing written to {path}", file=sys.stderr)
        return 130
    done, left = len(block.get("experiments", [])), len(block.get("not_run", []))
    if block.get("interrupted"):
        text = f"simdex lab: interrupted: {done} of {done + left} experiments ran and are in {path}"
    else:  # the run had ended; the report may not have been written
        text = f"simdex lab: interrupted after the run: all {done} experiments are in {path}"
    if report:
        from .. import bench

        outcome, said = bench.render_report(out)
        text += f"; {'interrupted again while writing the report: ' if outcome == 'interrupted' else ''}{said}"
    print(text, file=sys.stderr)
    return 130


def register(subparsers) -> None:
    p = subparsers.add_parser("lab", help="the hardware lab: measured machine facts with validity checks and verdicts",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiments", nargs="*", metavar="EXPERIMENT",
                   help="experiment ids, study numbers or groups (default: all); 'list' lists them")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="small working sets, 5 repetitions (default)")
    g.add_argument("--full", action="store_true", help="working sets to 1 GiB, 10 repetitions")
    p.add_argument("--out", help=f"directory for lab.json and the report (default: {OUT})")
    p.add_argument("--reps", type=repetitions, default=0, help="repetitions per figure, 1 to 1000 (default: 5 quick, 10 full)")
    p.add_argument("--no-report", action="store_true", help="do not render REPORT.md / report.html")
    p.add_argument("--no-probe", action="store_true",
                   help="skip the machine-limits probe (quicker; the report then has no machine limits, and "
                        "pointer_chase's sequential read no memcpy figure to check against: the other bandwidth "
                        "checks sample memcpy themselves)")
    p.add_argument("--markdown", action="store_true", help="with 'list': the study-to-lab table in Markdown")
    p.add_argument("--update", metavar="FILE", help="with 'list --markdown': replace the table between the lab-table markers in FILE")
    p.add_argument("--json", action="store_true", help="with 'list': the registry as JSON")
    p.set_defaults(func=_cmd_lab)
