"""The API server's bounds on what a SchedulerProfile's free-form values hold, as a
ValidatingAdmissionPolicy shipped with the operator (manifests/limits.yaml).

A structural schema cannot bound them: plugin args and the pods' affinity keep whatever they
are given, and CEL in a CRD sees nothing of what the schema does not declare. A policy's CEL
sees the whole object, so it refuses what `parsing.parse` would refuse anyway, at `kubectl apply`
time and for every client: args and affinity nested deeper than MAX_DEPTH allows from the spec,
larger than MAX_VALUE_BYTES, or a spec larger than MAX_SPEC_BYTES (sizes as CEL writes the
values out, a little more than their compact JSON, so what passes here passes the operator).

`python -m scheduler_operator.limits > manifests/limits.yaml` writes the manifest; a unit test
keeps it equal to what this module renders."""

from __future__ import annotations

import sys
from typing import Any, Final

import yaml

from .api import GROUP, PLURAL
from .guards import MAX_DEPTH, MAX_SPEC_BYTES, MAX_VALUE_BYTES

NAME: Final = "schedulerprofile-limits"
# How many levels each free-form value may use: the spec is level 1, so the args (at
# spec.profiles[].pluginConfig[].args) are level 6 and the affinity level 2.
ARGS_LEVELS: Final = MAX_DEPTH - 5
AFFINITY_LEVELS: Final = MAX_DEPTH - 1
HEADER: Final = """\
# Bounds on what a SchedulerProfile may hold, enforced by the API server for every client (the
# operator refuses the same, for objects stored before this policy): plugin args and affinity
# nested too deep or too large, a spec too large. Updates that leave the spec as it was are
# not judged again, so an object stored earlier can still be labelled, annotated or deleted.
# Generated: python -m scheduler_operator.limits > manifests/limits.yaml
"""


def within_depth(value: str, levels: int) -> str:
    """CEL: true when `value` (itself the first level) holds no array or object deeper than
    `levels`. CEL cannot recurse, so each level is spelled out."""

    def level(var: str, n: int) -> str:
        container = f"(type({var}) == map || type({var}) == list)"
        if n > levels:
            return f"!{container}"
        return f"!{container} || {var}.all(k{n}, v{n}, {level(f'v{n}', n + 1)})"

    return level(value, 1)


def written_size(value: str) -> str:
    """CEL: how many characters `value` takes written out (CEL's own text form)."""
    return f"'%s'.format([{value}]).size()"


def each_args(rule: str) -> str:
    """CEL: `rule` holds for every pluginConfig's args (`c.args`)."""
    return (
        "object.spec.?profiles.orValue([]).all(p, p.?pluginConfig.orValue([])"
        f".all(c, !has(c.args) || {rule}))"
    )


def validations() -> list[dict[str, str]]:
    args = "spec.profiles[].pluginConfig[].args"
    return [
        {
            "expression": f"{written_size('object.spec')} <= {MAX_SPEC_BYTES}",
            "message": f"spec: at most {MAX_SPEC_BYTES} characters",
        },
        {
            "expression": each_args(f"{written_size('c.args')} <= {MAX_VALUE_BYTES}"),
            "message": f"{args}: at most {MAX_VALUE_BYTES} characters each",
        },
        {
            "expression": each_args(within_depth("c.args", ARGS_LEVELS)),
            "message": (
                f"{args}: nested at most {ARGS_LEVELS} levels deep ({MAX_DEPTH} from the spec)"
            ),
        },
        {
            "expression": (
                "!has(object.spec.affinity) || "
                f"{written_size('object.spec.affinity')} <= {MAX_VALUE_BYTES}"
            ),
            "message": f"spec.affinity: at most {MAX_VALUE_BYTES} characters",
        },
        {
            "expression": (
                "!has(object.spec.affinity) || "
                f"{within_depth('object.spec.affinity', AFFINITY_LEVELS)}"
            ),
            "message": (
                f"spec.affinity: nested at most {AFFINITY_LEVELS} levels deep "
                f"({MAX_DEPTH} from the spec)"
            ),
        },
    ]


def admission_policy() -> list[dict[str, Any]]:
    """The policy and its binding."""
    metadata = {
        "name": NAME,
        "labels": {"app.kubernetes.io/name": "scheduler-operator"},
        # With the operator, after the CRD.
        "annotations": {"argocd.argoproj.io/sync-wave": "-5"},
    }
    policy = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": metadata,
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [GROUP],
                        "apiVersions": ["*"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": [PLURAL],
                    }
                ]
            },
            "matchConditions": [
                {
                    "name": "spec-written",
                    "expression": (
                        "request.operation == 'CREATE' || object.spec != oldObject.spec"
                    ),
                }
            ],
            "validations": [{**v, "reason": "Invalid"} for v in validations()],
        },
    }
    binding = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": metadata,
        "spec": {"policyName": NAME, "validationActions": ["Deny"]},
    }
    return [policy, binding]


def manifest() -> str:
    return HEADER + yaml.safe_dump_all(admission_policy(), sort_keys=False, width=100)


if __name__ == "__main__":
    sys.stdout.write(manifest())
