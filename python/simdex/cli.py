"""The ``simdex`` command: info, bench, report, and one subcommand group per component."""

from __future__ import annotations

import argparse
import sys


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


def _cmd_report(args: argparse.Namespace) -> int:
    from . import report

    try:
        md, html = report.render(args.dir)
    except (OSError, ValueError) as e:
        print(f"simdex report: {e}", file=sys.stderr)
        return 1
    print(f"wrote {md}\nwrote {html}")
    if args.readme:
        try:
            report.update_readme(args.readme, report.load(args.dir), args.command_text)
        except (OSError, ValueError) as e:
            print(f"simdex report: {e}", file=sys.stderr)
            return 1
        print(f"updated the results table in {args.readme}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="simdex", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="CPU, detected features, ISA level and kernel per family")
    info.add_argument("--json", action="store_true", help="print as JSON")
    info.set_defaults(func=_cmd_info)

    bench = sub.add_parser("bench", help="run the native benchmarks (all components by default) and write the report")
    bench.add_argument("components", nargs="*", help="components to run (default: all built)")
    g = bench.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="small sizes, 5 repetitions (default)")
    g.add_argument("--full", action="store_true", help="every regime the issues name, 10 repetitions")
    bench.add_argument("--out", default="bench-results", help="directory for the JSON files and report (default: %(default)s)")
    bench.add_argument("--only", action="append", default=[], help="only workloads whose name contains this (repeatable)")
    bench.add_argument("--reps", type=int, default=0, help="repetitions per figure (default: 5 quick, 10 full)")
    bench.add_argument("--no-probe", action="store_true", help="skip the machine-limits probe")
    bench.add_argument("--no-report", action="store_true", help="do not render REPORT.md / report.html")
    bench.set_defaults(func=_cmd_bench)

    report = sub.add_parser("report", help="render REPORT.md and report.html from a directory of bench JSON")
    report.add_argument("dir")
    report.add_argument("--readme", metavar="FILE", help="also replace the generated results table in FILE (README.md)")
    report.add_argument("--command-text", default="bash scripts/bench.sh",
                        help="the command that produced DIR, quoted in the README table (default: %(default)s)")
    report.set_defaults(func=_cmd_report)

    from . import components

    for name in components.BUILT:
        mod = components.part("commands", name)
        if mod is not None:
            mod.register(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 1


if __name__ == "__main__":
    sys.exit(main())
