"""Which Kubernetes release each scheduler runs and emulates: the API server's minor (read once
at start-up), or the minor its SchedulerProfile pins (spec.kubernetesVersion), never newer
than the API server (the version skew policy).

The minors and their releases are those of the runtime's generated feature gate tables (one
per minor, each read from one release: v1.36.3); the KubeScheduler engine runs kube-scheduler's
image of that release. Pure: the API server's version is given."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final

from scheduler_runtime.config.features import BUILT_AS, NEWEST, OLDEST, RELEASE, VERSIONS
from scheduler_runtime.config.versions import VersionError, choose_emulation

from . import version
from .errors import SpecError
from .patterns import KUBERNETES_MINOR

FIELD: Final = "spec.kubernetesVersion"
_MINOR: Final = re.compile(KUBERNETES_MINOR)
# kube-scheduler's image of each minor the operator knows, oldest first.
KUBE_SCHEDULER_IMAGES: Final[Mapping[str, str]] = {
    minor: f"{version.KUBE_SCHEDULER_REPOSITORY}:{RELEASE[minor]}" for minor in VERSIONS
}
# The API server assumed where there is none to ask (the render command): the pinned release,
# whose kube-scheduler the runtime's plugins were built to match.
OFFLINE_APISERVER: Final = RELEASE[BUILT_AS]
KNOWN: Final = ", ".join(VERSIONS)


class UnsupportedVersionError(SpecError):
    """An API server the operator runs no scheduler for (older than every minor it knows, or
    a version it cannot read): the cluster, not the spec, is what does not fit."""

    status_reason: ClassVar[str] = "UnsupportedKubernetesVersion"


@dataclass(frozen=True)
class Release:
    """What one scheduler runs: the kube-scheduler release it is, or behaves as (v1.36.3), the
    minor whose gates and default plugins it follows (1.36), whether the spec pinned it, the
    API server's gitVersion, and a warning when the choice deserves one."""

    version: str
    emulated: str
    pinned: bool
    apiserver: str
    warning: str = ""

    @property
    def image(self) -> str:
        """kube-scheduler's image of this release."""
        return KUBE_SCHEDULER_IMAGES[self.emulated]


def pinned_minor(text: str) -> str:
    """spec.kubernetesVersion as a minor the operator knows ("v1.36" -> "1.36"); SpecError
    naming the field otherwise."""
    if not _MINOR.fullmatch(text):
        raise SpecError(FIELD, f"{text!r} is not a Kubernetes minor such as {BUILT_AS}")
    minor = text.removeprefix("v")
    if minor not in VERSIONS:
        raise SpecError(
            FIELD, f"Kubernetes {minor} is not one this operator runs schedulers of ({KNOWN})"
        )
    return minor


def choose(pinned: str | None, apiserver: str) -> Release:
    """The release a scheduler runs, given spec.kubernetesVersion (None: unset) and the API
    server's gitVersion (v1.36.3, v1.36.3+k3s1, v1.36.3-eks-abc)."""
    minor = pinned_minor(pinned) if pinned is not None else None
    try:
        emulation = choose_emulation(apiserver, minor)
    except VersionError as error:
        raise UnsupportedVersionError(FIELD, _unsupported(apiserver, str(error))) from None
    if minor is not None and emulation.warning:
        raise SpecError(
            FIELD,
            f"Kubernetes {minor} is newer than the API server ({apiserver}): a scheduler must "
            "not be newer than kube-apiserver (the version skew policy)",
        )
    warning = ""
    if emulation.warning:  # an API server newer than every minor known
        warning = (
            f"the API server is {apiserver}, newer than Kubernetes {NEWEST}, the newest minor "
            f"this operator knows: the scheduler runs as kube-scheduler {RELEASE[NEWEST]}"
        )
    return Release(emulation.release, emulation.version, minor is not None, apiserver, warning)


def _unsupported(apiserver: str, why: str) -> str:
    """Why no scheduler can run on this API server, in the operator's words."""
    if not apiserver:
        return "the API server's version is unknown"
    if why.startswith("the API server's version"):
        return why
    return (
        f"unset, so the API server's minor is used, but the API server is {apiserver}, older "
        f"than Kubernetes {OLDEST}, the oldest minor this operator runs schedulers of ({KNOWN})"
    )


def offline(pinned: str | None) -> Release:
    """The release a scheduler runs on a cluster of the pinned release (OFFLINE_APISERVER):
    where there is no API server to ask."""
    return choose(pinned, OFFLINE_APISERVER)
