"""The `scheduler-runtime` command."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scheduler-runtime", description=__doc__)
    parser.parse_args(argv)
    parser.print_help()
    return 0
