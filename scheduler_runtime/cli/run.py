"""`scheduler-runtime run`: schedule the pods that name one of the configuration's profiles."""

from __future__ import annotations

import argparse
import logging
import re
import sys

from scheduler_runtime.cli.command import (
    Command,
    ExitCode,
    add_emulated_version_argument,
    add_feature_gates_argument,
)
from scheduler_runtime.config import (
    ConfigError,
    SchedulerConfiguration,
    check_profiles,
    load_configuration_file,
)
from scheduler_runtime.config.features import VERSIONS, parse_feature_gates, unfollowed_defaults
from scheduler_runtime.config.versions import (
    Emulation,
    VersionError,
    choose_emulation,
    parse_emulated_version,
)
from scheduler_runtime.framework.interface import DEFAULT_PLUGIN_TIME_BUDGET
from scheduler_runtime.framework.registry import PluginLoadError
from scheduler_runtime.framework.runtime import FrameworkError
from scheduler_runtime.live.apiconfig import ClusterConfigError
from scheduler_runtime.live.delegated import DEFAULT_ALWAYS_ALLOW, DEFAULT_TTL
from scheduler_runtime.live.explanations import ANNOTATION, DEFAULT_KEPT
from scheduler_runtime.live.run import RunOptions, Runtime, apiserver_version
from scheduler_runtime.live.server import parse_listen
from scheduler_runtime.live.serving import DEFAULT_BIND_ADDRESS, DEFAULT_SECURE_PORT, ServingOptions

DEFAULT_ALWAYS_ALLOW_PATHS = ",".join(DEFAULT_ALWAYS_ALLOW)


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", required=True, help="KubeSchedulerConfiguration file")
    parser.add_argument(
        "--kubeconfig",
        help="kubeconfig file, when the configuration's clientConnection.kubeconfig names none "
        "(default: the pod's in-cluster configuration)",
    )
    add_feature_gates_argument(parser)
    add_emulated_version_argument(parser, default="the API server's minor")
    _serving_arguments(parser)
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


def _serving_arguments(parser: argparse.ArgumentParser) -> None:
    """kube-scheduler's secure serving flags, and the plain port for local use."""
    serving = parser.add_argument_group(
        "serving",
        "/healthz, /livez, /readyz, /metrics and /explain are served over HTTPS on the secure "
        "port. Requests are authenticated by bearer token (TokenReview) or client certificate "
        "and authorized by SubjectAccessReview (verb get on the path), as kube-scheduler does; "
        "without credentials only the always-allowed paths answer.",
    )
    serving.add_argument(
        "--secure-port",
        type=int,
        default=DEFAULT_SECURE_PORT,
        help=f"the HTTPS port (default {DEFAULT_SECURE_PORT}); 0 serves no HTTPS at all",
    )
    serving.add_argument(
        "--bind-address",
        default=DEFAULT_BIND_ADDRESS,
        help="the IP address the secure port listens on; blank or an unspecified address "
        f"(0.0.0.0 or ::) means every interface and IP family (default {DEFAULT_BIND_ADDRESS})",
    )
    serving.add_argument(
        "--tls-cert-file",
        help="x509 certificate for HTTPS (any CA certificates after it); without it and "
        "--tls-private-key-file a self-signed certificate is made, in --cert-dir if given, "
        "else in memory",
    )
    serving.add_argument("--tls-private-key-file", help="the key of --tls-cert-file")
    serving.add_argument(
        "--cert-dir",
        help="where the self-signed certificate is kept (kube-scheduler.crt and "
        "kube-scheduler.key, made when absent); ignored with --tls-cert-file",
    )
    serving.add_argument(
        "--client-ca-file",
        help="accept client certificates signed by these CAs (default: the client-ca-file of "
        "the kube-system/extension-apiserver-authentication ConfigMap)",
    )
    serving.add_argument(
        "--authentication-kubeconfig",
        help="kubeconfig for TokenReviews and the client CA lookup (default: --kubeconfig, "
        "else the pod's in-cluster configuration)",
    )
    serving.add_argument(
        "--authorization-kubeconfig",
        help="kubeconfig for SubjectAccessReviews (default: as --authentication-kubeconfig)",
    )
    serving.add_argument(
        "--authentication-skip-lookup",
        action="store_true",
        help="do not look the client CA up in the cluster (no --client-ca-file: no client "
        "certificates)",
    )
    serving.add_argument(
        "--authentication-token-webhook-cache-ttl",
        type=_duration,
        default=DEFAULT_TTL,
        metavar="DURATION",
        help="how long a TokenReview's answer is kept (default 10s)",
    )
    serving.add_argument(
        "--authorization-webhook-cache-authorized-ttl",
        type=_duration,
        default=DEFAULT_TTL,
        metavar="DURATION",
        help="how long an allowing SubjectAccessReview is kept (default 10s)",
    )
    serving.add_argument(
        "--authorization-webhook-cache-unauthorized-ttl",
        type=_duration,
        default=DEFAULT_TTL,
        metavar="DURATION",
        help="how long a refusing SubjectAccessReview is kept (default 10s)",
    )
    serving.add_argument(
        "--authorization-always-allow-paths",
        default=DEFAULT_ALWAYS_ALLOW_PATHS,
        metavar="PATHS",
        help="comma-separated paths anyone may get, credentials or not; a trailing * matches "
        f"a prefix (default {DEFAULT_ALWAYS_ALLOW_PATHS})",
    )
    serving.add_argument(
        "--listen",
        metavar="HOST:PORT",
        help="also serve every endpoint over plain HTTP here, without authentication: for "
        "local use only (default: no plain port)",
    )


