"""The Argo CD health check, run as Lua against SchedulerProfiles in each state."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import lupa
import pytest

REPO = Path(__file__).resolve().parents[3]
HEALTH = REPO / "manifests" / "argocd" / "health.lua"


def health(obj: dict[str, Any]) -> tuple[str, str]:
    lua = lupa.LuaRuntime(unpack_returned_tuples=True)
    lua.globals().obj = to_lua(lua, obj)
    result = lua.execute(HEALTH.read_text())
    return result["status"], result["message"]


def to_lua(lua: Any, value: Any) -> Any:
    """JSON-shaped Python data as Lua tables (lists 1-indexed), as Argo CD hands it over."""
    if isinstance(value, dict):
        return lua.table_from({key: to_lua(lua, item) for key, item in value.items()})
    if isinstance(value, list):
        return lua.table_from([to_lua(lua, item) for item in value])
    return value


def profile(generation: int, status: dict[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {"metadata": {"name": "s", "generation": generation}, "spec": {}}
    if status is not None:
        body["status"] = status
    return body


def conditions(**by_type: tuple[str, str, str]) -> list[dict[str, str]]:
    return [
        {"type": kind, "status": status, "reason": reason, "message": message}
        for kind, (status, reason, message) in by_type.items()
    ]


READY = conditions(
    ConfigValid=("True", "ConfigAccepted", "valid"),
    Available=("True", "MinimumReplicasAvailable", "ok"),
    Ready=("True", "SchedulerReady", "2/2 replicas ready"),
)


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (profile(1, None), "Progressing"),
        (profile(2, {"observedGeneration": 1, "conditions": READY}), "Progressing"),
        (profile(2, {"observedGeneration": 2, "conditions": READY}), "Healthy"),
        (
            profile(
                1,
                {
                    "observedGeneration": 1,
                    "conditions": conditions(
                        ConfigValid=("True", "ConfigAccepted", "valid"),
                        Ready=("False", "RollingOut", "rolling out: 1/2 updated, 1 ready"),
                    ),
                },
            ),
            "Progressing",
        ),
        (
            profile(
                3,
                {
                    "observedGeneration": 3,
                    "conditions": conditions(
                        ConfigValid=("False", "InvalidSpec", "spec.replicas: bad"),
                        Ready=("False", "InvalidSpec", "spec.replicas: bad"),
                    ),
                },
            ),
            "Degraded",
        ),
        (
            profile(
                1,
                {
                    "observedGeneration": 1,
                    "conditions": conditions(
                        ConfigValid=("False", "SchedulerNameConflict", "already served"),
                    ),
                },
            ),
            "Degraded",
        ),
        (profile(1, {"observedGeneration": 1, "conditions": []}), "Progressing"),
    ],
)
def test_health_follows_generation_and_conditions(obj: dict[str, Any], expected: str) -> None:
    assert health(obj)[0] == expected


def test_the_message_explains_a_refused_configuration() -> None:
    obj = profile(
        1,
        {
            "observedGeneration": 1,
            "conditions": conditions(
                ConfigValid=("False", "InvalidSpec", "spec.profiles[0].plugins: unknown plugin")
            ),
        },
    )
    assert health(obj) == ("Degraded", "spec.profiles[0].plugins: unknown plugin")


def test_the_documented_argocd_cm_snippet_is_the_shipped_check() -> None:
    doc = (REPO / "docs" / "argocd.md").read_text()
    block = re.search(r"SchedulerProfile: \|\n(.*?)```", doc, re.DOTALL)
    assert block is not None
    snippet = "".join(line.removeprefix("    ") for line in block.group(1).splitlines(True))
    assert snippet == HEALTH.read_text()
