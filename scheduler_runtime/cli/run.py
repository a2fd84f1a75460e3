"""`scheduler-runtime run`: schedule the pods that name one of the configuration's profiles."""

from __future__ import annotations

import argparse
import logging
import sys

from kubernetes.config import ConfigException

from scheduler_runtime.cli.command import Command, ExitCode
from scheduler_runtime.config import ConfigError, check_profiles, load_configuration_file
from scheduler_runtime.framework.interface import DEFAULT_PLUGIN_TIME_BUDGET
from scheduler_runtime.framework.registry import PluginLoadError
from scheduler_runtime.framework.runtime import FrameworkError
from scheduler_runtime.live.explanations import ANNOTATION, DEFAULT_KEPT
from scheduler_runtime.live.run import RunOptions, Runtime
from scheduler_runtime.live.server import parse_listen

DEFAULT_LISTEN = "0.0.0.0:10251"


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="KubeSchedulerConfiguration file")
    parser.add_argument(
        "--kubeconfig", help="kubeconfig file (default: the pod's in-cluster configuration)"
    )
    parser.add_argument(
        "--listen",
        default=DEFAULT_LISTEN,
        help=f"HOST:PORT for /healthz, /readyz and /metrics (default {DEFAULT_LISTEN})",
    )
    parser.add_argument(
        "-v", "--v", dest="verbosity", type=int, default=2, help="log verbosity, as klog's -v"
    )
    parser.add_argument(
        "--explanations",
        type=int,
        default=DEFAULT_KEPT,
        metavar="N",
        help=f"keep why the last N pods went where they went, for /explain (default "
        f"{DEFAULT_KEPT}; 0 keeps none)",
    )
    parser.add_argument(
        "--plugin-time-budget",
        type=_seconds,
        default=DEFAULT_PLUGIN_TIME_BUDGET,
        metavar="SECONDS",
        help="how long a call of an out-of-tree plugin may take before it counts as that "
        f"plugin's error for the pod (default {DEFAULT_PLUGIN_TIME_BUDGET:g}; a plugin's own "
        "time_budget wins)",
    )
    parser.add_argument(
        "--explain-annotation",
        action="store_true",
        help=f"write a one-line explanation on each pod ({ANNOTATION}); needs patch on pods",
    )


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"{text!r}: expected seconds, more than 0, up to 3600")
    return value


def configure_logging(verbosity: int) -> None:
    """klog's levels, roughly: 0-1 warnings, 2-3 one line per pod, 4 and up debug."""
    level = logging.WARNING if verbosity < 2 else logging.INFO if verbosity < 4 else logging.DEBUG
    logging.basicConfig(
        level=level,
        stream=sys.stderr,
        format="%(asctime)s %(levelname).1s %(name)s] %(message)s",
    )


def run_command(args: argparse.Namespace) -> int:
    """Validates everything before touching the cluster; one clear line on bad input."""
    try:
        listen = parse_listen(args.listen)
        config = load_configuration_file(args.config)
    except (ConfigError, ValueError) as error:
        print(f"scheduler-runtime run: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        check_profiles(config)
    except (FrameworkError, PluginLoadError) as error:
        print(f"scheduler-runtime run: {args.config}: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    configure_logging(args.verbosity)
    try:
        options = RunOptions(
            kubeconfig=args.kubeconfig,
            listen=listen,
            explanations=args.explanations,
            explain_annotation=args.explain_annotation,
            plugin_time_budget=args.plugin_time_budget,
        )
        runtime = Runtime(config, options)
    except (ConfigException, OSError, ValueError) as error:
        print(
            f"scheduler-runtime run: cannot load the cluster configuration: {error}",
            file=sys.stderr,
        )
        return ExitCode.FAILURE
    runtime.run()
    return ExitCode.FAILURE if runtime.lost_lease else ExitCode.OK


COMMAND = Command(
    name="run",
    help="schedule pods in a cluster",
    description="Schedule the pods that name one of the configuration's profiles.",
    arguments=arguments,
    run=run_command,
)
