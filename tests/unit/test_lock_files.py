"""The lock files (requirements/*.lock) drive the image build and every install: they must pin,
with hashes, a version of each dependency pyproject.toml declares that satisfies it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^ ;\\]+)")


def pins(lock: str) -> dict[str, str]:
    text = (REPO / "requirements" / lock).read_text()
    found = (PIN.match(line) for line in text.splitlines())
    return {canonicalize_name(m[1]): m[2] for m in found if m}


def declared(lock: str) -> list[str]:
    runtime = list(PROJECT["dependencies"])
    build = [
        line
        for line in (REPO / "requirements" / "build.in").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    return {
        "runtime.lock": runtime,
        "build.lock": build,
        "dev.lock": runtime + PROJECT["optional-dependencies"]["dev"] + build,
    }[lock]


@pytest.mark.parametrize("lock", ["runtime.lock", "build.lock", "dev.lock"])
def test_every_declared_dependency_is_pinned_to_a_version_it_accepts(lock: str) -> None:
    pinned = pins(lock)
    for line in declared(lock):
        requirement = Requirement(line)
        name = canonicalize_name(requirement.name)
        assert name in pinned, f"{lock} lacks {name}: run `make lock`"
        assert requirement.specifier.contains(pinned[name], prereleases=True), (
            f"{lock} pins {name}=={pinned[name]}, outside {requirement.specifier}: run `make lock`"
        )


@pytest.mark.parametrize("lock", ["runtime.lock", "build.lock", "dev.lock"])
def test_every_pin_carries_a_hash(lock: str) -> None:
    entries = re.split(r"\n(?=[A-Za-z0-9])", (REPO / "requirements" / lock).read_text())
    unhashed = [e.split()[0] for e in entries if PIN.match(e) and "--hash=sha256:" not in e]
    assert not unhashed
