"""What every `scheduler-runtime` command is made of, and the exit codes they share."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # the command ran and failed: a cluster it cannot reach, a lost lease
    USAGE_ERROR = 2  # the command was given something it cannot use, as argparse's own


@dataclass(frozen=True)
class Command:
    """A subcommand: its name and help, its arguments, and what runs it (an exit code)."""

    name: str
    help: str
    description: str
    arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]

    def add_to(self, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        parser = commands.add_parser(self.name, help=self.help, description=self.description)
        self.arguments(parser)
        parser.set_defaults(handler=self.run)
