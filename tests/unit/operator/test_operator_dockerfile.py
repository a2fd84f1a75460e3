"""The image: pinned base, two stages, nothing is installed in the final one, non-root user."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def instructions() -> list[tuple[str, str]]:
    text = (REPO / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (keyword.upper(), rest)
        for keyword, _, rest in (line.partition(" ") for line in lines if line and line[0] != "#")
    ]


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (keyword, _) in enumerate(steps) if keyword == "FROM")
    return steps[last_from:]


def test_the_base_is_pinned_to_an_exact_release() -> None:
    base = next(rest for keyword, rest in instructions() if keyword == "ARG")
    assert re.fullmatch(r"BASE=python:\d+\.\d+\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", base)


def test_the_final_stage_installs_nothing_and_runs_as_non_root() -> None:
    stage = final_stage()
    runs = [rest for keyword, rest in stage if keyword == "RUN"]
    assert all("install" not in run.replace("uninstall", "") for run in runs)
    assert ("COPY", "--from=build /opt/scheduler-operator /opt/scheduler-operator") in stage
    user = [rest for keyword, rest in stage if keyword == "USER"]
    assert user == ["65532:65532"]


def test_every_package_of_the_wheel_is_copied_in() -> None:
    copied = {
        rest.split()[0]
        for keyword, rest in instructions()
        if keyword == "COPY" and not rest.startswith("--")
    }
    project = (REPO / "pyproject.toml").read_text()
    packages = re.search(r"\[tool\.hatch\.build\.targets\.wheel\]\npackages = \[(.*?)\]", project)
    assert packages is not None
    for package in re.findall(r'"([^"]+)"', packages.group(1)):
        assert package.split("/")[0] in copied, package
    ignored = (REPO / ".dockerignore").read_text().splitlines()
    assert all(f"!{name}/" in ignored for name in copied if "/" not in name and "." not in name)


def test_both_programs_are_on_the_path() -> None:
    env = " ".join(rest for keyword, rest in final_stage() if keyword == "ENV")
    assert "PATH=/opt/scheduler-operator/bin:$PATH" in env
    project = (REPO / "pyproject.toml").read_text()
    assert 'scheduler-operator = "scheduler_operator.cli:main"' in project
    assert 'scheduler-runtime = "scheduler_runtime.cli:main"' in project
