"""Waiting a fixed time, for the tests that check that something does not happen."""

from __future__ import annotations

import time


def settle(seconds: float) -> None:
    """Gives the scheduler, the operator or a controller time to act on what it should not
    act on, before the test checks that nothing happened."""
    time.sleep(seconds)
