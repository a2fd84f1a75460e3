"""Copies upstream's allocator test table (structured/internal/allocatortesting of the
k8s.io/dynamic-resource-allocation version go.mod pins) from the Go module cache into
allocatortesting/, with the edits that let record_test.go run it against the public
allocator: the internal package's import points at oracle/internal, and each case's name is
kept in RecordName for the recorder. The copies are not committed; run this before
`go test ./allocatortesting` (see main.go)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
MODULE = "k8s.io/dynamic-resource-allocation"
PACKAGE = "structured/internal/allocatortesting"
FILES = ("allocator_testing.go", "lexicographical_testing.go")
# (what upstream's file says, what the copy says instead); each must be found exactly once.
EDITS = (
    (
        '\t"k8s.io/dynamic-resource-allocation/structured/internal"\n',
        '\t"oracle/internal"\n',
    ),
    (
        "\tfor name, tc := range testcases {\n\t\tt.Run(name, func(t *testing.T) {\n",
        "\tfor name, tc := range testcases {\n\t\tt.Run(name, func(t *testing.T) {\n"
        "\t\t\tRecordName = name // recorded with the allocator's answer (oracle)\n",
    ),
)
DECLARATION = (
    "\n// RecordName is the test case being run, for the oracle's recorder.\n"
    "var RecordName string\n"
)


def pinned_version() -> str:
    found = re.search(rf"^\s*{re.escape(MODULE)} (v\S+)", (HERE / "go.mod").read_text(), re.M)
    if found is None:
        raise SystemExit(f"go.mod does not require {MODULE}")
    return found[1]


def source_dir() -> Path:
    cache = subprocess.run(
        ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True
    ).stdout.strip()
    path = Path(cache) / f"{MODULE}@{pinned_version()}" / PACKAGE
    if not path.is_dir():
        raise SystemExit(f"{path} is missing: run `go mod download` in {HERE} first")
    return path


def edited(text: str) -> str:
    for before, after in EDITS:
        if text.count(before) != 1:
            raise SystemExit(f"upstream's allocator_testing.go changed: {before.strip()!r}")
        text = text.replace(before, after)
    imports_end = text.index("\n)\n", text.index("import (")) + 3
    return text[:imports_end] + DECLARATION + text[imports_end:]


def main() -> None:
    source = source_dir()
    for name in FILES:
        text = (source / name).read_text()
        (HERE / "allocatortesting" / name).write_text(
            edited(text) if name == "allocator_testing.go" else text
        )
    print(f"copied {', '.join(FILES)} from {source}", file=sys.stderr)


if __name__ == "__main__":
    main()
