"""The `scheduler-runtime` command."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from scheduler_runtime.live.command import add_run_command


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scheduler-runtime", description=__doc__)
    subcommands = parser.add_subparsers(title="commands")
    add_run_command(subcommands)
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    result: int = handler(args)
    return result
