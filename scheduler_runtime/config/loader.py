"""Loading a KubeSchedulerConfiguration: parse, default, validate, resolve profiles."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from scheduler_runtime.config.convert import removed_version_hint
from scheduler_runtime.config.defaults import inert_plugins
from scheduler_runtime.config.documents import read_document
from scheduler_runtime.config.errors import ConfigError, from_validation_error
from scheduler_runtime.config.features import DEFAULTS, FeatureGates, check_runtime_gates
from scheduler_runtime.config.resolve import (
    check_common_queue_sort,
    resolve_profile,
    scheduler_names,
)
from scheduler_runtime.config.schedulerprofile import (
    configuration_of,
    in_scheduler_profile,
    is_scheduler_profile,
)
from scheduler_runtime.config.types import (
    ClientConnectionConfiguration,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
)
from scheduler_runtime.framework.features import Features
from scheduler_runtime.framework.interface import Handle
from scheduler_runtime.framework.profile import ResolvedProfile
from scheduler_runtime.framework.registry import PluginEntry, PluginLoadError
from scheduler_runtime.framework.runtime import Framework
from scheduler_runtime.framework.snapshot import Snapshot


@dataclass(frozen=True)
class SchedulerConfiguration:
    """A validated configuration with upstream defaults applied and profiles resolved, and
    the feature gates it was resolved with."""

    document: KubeSchedulerConfiguration
    profiles: tuple[ResolvedProfile, ...]
    feature_gates: FeatureGates = field(default=DEFAULTS)
    # What kube-scheduler accepts but is likely a mistake: plugins named while their gate is off.
    warnings: tuple[str, ...] = ()

    @cached_property
    def features(self) -> Features:
        """The scheduling gates, as the frameworks hand them to plugins."""
        return self.feature_gates.features

    @property
    def parallelism(self) -> int:
        return self.document.parallelism

    @property
    def percentage_of_nodes_to_score(self) -> int:
        return self.document.percentage_of_nodes_to_score

    @property
    def pod_initial_backoff_seconds(self) -> int:
        return self.document.pod_initial_backoff_seconds

    @property
    def pod_max_backoff_seconds(self) -> int:
        return self.document.pod_max_backoff_seconds

    @property
    def leader_election(self) -> LeaderElectionConfiguration:
        return self.document.leader_election

    @property
    def client_connection(self) -> ClientConnectionConfiguration:
        return self.document.client_connection

    @property
    def scheduler_names(self) -> tuple[str, ...]:
        return tuple(profile.scheduler_name for profile in self.profiles)

    def profile(self, scheduler_name: str) -> ResolvedProfile | None:
        """The profile that schedules pods naming `scheduler_name`, if any."""
        return next((p for p in self.profiles if p.scheduler_name == scheduler_name), None)


def _check_document(document: KubeSchedulerConfiguration) -> None:
    if document.pod_max_backoff_seconds < document.pod_initial_backoff_seconds:
        raise ConfigError(
            "podMaxBackoffSeconds", "must be greater than or equal to podInitialBackoffSeconds"
        )
    if document.extenders:
        raise ConfigError("extenders", "scheduler extenders are not supported")
    election = document.leader_election
    if election.leader_elect:
        for name, seconds in (
            ("leaseDuration", election.lease_duration),
            ("renewDeadline", election.renew_deadline),
            ("retryPeriod", election.retry_period),
        ):
            if seconds <= 0:
                raise ConfigError(f"leaderElection.{name}", "must be greater than zero")
        if election.lease_duration <= election.renew_deadline:
            raise ConfigError("leaderElection.leaseDuration", "must be greater than renewDeadline")
        if election.renew_deadline <= election.retry_period:
            raise ConfigError("leaderElection.renewDeadline", "must be greater than retryPeriod")
        if not election.resource_name:
            raise ConfigError("leaderElection.resourceName", "required field is missing")
        if not election.resource_namespace:
            raise ConfigError("leaderElection.resourceNamespace", "required field is missing")


def load_configuration(
    doc: Mapping[str, Any],
    *,
    strict: bool = True,
    known: Mapping[str, PluginEntry] | None = None,
    feature_gates: FeatureGates = DEFAULTS,
) -> SchedulerConfiguration:
    """Validates a decoded KubeSchedulerConfiguration; raises ConfigError naming the field.
    `strict=False` keeps a profile that would fail every pod as kube-scheduler keeps it
    (for comparing the two), where the scheduler itself refuses it. `known` judges the
    plugins by another scheduler's registry (the operator checks kube-scheduler's this way;
    the runtime's own limits on feature gates then do not apply). `feature_gates` (parsed
    by `config.features`) choose the default plugins as they do kube-scheduler's."""
    if not isinstance(doc, Mapping):
        raise ConfigError("<root>", "must be a KubeSchedulerConfiguration mapping")
    hint = removed_version_hint(doc.get("apiVersion"))
    if hint is not None:
        raise ConfigError("apiVersion", hint)
    try:
        document = KubeSchedulerConfiguration.model_validate(dict(doc))
    except ValidationError as error:
        raise from_validation_error(error) from None
    _check_document(document)
    if known is None:
        check_runtime_gates(feature_gates)
    names = scheduler_names(document)
    profiles = document.profiles or (KubeSchedulerProfile(),)
    features = feature_gates.features
    try:
        resolved = tuple(
            resolve_profile(
                profile,
                index,
                name,
                strict=strict,
                known=known,
                features=features,
                version=feature_gates.version,
            )
            for index, (profile, name) in enumerate(zip(profiles, names, strict=True))
        )
    except PluginLoadError as error:
        raise ConfigError("profiles", str(error)) from None
    check_common_queue_sort(resolved)
    defaulted = document.model_copy(
        update={
            "profiles": tuple(
                profile.model_copy(update={"scheduler_name": name})
                for profile, name in zip(profiles, names, strict=True)
            )
        }
    )
    return SchedulerConfiguration(
        document=defaulted,
        profiles=resolved,
        feature_gates=feature_gates,
        warnings=tuple(inert_plugins(document.profiles, feature_gates)),
    )


def load_configuration_file(
    path: str | Path, *, scheduler_profile: bool = False, feature_gates: FeatureGates = DEFAULTS
) -> SchedulerConfiguration:
    """Reads and validates a configuration file (YAML or JSON): a DocumentError when the
    file cannot be read, a ConfigError naming the field when its content is wrong. With
    `scheduler_profile`, a SchedulerProfile is read as the configuration it asks for (its
    errors name the SchedulerProfile's fields)."""
    doc = read_document(path)
    if scheduler_profile and is_scheduler_profile(doc):
        try:
            return load_configuration(configuration_of(doc), feature_gates=feature_gates)
        except ConfigError as error:
            raise in_scheduler_profile(error) from None
    if not isinstance(doc, Mapping):
        raise ConfigError(str(path), "must hold one KubeSchedulerConfiguration mapping")
    return load_configuration(doc, feature_gates=feature_gates)


def check_profiles(config: SchedulerConfiguration) -> None:
    """Builds every profile's plugins once, so a plugin that cannot start is reported before
    the scheduler touches the cluster (raises FrameworkError or PluginLoadError)."""
    for profile in config.profiles:
        Framework(profile, Handle(snapshot=Snapshot(), features=config.features))
