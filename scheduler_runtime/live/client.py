"""A client of a running scheduler's own endpoints (/explain, /metrics): the credentials to
present on its secure port (a bearer token, or a kubeconfig's token or client certificate) and
how far to trust its serving certificate."""

from __future__ import annotations

import argparse
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from scheduler_runtime.live import apiconfig
from scheduler_runtime.live.certs import KeyPair, load_chain


@dataclass(frozen=True)
class KubeconfigUser:
    """The credentials of a kubeconfig's current user: a bearer token (an exec plugin's
    too), else a client certificate."""

    token: str | None
    cert_pem: bytes | None
    key_pem: bytes | None

    @classmethod
    def load(cls, path: str) -> KubeconfigUser:
        """As an argparse type: a kubeconfig that cannot be read is a usage error."""
        try:
            loaded = apiconfig.load(path)
        except apiconfig.ClusterConfigError as error:
            raise argparse.ArgumentTypeError(str(error)) from None
        endpoint = loaded.endpoint
        return cls(loaded.token.value(), endpoint.cert_pem, endpoint.key_pem)


@dataclass(frozen=True)
class Credentials:
    token: str | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    certificate_authority: str | None = None
    insecure: bool = False

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--token", help="bearer token to present to the secure port")
        parser.add_argument(
            "--kubeconfig",
            type=KubeconfigUser.load,
            help="present this kubeconfig's user: its token, else its client certificate",
        )
        parser.add_argument(
            "--certificate-authority",
            metavar="FILE",
            help="CA bundle to verify the scheduler's serving certificate with",
        )
        parser.add_argument(
            "--insecure-skip-tls-verify",
            action="store_true",
            help="do not verify the serving certificate (a self-signed one cannot be)",
        )

    @classmethod
    def from_arguments(cls, args: argparse.Namespace) -> Credentials:
        user: KubeconfigUser | None = args.kubeconfig
        token = args.token or (user.token if user else None)
        cert_pem, key_pem = (user.cert_pem, user.key_pem) if user else (None, None)
        return cls(
            token, cert_pem, key_pem, args.certificate_authority, args.insecure_skip_tls_verify
        )

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=self.certificate_authority)
        if self.insecure:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert_pem and self.key_pem and not self.token:
            load_chain(context, KeyPair(self.cert_pem, self.key_pem))
        return context


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Redirects are answers, not followed: urllib would send the token on to wherever the
    redirect points, plain http:// included."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def fetch(url: str, credentials: Credentials, timeout: float) -> bytes:
    """GETs `url` with the credentials; raises urllib's errors (a token is never sent over
    plain HTTP, a redirect is an HTTPError and not followed, and an untrusted certificate is
    explained)."""
    headers = {}
    https = urllib.parse.urlsplit(url).scheme == "https"
    if credentials.token:
        if not https:
            raise urllib.error.URLError("a token is only sent over https://")
        headers["Authorization"] = f"Bearer {credentials.token}"
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - http(s) checked
    handlers: list[urllib.request.BaseHandler] = [_NoRedirects()]
    if https:
        handlers.append(urllib.request.HTTPSHandler(context=credentials.context()))
    opener = urllib.request.build_opener(*handlers)
    try:
        with opener.open(request, timeout=timeout) as answer:
            body: bytes = answer.read()
    except urllib.error.URLError as error:
        if isinstance(error.reason, ssl.SSLCertVerificationError):
            raise urllib.error.URLError(
                f"its certificate is not trusted ({error.reason.verify_message}): pass "
                "--certificate-authority, or --insecure-skip-tls-verify for a self-signed one"
            ) from error
        raise
    return body
