"""Where kopf keeps what it must remember of each SchedulerProfile, sized so that no spec can
break it.

kopf tells a change from a status update by comparing the object's essence (its spec, labels
and annotations) with the essence it last handled, which it keeps in an annotation by default.
Annotations hold 256 KiB in all: a larger spec made that write fail, and the handler retry
forever without ever reporting a status. Here the annotation holds a digest of the essence
instead: 64 characters, whatever the spec. The handlers read the object itself, never the
previous essence, so a digest is all the comparison needs."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any, Final, cast

import kopf

from .api import GROUP

DIGEST_KEY: Final = "last-handled-digest"
# Where kopf's own storage kept the whole essence, cleared when the digest is written.
FORMER_KEY: Final = "last-handled-configuration"


def digest(essence: Any) -> str:
    """sha256 of the essence's canonical JSON."""
    text = json.dumps(essence, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class DigestDiffBaseStorage(kopf.AnnotationsDiffBaseStorage):
    """kopf's annotation storage of the last handled essence, keeping only its digest."""

    def __init__(self, *, prefix: str = GROUP, key: str = DIGEST_KEY) -> None:
        super().__init__(prefix=prefix, key=key)
        self.former = kopf.AnnotationsDiffBaseStorage(prefix=prefix, key=FORMER_KEY)

    def build(
        self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None
    ) -> kopf.BodyEssence:
        essence = super().build(body=body, extra_fields=extra_fields)
        self.remove_annotations(essence, set(self.former.make_keys(FORMER_KEY, body=body)))
        self.remove_empty_stanzas(essence)
        return essence

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        """The essence last handled: the object's own when the digest matches it; otherwise
        (changed, or handled by an operator that kept the whole essence) one that differs
        from any the object can have, so kopf sees a change."""
        stored = next(
            (
                found
                for key in self.make_keys(self.key, body=body)
                if (found := body.metadata.annotations.get(key)) is not None
            ),
            None,
        )
        if stored is None:
            former = [
                body.metadata.annotations.get(k)
                for k in self.former.make_keys(FORMER_KEY, body=body)
            ]
            if not any(former):
                return None  # never handled: kopf treats it as created (or resumed)
            return cast(kopf.BodyEssence, {"status": {"handled": "by an earlier version"}})
        current = self.build(body=body)
        if stored.strip() == digest(current):
            return current
        # An essence never has a status (build drops it): this one differs from every essence.
        return cast(kopf.BodyEssence, {"status": {"digest": stored.strip()}})

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        for key in self.make_keys(self.key, body=body):
            patch.metadata.annotations[key] = digest(essence)
        for key in self.former.make_keys(FORMER_KEY, body=body):
            if key in body.metadata.annotations:
                patch.metadata.annotations[key] = None  # the whole essence, no longer kept
        self._store_marker(prefix=self.prefix, patch=patch, body=body)
