"""The explanations of the last pods the scheduler tried, served on /explain/<ns>/<pod>, and
the compact annotation it can write on each pod."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from scheduler_runtime.framework.explain import Explanation

DEFAULT_KEPT = 1000
ANNOTATION = "scheduling.schedops.io/explanation"
ANNOTATION_LIMIT = 1024  # a compact line, not the whole explanation


class ExplanationStore:
    """The last `capacity` explanations, one per pod (its latest attempt), thread-safe:
    the scheduling loop writes, the HTTP server reads."""

    def __init__(self, capacity: int = DEFAULT_KEPT) -> None:
        self.capacity = capacity
        self._items: OrderedDict[str, Explanation] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, explanation: Explanation) -> None:
        if self.capacity <= 0:
            return
        with self._lock:
            self._items.pop(explanation.key, None)
            self._items[explanation.key] = explanation
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)

    def lookup(self, key: str) -> dict[str, Any] | None:
        """The explanation of pod `namespace/name` as JSON, None when not kept."""
        with self._lock:
            found = self._items.get(key)
        return found.as_json() if found is not None else None


def annotation_patch(text: str) -> dict[str, Any]:
    if len(text) > ANNOTATION_LIMIT:
        text = text[: ANNOTATION_LIMIT - 3] + "..."
    return {"metadata": {"annotations": {ANNOTATION: text}}}
