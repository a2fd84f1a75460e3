"""Out-of-tree plugins behind their guard: exceptions, overrun budgets and wrong return types
become the plugin's Error status for that pod, logged once, and the next pod is unaffected."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from typing import Any, ClassVar

import pytest

from scheduler_runtime.cli import main
from scheduler_runtime.config import load_configuration
from scheduler_runtime.framework import isolation
from scheduler_runtime.framework import registry as registry_module
from scheduler_runtime.framework.algorithm import SchedulingAlgorithm
from scheduler_runtime.framework.isolation import MAX_ABANDONED, GuardedPlugin
from scheduler_runtime.framework.podinfo import pod_info
from scheduler_runtime.framework.runtime import Framework, FrameworkError
from scheduler_runtime.framework.snapshot import Snapshot
from scheduler_runtime.plugin_api import (
    SUCCESS,
    Code,
    CycleState,
    Handle,
    NodeInfo,
    PluginArgs,
    PluginBase,
    PodInfo,
    Status,
)

RELEASE = threading.Event()  # lets hung calls finish when a test ends


class TroubleArgs(PluginArgs):
    mode: str = "ok"


class Troublesome(PluginBase[TroubleArgs]):
    """Misbehaves, in the way its args say, for pods labelled `trouble: "yes"` only."""

    name: ClassVar[str] = "Troublesome"
    args_type = TroubleArgs
    time_budget: ClassVar[float] = 0.2

    def _misbehaves(self, pod: PodInfo) -> bool:
        return pod.labels.get("trouble") == "yes"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        if self._misbehaves(pod):
            if self.args.mode == "raise":
                raise KeyError("no such rack")
            if self.args.mode == "hang":
                RELEASE.wait(30)
            if self.args.mode == "wrong-type":
                return "yes"
        return SUCCESS

    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Any:
        if self._misbehaves(pod) and self.args.mode == "bad-score":
            return 1.5, SUCCESS
        return (100 if node.name == "n1" else 0), SUCCESS

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        if self._misbehaves(pod) and self.args.mode == "raise-reserve":
            raise RuntimeError("reservation book is full")
        return SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        raise RuntimeError("ignored")


@pytest.fixture(autouse=True)
def installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    point = EntryPoint("Troublesome", f"{__name__}:Troublesome", registry_module.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry_module, "entry_points", lambda group: [point])
    registry_module.registry.cache_clear()
    RELEASE.clear()
    yield
    RELEASE.set()
    registry_module.registry.cache_clear()


def framework(mode: str) -> tuple[Framework, SchedulingAlgorithm]:
    config = load_configuration(
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "profiles": [
                {
                    "schedulerName": "guarded",
                    "plugins": {
                        "multiPoint": {
                            "disabled": [{"name": "*"}],
                            "enabled": [
                                {"name": "PrioritySort"},
                                {"name": "NodeResourcesFit"},
                                {"name": "Troublesome"},
                                {"name": "DefaultBinder"},
                            ],
                        }
                    },
                    "pluginConfig": [{"name": "Troublesome", "args": {"mode": mode}}],
                }
            ],
        }
    )
    snapshot = Snapshot()
    for name in ("n1", "n2"):
        snapshot.add_node(
            {
                "metadata": {"name": name},
                "status": {"allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"}},
            }
        )
    fwk = Framework(config.profiles[0], Handle(snapshot))
    return fwk, SchedulingAlgorithm(snapshot, 0, random.Random(1))


def pod(name: str, *, trouble: bool) -> PodInfo:
    labels = {"trouble": "yes"} if trouble else {}
    return pod_info(
        {
            "metadata": {"name": name, "namespace": "ns", "labels": labels},
            "spec": {"containers": [{"name": "c"}]},
        }
    )


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("raise", "plugin Troublesome failed: filter raised KeyError: 'no such rack'"),
        ("hang", "plugin Troublesome failed: filter did not return within its time budget of 0.2s"),
        (
            "wrong-type",
            "plugin Troublesome failed: filter returned str, expected a Status",
        ),
        (
            "bad-score",
            "plugin Troublesome failed: score returned tuple, expected (int, Status)",
        ),
    ],
)
def test_a_misbehaving_plugin_fails_only_that_pod(
    mode: str, message: str, caplog: pytest.LogCaptureFixture
) -> None:
    fwk, algorithm = framework(mode)
    assert isinstance(fwk.plugins["Troublesome"], GuardedPlugin)
    with (
        caplog.at_level(logging.WARNING, "scheduler_runtime.plugins"),
        pytest.raises(FrameworkError) as caught,
    ):
        algorithm.schedule_pod(fwk, CycleState(), pod("bad", trouble=True))
    assert str(caught.value) == message
    [line] = caplog.messages
    assert 'plugin="Troublesome"' in line
    assert 'pod="ns/bad"' in line
    result = algorithm.schedule_pod(fwk, CycleState(), pod("good", trouble=False))
    assert result.suggested_host == "n1"


def test_a_hung_plugin_does_not_stall_the_cycle_beyond_its_budget() -> None:
    fwk, algorithm = framework("hang")
    started = time.monotonic()
    for _ in range(MAX_ABANDONED + 2):
        with pytest.raises(FrameworkError):
            algorithm.schedule_pod(fwk, CycleState(), pod("bad", trouble=True))
    elapsed = time.monotonic() - started
    # Calls past the abandoned-thread limit fail at once instead of waiting out the budget.
    assert elapsed < (MAX_ABANDONED + 1) * 0.2 + 1.0
    with pytest.raises(FrameworkError, match="still running past their time budget"):
        algorithm.schedule_pod(fwk, CycleState(), pod("bad", trouble=True))
    RELEASE.set()
    deadline = time.monotonic() + 5
    while fwk.plugins["Troublesome"]._abandoned and time.monotonic() < deadline:
        time.sleep(0.05)
    assert (
        algorithm.schedule_pod(fwk, CycleState(), pod("good", trouble=False)).suggested_host == "n1"
    )


def test_per_point_methods_become_error_statuses(caplog: pytest.LogCaptureFixture) -> None:
    fwk, _ = framework("raise-reserve")
    with caplog.at_level(logging.WARNING, "scheduler_runtime.plugins"):
        status = fwk.run_reserve(CycleState(), pod("bad", trouble=True), "n1")
        fwk.run_unreserve(CycleState(), pod("bad", trouble=True), "n1")
    assert status.code == Code.ERROR
    assert status.plugin == "Troublesome"
    assert status.message() == (
        "plugin Troublesome failed: reserve raised RuntimeError: reservation book is full"
    )
    assert len(caplog.messages) == 2
    assert 'point="unreserve"' in caplog.messages[1]
    assert fwk.run_reserve(CycleState(), pod("good", trouble=False), "n1").is_success


def test_the_guard_exposes_only_what_the_plugin_defines() -> None:
    fwk, _ = framework("ok")
    guarded = fwk.plugins["Troublesome"]
    assert callable(guarded.filter_nodes)
    assert callable(guarded.score_nodes)
    assert not hasattr(guarded, "pre_filter")
    assert not hasattr(guarded, "normalize_score")
    assert guarded.budget == 0.2


def test_in_tree_plugins_run_unguarded() -> None:
    fwk, _ = framework("ok")
    assert not isinstance(fwk.plugins["NodeResourcesFit"], GuardedPlugin)


def test_plugin_base_defaults_its_args() -> None:
    plugin = Troublesome(None, Handle(Snapshot()))
    assert plugin.args == TroubleArgs()
    assert TroubleArgs.model_validate({"mode": "raise"}).mode == "raise"


def test_a_constructor_that_fails_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(self: Troublesome, args: Any, handle: Handle) -> None:
        raise OSError("cannot open the rack map")

    monkeypatch.setattr(Troublesome, "__init__", explode)
    with pytest.raises(FrameworkError, match="plugin 'Troublesome' cannot be built: cannot open"):
        framework("ok")


class Plain(PluginBase[PluginArgs]):
    name: ClassVar[str] = "Plain"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return SUCCESS


def test_the_handle_budget_applies_unless_the_plugin_sets_its_own() -> None:
    handle = Handle(Snapshot(), plugin_time_budget=2.5)
    assert GuardedPlugin(Plain(None, handle), 2.5, lambda *_: None).budget == 2.5  # type: ignore[arg-type,return-value]
    own = Troublesome(None, handle)
    assert GuardedPlugin(own, 2.5, lambda *_: None).budget == 0.2  # type: ignore[arg-type,return-value]


@pytest.mark.parametrize("value", ["0", "-1", "soon", "7200"])
def test_the_run_command_refuses_a_bad_time_budget(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["run", "--config", "x.yaml", "--plugin-time-budget", value])
    assert caught.value.code == 2
    assert f"argument --plugin-time-budget: {value!r}: expected seconds" in capsys.readouterr().err


class RaisingQueueSort(PluginBase[PluginArgs]):
    name: ClassVar[str] = "RaisingQueueSort"

    def less(self, first: Any, second: Any) -> bool:
        raise TypeError("cannot compare")

    def pre_enqueue(self, pod: PodInfo) -> Any:
        return None


def test_queue_points_are_checked_without_a_thread(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    guarded: Any = GuardedPlugin(RaisingQueueSort(None, Handle(Snapshot())), 1.0, lambda *_: None)  # type: ignore[arg-type,return-value]

    def no_thread(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a queue point started a thread")

    monkeypatch.setattr(isolation.threading, "Thread", no_thread)
    with caplog.at_level(logging.WARNING, "scheduler_runtime.plugins"):
        assert guarded.less(object(), object()) is False
        status = guarded.pre_enqueue(pod("p", trouble=False))
    assert status.code == Code.ERROR
    assert status.message() == (
        "plugin RaisingQueueSort failed: pre_enqueue returned NoneType, expected a Status"
    )
    assert len(caplog.messages) == 2
