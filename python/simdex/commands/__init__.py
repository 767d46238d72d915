"""Command-line subcommand groups, one optional module per component (base85, bloom, ...).

Each module defines ``register(subparsers)``, adding its parser with ``set_defaults(func=...)``;
the function takes the parsed arguments and returns the exit code. ``simdex.cli`` registers the
module of every built component that has one (``simdex.components``).
"""


def repetitions(text: str) -> int:
    """argparse type of --reps: 1 to 1000 (the benchmark programs' range), not 0 for "default"."""
    import argparse

    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"wants a whole number, got {text!r}") from None
    if not 1 <= n <= 1000:
        raise argparse.ArgumentTypeError(f"wants 1 to 1000, got {n}")
    return n
