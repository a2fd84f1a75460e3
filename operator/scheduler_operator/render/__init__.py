"""Pure rendering: a SchedulerProfile in, the objects the operator applies out. No API calls."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final

import jinja2
import yaml

from scheduler_runtime.config.features import FLAG, FeatureGates
from scheduler_runtime.config.versions import FLAG as EMULATED_VERSION

from .. import version
from ..api import API_VERSION, GROUP, KIND
from ..model import Engine, SchedulerProfile
from ..releases import Release, offline
from .config import scheduler_configuration
from .yamlsafe import require_json, to_json

MANAGER: Final = "scheduler-operator"
MANAGED_BY: Final = {"app.kubernetes.io/managed-by": MANAGER}
INSTANCE_LABEL: Final = "app.kubernetes.io/instance"
HASH_ANNOTATION: Final = f"{GROUP}/config-hash"
CONFIG_DIR: Final = "/etc/kubernetes/scheduler"
CONFIG_FILE: Final = "config.yaml"


@dataclass(frozen=True)
class Endpoint:
    """Where an engine serves its probes and /metrics: both engines on the secure port, with
    the probes' paths open (kube-scheduler's always-allowed paths) and the rest authorized."""

    port: int
    scheme: str
    liveness: str
    readiness: str


ENDPOINTS: Final = {
    Engine.PYTHON_RUNTIME: Endpoint(10259, "HTTPS", "/healthz", "/readyz"),
    Engine.KUBE_SCHEDULER: Endpoint(10259, "HTTPS", "/livez", "/readyz"),
}
# Where a scheduler reaches the API server: a NetworkPolicy sees the server's own address and
# port (after the `kubernetes` Service's translation), 443 on most managed clusters, 6443 where
# kubeadm set it up.
API_SERVER_PORTS: Final = (443, 6443)


# A scheduler's pods when the profile names no resources: upstream's request for kube-scheduler
# (100m CPU), memory for a cache of a few thousand nodes and pods, and a limit on memory only
# (a CPU limit would throttle scheduling bursts).
DEFAULT_RESOURCES: Final = {
    "requests": {"cpu": "100m", "memory": "256Mi"},
    "limits": {"memory": "1Gi"},
}
# The only writable path of the scheduler's read-only root filesystem, bounded.
TMP_SIZE_LIMIT: Final = "64Mi"


@dataclass(frozen=True)
class Rendered:
    objects: list[dict[str, Any]]
    config: dict[str, Any]
    config_hash: str


TEMPLATES: Final = jinja2.Environment(
    loader=jinja2.PackageLoader("scheduler_operator.render", "templates"),
    undefined=jinja2.StrictUndefined,
    finalize=require_json,
    autoescape=False,  # noqa: S701 - renders YAML, and every value is JSON-encoded by `json`
    keep_trailing_newline=True,
)
TEMPLATES.filters["json"] = to_json


def render(
    profile: SchedulerProfile,
    config: dict[str, Any] | None = None,
    release: Release | None = None,
) -> Rendered:
    """Every child object of a SchedulerProfile, in the order they are applied; `config` is
    the profile's scheduler configuration, when the caller has it already; `release` what the
    scheduler runs (releases.choose; by default as on a cluster of the pinned release)."""
    if config is None:
        config = scheduler_configuration(profile)
    release = release or offline(profile.spec.kubernetes_version)
    config_text = yaml.safe_dump(config, sort_keys=False)
    config_hash = hashlib.sha256(config_text.encode()).hexdigest()[:16]
    return Rendered(children(profile, config_text, config_hash, release), config, config_hash)


def labels(profile: SchedulerProfile) -> dict[str, str]:
    """The standard labels; never the SchedulerProfile's own labels."""
    return {
        "app.kubernetes.io/name": "scheduler",
        INSTANCE_LABEL: profile.name,
        "app.kubernetes.io/component": "scheduler",
        "app.kubernetes.io/part-of": "scheduler-operator",
        **MANAGED_BY,
    }


def owner_reference(profile: SchedulerProfile) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "name": profile.name,
        "uid": profile.uid,
        "controller": True,
        "blockOwnerDeletion": True,
    }


