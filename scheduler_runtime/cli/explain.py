"""`scheduler-runtime explain NAMESPACE/POD`: asks a running scheduler why a pod went where it
went (its /explain endpoint) and prints the answer as tables. On the secure port it presents a
bearer token (--token, or --kubeconfig's user) or the kubeconfig's client certificate, as
Prometheus does to scrape /metrics."""

from __future__ import annotations

import argparse
import sys
import urllib.error
import urllib.parse
import urllib.request

import orjson

from scheduler_runtime.cli.command import Command, ExitCode
from scheduler_runtime.framework.explain import format_explanation
from scheduler_runtime.live.client import Credentials, fetch

DEFAULT_ENDPOINT = "https://127.0.0.1:10259"
TIMEOUT = 10.0


def pod_key(text: str) -> str:
    namespace, sep, name = text.partition("/")
    if not sep or not namespace or not name or "/" in name:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAMESPACE/POD")
    return text


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("pod", type=pod_key, metavar="NAMESPACE/POD")
    parser.add_argument(
        "--endpoint",
        default=DEFAULT_ENDPOINT,
        help=f"the scheduler's secure port (or its plain --listen port, as http://...; "
        f"default {DEFAULT_ENDPOINT})",
    )
    Credentials.add_arguments(parser)
    parser.add_argument("-o", "--output", choices=("table", "json"), default="table")


def explain_command(args: argparse.Namespace) -> int:
    endpoint = args.endpoint.rstrip("/")
    if urllib.parse.urlsplit(endpoint).scheme not in ("http", "https"):
        print(f"error: --endpoint {args.endpoint!r}: expected an http:// URL", file=sys.stderr)
        return ExitCode.USAGE_ERROR
    url = f"{endpoint}/explain/{urllib.parse.quote(args.pod)}"
    try:
        body = fetch(url, Credentials.from_arguments(args), TIMEOUT)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            print(
                f"error: the scheduler at {endpoint} keeps no explanation for {args.pod} "
                "(not one of its pods, not tried yet, or older than the last --explanations)",
                file=sys.stderr,
            )
        elif 300 <= error.code < 400:
            print(
                f"error: {url}: HTTP {error.code}: a redirect to "
                f"{error.headers.get('Location', 'nowhere')!r}, not followed: "
                "point --endpoint at the scheduler itself",
                file=sys.stderr,
            )
        else:
            print(f"error: {url}: HTTP {error.code}{refusal(error)}", file=sys.stderr)
        return ExitCode.FAILURE
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        print(f"error: cannot reach the scheduler at {endpoint}: {reason}", file=sys.stderr)
        return ExitCode.FAILURE
    try:
        document = orjson.loads(body)
        text = (
            orjson.dumps(document, option=orjson.OPT_INDENT_2).decode()
            if args.output == "json"
            else format_explanation(document)
        )
    except (orjson.JSONDecodeError, KeyError, TypeError) as error:
        print(f"error: {url}: not an explanation: {error}", file=sys.stderr)
        return ExitCode.FAILURE
    print(text)
    return ExitCode.OK


def refusal(error: urllib.error.HTTPError) -> str:
    """The message of a refusal (401, 403: a metav1.Status), with a hint for each."""
    try:
        message = str(orjson.loads(error.read()).get("message", ""))
    except (orjson.JSONDecodeError, AttributeError, OSError):
        message = ""
    hint = {
        401: "pass --token or --kubeconfig",
        403: "the user needs get on the nonResourceURL /explain/*",
    }.get(error.code, "")
    return "".join(f": {part}" for part in (message, hint) if part)


COMMAND = Command(
    name="explain",
    help="why a pod went where it went, from a running scheduler",
    description="Print the filter verdict of every node that did not fit the pod and the "
    "per-plugin scores of the best candidates, as the running scheduler at --endpoint "
    "recorded them in the pod's last scheduling attempt.",
    arguments=arguments,
    run=explain_command,
)
