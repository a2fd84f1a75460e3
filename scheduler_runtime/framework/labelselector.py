"""metav1.LabelSelector matching (apimachinery's LabelSelectorAsSelector): matchLabels and
matchExpressions ANDed. A missing selector matches nothing, an empty one everything."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")


class SelectorError(ValueError):
    """A label selector the API server would reject."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        match self.operator:
            case "In":
                return labels.get(self.key) in self.values
            case "NotIn":
                return self.key not in labels or labels[self.key] not in self.values
            case "Exists":
                return self.key in labels
        return self.key not in labels


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A parsed selector; `nothing` selectors (from a missing selector) never match."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @property
    def everything(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(requirement.matches(labels) for requirement in self.requirements)


NOTHING = LabelSelector(nothing=True)
EVERYTHING = LabelSelector()


def _requirement(raw: Mapping[str, Any], where: str) -> Requirement:
    key = raw.get("key") or ""
    operator = raw.get("operator") or ""
    values = frozenset(str(v) for v in raw.get("values") or ())
    if not key:
        raise SelectorError(f"{where}.key: must not be empty")
    if operator not in OPERATORS:
        raise SelectorError(f"{where}.operator: {operator!r} is not a valid selector operator")
    if operator in ("In", "NotIn") and not values:
        raise SelectorError(f"{where}.values: must be non-empty for operator {operator}")
    if operator in ("Exists", "DoesNotExist") and values:
        raise SelectorError(f"{where}.values: must be empty for operator {operator}")
    return Requirement(key, operator, values)


def parse_selector(raw: Mapping[str, Any] | None, where: str = "labelSelector") -> LabelSelector:
    """Parses a metav1.LabelSelector dict; raises SelectorError naming the bad field."""
    if raw is None:
        return NOTHING
    requirements = [
        Requirement(str(key), "In", frozenset({str(value)}))
        for key, value in sorted((raw.get("matchLabels") or {}).items())
    ]
    requirements += [
        _requirement(item, f"{where}.matchExpressions[{index}]")
        for index, item in enumerate(raw.get("matchExpressions") or ())
    ]
    return LabelSelector(tuple(requirements))


def selector_from_labels(labels: Mapping[str, str]) -> LabelSelector:
    """labels.SelectorFromSet: every label must match (an empty set matches everything)."""
    return LabelSelector(
        tuple(Requirement(k, "In", frozenset({v})) for k, v in sorted(labels.items()))
    )
