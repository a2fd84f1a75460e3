"""How the operator logs in to the API server: in a pod, its ServiceAccount; elsewhere, the
kubeconfig it started with ($KUBECONFIG as it was then, else ~/.kube/config).

kopf logs in again whenever the API server refuses it for long (a namespace it follows losing
its RoleBinding while it terminates, say), and that must find the same credentials, whatever
the environment says by then. So the file is read by path, through the same loader as the
operator's own client, and the environment is left as it is."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import kopf
import kubernetes

from .apply import in_cluster_server

DEFAULT_KUBECONFIG = "~/.kube/config"


class _Start:
    """$KUBECONFIG as it was at the first login (None: unset)."""

    taken = False
    kubeconfig: str | None = None


def kubeconfig_at_start() -> str | None:
    if not _Start.taken:
        _Start.kubeconfig, _Start.taken = os.environ.get("KUBECONFIG"), True
    return _Start.kubeconfig


def connection_info(settings: kopf.OperatorSettings, **kwargs: Any) -> kopf.ConnectionInfo | None:
    """The pod's ServiceAccount, else the kubeconfig the operator started with."""
    info: kopf.ConnectionInfo | None = kopf.login_with_service_account(settings=settings, **kwargs)
    if info is not None:
        return dataclasses.replace(info, server=in_cluster_server(info.server))
    path = kubeconfig_at_start()
    if path is None:
        default = Path(DEFAULT_KUBECONFIG).expanduser()
        if not default.exists():
            return None
        path = str(default)
    return from_kubeconfig(path, trust_env=settings.networking.trust_env)


def from_kubeconfig(path: str, *, trust_env: bool = False) -> kopf.ConnectionInfo:
    """The current context of a kubeconfig (several files joined by ':', as $KUBECONFIG may
    list them), read by the client library's loader: exec plugins and inline data included."""
    configuration = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=path, client_configuration=configuration)  # type: ignore[no-untyped-call]
    header: str | None = configuration.get_api_key_with_prefix(
        "BearerToken"
    ) or configuration.get_api_key_with_prefix("authorization")
    scheme, _, token = (header or "").rpartition(" ")
    return kopf.ConnectionInfo(
        server=configuration.host,
        ca_path=configuration.ssl_ca_cert,
        insecure=not configuration.verify_ssl,
        username=configuration.username or None,
        password=configuration.password or None,
        scheme=scheme or None,
        token=token or None,
        certificate_path=configuration.cert_file,
        private_key_path=configuration.key_file,
        proxy_url=configuration.proxy,
        trust_env=trust_env,
    )
