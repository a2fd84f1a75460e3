"""The exit codes of every `scheduler-runtime` command."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILURE = 1  # the command ran and failed: a cluster it cannot reach, a lost lease
    USAGE_ERROR = 2  # the command was given something it cannot use, as argparse's own
