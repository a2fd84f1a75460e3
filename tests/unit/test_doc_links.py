"""Every relative link in README.md and docs/ names a file that exists and, with a #fragment
into a Markdown file, a heading it has (anchors as GitHub makes them from headings)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCUMENTS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+).*?\1")
# [text](target) and ![alt](target), with an optional "title"; reference definitions [x]: target.
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
EXTERNAL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")  # https:, mailto:, ...


def prose_lines(text: str) -> Iterator[tuple[int, str]]:
    """The lines outside fenced code blocks, with their numbers."""
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        opened = FENCE.match(line)
        if opened and (fence is None or opened.group(1) == fence):
            fence = opened.group(1) if fence is None else None
            continue
        if fence is None:
            yield number, line


def links(text: str) -> Iterator[tuple[int, str]]:
    """(line, target) of every link outside code."""
    for number, line in prose_lines(text):
        reference = REFERENCE.match(line)
        if reference:
            yield number, reference.group(1)
            continue
        for match in INLINE_LINK.finditer(CODE_SPAN.sub("", line)):
            yield number, match.group(1)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: the rendered text lowercased, punctuation dropped, spaces
    as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor of a Markdown document; repeated headings get -1, -2, ... as on GitHub."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in prose_lines(text):
        heading = HEADING.match(line)
        if not heading:
            continue
        base = slug(heading.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def anchors_of(document: Path) -> set[str]:
    return anchors(document.read_text())


def broken_links(document: Path, root: Path = REPO) -> list[str]:
    """`FILE:LINE: target: why` for each relative link of the document that does not resolve
    (FILE relative to root)."""
    text = document.read_text()
    problems = []
    for number, target in links(text):
        if EXTERNAL.match(target):
            continue
        path_part, _, fragment = target.partition("#")
        resolved = (document.parent / path_part).resolve() if path_part else document
        where = f"{document.relative_to(root)}:{number}: {target}"
        if not resolved.exists():
            problems.append(f"{where}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in anchors_of(resolved):
            problems.append(f"{where}: no heading with anchor #{fragment}")
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(REPO)))
def test_every_relative_link_resolves(document: Path) -> None:
    assert broken_links(document) == []


def test_a_missing_file_or_heading_is_reported(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Secure serving\n\n## Secure serving\n")
    document = tmp_path / "doc.md"
    document.write_text(
        "# Doc `x`\n"
        "[fine](other.md#secure-serving) [again](other.md#secure-serving-1) [here](#doc-x)\n"
        "[gone](missing.md) ![img](images/none.png) [web](https://example.com/x.md#y)\n"
        "[no anchor](other.md#exit-codes) `[in code](missing.md)`\n"
        "```\n[in a fence](missing.md)\n```\n"
        "[ref]: nowhere.md\n"
    )
    problems = [problem.split(": ", 1)[1] for problem in broken_links(document, tmp_path)]
    assert problems == [
        "missing.md: no such file",
        "images/none.png: no such file",
        "other.md#exit-codes: no heading with anchor #exit-codes",
        "nowhere.md: no such file",
    ]


def test_headings_become_github_anchors() -> None:
    assert slug("Running the scheduler: `scheduler-runtime run`") == (
        "running-the-scheduler-scheduler-runtime-run"
    )
    assert slug("On a cluster of your own (kind, a cloud cluster)") == (
        "on-a-cluster-of-your-own-kind-a-cloud-cluster"
    )
    assert slug("Installing the operator: kustomize, Helm, Argo CD") == (
        "installing-the-operator-kustomize-helm-argo-cd"
    )
