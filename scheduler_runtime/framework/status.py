"""What a plugin call answers: a Status with upstream's codes, and a batch filter's verdicts
over many nodes at once."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from scheduler_runtime.framework.snapshot import Mask


class Code(IntEnum):
    """Upstream's status codes, same values."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def upstream_name(self) -> str:
        """Upstream's Code.String(): "Success", ..., "UnschedulableAndUnresolvable"."""
        return "".join(part.capitalize() for part in self.name.split("_"))


@dataclass(frozen=True, slots=True)
class Status:
    """The outcome of running a plugin; reasons are what users read in events.

    An error is kept without its traceback: its frames (and every caller's, through f_back)
    would hold the very Status that holds it, a cycle only a full collection frees, which the
    live runtime runs rarely (HeapKeeper). Log a bug with its stack before it becomes a Status."""

    code: Code = Code.SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""
    error: BaseException | None = None

    def __post_init__(self) -> None:
        if self.error is not None:
            self.error.__traceback__ = None

    @classmethod
    def unschedulable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE, reasons, plugin)

    @classmethod
    def unresolvable(cls, *reasons: str, plugin: str = "") -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, reasons, plugin)

    @classmethod
    def as_error(cls, error: BaseException, plugin: str = "") -> Status:
        return cls(Code.ERROR, (str(error),), plugin, error)

    @property
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    @property
    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending."""
        return self.code in (
            Code.UNSCHEDULABLE,
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            Code.PENDING,
        )

    def message(self) -> str:
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        return Status(self.code, self.reasons, plugin, self.error)


SUCCESS = Status()
SKIP = Status(Code.SKIP)


@dataclass(slots=True)
class NodeVerdicts:
    """A batch filter's outcome over candidate slots; masks are aligned with those slots.

    `reasons` pairs each failure reason with the nodes it applies to (a node may have several,
    in the order listed); `unresolvable` marks rejections preemption cannot fix.
    """

    rejected: Mask
    unresolvable: Mask
    reasons: list[tuple[str, Mask]]

    @classmethod
    def passing(cls, count: int) -> NodeVerdicts:
        none = np.zeros(count, dtype=np.bool_)
        return cls(rejected=none, unresolvable=none, reasons=[])

    @classmethod
    def rejecting(cls, mask: Mask, reason: str, *, unresolvable: bool) -> NodeVerdicts:
        return cls(
            rejected=mask,
            unresolvable=mask if unresolvable else np.zeros(len(mask), dtype=np.bool_),
            reasons=[(reason, mask)],
        )
