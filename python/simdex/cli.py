"""The ``simdex`` command: info, bench, report, and one subcommand group per component."""

from __future__ import annotations

import argparse
import re
import sys

from .commands import repetitions


def _cmd_info(args: argparse.Namespace) -> int:
    from . import cpu_info

    try:
        info = cpu_info()
    except ValueError as e:
        print(f"simdex: {e}", file=sys.stderr)
        return 2
    if args.json:
        import json

        print(json.dumps(info, indent=2))
        return 0
    print(f"cpu:          {info['brand']} ({info['vendor']})")
    print(f"features:     {' '.join(info['features'])}")
    print(f"detected isa: {info['detected_isa']}")
    print(f"active isa:   {info['isa']}" + ("  (capped by SIMDEX_ISA)" if info["isa"] != info["detected_isa"] else ""))
    print("kernels:")
    for k in info["kernels"]:
        print(f"  {k['family']:<24} {k['isa']}")
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from . import bench

    return bench.run(args.components, mode="full" if args.full else "quick", out=args.out,
                     only=args.only, reps=args.reps, probe=not args.no_probe, report=not args.no_report)


def _problem(e: Exception) -> str:
    """An error as a user reads it: "PATH: Permission denied", not "[Errno 13] ..."."""
    if isinstance(e, OSError) and e.strerror:
        return f"{e.filename}: {e.strerror}" if e.filename else e.strerror
    return str(e)


def _cmd_compare(args: argparse.Namespace) -> int:
    """`simdex report A B`: two lab runs side by side, printed (it writes no file)."""
    from . import report

    if args.readme:
        print("simdex report: --readme takes one DIR: comparing two runs writes no report", file=sys.stderr)
        return 2
    try:
        text = report.compare_labs(report.lab_run(args.dir[0]), report.lab_run(args.dir[1]))
    except (OSError, ValueError) as e:
        print(f"simdex report: {_problem(e)}", file=sys.stderr)
        return 1
    sys.stdout.write(text)
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from . import bench, report

    if len(args.dir) > 2:
        print(f"simdex report: one DIR to render, or two lab runs to compare; got {len(args.dir)}", file=sys.stderr)
        return 2
    if len(args.dir) == 2:
        return _cmd_compare(args)
    args.dir = args.dir[0]
    try:
        if args.readme:  # a README it cannot update fails the command before anything is written
            report.readme_parts(args.readme)
        # Ctrl-C while rendering says which report DIR holds now (bench.render_report).
        outcome, text = bench.render_report(Path(args.dir), catch=())
    except (OSError, ValueError) as e:
        print(f"simdex report: {_problem(e)}", file=sys.stderr)
        return 1
    if outcome == "interrupted":
        print(f"simdex report: interrupted: {text}", file=sys.stderr)
        return 130
    md, html = Path(args.dir) / "REPORT.md", Path(args.dir) / "report.html"
    print(f"wrote {md}\nwrote {html}")
    if args.readme:
        try:
            report.update_readme(args.readme, report.load(args.dir), args.command_text)
        except (OSError, ValueError) as e:
            print(f"simdex report: {_problem(e)}", file=sys.stderr)
            return 1
        print(f"updated the results table in {args.readme}")
    return 0


def _plain(text: str | None) -> str | None:
    """Help text without reStructuredText markup: ``x`` and :role:`x` read as x."""
    if not text:
        return text
    return re.sub(r"(?::[a-z]+:)?`{1,2}([^`]+)`{1,2}", r"\1", text)


class _Parser(argparse.ArgumentParser):
    """argparse, except that a failed write of help, a version or a usage message is an error
    (argparse drops it: `simdex --help > /dev/full` exited 0 with nothing written, where stdout
    is unbuffered). Subcommand parsers are of this class too."""

    def _print_message(self, message, file=None):
        file = file or sys.stderr
        if message and file is not None:
            file.write(message)

    def parse_args(self, args=None, namespace=None):
        """As argparse's, except that an argument the subcommand did not take is reported with
        the subcommand's usage (`simdex lab --lsit` printed `simdex`'s, which names no option
        of lab's)."""
        namespace, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = self
            while True:  # down to the (sub)subcommand the line named: `simdex bloom add`
                subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
                chosen = subs[0].choices.get(getattr(namespace, subs[0].dest, None) or "") if subs else None
                if chosen is None:
                    break
                parser = chosen
            parser.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace


