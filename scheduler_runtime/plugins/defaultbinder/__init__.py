"""DefaultBinder: binds through the `pods/binding` subresource (the binder the scheduler
hands to the framework sends the API call). It can bind without waiting for the answer
(`bind_async`), so a pod with nothing else to wait for needs no thread of its own."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import ClassVar

from scheduler_runtime.framework.interface import CycleState, PluginBase
from scheduler_runtime.framework.podinfo import PodInfo
from scheduler_runtime.framework.status import SUCCESS, Status


class DefaultBinder(PluginBase[None]):
    name: ClassVar[str] = "DefaultBinder"

    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        """Sends the binding and waits for the API's answer."""
        try:
            sent = self._send(pod, node_name)
        except Exception as error:  # the API's refusal becomes the cycle's error status
            return Status.as_error(error, self.name)
        return self._answered(sent)

    def bind_async(
        self, state: CycleState, pod: PodInfo, node_name: str, done: Callable[[Status], None]
    ) -> None:
        """Sends the binding; `done` is told the status once the API answers, on the thread
        that received the answer (this one, when the call ended at once)."""
        try:
            sent = self._send(pod, node_name)
        except Exception as error:
            done(Status.as_error(error, self.name))
            return
        sent.add_done_callback(lambda answered: done(self._answered(answered)))

    def _send(self, pod: PodInfo, node_name: str) -> Future[None]:
        binder = self.handle.binder
        if binder is None:
            raise RuntimeError("no binder is configured")
        return binder(pod, node_name)

    def _answered(self, sent: Future[None]) -> Status:
        error = sent.exception()  # waits for the answer
        return SUCCESS if error is None else Status.as_error(error, self.name)


__all__ = ["DefaultBinder"]
