"""What every `scheduler-runtime` command is made of, and the exit codes they share."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from scheduler_runtime.config.features import FLAG, NEWEST, OLDEST
from scheduler_runtime.config.versions import FLAG as VERSION_FLAG


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


def add_feature_gates_argument(parser: argparse.ArgumentParser) -> None:
    """kube-scheduler's `--feature-gates`, for the commands that schedule (parsed by
    `config.features.parse_feature_gates`)."""
    parser.add_argument(
        FLAG,
        dest="feature_gates",
        action="append",
        default=[],
        metavar="GATE=BOOL,...",
        help="feature gates as kube-scheduler takes them: comma-separated GATE=true|false "
        "pairs (a kube: prefix is allowed), repeatable; e.g. NodeDeclaredFeatures=false. "
        "Gates kube-scheduler knows that do not affect scheduling are accepted and change "
        "nothing",
    )


def add_emulated_version_argument(parser: argparse.ArgumentParser, default: str) -> None:
    """kube-scheduler's `--emulated-version` (parsed by
    `config.versions.parse_emulated_version`)."""
    parser.add_argument(
        VERSION_FLAG,
        dest="emulated_version",
        action="append",
        default=[],
        metavar="[kube=]1.NN",
        help=f"the Kubernetes minor to schedule as, as kube-scheduler's flag takes it: gate "
        f"defaults, default plugins and gates known are that release's ({OLDEST} to "
        f"{NEWEST}; default: {default})",
    )
