"""core/v1 NodeSelector matching (component-helpers' nodeaffinity), both over all nodes of
the snapshot at once (boolean masks) and for one node. A term that does not parse never
matches, as upstream ignores it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler_runtime.framework.snapshot import Mask, Snapshot

NAME_FIELD = "metadata.name"
SET_OPERATORS = ("In", "NotIn")
EXISTENCE_OPERATORS = ("Exists", "DoesNotExist")
NUMERIC_OPERATORS = ("Gt", "Lt")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Term:
    """ANDed label and field requirements; `valid` is False when the term did not parse."""

    labels: tuple[Requirement, ...]
    fields: tuple[Requirement, ...]
    valid: bool

    @property
    def empty(self) -> bool:
        return not self.labels and not self.fields


def _values_fit_operator(operator: str, values: tuple[str, ...]) -> bool:
    if operator in SET_OPERATORS:
        return bool(values)
    if operator in EXISTENCE_OPERATORS:
        return not values
    if operator in NUMERIC_OPERATORS:
        return len(values) == 1 and _is_int(values[0])
    return False


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def _label_requirement(raw: Mapping[str, Any]) -> Requirement | None:
    values = tuple(str(v) for v in raw.get("values") or ())
    requirement = Requirement(raw.get("key", ""), raw.get("operator", ""), values)
    if requirement.key and _values_fit_operator(requirement.operator, values):
        return requirement
    return None


def _field_requirement(raw: Mapping[str, Any]) -> Requirement | None:
    values = tuple(str(v) for v in raw.get("values") or ())
    requirement = Requirement(raw.get("key", ""), raw.get("operator", ""), values)
    if requirement.key != NAME_FIELD or requirement.operator not in SET_OPERATORS:
        return None
    return requirement if len(values) == 1 else None


def parse_term(raw: Mapping[str, Any]) -> Term:
    labels = [_label_requirement(r) for r in raw.get("matchExpressions") or ()]
    fields = [_field_requirement(r) for r in raw.get("matchFields") or ()]
    valid = all(r is not None for r in (*labels, *fields))
    return Term(
        labels=tuple(r for r in labels if r is not None),
        fields=tuple(r for r in fields if r is not None),
        valid=valid,
    )


def parse_terms(raw: Sequence[Mapping[str, Any]] | None) -> tuple[Term, ...]:
    return tuple(parse_term(term) for term in raw or ())


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    weight: int
    term: Term


def parse_preferred(raw: Sequence[Mapping[str, Any]] | None) -> tuple[WeightedTerm, ...]:
    """Preferred terms with a non-zero weight (weight 0 terms are dropped, as upstream)."""
    return tuple(
        WeightedTerm(int(item.get("weight") or 0), parse_term(item.get("preference") or {}))
        for item in raw or ()
        if item.get("weight")
    )


# ----- one node


def _label_matches(requirement: Requirement, labels: Mapping[str, str]) -> bool:
    present = requirement.key in labels
    value = labels.get(requirement.key, "")
    match requirement.operator:
        case "In":
            return present and value in requirement.values
        case "NotIn":
            return not present or value not in requirement.values
        case "Exists" | "DoesNotExist":
            return present == (requirement.operator == "Exists")
    if not present or not _is_int(value):
        return False
    bound = int(requirement.values[0])
    return int(value) > bound if requirement.operator == "Gt" else int(value) < bound


def _field_matches(requirement: Requirement, node_name: str) -> bool:
    inside = node_name in requirement.values
    return inside if requirement.operator == "In" else not inside


def term_matches(term: Term, labels: Mapping[str, str], node_name: str) -> bool:
    if not term.valid or term.empty:
        return False
    return all(_label_matches(r, labels) for r in term.labels) and all(
        _field_matches(r, node_name) for r in term.fields
    )


def terms_match(terms: tuple[Term, ...], labels: Mapping[str, str], node_name: str) -> bool:
    """NodeSelector.Match: the terms are ORed."""
    return any(term_matches(term, labels, node_name) for term in terms)


# ----- all nodes at once


def _label_mask(requirement: Requirement, snapshot: Snapshot) -> Mask:
    match requirement.operator:
        case "In":
            return snapshot.label_in(requirement.key, requirement.values)
        case "NotIn":
            return ~snapshot.label_in(requirement.key, requirement.values)
        case "Exists":
            return snapshot.label_exists(requirement.key)
        case "DoesNotExist":
            return ~snapshot.label_exists(requirement.key)
    column = snapshot.label(requirement.key)
    if column is None:
        return np.zeros(snapshot.capacity, dtype=np.bool_)
    numbers = column.numbers()
    bound = int(requirement.values[0])
    with np.errstate(invalid="ignore"):
        result: Mask = numbers > bound if requirement.operator == "Gt" else numbers < bound
    return result


def _field_mask(requirement: Requirement, snapshot: Snapshot) -> Mask:
    mask = np.zeros(snapshot.capacity, dtype=np.bool_)
    slot = snapshot.slot(requirement.values[0])
    if slot is not None:
        mask[slot] = True
    return mask if requirement.operator == "In" else ~mask


def term_mask(term: Term, snapshot: Snapshot) -> Mask:
    mask = np.full(snapshot.capacity, term.valid and not term.empty, dtype=np.bool_)
    if not mask.any():
        return mask
    for requirement in term.labels:
        mask &= _label_mask(requirement, snapshot)
    for requirement in term.fields:
        mask &= _field_mask(requirement, snapshot)
    return mask


def terms_mask(terms: tuple[Term, ...], snapshot: Snapshot) -> Mask:
    mask = np.zeros(snapshot.capacity, dtype=np.bool_)
    for term in terms:
        mask |= term_mask(term, snapshot)
    return mask


def selector_mask(selector: Mapping[str, str], snapshot: Snapshot) -> Mask:
    """A pod's nodeSelector: every label must be present with that value."""
    mask = np.ones(snapshot.capacity, dtype=np.bool_)
    for key, value in selector.items():
        mask &= snapshot.label_equals(key, value)
    return mask


def selector_matches(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return all(key in labels and labels[key] == value for key, value in selector.items())
