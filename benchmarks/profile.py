"""Where this runtime spends its time under load: py-spy samples the scheduler process while a
workload runs, and the collapsed stacks are summed per function."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

# "name (path/to/file.py:123)": the line number is dropped, so one function is one entry.
LINE_NUMBER = re.compile(r":\d+\)$")


class HotSpot(BaseModel):
    """A function's share of the samples: running itself (own) and anywhere on the stack."""

    function: str
    own: float
    total: float


def recorder_command(pid: int, output: Path, rate: int = 100) -> list[str]:
    """py-spy attached without pausing the process, writing collapsed stacks of the thread
    holding the GIL (the Python code on the CPU, not the threads waiting)."""
    return [
        str(Path(sys.executable).parent / "py-spy"),
        "record",
        f"--pid={pid}",
        f"--output={output}",
        "--format=raw",
        f"--rate={rate}",
        "--nonblocking",
        "--gil",
    ]


@contextmanager
def recording(pid: int, output: Path) -> Iterator[None]:
    """Samples `pid` while the block runs; py-spy writes its file when interrupted."""
    recorder = subprocess.Popen(
        recorder_command(pid, output), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        yield
    finally:
        recorder.send_signal(signal.SIGINT)
        _, errors = recorder.communicate(timeout=60)
        if recorder.returncode != 0 or not output.exists():
            message = errors.decode(errors="replace").strip()[-500:]
            raise RuntimeError(f"py-spy could not profile pid {pid}: {message}")


class Profile(BaseModel):
    """The hot spots of one profiled run: by own time, and our functions by time on the stack."""

    workload: str
    nodes: int
    samples_file: str
    by_own: list[HotSpot]
    by_total: list[HotSpot]


def hot_spots(
    collapsed: str,
    top: int = 15,
    *,
    rank_by: Literal["own", "total"] = "own",
    path_part: str = "",
) -> list[HotSpot]:
    """The `top` functions (whose frame mentions path_part) from py-spy's collapsed stacks."""
    own: Counter[str] = Counter()
    total: Counter[str] = Counter()
    samples = 0
    for line in collapsed.splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [LINE_NUMBER.sub(")", frame) for frame in stack.split(";")]
        samples += count
        own[frames[-1]] += count
        for frame in set(frames):
            total[frame] += count
    if not samples:
        return []
    ranking = own if rank_by == "own" else total
    chosen = [f for f, _ in ranking.most_common() if path_part in f][:top]
    return [HotSpot(function=f, own=own[f] / samples, total=total[f] / samples) for f in chosen]
