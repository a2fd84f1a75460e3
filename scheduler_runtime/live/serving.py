"""The secure port as kube-scheduler sets it up from its flags: the serving certificate, the
client CA (--client-ca-file, else the `client-ca-file` of the kube-system/
extension-apiserver-authentication ConfigMap), and the reviews, asked with the authentication
and authorization kubeconfigs (by default the scheduler's own credentials)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from scheduler_runtime.live.certs import ServingTLS, serving_pair
from scheduler_runtime.live.delegated import (
    DEFAULT_ALWAYS_ALLOW,
    DEFAULT_TTL,
    AccessReviewer,
    AlwaysAllowPaths,
    Gate,
    TokenReviewer,
)
from scheduler_runtime.live.kube import ApiError, Kube, RateLimiter, load_client
from scheduler_runtime.live.server import Secure

log = logging.getLogger(__name__)

DEFAULT_SECURE_PORT = 10259
DEFAULT_BIND_ADDRESS = "0.0.0.0"  # noqa: S104 - upstream's default: every interface
AUTHENTICATION_CONFIGMAP = (
    "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
)
# Upstream's delegated clients: QPS 200, burst 400, apart from the scheduler's own.
REVIEW_QPS, REVIEW_BURST = 200.0, 400


@dataclass(frozen=True)
class ServingOptions:
    """kube-scheduler's secure serving, authentication and authorization flags."""

    secure_port: int = DEFAULT_SECURE_PORT  # 0: no secure port
    bind_address: str = DEFAULT_BIND_ADDRESS
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    cert_dir: str | None = None
    client_ca_file: str | None = None
    authentication_kubeconfig: str | None = None
    authorization_kubeconfig: str | None = None
    authentication_skip_lookup: bool = False
    token_cache_ttl: float = DEFAULT_TTL
    authorized_ttl: float = DEFAULT_TTL
    unauthorized_ttl: float = DEFAULT_TTL
    always_allow_paths: tuple[str, ...] = DEFAULT_ALWAYS_ALLOW

    def check(self) -> None:
        """Raises ValueError, naming the flag, for what cannot be served."""
        if not 0 <= self.secure_port <= 65535:
            raise ValueError(f"--secure-port {self.secure_port}: expected a port from 0 to 65535")
        if bool(self.tls_cert_file) != bool(self.tls_private_key_file):
            raise ValueError("--tls-cert-file and --tls-private-key-file go together")
        try:
            AlwaysAllowPaths(self.always_allow_paths)
        except ValueError as error:
            raise ValueError(f"--authorization-always-allow-paths: {error}") from None


def client_ca_lookup(api: Kube) -> str | None:
    """The cluster's client CA bundle, as the API server publishes it for delegated
    authentication (readable through the extension-apiserver-authentication-reader Role)."""
    try:
        found = api.get(AUTHENTICATION_CONFIGMAP, timeout=10.0)
    except ApiError as error:
        if error.code == 404:
            return None
        raise
    data = found.get("data") or {}
    bundle = data.get("client-ca-file")
    return str(bundle) if bundle else None


def secure_serving(
    options: ServingOptions, kubeconfig: str | None
) -> tuple[Secure, ServingTLS] | None:
    """The secure port's listener and its TLS (to start and stop); None for --secure-port 0.
    `kubeconfig` is the scheduler's own, the default for both reviews."""
    if options.secure_port == 0:
        return None
    pair = serving_pair(
        options.tls_cert_file, options.tls_private_key_file, options.cert_dir, options.bind_address
    )
    authentication = _client(options.authentication_kubeconfig or kubeconfig)
    authorization = (
        authentication
        if (options.authorization_kubeconfig or kubeconfig)
        == (options.authentication_kubeconfig or kubeconfig)
        else _client(options.authorization_kubeconfig)
    )
    if options.client_ca_file:
        client_ca_file = Path(options.client_ca_file)
        tls = ServingTLS(pair, client_ca_file.read_text)
    elif options.authentication_skip_lookup:
        tls = ServingTLS(pair, lambda: None)
    else:
        tls = ServingTLS(pair, lambda: client_ca_lookup(authentication))
    gate = Gate(
        TokenReviewer(authentication, ttl=options.token_cache_ttl),
        AccessReviewer(
            authorization,
            allowed_ttl=options.authorized_ttl,
            denied_ttl=options.unauthorized_ttl,
        ),
        AlwaysAllowPaths(options.always_allow_paths),
    )
    address = (options.bind_address, options.secure_port)
    return Secure(address, tls.context, gate), tls


def _client(kubeconfig: str | None) -> Kube:
    return Kube(load_client(kubeconfig), RateLimiter(qps=REVIEW_QPS, burst=REVIEW_BURST))