_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def _duration(text: str) -> float:
    """A Go duration (10s, 1m30s, 500ms, 0) in seconds."""
    if text == "0":
        return 0.0
    parts = _DURATION.findall(text)
    if not parts or "".join(number + unit for number, unit in parts) != text:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a duration such as 10s or 1m30s")
    return sum(float(number) * _UNIT_SECONDS[unit] for number, unit in parts)


def serving_options(args: argparse.Namespace) -> ServingOptions:
    """The secure port's options from the flags; ValueError names a bad one."""
    options = ServingOptions(
        secure_port=args.secure_port,
        bind_address=args.bind_address,
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        cert_dir=args.cert_dir,
        client_ca_file=args.client_ca_file,
        authentication_kubeconfig=args.authentication_kubeconfig,
        authorization_kubeconfig=args.authorization_kubeconfig,
        authentication_skip_lookup=args.authentication_skip_lookup,
        token_cache_ttl=args.authentication_token_webhook_cache_ttl,
        authorized_ttl=args.authorization_webhook_cache_authorized_ttl,
        unauthorized_ttl=args.authorization_webhook_cache_unauthorized_ttl,
        always_allow_paths=tuple(
            path.strip()
            for path in args.authorization_always_allow_paths.split(",")
            if path.strip()
        ),
    )
    options.check()
    return options


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
    """Validates everything it can before touching the cluster; one clear line on bad input.
    The Kubernetes minor to emulate is the flag's, else the API server's: then what no minor
    accepts is refused before the cluster, and the rest once its version is read."""
    try:
        listen = parse_listen(args.listen) if args.listen is not None else None
        serving = serving_options(args)
        asked = parse_emulated_version(args.emulated_version)
        config = None
        if asked is not None:
            config = _configuration(args, asked)
        # clientConnection is the same at every minor: any accepted configuration tells it.
        accepted = config or _accepted_somewhere(args)
        kubeconfig = cluster_kubeconfig(args.kubeconfig, accepted.client_connection.kubeconfig)
    except (ConfigError, ValueError) as error:
        print(f"scheduler-runtime run: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    except (FrameworkError, PluginLoadError) as error:
        print(f"scheduler-runtime run: {args.config}: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        emulation = choose_emulation(apiserver_version(kubeconfig, required=asked is None), asked)
    except (ClusterConfigError, OSError, ValueError) as error:  # VersionError among them
        what = "" if isinstance(error, VersionError) else "cannot load the cluster configuration: "
        print(f"scheduler-runtime run: {what}{error}", file=sys.stderr)
        return ExitCode.FAILURE
    if config is None:
        try:
            config = _configuration(args, emulation.version)
        except ConfigError as error:
            print(f"scheduler-runtime run: {error}", file=sys.stderr)
            return ExitCode.USAGE_ERROR
        except (FrameworkError, PluginLoadError) as error:
            print(f"scheduler-runtime run: {args.config}: {error}", file=sys.stderr)
            return ExitCode.USAGE_ERROR
    return _run(args, config, emulation, listen, serving, kubeconfig=kubeconfig)


def _accepted_somewhere(args: argparse.Namespace) -> SchedulerConfiguration:
    """The configuration at the newest minor that accepts the flags and the file; raises what
    the newest minor says when none does."""
    refusals: list[Exception] = []
    for version in reversed(VERSIONS):
        try:
            return _configuration(args, version)
        except (ConfigError, FrameworkError, PluginLoadError) as error:
            refusals.append(error)
    raise refusals[0]


def cluster_kubeconfig(flag: str | None, configured: str) -> str | None:
    """The kubeconfig to reach the cluster with: the configuration's
    clientConnection.kubeconfig, as kube-scheduler reads it (which then ignores its deprecated
    --kubeconfig); else --kubeconfig; else None, the pod's in-cluster configuration."""
    return configured or flag or None


def _configuration(args: argparse.Namespace, version: str) -> SchedulerConfiguration:
    """The flags' gates and the configuration file at a Kubernetes minor, every profile's
    plugins built once (ConfigError, FrameworkError, PluginLoadError)."""
    gates = parse_feature_gates(args.feature_gates, version)
    config = load_configuration_file(args.config, feature_gates=gates)
    check_profiles(config)
    return config


def _run(
    args: argparse.Namespace,
    config: SchedulerConfiguration,
    emulation: Emulation,
    listen: tuple[str, int] | None,
    serving: ServingOptions,
    *,
    kubeconfig: str | None,
) -> int:
    configure_logging(args.verbosity)
    log = logging.getLogger("scheduler_runtime.config")
    log.info("%s", emulation.log_line())
    if emulation.warning:
        log.warning("%s", emulation.warning)
    for warning in [*config.warnings, *unfollowed_defaults(config.feature_gates)]:
        log.warning("%s", warning)
    if args.kubeconfig and kubeconfig != args.kubeconfig:
        log.warning(
            "--kubeconfig %s is ignored: the configuration's clientConnection.kubeconfig %s "
            "is used, as kube-scheduler does",
            args.kubeconfig,
            kubeconfig,
        )
    try:
        options = RunOptions(
            kubeconfig=kubeconfig,
            listen=listen,
            serving=serving,
            explanations=args.explanations,
            explain_annotation=args.explain_annotation,
            plugin_time_budget=args.plugin_time_budget,
            emulation=emulation,
        )
        runtime = Runtime(config, options)
    except (ClusterConfigError, OSError, ValueError) as error:
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
