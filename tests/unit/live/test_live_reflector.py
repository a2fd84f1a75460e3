"""The reflector's protocol against a scripted API: list then watch from the list's
resourceVersion, list again on 410 Gone (as an ERROR event or as the answer to the watch
request), resume from the last resourceVersion after a broken connection."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from scheduler_runtime.live.kube import ApiError
from scheduler_runtime.live.reflector import Reflector
from scheduler_runtime.live.transport import TransportError


def item(name: str, version: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "resourceVersion": version}}


class ScriptedApi:
    """Answers list and watch requests from a script; records what was asked."""

    def __init__(self, lists: list[dict[str, Any]], watches: list[Any]) -> None:
        self.lists = lists
        self.watches = watches
        self.watched_from: list[str] = []
        self.reflector: Reflector | None = None

    def request(self, method: str, path: str, query: Mapping[str, Any]) -> dict[str, Any]:
        assert (method, query["limit"]) == ("GET", 500)
        return self.lists.pop(0)

    def watch(
        self, path: str, query: Mapping[str, Any], open_responses: list[Any]
    ) -> Iterator[dict[str, Any]]:
        self.watched_from.append(query["resourceVersion"])
        if not self.watches:
            assert self.reflector is not None
            self.reflector.stop()
            return
        step = self.watches.pop(0)
        if isinstance(step, Exception):
            raise step
        yield from step


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None:
        self.calls.append(("replace", [i["metadata"]["name"] for i in items]))

    def upsert(self, kind: str, item: dict[str, Any]) -> None:
        self.calls.append(("upsert", item["metadata"]["name"]))

    def delete(self, kind: str, item: dict[str, Any]) -> None:
        self.calls.append(("delete", item["metadata"]["name"]))


def run(api: ScriptedApi) -> Recorder:
    store = Recorder()
    reflector = Reflector(api, "pods", "/api/v1/pods", store)  # type: ignore[arg-type]
    reflector._backoff.initial = reflector._backoff.current = 0.001
    api.reflector = reflector
    reflector.run()
    assert reflector.synced.is_set()
    return store


def listing(version: str, *names: str) -> dict[str, Any]:
    return {"metadata": {"resourceVersion": version}, "items": [item(n, version) for n in names]}


def test_gone_event_relists_and_broken_connection_resumes() -> None:
    api = ScriptedApi(
        lists=[listing("10", "a"), listing("20", "a", "b")],
        watches=[
            [
                {"type": "ADDED", "object": item("b", "11")},
                {"type": "ERROR", "object": {"code": 410}},
            ],
            [{"type": "BOOKMARK", "object": item("", "25")}],
            TransportError("connection reset"),
            [{"type": "DELETED", "object": item("a", "26")}],
        ],
    )
    store = run(api)
    assert store.calls == [
        ("replace", ["a"]),
        ("upsert", "b"),
        ("replace", ["a", "b"]),
        ("delete", "a"),
    ]
    # After the relist: from 20; after the bookmark: from 25, again after the reset; then 26.
    assert api.watched_from == ["10", "20", "25", "25", "26"]


def test_gone_answer_to_the_watch_request_relists() -> None:
    api = ScriptedApi(
        lists=[listing("5"), listing("9", "x")],
        watches=[ApiError(410, "Expired", "too old resource version: 5 (9)")],
    )
    store = run(api)
    assert store.calls == [("replace", []), ("replace", ["x"])]
    assert api.watched_from == ["5", "9"]


def test_other_errors_back_off_and_watch_again_without_relisting() -> None:
    api = ScriptedApi(
        lists=[listing("3")],
        watches=[ApiError(500, "InternalError", "etcd unavailable"), []],
    )
    store = run(api)
    assert store.calls == [("replace", [])]
    assert api.watched_from == ["3", "3", "3"]
