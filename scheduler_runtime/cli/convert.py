"""`scheduler-runtime convert-config FILE`: a v1beta2 or v1beta3 KubeSchedulerConfiguration
rewritten as v1 on standard output, what was changed on standard error, one line each."""

from __future__ import annotations

import argparse
import sys

import yaml

from scheduler_runtime.cli.command import Command, ExitCode
from scheduler_runtime.config import ConfigError, DocumentError, load_configuration, read_document
from scheduler_runtime.config.convert import convert


def convert_command(args: argparse.Namespace) -> int:
    name = "<stdin>" if args.file == "-" else args.file
    try:
        conversion = convert(read_document(args.file))
    except DocumentError as error:
        print(f"error: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    except ConfigError as error:
        print(f"error: {name}: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    try:
        load_configuration(conversion.document)
    except ConfigError as error:
        print(f"error: {name}: converted, but still not valid: {error}", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    for change in conversion.changes:
        print(f"{name}: {change}", file=sys.stderr)
    sys.stdout.write(yaml.safe_dump(conversion.document, sort_keys=False))
    return ExitCode.OK


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="the configuration to convert; - for stdin")


COMMAND = Command(
    name="convert-config",
    help="rewrite a v1beta2/v1beta3 configuration as kubescheduler.config.k8s.io/v1",
    description="Print FILE, a KubeSchedulerConfiguration of kubescheduler.config.k8s.io/v1beta2 "
    "or v1beta3 (which kube-scheduler no longer serves), as v1 with upstream's conversion rules: "
    "removed fields and plugins dropped, args' apiVersion updated, and v1beta2's default score "
    "weights written out where v1's differ. Each change is one line on standard error.",
    arguments=arguments,
    run=convert_command,
)