def names_among_options(parser: argparse.ArgumentParser) -> None:
    """Lets a subcommand's names come after options too (`simdex lab pointer_chase --reps 3 tlb`,
    `simdex bench base85 --quick bloom`): argparse takes a list of positionals in one run, and
    the rest read "unrecognized arguments". The subcommand's parser is called through
    parse_known_args; this one parses intermixed."""

    class Intermixed(type(parser)):
        def parse_known_args(self, args=None, namespace=None):
            if self._intermixing:  # parse_known_intermixed_args calls this twice itself
                return super().parse_known_args(args, namespace)
            self._intermixing = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self._intermixing = False

    parser.__class__ = Intermixed
    parser._intermixing = False


def _plain_help(parser: argparse.ArgumentParser) -> None:
    """Strip markup from every help text of ``parser`` and its subcommands (the component
    commands take their descriptions from module docstrings written for Python readers). A
    subcommand without a description of its own gets its line from the parent's list, so that
    its --help says what it does (`simdex bloom add --help` showed only its options)."""
    parser.description, parser.epilog = _plain(parser.description), _plain(parser.epilog)
    for action in parser._actions:
        action.help = _plain(action.help)
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                choice.help = _plain(choice.help)
                sub = action.choices[choice.dest]
                if not sub.description and choice.help:
                    sub.description = choice.help[:1].upper() + choice.help[1:] + "."
            for sub in set(action.choices.values()):
                _plain_help(sub)


def _bench_epilog() -> str:
    from . import bench

    lines = ["components (all by default):"]
    have = bench.available()
    missing = bench.missing()
    for c in bench.COMPONENTS:
        state = "" if c in have else "  (not in this installation)"
        lines.append(f"  {c}{state}")
        for what, why in missing.get(c, []):
            lines.append(f"      without {what}: {why}")
    lines.append("  datasets  (Python only: Parquet datasets with filters against pyarrow and DuckDB; named, never by default)")
    lines += ["", "datasets reads the environment (docs/bloom.md, 'Dataset benchmark'):",
              "  SIMDEX_DATASETS_SHAPE=files,row_groups,rows   another size than quick's or full's",
              "  SIMDEX_DATASETS_PHASES=lookups,add_filters,dask_add,dask_lookup   a subset of the phases",
              "  SIMDEX_DATASETS_DASK_WORKERS=1,2,4,8   worker counts of the Dask phases (default 1,2)",
              "  SIMDEX_DATASETS_DIR, SIMDEX_DATASETS_KEEP   where the generated files go, and whether they stay"]
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = _Parser(prog="simdex", description=__doc__)
    p.add_argument("--version", action="version", version=f"simdex {__version__}")
    p.add_argument("--include-dir", action="store_true", help="print the folder of the C++ headers and exit")
    p.add_argument("--cmake-dir", action="store_true",
                   help="print the folder of simdexConfig.cmake (for -Dsimdex_DIR=... and find_package) and exit")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    info = sub.add_parser("info", help="CPU, detected features, ISA level and kernel per family",
                          description="Prints the CPU, the features detected, the ISA level detected and the "
                                      "one in use (SIMDEX_ISA caps it; an unknown value exits 2), and the level "
                                      "each kernel family runs.")
    info.add_argument("--json", action="store_true", help="print as JSON")
    info.set_defaults(func=_cmd_info)

    bench = sub.add_parser("bench", help="run the native benchmarks (all components by default) and write the report",
                           # Lines broken here: the epilog's layout needs the raw formatter.
                           description="Runs each component's benchmark program with its peers, interleaved and repeated,\n"
                                       "writes one JSON file per component and renders REPORT.md and report.html\n"
                                       "(`simdex report DIR` renders them again). Component names and options go in any\n"
                                       "order. One run at a time writes into a folder: a second `simdex bench` or\n"
                                       "`simdex lab` into the same --out is refused (exit 1) while one runs.",
                           epilog=_bench_epilog(), formatter_class=argparse.RawDescriptionHelpFormatter)
    names_among_options(bench)
    bench.add_argument("components", nargs="*", metavar="COMPONENT", help="components to run (default: all in this installation)")
    g = bench.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="small sizes, 5 repetitions (default)")
    g.add_argument("--full", action="store_true", help="every regime, 1 GiB working sets included, 10 repetitions")
    bench.add_argument("--out", default="bench-results", metavar="DIR", help="directory for the JSON files and report (default: %(default)s)")
    bench.add_argument("--only", action="append", default=[], metavar="TEXT", help="only workloads whose name contains this (repeatable)")
    bench.add_argument("--reps", type=repetitions, default=0, metavar="N", help="repetitions per figure, 1 to 1000 (default: 5 quick, 10 full)")
    bench.add_argument("--no-probe", action="store_true", help="skip the machine-limits probe")
    bench.add_argument("--no-report", action="store_true", help="do not render REPORT.md / report.html")
    bench.set_defaults(func=_cmd_bench)

    report = sub.add_parser("report", help="render REPORT.md and report.html from a directory of bench JSON; compare two lab runs",
                            usage="simdex report [-h] [--readme FILE] [--command-text TEXT] DIR\n"
                                  "       simdex report A B",
                            description="Renders REPORT.md and report.html (a summary table per component, the machine's "
                                        "limits, then every workload's table and chart) from the JSON files that "
                                        "`simdex bench` or `simdex lab` wrote into DIR. Every figure printed comes from "
                                        "those files. Given two lab runs A and B (each a lab.json, or a folder holding "
                                        "one), prints them side by side in Markdown instead: per experiment both "
                                        "figures, B's over A's and both verdicts, and the two machines where they "
                                        "differ; it writes no file.")
    report.add_argument("dir", nargs="+", metavar="DIR",
                        help="the folder `simdex bench --out` or `simdex lab --out` wrote (their defaults: bench-results, "
                             "lab-results); or two lab runs to compare")
    report.add_argument("--readme", metavar="FILE", help="also replace the generated results table in FILE (README.md)")
    report.add_argument("--command-text", default="bash scripts/bench.sh", metavar="TEXT",
                        help="the command that produced DIR, quoted in the README table (default: %(default)s)")
    report.set_defaults(func=_cmd_report)

    from . import components

    for name in components.BUILT:
        mod = components.part("commands", name)
        if mod is not None:
            mod.register(sub)
    _plain_help(p)
    return p


