"""The `scheduler-runtime` command: `run` (schedule pods in a cluster), `simulate` (place the
pending pods of a state file without one), `explain` (ask a running scheduler why) and
`convert-config` (rewrite an older configuration as v1)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from scheduler_runtime.cli import convert, explain, run, simulate
from scheduler_runtime.cli.command import ExitCode

__all__ = ["ExitCode", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="scheduler-runtime", description="The `scheduler-runtime` command."
    )
    commands = parser.add_subparsers(title="commands", metavar="COMMAND")
    for command in (run.COMMAND, simulate.COMMAND, explain.COMMAND, convert.COMMAND):
        command.add_to(commands)
    args = parser.parse_args(argv)
    if not hasattr(args, "handler"):
        parser.print_help()
        return ExitCode.OK
    result: int = args.handler(args)
    return result
