"""Which Kubernetes minor the runtime emulates: kube-scheduler's `--emulated-version` (component
-base's compatibility registry: `[kube=]MAJOR.MINOR`, between the binary's minor less three
and the binary's), or else the API server's own minor, never newer than the API server's.

The runtime's "binary version" is the newest minor it has tables for; it emulates only the
minors it has tables for, a narrower floor than upstream's binary minus three."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from scheduler_runtime.config.errors import ConfigError
from scheduler_runtime.config.features import NEWEST, OLDEST, RELEASE, VERSIONS, version_key

FLAG: Final = "--emulated-version"
KUBE_COMPONENT: Final = "kube"
# apimachinery's version.ParseGeneric: numbers, then anything on the line (ignored).
MAX_VERSION_LENGTH: Final = 128  # bounds the match's backtracking; real versions are short
_VERSION = re.compile(r"\s*v?([0-9]+(?:\.[0-9]+)*)[^\n]*\n?")


class VersionError(ValueError):
    """An API server whose version the runtime cannot emulate, or cannot read."""


@dataclass(frozen=True)
class Emulation:
    """The minor emulated ("1.36"), the API server's gitVersion ("" when not read), why that
    minor, and a warning when the choice deserves one."""

    version: str
    apiserver: str
    reason: str
    warning: str = ""

    @property
    def release(self) -> str:
        """The release whose gates and plugins the runtime follows (v1.36.3)."""
        return RELEASE[self.version]

    def log_line(self) -> str:
        return f"emulating kube-scheduler {self.version} ({self.release}): {self.reason}"


def _numbers(text: str) -> tuple[int, ...]:
    """apimachinery's version.Parse, as far as a minor needs it (ValueError in its words)."""
    found = _VERSION.fullmatch(text) if len(text) <= MAX_VERSION_LENGTH else None
    if found is None:
        raise ValueError(f"could not parse {_quote(text)} as version")
    components = found.group(1).split(".")
    if len(components) < 2:
        raise ValueError(f"illegal version string {_quote(text)}")
    if components[0].startswith("0") and components[0] != "0":
        raise ValueError(
            f"illegal zero-prefixed version component {_quote(components[0])} in {_quote(text)}"
        )
    return tuple(int(component) for component in components)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _minor_text(numbers: tuple[int, ...]) -> str:
    return f"{numbers[0]}.{numbers[1]}"


def parse_emulated_version(values: Iterable[str]) -> str | None:
    """kube-scheduler's `--emulated-version` (a string slice: comma-separated, repeatable;
    `kube=` optional): the minor asked for, None when not given. ConfigError in upstream's
    words: another component, a patch version, a second setting, a minor out of range."""
    asked: dict[str, str] = {}
    for value in values:
        for pair in (part for part in value.split(",") if part):
            component, equals, text = pair.partition("=")
            component, text = (component.strip(), text.strip()) if equals else ("kube", pair)
            try:
                numbers = _numbers(text)
            except ValueError as error:
                raise ConfigError(FLAG, str(error)) from None
            shown = ".".join(str(number) for number in numbers)
            if len(numbers) > 2 and numbers[2] != 0:
                raise ConfigError(FLAG, f"patch version not allowed, got: {component}={shown}")
            if component in asked:
                raise ConfigError(
                    FLAG,
                    f"duplicate version flag, {component}={asked[component]} and "
                    f"{component}={shown}",
                )
            asked[component] = shown
    for component in sorted(asked):
        if component != KUBE_COMPONENT:
            raise ConfigError(FLAG, f"component not registered: {component}")
    if KUBE_COMPONENT not in asked:
        return None
    version = _minor_text(_numbers(asked[KUBE_COMPONENT]))
    errors = _out_of_range(version)
    if errors:
        raise ConfigError(FLAG, errors[0] if len(errors) == 1 else f"[{', '.join(errors)}]")
    return version


def _out_of_range(version: str) -> list[str]:
    """effectiveVersion.Validate's errors, with the runtime's floor and binary version (its
    newest minor): below the floor the min compatibility version (one minor less, raised to
    the floor) is out of range too."""
    errors = []
    if not version_key(OLDEST) <= version_key(version) <= version_key(NEWEST):
        errors.append(f"emulation version {version} is not between [{OLDEST}, {NEWEST}.0]")
    if version_key(version) < version_key(OLDEST):
        errors.append(
            f"minCompatibilityVersion version {OLDEST} is not between [{OLDEST}, {version}]"
        )
    return errors


def choose_emulation(apiserver: str, flag: str | None = None) -> Emulation:
    """The minor to emulate, given the API server's gitVersion ("" when not read) and the
    minor `--emulated-version` asked for (None: not given). Without the flag: the API
    server's minor; a newer API server gets the newest minor known, with a warning; one older
    than the oldest supported is refused (VersionError), as upstream refuses an emulation
    version below its floor."""
    server = _server_minor(apiserver) if apiserver else None
    if flag is not None:
        warning = ""
        if server is not None and version_key(flag) > server:
            warning = (
                f"{FLAG}={flag} is newer than the API server ({apiserver}): kube-scheduler "
                "must not be newer than kube-apiserver (the version skew policy)"
            )
        return Emulation(flag, apiserver, f"{FLAG}={flag}", warning)
    if server is None:
        raise VersionError(f"the API server's version is unknown: pass {FLAG}")
    version = f"{server[0]}.{server[1]}"
    if version in VERSIONS:
        return Emulation(version, apiserver, f"the API server is {apiserver}")
    if server > version_key(NEWEST):
        return Emulation(
            NEWEST,
            apiserver,
            f"the API server is {apiserver}, newer than the newest minor known",
            f"the API server is {apiserver}, newer than Kubernetes {NEWEST}, the newest minor "
            f"the scheduler runtime emulates: it schedules as kube-scheduler {RELEASE[NEWEST]}",
        )
    raise VersionError(
        f"the API server is {apiserver}: the scheduler runtime emulates Kubernetes {OLDEST} to "
        f"{NEWEST} (emulation version {version} is not between [{OLDEST}, {NEWEST}.0])"
    )


def _server_minor(git_version: str) -> tuple[int, int]:
    """(major, minor) of an API server's gitVersion: v1.37.2, v1.37.2-eks-abc, v1.38.0-beta.0."""
    try:
        numbers = _numbers(git_version)
    except ValueError as error:
        raise VersionError(f"the API server's version {git_version!r}: {error}") from None
    return numbers[0], numbers[1]


__all__ = [
    "FLAG",
    "Emulation",
    "VersionError",
    "choose_emulation",
    "parse_emulated_version",
]