def children(
    profile: SchedulerProfile, config_text: str, config_hash: str, release: Release
) -> list[dict[str, Any]]:
    spec = profile.spec
    name, namespace = profile.name, spec.namespace
    common = {"labels": labels(profile), "ownerReferences": [owner_reference(profile)]}

    def metadata(object_name: str, object_namespace: str | None = namespace) -> dict[str, Any]:
        placed = {"namespace": object_namespace} if object_namespace else {}
        return {"name": object_name, **placed, **common}

    subject = {"kind": "ServiceAccount", "name": name, "namespace": namespace}
    leader_role = f"{name}-leader-election"
    objects: list[tuple[str, dict[str, Any]]] = [
        ("serviceaccount", {"metadata": metadata(name)}),
        (
            "role",
            {"metadata": metadata(leader_role), "lease_name": profile.lease_name},
        ),
        (
            "rolebinding",
            {"metadata": metadata(leader_role), "role": leader_role, "subject": subject},
        ),
        *(
            (
                "clusterrolebinding",
                {
                    "metadata": metadata(f"schedulerprofile:{name}:{role}", None),
                    "cluster_role": cluster_role,
                    "subject": subject,
                },
            )
            for role, cluster_role in SCHEDULER_ROLES.items()
        ),
        (
            "rolebinding",
            {
                # Lets the scheduler read the client-CA for delegated authentication.
                "metadata": metadata(
                    f"schedulerprofile:{name}:authentication-reader", "kube-system"
                ),
                "role": "extension-apiserver-authentication-reader",
                "subject": subject,
            },
        ),
        (
            "configmap",
            {
                "metadata": metadata(config_map_name(profile)),
                "config_file": CONFIG_FILE,
                "config_text": config_text,
            },
        ),
        (
            "networkpolicy",
            {
                "metadata": metadata(name),
                "selector": selector(profile),
                "port": ENDPOINTS[spec.engine].port,
                "api_server_ports": API_SERVER_PORTS,
            },
        ),
        ("deployment", deployment_context(profile, metadata(name), config_hash, release)),
    ]
    return [render_template(template, context) for template, context in objects]


# The ClusterRoles each scheduler is bound to, by the suffix of its binding's name (which
# operator-guard.yaml holds the operator to).
SCHEDULER_ROLES: Final = {
    "kube-scheduler": "system:kube-scheduler",
    "volume-scheduler": "system:volume-scheduler",
    "pod-group-scheduler": "scheduler-operator:pod-group-scheduler",
}


def config_map_name(profile: SchedulerProfile) -> str:
    return f"{profile.name}-config"


def deployment_context(
    profile: SchedulerProfile, metadata: dict[str, Any], config_hash: str, release: Release
) -> dict[str, Any]:
    spec = profile.spec
    resources = (
        spec.resources.model_dump(mode="json", exclude_defaults=True)
        if spec.resources
        else DEFAULT_RESOURCES
    )
    tolerations = [
        t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in spec.tolerations
    ]
    return {
        "metadata": metadata,
        "spec": spec,
        "tolerations": tolerations,
        "strategy": strategy(profile),
        "selector": selector(profile),
        "pod_labels": labels(profile),
        "hash_annotation": HASH_ANNOTATION,
        "config_hash": config_hash,
        "service_account": profile.name,
        "image": image(profile, release),
        "command": command(profile, release),
        "endpoint": ENDPOINTS[spec.engine],
        "resources": resources,
        "config_dir": CONFIG_DIR,
        "config_map": config_map_name(profile),
        "tmp_size_limit": TMP_SIZE_LIMIT,
    }


def selector(profile: SchedulerProfile) -> dict[str, str]:
    """The labels that pick a SchedulerProfile's scheduler pods."""
    return {key: labels(profile)[key] for key in ("app.kubernetes.io/name", INSTANCE_LABEL)}


def strategy(profile: SchedulerProfile) -> dict[str, Any]:
    """Without leader election two schedulers must never overlap, so the old pod goes first."""
    if not profile.spec.leader_elect():
        return {"type": "Recreate"}
    # Given in full: a later switch to Recreate must drop fields this manager owns.
    return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}


def image(profile: SchedulerProfile, release: Release) -> str:
    """spec.image, else kube-scheduler's image of the release run, or the project's own."""
    if profile.spec.image:
        return profile.spec.image
    if profile.spec.engine is Engine.KUBE_SCHEDULER:
        return release.image
    return version.IMAGE


def command(profile: SchedulerProfile, release: Release) -> list[str]:
    """The engine's program and flags. A pinned minor reaches the runtime as upstream's
    --emulated-version; unpinned, it reads the API server's minor itself, as the operator
    did. kube-scheduler is of the minor it runs, so it takes no such flag."""
    config = f"{CONFIG_DIR}/{CONFIG_FILE}"
    options = [f"--v={profile.spec.log_verbosity}"]
    if profile.spec.feature_gates:  # as kube-scheduler's flag takes them, for either engine
        options.append(f"{FLAG}={FeatureGates(profile.spec.feature_gates).as_flag()}")
    if profile.spec.engine is Engine.KUBE_SCHEDULER:
        return ["kube-scheduler", f"--config={config}", *options]
    if release.pinned:
        options.append(f"{EMULATED_VERSION}={release.emulated}")
    return ["scheduler-runtime", "run", "--config", config, *options]


def render_template(template: str, context: dict[str, Any]) -> dict[str, Any]:
    text = TEMPLATES.get_template(f"{template}.yaml.j2").render(context)
    documents = list(yaml.safe_load_all(text))
    if len(documents) != 1 or not isinstance(documents[0], dict):
        raise ValueError(f"template {template} rendered {len(documents)} documents, expected one")
    rendered: dict[str, Any] = documents[0]
    return rendered
