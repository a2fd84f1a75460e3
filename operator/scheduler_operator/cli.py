"""The `scheduler-operator` command: run the operator, render a SchedulerProfile, print the CRD."""

from __future__ import annotations

import argparse
import socket
import sys
from collections.abc import Sequence
from typing import Any, Final

from scheduler_runtime.config import DocumentError, read_document

from . import metrics
from .api import API_VERSION, DEFAULT_NAMESPACE, KIND
from .apply import ClusterUnreachableError, connect
from .crd import custom_resource_definition
from .desired import judge
from .errors import SpecError
from .releases import OFFLINE_APISERVER
from .yamlio import dump_all

# The exit codes of every command of the project: 2 for what the command was given (usage,
# input files), 1 for what went wrong while it ran (a cluster it cannot reach).
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    command: int = args.command(args)
    return command


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="scheduler-operator", description=__doc__)
    commands = root.add_subparsers(required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run the operator against the current cluster")
    scope = run.add_mutually_exclusive_group()
    scope.add_argument(
        "-n",
        "--namespace",
        action="append",
        dest="namespaces",
        help=f"a namespace schedulers may run in (repeatable; globs allowed; default: "
        f"{DEFAULT_NAMESPACE}); the operator needs write access there",
    )
    scope.add_argument(
        "-A",
        "--all-namespaces",
        action="store_true",
        help="schedulers may run in any namespace (needs write access in every namespace)",
    )
    run.add_argument(
        "--liveness", default="http://0.0.0.0:8080/healthz", help="liveness endpoint URL"
    )
    run.add_argument(
        "--metrics-bind-address",
        default="0",
        type=metrics_address,
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (':8081': every "
        "interface); 0, the default, serves none",
    )
    run.set_defaults(command=run_operator)

    show = commands.add_parser("render", help="print the objects applied for a SchedulerProfile")
    show.add_argument(
        "-f", "--filename", required=True, help="SchedulerProfile YAML, or - for stdin"
    )
    show.add_argument(
        "--apiserver-version",
        default=OFFLINE_APISERVER,
        metavar="VERSION",
        help="the API server's version to render for, which chooses the Kubernetes release "
        f"each scheduler runs (default: {OFFLINE_APISERVER})",
    )
    show.set_defaults(command=render_file)

    crd = commands.add_parser("crd", help="print the SchedulerProfile CustomResourceDefinition")
    crd.set_defaults(command=print_crd)
    return root


def run_operator(args: argparse.Namespace) -> int:
    """Runs the operator until stopped; a cluster it cannot reach at start is one line and
    exit code 1, not retries every minute."""
    try:
        connect()
    except ClusterUnreachableError as error:
        print(f"scheduler-operator run: {error}", file=sys.stderr)
        return EXIT_FAILURE

    import kopf  # noqa: PLC0415 - only `run` needs the operator framework

    from . import handlers  # noqa: PLC0415 - registers the handlers

    namespaces = ["*"] if args.all_namespaces else args.namespaces or [DEFAULT_NAMESPACE]
    if args.metrics_bind_address is not None:
        metrics.serve(args.metrics_bind_address)
    kopf.configure(verbose=False)
    kopf.run(
        # Named explicitly: kopf would otherwise ask the password database for the user, and a
        # container's arbitrary non-root UID need not be in it. (kopf does not export the
        # NewType it declares for this str.)
        identity=socket.gethostname(),  # type: ignore[arg-type]
        standalone=True,
        clusterwide=args.all_namespaces,
        namespaces=() if args.all_namespaces else namespaces,
        memo=handlers.memo(namespaces),
        liveness_endpoint=args.liveness,
    )
    return 0


def metrics_address(value: str) -> tuple[str, int] | None:
    try:
        return metrics.bind_address(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def render_file(args: argparse.Namespace) -> int:
    """The children of one SchedulerProfile; bad input is one line and exit code 2."""
    try:
        body = read_document(args.filename)
        check_kind(body)
        desired = judge(body, args.apiserver_version)
    except DocumentError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except SpecError as error:
        print(f"error: {error}".splitlines()[0], file=sys.stderr)
        return EXIT_USAGE
    sys.stdout.write(dump_all(desired.rendered.objects))
    return 0


def check_kind(body: Any) -> None:
    """Refuses anything but a SchedulerProfile of this API version (a ConfigMap, say)."""
    if not isinstance(body, dict):
        raise SpecError("<root>", "expected one SchedulerProfile object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if kind != KIND:
        raise SpecError("kind", f"{kind!r} is not a {KIND}; expected kind: {KIND}")
    if api_version != API_VERSION:
        raise SpecError("apiVersion", f"{api_version!r}; expected apiVersion: {API_VERSION}")


def print_crd(_: argparse.Namespace) -> int:
    sys.stdout.write(dump_all([custom_resource_definition()]))
    return 0
