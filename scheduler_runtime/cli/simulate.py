"""`scheduler-runtime simulate`: place the pending pods of a state file without a cluster."""

from __future__ import annotations

import argparse
import gc
import sys

import orjson

from scheduler_runtime.cli.command import (
    Command,
    ExitCode,
    add_emulated_version_argument,
    add_feature_gates_argument,
)
from scheduler_runtime.config import ConfigError, DocumentError, load_configuration_file
from scheduler_runtime.config.features import (
    FLAG,
    NEWEST,
    parse_feature_gates,
    unfollowed_defaults,
)
from scheduler_runtime.config.versions import FLAG as VERSION_FLAG
from scheduler_runtime.config.versions import parse_emulated_version
from scheduler_runtime.dra.validation import InvalidObjectError
from scheduler_runtime.framework.admission import RefusedObjectError
from scheduler_runtime.framework.registry import PluginLoadError
from scheduler_runtime.framework.runtime import FrameworkError
from scheduler_runtime.simulate import (
    StateError,
    format_groups,
    format_table,
    read_state,
    simulate_with_groups,
)


def simulate_command(args: argparse.Namespace) -> int:
    try:
        version = parse_emulated_version(args.emulated_version) or NEWEST
        gates = parse_feature_gates(args.feature_gates, version)
        config = load_configuration_file(args.config, scheduler_profile=True, feature_gates=gates)
    except DocumentError as error:
        print(f"error: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    except ConfigError as error:
        where = "" if error.path in (FLAG, VERSION_FLAG) else f"{args.config}: "
        print(f"error: {where}{error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    for warning in config.warnings:
        print(f"warning: {args.config}: {warning}", file=sys.stderr)
    try:
        objects = read_state(args.state)
        # What was read lives as long as the command: the collector need not look at it again.
        gc.freeze()
        # Only the JSON output holds explanations; the table needs none.
        placements, groups = simulate_with_groups(
            config, objects, seed=args.seed, explaining=args.output == "json"
        )
    except (
        StateError,
        RefusedObjectError,
        InvalidObjectError,
        FrameworkError,
        PluginLoadError,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    except Exception as error:  # a state the parsers did not foresee: still one line
        print(
            f"error: {args.state}: cannot simulate: {type(error).__name__}: {error}",
            file=sys.stderr,
        )
        return ExitCode.USAGE_ERROR
    for warning in unfollowed_defaults(config.feature_gates):  # what the placements are not
        print(f"warning: {warning}", file=sys.stderr)
    if args.output == "json":
        document: dict[str, object] = {"placements": [p.as_json() for p in placements]}
        if groups:
            document["podGroups"] = [g.as_json() for g in groups]
        sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(format_table(placements))
        if groups:
            print(f"\n{format_groups(groups)}")
    return ExitCode.OK


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        required=True,
        help="KubeSchedulerConfiguration file, or a SchedulerProfile (its profiles, as the "
        "operator configures them)",
    )
    parser.add_argument(
        "--state",
        required=True,
        help="Nodes, Pods, PodGroups (scheduling.k8s.io/v1beta1 or v1alpha2, or "
        "scheduling.x-k8s.io/v1alpha1) and the objects plugins read: a YAML stream or a JSON "
        "file, as `kubectl get -o yaml` or `-o json` prints them; - for standard input",
    )
    add_feature_gates_argument(parser)
    add_emulated_version_argument(parser, default=f"{NEWEST}, the newest known")
    parser.add_argument("--seed", type=int, default=None, help="seed for tie-breaking")
    parser.add_argument("-o", "--output", choices=("json", "table"), default="table")


COMMAND = Command(
    name="simulate",
    help="place the pending pods of a state file without a cluster",
    description="Schedule the pending pods of --state (a YAML stream or v1 List of Nodes "
    "and Pods, as `kubectl get nodes,pods -A -o yaml` prints) with --config, as the live "
    "scheduler would, and print where each pod goes.",
    arguments=arguments,
    run=simulate_command,
)
