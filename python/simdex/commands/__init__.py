"""Command-line subcommand groups, one optional module per component (base85, bloom, ...).

Each module defines ``register(subparsers)``, adding its parser with ``set_defaults(func=...)``;
the function takes the parsed arguments and returns the exit code. ``simdex.cli`` registers the
module of every built component that has one (``simdex.components``).
"""
