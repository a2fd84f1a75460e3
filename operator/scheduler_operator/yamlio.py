"""YAML streams as kubectl prints them: block style, no anchors, keys in the order built."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml


class _PlainDumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_all(documents: Iterable[dict[str, Any]]) -> str:
    return yaml.dump_all(documents, Dumper=_PlainDumper, sort_keys=False, explicit_start=True)
