"""Which Kubernetes minor the runtime emulates: kube-scheduler's `--emulated-version` (component-
base's compatibility registry: its syntax and refusals), else the API server's minor, never
newer than the API server's."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler_runtime.config import ConfigError
from scheduler_runtime.config.features import NEWEST, OLDEST, VERSIONS
from scheduler_runtime.config.versions import (
    VersionError,
    choose_emulation,
    parse_emulated_version,
)


def test_the_supported_minors_are_the_three_newest() -> None:
    assert VERSIONS == ("1.35", "1.36", "1.37")
    assert (OLDEST, NEWEST) == ("1.35", "1.37")


@pytest.mark.parametrize(
    ("apiserver", "version"),
    [
        ("v1.37.2", "1.37"),
        ("v1.36.3", "1.36"),
        ("v1.35.0", "1.35"),
        ("v1.37.2-eks-abc1234", "1.37"),
        ("v1.36.3+k3s1", "1.36"),
        ("v1.37.0-rc.1", "1.37"),
        ("v1.35.4-gke.1200", "1.35"),
    ],
)
def test_the_api_servers_minor_is_emulated(apiserver: str, version: str) -> None:
    emulation = choose_emulation(apiserver)
    assert (emulation.version, emulation.apiserver, emulation.warning) == (version, apiserver, "")
    assert emulation.reason == f"the API server is {apiserver}"
    assert emulation.log_line() == (
        f"emulating kube-scheduler {version} ({emulation.release}): the API server is {apiserver}"
    )


@pytest.mark.parametrize("apiserver", ["v1.38.0-beta.0", "v1.38.1", "v1.40.0", "v2.0.0"])
def test_a_newer_api_server_gets_the_newest_minor_with_a_warning(apiserver: str) -> None:
    emulation = choose_emulation(apiserver)
    assert emulation.version == "1.37"
    assert emulation.warning == (
        f"the API server is {apiserver}, newer than Kubernetes 1.37, the newest minor the "
        "scheduler runtime emulates: it schedules as kube-scheduler v1.37.2"
    )


@pytest.mark.parametrize("apiserver", ["v1.34.9", "v1.34.0-eks-1", "v1.20.0", "v0.36.3"])
def test_an_api_server_older_than_the_oldest_supported_is_refused(apiserver: str) -> None:
    with pytest.raises(VersionError) as caught:
        choose_emulation(apiserver)
    minor = ".".join(apiserver.removeprefix("v").split("-")[0].split(".")[:2])
    assert str(caught.value) == (
        f"the API server is {apiserver}: the scheduler runtime emulates Kubernetes 1.35 to 1.37 "
        f"(emulation version {minor} is not between [1.35, 1.37.0])"
    )


@pytest.mark.parametrize("apiserver", ["", "unknown", "v1", "release-1.36"])
def test_an_api_server_version_that_says_no_minor_is_refused(apiserver: str) -> None:
    with pytest.raises(VersionError, match="API server"):
        choose_emulation(apiserver)


def test_the_flag_wins_over_the_api_server() -> None:
    older = choose_emulation("v1.37.2", "1.35")
    assert (older.version, older.reason, older.warning) == ("1.35", "--emulated-version=1.35", "")
    blind = choose_emulation("", "1.36")  # the API server not read: the flag decides alone
    assert (blind.version, blind.apiserver, blind.warning) == ("1.36", "", "")


def test_a_flag_newer_than_the_api_server_is_taken_with_a_warning() -> None:
    """kube-scheduler bounds --emulated-version by its own binary only; the skew policy wants
    it no newer than the API server, so the runtime says so."""
    emulation = choose_emulation("v1.35.4", "1.37")
    assert emulation.version == "1.37"
    assert emulation.warning == (
        "--emulated-version=1.37 is newer than the API server (v1.35.4): kube-scheduler must "
        "not be newer than kube-apiserver (the version skew policy)"
    )


@pytest.mark.parametrize(
    ("values", "version"),
    [
        ([], None),
        (["1.36"], "1.36"),
        (["kube=1.35"], "1.35"),
        (["kube = 1.37"], "1.37"),
        (["v1.36"], "1.36"),
        (["1.36.0"], "1.36"),
        (["", "1.35"], "1.35"),
    ],
)
def test_the_flag_takes_kube_schedulers_syntax(values: list[str], version: str | None) -> None:
    assert parse_emulated_version(values) == version


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        (["1.38"], "emulation version 1.38 is not between [1.35, 1.37.0]"),
        (
            ["1.34"],
            "[emulation version 1.34 is not between [1.35, 1.37.0], minCompatibilityVersion "
            "version 1.35 is not between [1.35, 1.34]]",
        ),
        (["2.0"], "emulation version 2.0 is not between [1.35, 1.37.0]"),
        (["1.36.1"], "patch version not allowed, got: kube=1.36.1"),
        (["kube=1.36", "1.35"], "duplicate version flag, kube=1.36 and kube=1.35"),
        (["1.36,kube=1.36"], "duplicate version flag, kube=1.36 and kube=1.36"),
        (["wardle=1.2"], "component not registered: wardle"),
        (["1"], 'illegal version string "1"'),
        (["latest"], 'could not parse "latest" as version'),
        (["01.36"], 'illegal zero-prefixed version component "01" in "01.36"'),
    ],
)
def test_the_flag_is_refused_in_upstreams_words(values: list[str], reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_emulated_version(values)
    assert (caught.value.path, caught.value.reason) == ("--emulated-version", reason)


def _parsed(text: str) -> str | ConfigError | None:
    try:
        return parse_emulated_version([text])
    except ConfigError as error:
        return error


@given(st.text(max_size=300))
def test_any_flag_text_is_a_minor_or_one_clear_refusal(text: str) -> None:
    outcome = _parsed(text)
    if isinstance(outcome, ConfigError):
        assert outcome.path == "--emulated-version"
        assert "\n" not in outcome.reason.replace("\\n", "")
    else:
        assert outcome is None or outcome in VERSIONS


@given(st.text(max_size=300))
def test_any_api_server_version_is_a_minor_or_a_version_error(text: str) -> None:
    try:
        emulation = choose_emulation(text)
    except VersionError:
        return
    assert emulation.version in VERSIONS
