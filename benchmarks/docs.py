"""Keeps the results section of docs/benchmarks.md in step with the latest run."""

from __future__ import annotations

from pathlib import Path

RESULTS = "benchmark results"
DRA_RESULTS = "DRA benchmark results"  # a run of DRA workloads alone keeps the others' section


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}: begin -->", f"<!-- {name}: end -->"


BEGIN, END = markers(RESULTS)


def replace_section(text: str, section: str, name: str = RESULTS) -> str:
    """The text with what lies between the markers replaced (markers appended when missing)."""
    begin, finish = markers(name)
    start, end = text.find(begin), text.find(finish)
    if start == -1 or end < start:
        return f"{text.rstrip()}\n\n{begin}\n{section.strip()}\n{finish}\n"
    return f"{text[: start + len(begin)]}\n{section.strip()}\n{text[end:]}"


def replace_results(path: Path, section: str, name: str = RESULTS) -> None:
    existing = path.read_text() if path.exists() else ""
    path.write_text(replace_section(existing, section, name))
