"""Feature gates as kube-scheduler takes them: its `--feature-gates` flag (component-base's
featuregate and the component registry around it), the same gates with the same defaults,
stages and locks, and the same refusals worded the same way.

kube-scheduler knows every gate of Kubernetes (kube_feature_gates/, written from its own
registry, one table per Kubernetes minor the runtime emulates: each gate's default, stage and
lock at that minor, as `--emulated-version` makes kube-scheduler hold them). Only some of them
matter to scheduling (`SCHEDULING`: those pkg/scheduler reads); the rest are accepted, as
kube-scheduler accepts them, and change nothing. On top of kube-scheduler's own refusals, the
runtime refuses a scheduling gate set away from its default where it does not implement that
setting (`RUNTIME_FOLLOWS`), rather than ignore it.

The gates are part of the configuration (`SchedulerConfiguration.feature_gates`), never
process-global; plugins see them as `framework.features.Features` on their handle.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from scheduler_runtime.config.errors import ConfigError
from scheduler_runtime.config.kube_feature_gates import RELEASES
from scheduler_runtime.framework.features import Features

FLAG = "--feature-gates"
FIELD = "featureGates"
KUBE_COMPONENT = "kube"  # the only component kube-scheduler registers
ALL_ALPHA, ALL_BETA = "AllAlpha", "AllBeta"


@dataclass(frozen=True, slots=True)
class FeatureSpec:
    """A gate at one minor: stage is ALPHA, BETA, GA, DEPRECATED or PRE-ALPHA."""

    name: str
    default: bool
    stage: str
    locked: bool
    dependencies: tuple[str, ...] = ()


# The minors the runtime emulates, oldest first ("1.35", "1.36", "1.37"), and the release
# (newest patch) each table was read from.
VERSIONS: Final = tuple(RELEASES)
OLDEST: Final = VERSIONS[0]
NEWEST: Final = VERSIONS[-1]
RELEASE: Final[Mapping[str, str]] = {minor: release for minor, (release, _) in RELEASES.items()}

TABLES: Final[Mapping[str, Mapping[str, FeatureSpec]]] = {
    minor: {gate[0]: FeatureSpec(*gate) for gate in gates} for minor, (_, gates) in RELEASES.items()
}


def version_key(version: str) -> tuple[int, int]:
    """ "1.36" -> (1, 36), for ordering minors."""
    major, _, minor = version.partition(".")
    return int(major), int(minor)


def known(version: str = NEWEST) -> Mapping[str, FeatureSpec]:
    """Every gate kube-scheduler of that minor knows, by name (KeyError: a minor the runtime
    does not emulate)."""
    return TABLES[version]


# The newest minor's gates.
KNOWN: Final = known()

# A gate a later release removed while the scheduler kept its behaviour under another gate:
# 1.37 appends GangScheduling, and gangs are scheduled, whenever GenericWorkload is on.
FOLLOWS_WHEN_REMOVED: Final[Mapping[str, str]] = {"GangScheduling": "GenericWorkload"}

# The gates kube-scheduler's scheduling code reads (pkg/scheduler, plugins/feature).
SCHEDULING: Final = frozenset(Features.gate_names())

# Scheduling gates that change when the scheduler makes its API calls or how it batches its
# work, not where pods go nor what they are told: the runtime takes either setting.
TIMING_ONLY: Final = frozenset(
    {
        "OpportunisticBatching",
        "SchedulerAsyncAPICalls",
        "SchedulerAsyncPreemption",
        "SchedulerPopFromBackoffQ",
    }
)

# Scheduling gates the runtime follows either way. A scheduling gate that is not here and not
# locked runs with its default only: setting it otherwise is refused, naming the gate.
RUNTIME_FOLLOWS: Final = TIMING_ONLY | {
    "NodeDeclaredFeatures",
    # Dynamic Resource Allocation's GA and beta gates (the DynamicResources plugin and its
    # allocator follow each; the alpha ones stay off).
    "DRAConsumableCapacity",
    "DRADeviceBindingConditions",
    "DRADeviceTaints",
    "DRADeviceTaintRules",
    "DRAExtendedResource",
    "DRAPartitionableDevices",
    "DRAPrioritizedList",
    "DRAResourceClaimDeviceStatus",
    "DRASchedulerFilterTimeout",
    # Pod groups (backend/schedule_one_podgroup.py): the group cycle, GangScheduling, the
    # placement plugins, and the nominated node of a pod waiting at Permit.
    "GenericWorkload",
    "GangScheduling",
    "TopologyAwareWorkloadScheduling",
    "NominatedNodeNameForExpectation",
    # 1.36's pod group preemption (plugins/defaultpreemption/podgroup.py).
    "WorkloadAwarePreemption",
    # The runtime counts pod-level requests from the spec, as upstream does with this gate off
    # (turning NodeDeclaredFeatures off needs it off too); the settings differ only for a pod
    # whose pod-level resources are being resized in place.
    "InPlacePodLevelResourcesVerticalScaling",
    # VolumeBinding's score by storage utilization (and its args' default shape), and
    # NodeVolumeLimits' check that an opted-in CSI driver is installed on the node.
    "StorageCapacityScoring",
    "VolumeLimitScaling",
}


def _bool_text(value: bool) -> str:
    return "true" if value else "false"


@dataclass(frozen=True)
class FeatureGates:
    """The gates as set (`explicit`), resolved over the defaults; `source` is where they were
    set (the flag, or a configuration's field), for errors."""

    explicit: Mapping[str, bool] = field(default_factory=dict)
    source: str = field(default=FIELD, compare=False)
    version: str = NEWEST  # the Kubernetes minor whose gates these are

    @property
    def known(self) -> Mapping[str, FeatureSpec]:
        """Every gate of this minor."""
        return TABLES[self.version]

    @property
    def release(self) -> str:
        """The release whose table this minor's is (v1.36.3)."""
        return RELEASE[self.version]

    def enabled(self, name: str) -> bool:
        """Whether a gate is on (KeyError for a gate kube-scheduler of this minor does not
        know)."""
        spec = self.known[name]
        if name in self.explicit:
            return self.explicit[name]
        special = ALL_ALPHA if spec.stage == "ALPHA" else ALL_BETA if spec.stage == "BETA" else ""
        if special in self.explicit:  # AllAlpha / AllBeta set the gates of their stage left unset
            return self.explicit[special]
        return spec.default

    def scheduling(self, name: str) -> bool:
        """A gate the scheduler reads, at this minor even when the minor has no such gate: one
        not yet added is off; one removed keeps its last setting (GA gates are removed locked
        on), or follows the gate that took its place."""
        if name in self.known:
            return self.enabled(name)
        earlier = VERSIONS[: VERSIONS.index(self.version)]
        older = [TABLES[version][name] for version in earlier if name in TABLES[version]]
        if not older:
            return False
        if name in FOLLOWS_WHEN_REMOVED:
            return self.enabled(FOLLOWS_WHEN_REMOVED[name])
        return older[-1].default

    @property
    def features(self) -> Features:
        """The scheduling gates, as plugins read them."""
        return Features(
            **{
                attribute: self.scheduling(gate)
                for gate, attribute in Features.gate_names().items()
            },
            release=version_key(self.version),
        )

    def as_flag(self) -> str:
        """The gates as set, as kube-scheduler's flag takes them (`A=true,B=false`)."""
        return ",".join(
            f"{name}={_bool_text(value)}" for name, value in sorted(self.explicit.items())
        )

    def changed(self) -> dict[str, bool]:
        """Every gate whose resolved value differs from its default."""
        return {
            name: value
            for name, spec in self.known.items()
            if (value := self.enabled(name)) != spec.default
        }


DEFAULTS: Final = FeatureGates()


def _go_quote(text: str) -> str:
    """Go's strconv.Quote, for the values an error message repeats."""
    escapes = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t"}
    escapes |= {"\v": r"\v", "\\": "\\\\", '"': '\\"'}
    out = []
    for char in text:
        if char in escapes:
            out.append(escapes[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}" if ord(char) < 0x10000 else f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'


_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _parse_bool(name: str, text: str) -> bool:
    """strconv.ParseBool, with featuregate's error when it fails."""
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ConfigError(
        FLAG,
        f"invalid value of {name}={text}, err: strconv.ParseBool: parsing {_go_quote(text)}: "
        "invalid syntax",
    )


def _by_component(values: Iterable[str]) -> list[str]:
    """The `[component:]key=value` pairs of every use of the flag, for the kube component
    (ColonSeparatedMultimapStringString, then the component registry's checks)."""
    by_component: dict[str, list[str]] = {}
    for value in values:
        for pair in value.split(","):
            if not pair:
                continue
            component, colon, setting = pair.partition(":")
            key, rest = (component.strip(), setting.strip()) if colon else ("", pair.strip())
            by_component.setdefault(key, []).append(rest)
    if "" in by_component and KUBE_COMPONENT in by_component:
        raise ConfigError(
            FLAG,
            "set kube feature gates with default empty prefix or kube: prefix consistently, "
            "do not mix use",
        )
    for component in sorted(by_component):
        if component not in ("", KUBE_COMPONENT):
            raise ConfigError(FLAG, f"component not registered: {component}")
    return [*by_component.get("", ()), *by_component.get(KUBE_COMPONENT, ())]


def _settings(pairs: Iterable[str]) -> dict[str, bool]:
    """featureGate.Set: `key=value` pairs, the last of a key winning."""
    settings: dict[str, bool] = {}
    for pair in ",".join(pairs).split(","):
        if not pair:
            continue
        key, equals, value = pair.partition("=")
        key = key.strip()
        if not equals:
            raise ConfigError(FLAG, f"missing bool value for {key}")
        settings[key] = _parse_bool(key, value.strip())
    return settings


def parse_feature_gates(values: str | Iterable[str], version: str = NEWEST) -> FeatureGates:
    """kube-scheduler's `--feature-gates` (each use of the flag one string; `kube:` prefixes
    allowed) at a Kubernetes minor, refused as kube-scheduler of that minor refuses it:
    ConfigError naming the flag, with kube-scheduler's words."""
    pairs = _by_component([values] if isinstance(values, str) else values)
    return feature_gates(_settings(pairs), path=FLAG, version=version)


def feature_gates(
    settings: Mapping[str, bool], *, path: str = FIELD, version: str = NEWEST
) -> FeatureGates:
    """Gates from a map (a configuration's `featureGates`) at a Kubernetes minor, checked as
    featuregate's SetFromMap checks them: unknown gates, locked gates, pre-alpha gates,
    dependencies."""
    table = known(version)
    errors: list[str] = []
    for name, value in settings.items():
        spec = table.get(name)
        if spec is None:
            # featuregate stops at the first unknown gate, with the errors found before it.
            raise ConfigError(path, _aggregate([*errors, f"unrecognized feature gate: {name}"]))
        if spec.locked and spec.default != value:
            errors.append(
                f"cannot set feature gate {name} to {_bool_text(value)}, feature is locked to "
                f"{_bool_text(spec.default)}"
            )
        elif spec.stage == "PRE-ALPHA":
            minor = int(version.split(".")[1])
            errors.append(
                f"cannot set feature gate {name} to {_bool_text(value)}, feature is PreAlpha at "
                f"emulated version 1.{minor}, min compatibility version 1.{minor - 1}"
            )
    if errors:
        raise ConfigError(path, _aggregate(errors))
    gates = FeatureGates(dict(settings), source=path, version=version)
    _check_dependencies(gates, path)
    return gates


def _check_dependencies(gates: FeatureGates, path: str) -> None:
    errors = []
    for name, spec in sorted(gates.known.items()):
        if not spec.dependencies or not gates.enabled(name):
            continue
        disabled = [dep for dep in spec.dependencies if not gates.enabled(dep)]
        if disabled:
            errors.append(
                f"{name} is enabled, but depends on features that are disabled: "
                f"[{' '.join(disabled)}]"
            )
    if errors:
        raise ConfigError(path, _aggregate(errors))


def _aggregate(errors: list[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one error as itself, several in brackets."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


# The minor the runtime's plugins were built as: a scheduling gate it does not follow runs as
# this minor's default.
BUILT_AS: Final = "1.37"


def unfollowed_defaults(gates: FeatureGates) -> list[str]:
    """The scheduling gates on or off at the emulated minor where the runtime, not following
    them, schedules as BUILT_AS does: one line each, for the log (none at 1.35-1.37)."""
    built = FeatureGates(version=BUILT_AS)
    return [
        f"feature gate {name} is {_bool_text(value)} in kube-scheduler {gates.release}; the "
        f"scheduler runtime schedules as with {name}={_bool_text(not value)}, not emulated yet"
        for name in sorted(SCHEDULING - RUNTIME_FOLLOWS)
        if (value := gates.scheduling(name)) != built.scheduling(name)
    ]


def check_runtime_gates(gates: FeatureGates) -> None:
    """The runtime's own limit: a scheduling gate it does not follow runs with its default, or
    as the runtime was built (BUILT_AS's default) where the emulated minor's default differs."""
    built = FeatureGates(version=BUILT_AS)
    for name, value in sorted(gates.changed().items()):
        if name in SCHEDULING and name not in RUNTIME_FOLLOWS and value != built.scheduling(name):
            raise ConfigError(
                gates.source,
                f"{name}={_bool_text(value)} is not supported by the scheduler runtime: it "
                f"schedules as kube-scheduler {gates.release} does with {name}="
                f"{_bool_text(gates.known[name].default)}, the default",
            )


__all__ = [
    "DEFAULTS",
    "FLAG",
    "KNOWN",
    "NEWEST",
    "OLDEST",
    "RELEASE",
    "RUNTIME_FOLLOWS",
    "SCHEDULING",
    "VERSIONS",
    "FeatureGates",
    "FeatureSpec",
    "check_runtime_gates",
    "feature_gates",
    "known",
    "parse_feature_gates",
    "unfollowed_defaults",
    "version_key",
]
