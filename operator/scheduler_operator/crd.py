"""The CustomResourceDefinition, generated from the pydantic model so there is one source."""

from __future__ import annotations

import copy
from typing import Any, Final

from .api import GROUP, KIND, PLURAL, SHORT_NAME, VERSION
from .model import REFINED_FIELDS, REFINED_MODELS, SchedulerProfileSpec
from .status_model import SchedulerProfileStatus

# Schema keywords a structural OpenAPI v3 schema may keep from pydantic's JSON schema.
_KEPT: Final = frozenset(
    {
        "type",
        "description",
        "enum",
        "format",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "maxProperties",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-validations",
    }
)
# Keywords of a refinement's schema that describe its type, which the runtime's model gives.
_SHAPE: Final = frozenset({"type", "items"})
_ROOT_RULES: Final = [
    {
        # Children carry the name in label values, which are limited to 63 characters.
        "rule": "self.metadata.name.size() <= 63",
        "message": "metadata.name must be at most 63 characters",
    }
]


def ready_column(name: str, field: str, priority: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "type": "string",
        "jsonPath": f'.status.conditions[?(@.type=="Ready")].{field}',
        "priority": priority,
    }


PRINTER_COLUMNS: Final = [
    {"name": "Schedulers", "type": "string", "jsonPath": ".status.schedulerNames"},
    {"name": "Engine", "type": "string", "jsonPath": ".spec.engine"},
    {"name": "Version", "type": "string", "jsonPath": ".status.version"},
    {"name": "Emulated", "type": "string", "jsonPath": ".status.emulatedVersion", "priority": 1},
    {"name": "Ready Replicas", "type": "integer", "jsonPath": ".status.readyReplicas"},
    ready_column("Ready", "status"),
    ready_column("Reason", "reason", priority=1),
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
]


def custom_resource_definition() -> dict[str, Any]:
    spec = structural(refined(SchedulerProfileSpec.model_json_schema(by_alias=True)))
    spec["default"] = {}
    status = structural(SchedulerProfileStatus.model_json_schema(by_alias=True))
    # Conditions are a map keyed by type, as for every metav1.Condition list.
    status["properties"]["conditions"] |= {
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{PLURAL}.{GROUP}",
            # Argo CD applies CRDs before the operator and the operator before any CR.
            "annotations": {"argocd.argoproj.io/sync-wave": "-10"},
        },
        "spec": {
            "group": GROUP,
            "scope": "Cluster",
            "names": {
                "kind": KIND,
                "listKind": f"{KIND}List",
                "plural": PLURAL,
                "singular": KIND.lower(),
                "shortNames": [SHORT_NAME],
                "categories": ["scheduling"],
            },
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": PRINTER_COLUMNS,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "description": "An additional kube-scheduler, run by the operator.",
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": spec,
                                "status": status,
                            },
                            "x-kubernetes-validations": _ROOT_RULES,
                        }
                    },
                }
            ],
        },
    }


def refined(schema: dict[str, Any]) -> dict[str, Any]:
    """The API's bounds, descriptions and rules added to the runtime's models in a schema.

    A refined field loses the runtime's default: unset, it stays unset in the configuration,
    and the engine applies its own default."""
    schema = copy.deepcopy(schema)
    definitions = schema["$defs"]
    for model, extra in REFINED_MODELS.items():
        definitions[model.__name__].update(copy.deepcopy(extra))
    for model, fields in REFINED_FIELDS.items():
        properties = definitions[model.__name__]["properties"]
        for name, adapter in fields.items():
            node = properties[model.model_fields[name].alias or name]
            node.pop("default", None)
            bounds = adapter.json_schema()
            node.update({key: value for key, value in bounds.items() if key not in _SHAPE})
    return schema


def structural(schema: dict[str, Any]) -> dict[str, Any]:
    """pydantic's JSON schema -> a Kubernetes structural schema (refs inlined, no nullables)."""
    definitions = schema.get("$defs", {})

    def convert(node: dict[str, Any]) -> dict[str, Any]:
        if "$ref" in node:
            target = definitions[node["$ref"].rsplit("/", 1)[-1]]
            return convert({**target, **{k: v for k, v in node.items() if k != "$ref"}})
        if "anyOf" in node:
            return convert_union(node)
        converted = {key: value for key, value in node.items() if key in _KEPT}
        if is_scalar_default(node.get("default")):
            converted["default"] = node["default"]
        if "properties" in node:
            converted["properties"] = {
                name: convert(child) for name, child in node["properties"].items()
            }
            if node.get("required"):
                converted["required"] = node["required"]
        extra = node.get("additionalProperties")
        if "patternProperties" in node:
            # Keys with a pattern (label keys, resource names): one value schema for every
            # key; the keys' pattern is a CEL rule of the model's.
            [extra] = node["patternProperties"].values()
        if extra is True:  # a free-form mapping (dict[str, Any]) keeps whatever it is given
            converted["x-kubernetes-preserve-unknown-fields"] = True
        elif isinstance(extra, dict):
            converted["additionalProperties"] = convert(extra)
        if "items" in node:
            converted["items"] = convert(node["items"])
        return converted

    def convert_union(node: dict[str, Any]) -> dict[str, Any]:
        options = [option for option in node["anyOf"] if option.get("type") != "null"]
        rest = {key: value for key, value in node.items() if key != "anyOf"}
        if {option.get("type") for option in options} == {"integer", "string"}:
            # As controller-gen writes a Quantity: the string's pattern beside the union.
            text = next(option for option in options if option.get("type") == "string")
            pattern = {"pattern": text["pattern"]} if "pattern" in text else {}
            return {**convert(rest), **pattern, "x-kubernetes-int-or-string": True}
        if len(options) != 1:
            raise ValueError(f"cannot express union {node['anyOf']} in a structural schema")
        return convert({**options[0], **rest})

    return convert(schema)


def is_scalar_default(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)
