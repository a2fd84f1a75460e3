"""Keeps the results section of docs/benchmarks.md in step with the latest run."""

from __future__ import annotations

from pathlib import Path

BEGIN = "<!-- benchmark results: begin -->"
END = "<!-- benchmark results: end -->"


def replace_section(text: str, section: str) -> str:
    """The text with what lies between the markers replaced (markers appended when missing)."""
    start, end = text.find(BEGIN), text.find(END)
    if start == -1 or end < start:
        return f"{text.rstrip()}\n\n{BEGIN}\n{section.strip()}\n{END}\n"
    return f"{text[: start + len(BEGIN)]}\n{section.strip()}\n{text[end:]}"


def replace_results(path: Path, section: str) -> None:
    existing = path.read_text() if path.exists() else ""
    path.write_text(replace_section(existing, section))
