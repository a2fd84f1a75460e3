"""PreBindPreFlight and PreBind as v1.37.2 runs them: PreBind skips the plugins whose
pre-flight said Skip, and a binding cycle with nothing to wait for but the binding's answer
(binds_at_once) is told apart from one that may wait."""

from __future__ import annotations

from collections.abc import Iterator
from importlib.metadata import EntryPoint
from typing import Any, ClassVar

import pytest

from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework import registry as registry_module
from scheduler_runtime.framework.interface import SKIP, SUCCESS, Code, CycleState, Handle, Status
from scheduler_runtime.framework.podinfo import PodInfo, pod_info
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot

CALLED: list[str] = []


class Flighted:
    """Has work in PreBind only for pods labelled `work`."""

    name: ClassVar[str] = "Flighted"

    def __init__(self, args: Any, handle: Handle) -> None:
        pass

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return SUCCESS if "work" in pod.labels else SKIP

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        CALLED.append(self.name)
        return SUCCESS


class Unflighted:
    """A PreBind plugin without a pre-flight: it may have work for any pod."""

    name: ClassVar[str] = "Unflighted"

    def __init__(self, args: Any, handle: Handle) -> None:
        pass

    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        CALLED.append(self.name)
        return SUCCESS


class Broken(Unflighted):
    name: ClassVar[str] = "Broken"

    def pre_bind_pre_flight(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        raise KeyError("no such claim")


@pytest.fixture(autouse=True)
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    group = registry_module.ENTRY_POINT_GROUP
    points = [
        EntryPoint(name, f"{__name__}:{name}", group)
        for name in ("Flighted", "Unflighted", "Broken")
    ]
    monkeypatch.setattr(registry_module, "entry_points", lambda group: points)
    registry_module.registry.cache_clear()
    CALLED.clear()
    yield
    registry_module.registry.cache_clear()


def framework(*pre_bind: str) -> Framework:
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "s",
                    "plugins": {
                        "multiPoint": {
                            "disabled": [{"name": "*"}],
                            "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}],
                        },
                        "preBind": {"enabled": [{"name": name} for name in pre_bind]},
                    },
                }
            ],
        }
    )
    return Framework(config.profiles[0], Handle(Snapshot()))


def pod(*labels: str) -> PodInfo:
    metadata = {"name": "p", "uid": "uid-p", "labels": dict.fromkeys(labels, "")}
    return pod_info({"metadata": metadata, "spec": {"containers": [{"name": "c"}]}})


def test_pre_bind_skips_the_plugins_whose_pre_flight_skipped() -> None:
    fwk, state = framework("Flighted"), CycleState()
    assert fwk.run_pre_bind_pre_flight(state, pod(), "n1").is_skip
    assert fwk.run_pre_bind(state, pod(), "n1").is_success
    assert CALLED == []
    assert fwk.binds_at_once(state, pod())  # nothing to wait for but the binding's answer

    state = CycleState()
    assert fwk.run_pre_bind_pre_flight(state, pod("work"), "n1").is_success
    assert fwk.run_pre_bind(state, pod("work"), "n1").is_success
    assert CALLED == ["Flighted"]
    assert not fwk.binds_at_once(state, pod("work"))


def test_a_plugin_without_a_pre_flight_always_runs_and_its_pod_may_wait() -> None:
    fwk, state = framework("Flighted", "Unflighted"), CycleState()
    # Not taken to have work (no nominated node is written for it), nor to have none.
    assert fwk.run_pre_bind_pre_flight(state, pod(), "n1").is_skip
    assert fwk.run_pre_bind(state, pod(), "n1").is_success
    assert CALLED == ["Unflighted"]
    assert not fwk.binds_at_once(state, pod())


def test_a_failing_pre_flight_of_a_users_plugin_is_the_binding_s_error() -> None:
    status = framework("Broken").run_pre_bind_pre_flight(CycleState(), pod(), "n1")
    assert status.code == Code.ERROR
    assert status.plugin == "Broken"
    assert status.message().startswith('running PreBindPreFlight "Broken": ')
    assert "no such claim" in status.message()
