"""What a SchedulerProfile asks for: its spec parsed, judged by its engine and rendered, once
per generation.

Judging builds every plugin of the configuration and rendering fills every template, so the
verdict is remembered per (uid, generation): the events of the children (a Deployment's
status during a rollout, say) reuse it, and only a new generation is judged again. Besides the
operator's own code, installed plugins and the API server's version (read at start-up), fixed
while it runs, a verdict depends only on the spec, name and uid, and only a new generation
changes the spec."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from . import engines
from .errors import SpecError
from .model import SchedulerProfile
from .parsing import parse
from .releases import OFFLINE_APISERVER, Release, choose
from .render import Rendered, render
from .render.config import scheduler_configuration


@dataclass(frozen=True)
class Desired:
    """A valid SchedulerProfile and the objects it asks for. Shared by every event of its
    generation: read it, never change it."""

    profile: SchedulerProfile
    rendered: Rendered
    release: Release  # what the scheduler runs and emulates
    warnings: tuple[str, ...] = ()  # what the engine takes but the author should know


def judge(body: Mapping[str, Any], apiserver: str = OFFLINE_APISERVER) -> Desired:
    """Parses, chooses the release the scheduler runs on an API server of that gitVersion,
    validates for the engine and renders; raises SpecError naming the bad field."""
    profile = parse(body)
    release = choose(profile.spec.kubernetes_version, apiserver)
    config = scheduler_configuration(profile)
    warnings = engines.validate(profile, config, release)
    return Desired(profile, render(profile, config, release), release, warnings)


Verdict = Desired | SpecError


class DesiredCache:
    """The verdict on the latest generation of each SchedulerProfile, by uid, on an API server
    of that gitVersion."""

    def __init__(self, apiserver: str = OFFLINE_APISERVER) -> None:
        self.apiserver = apiserver
        self._latest: dict[str, tuple[int, Verdict]] = {}
        # Handlers run in threads; two of them judging one generation at once is harmless.
        self._lock = threading.Lock()

    def of(self, body: Mapping[str, Any]) -> Verdict:
        """What the SchedulerProfile asks for, or why it cannot have it."""
        metadata = body.get("metadata") or {}
        uid, generation = metadata.get("uid"), metadata.get("generation")
        if not uid or not isinstance(generation, int):
            return self._verdict(body)  # not a stored object: nothing to key it by
        with self._lock:
            remembered = self._latest.get(uid)
        if remembered is not None and remembered[0] == generation:
            return remembered[1]
        verdict = self._verdict(body)
        with self._lock:
            newest = self._latest.get(uid)
            if newest is None or newest[0] <= generation:  # a late, older event keeps the newer
                self._latest[uid] = (generation, verdict)
        return verdict

    def forget(self, uid: str) -> None:
        """Drops a deleted SchedulerProfile's verdict."""
        with self._lock:
            self._latest.pop(uid, None)

    def _verdict(self, body: Mapping[str, Any]) -> Verdict:
        try:
            return judge(body, self.apiserver)
        except SpecError as error:
            return error
