"""The verdict on a SchedulerProfile is judged once per (uid, generation), and once per judgement
the scheduler configuration is computed: children's events reuse it, a new generation does not."""

from __future__ import annotations

from typing import Any

import pytest
from scheduler_operator import desired, engines, render
from scheduler_operator.desired import Desired, DesiredCache, judge
from scheduler_operator.model import SpecError


def body(generation: int = 1, uid: str = "uid-1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.schedops.io/v1alpha1",
        "kind": "SchedulerProfile",
        "metadata": {
            "name": "tenant",
            "uid": uid,
            "generation": generation,
            "resourceVersion": "1",
            "creationTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {"namespace": "ops", **spec},
    }


@pytest.fixture
def validations(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The generations engines.validate was called for, in order."""
    seen: list[str] = []
    real = engines.validate

    def counting(profile: Any, config: Any = None) -> None:
        seen.append(profile.name)
        real(profile, config)

    monkeypatch.setattr(engines, "validate", counting)
    return seen


def test_the_same_generation_is_judged_once(validations: list[str]) -> None:
    cache = DesiredCache()
    first = cache.of(body())
    assert isinstance(first, Desired)
    assert cache.of(body()) is first
    assert len(validations) == 1


def test_a_new_generation_is_judged_again(validations: list[str]) -> None:
    cache = DesiredCache()
    first = cache.of(body(1))
    second = cache.of(body(2, replicas=2))
    assert isinstance(second, Desired)
    assert second is not first
    assert second.profile.spec.replicas == 2
    assert len(validations) == 2
    assert cache.of(body(2, replicas=2)) is second
    assert len(validations) == 2


def test_a_refused_generation_is_remembered_as_refused(validations: list[str]) -> None:
    cache = DesiredCache()
    bad = body(
        engine="KubeScheduler", profiles=[{"plugins": {"score": {"enabled": [{"name": "X"}]}}}]
    )
    verdict = cache.of(bad)
    assert isinstance(verdict, SpecError)
    assert verdict.path == "spec.profiles[0].plugins.score.enabled[0].name"
    assert cache.of(bad) is verdict
    assert len(validations) == 1


def test_each_object_and_a_forgotten_one_are_judged_apart(validations: list[str]) -> None:
    cache = DesiredCache()
    cache.of(body(uid="a"))
    cache.of(body(uid="b"))
    assert len(validations) == 2
    cache.forget("a")
    cache.of(body(uid="a"))
    cache.of(body(uid="b"))
    assert len(validations) == 3


def test_a_late_older_generation_does_not_displace_the_newer(validations: list[str]) -> None:
    cache = DesiredCache()
    newer = cache.of(body(2))
    cache.of(body(1))
    assert cache.of(body(2)) is newer
    assert len(validations) == 2


def test_a_body_that_was_never_stored_is_judged_every_time(validations: list[str]) -> None:
    cache = DesiredCache()
    unstored = {"metadata": {"name": "tenant"}, "spec": {}}
    cache.of(unstored)
    cache.of(unstored)
    assert len(validations) == 2


def test_a_judgement_computes_the_scheduler_configuration_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []
    real = desired.scheduler_configuration

    def counting(profile: Any) -> dict[str, Any]:
        calls.append(profile.name)
        return real(profile)

    for module in (desired, engines, render):
        monkeypatch.setattr(module, "scheduler_configuration", counting)
    verdict = judge(body())
    assert calls == ["tenant"]
    assert verdict.rendered.config == real(verdict.profile)
