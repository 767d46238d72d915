"""Command-line subcommand groups, one module per component (base85, bloom, ...).

Each module defines ``register(subparsers)``, adding its parser with ``set_defaults(func=...)``;
the function takes the parsed arguments and returns the exit code.
"""

COMPONENT_COMMANDS = ("base85", "bloom", "btree", "kv")
