"""DefaultBinder: binds through the `pods/binding` subresource (the binder the scheduler
hands to the framework does the API call)."""

from __future__ import annotations

from typing import ClassVar

from scheduler_runtime.framework.interface import CycleState, PluginBase
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Status


class DefaultBinder(PluginBase[None]):
    name: ClassVar[str] = "DefaultBinder"

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        binder = self.handle.binder
        if binder is None:
            return Status.as_error(RuntimeError("no binder is configured"), self.name)
        try:
            binder(pod, node_name)
        except Exception as error:  # the API's refusal becomes the cycle's error status
            return Status.as_error(error, self.name)
        return SUCCESS


__all__ = ["DefaultBinder"]