def _silence_stdout() -> None:
    """After stdout failed (a closed pipe, a full disk): nothing more goes there, so the
    interpreter's final flush does not fail again."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    from ._output import end_by_sigpipe, raise_on_termination

    raise_on_termination()
    parser = build_parser()
    try:
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help, --version, usage errors: their output must arrive too
            if sys.stdout is not None:
                sys.stdout.flush()
            return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except BrokenPipeError:  # `simdex --help | head -1`
        return end_by_sigpipe()
    except OSError as err:
        _silence_stdout()
        print(f"simdex: {err.strerror or err}", file=sys.stderr)
        return 1
    if sys.stdout is None and args.command != "base85":  # base85 says so itself, and takes -o
        # (`>&-`): the answers would be lost and the command would exit 0
        print("simdex: stdout is closed: nothing could be shown", file=sys.stderr)
        return 2
    if args.command is not None:
        # A bad SIMDEX_ISA is a usage error of every command, reported before any work (it
        # used to surface as a traceback at a command's first kernel call, or as a benchmark
        # program killed after its run).
        from ._simdex import active_isa

        try:
            active_isa()
        except ValueError as e:
            print(f"simdex: {e}", file=sys.stderr)
            return 2
    try:
        if args.include_dir or args.cmake_dir:
            from . import get_cmake_dir, get_include

            try:
                print(get_include() if args.include_dir else get_cmake_dir(), flush=True)
            except FileNotFoundError as e:
                print(f"simdex: {e}", file=sys.stderr)
                return 1
            return 0
        if args.command is None:
            parser.print_help()
            sys.stdout.flush()
            return 0
        code = int(args.func(args) or 0)
        if sys.stdout is not None:
            sys.stdout.flush()  # a write error surfaces here, not in the interpreter's exit
        return code
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return end_by_sigpipe()
    except OSError as e:  # what no command caught: a message, not a traceback
        if e.filename is None and e.errno is not None:
            _silence_stdout()  # most likely stdout itself (a full disk)
        print(f"simdex: {e.strerror or e}" + (f": {e.filename}" if e.filename else ""), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
