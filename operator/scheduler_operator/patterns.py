"""The string formats the API shares with Kubernetes (names, label values, durations,
quantities), as patterns and as the annotated types the spec's fields use."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, JsonValue

# Pod.spec.schedulerName and Lease names are DNS-1123 subdomains; namespaces are DNS-1123 labels.
DNS_SUBDOMAIN = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
DURATION = r"^([0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h))+$"
# Label keys and resource names are qualified names (an optional DNS-subdomain prefix and "/");
# label values are at most 63 characters of the same alphabet.
QUALIFIED_NAME = (
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$"
)
LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$"
# Feature gates are Go identifiers (AllAlpha, DRAAdminAccess, ...).
FEATURE_GATE = r"^[A-Za-z][A-Za-z0-9]*$"
# A Kubernetes minor as a platform engineer writes it: 1.36 or v1.36 (the patch follows from it).
KUBERNETES_MINOR = r"^v?[0-9]+[.][0-9]+$"
QUANTITY = (
    r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)"
    r"(([KMGTPE]i)|[numkMGTPE]|[eE][+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+))?$"
)

SchedulerName = Annotated[str, Field(pattern=DNS_SUBDOMAIN, min_length=1, max_length=253)]
QualifiedName = Annotated[str, Field(pattern=QUALIFIED_NAME, min_length=1, max_length=316)]
LabelValue = Annotated[str, Field(pattern=LABEL_VALUE, max_length=63)]
Quantity = Annotated[
    int | Annotated[str, Field(pattern=QUANTITY, max_length=64)],
    Field(description="A resource quantity such as 100m or 128Mi."),
]


def keys_match(pattern: str, what: str) -> dict[str, JsonValue]:
    """A CEL rule for a map's keys (a structural schema cannot constrain them otherwise)."""
    rule = f"self.all(k, k.size() <= 316 && k.matches({pattern!r}))"
    return {"x-kubernetes-validations": [{"rule": rule, "message": f"keys must be {what}"}]}
