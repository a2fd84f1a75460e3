"""Where the API server is and how the runtime proves who it is: the part of client-go's
rest.Config the runtime uses.

The kubernetes package's loaders (a kubeconfig's, or the in-cluster one from the pod's service
account) resolve it in a child process (`python -m scheduler_runtime.live.apiconfig
[KUBECONFIG]`), as the serving certificate is made (certs.self_signed): the package and what
its loaders import (its generated client, requests, oauthlib: 14 MiB) would otherwise stay in
the scheduler's memory for good. What changes afterwards is the token: in a pod the mounted
token file is read again once the token read is a minute old (the kubelet rotates it), as
client-go and the package's own refresh hook do; an exec plugin's or auth provider's token is
resolved again by the child when it is about to expire (as the package's refresh hook decides:
5 minutes before its expiry). A 401 asks for a new token at once, at most once a minute."""

from __future__ import annotations

import datetime
import json
import logging
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

log = logging.getLogger(__name__)

TOKEN_FILE_SECONDS: Final = 60.0  # client-go's and the kubernetes package's re-read period
RENEW_SECONDS: Final = 60.0  # at most one renewal a minute after 401s
LOAD_TIMEOUT: Final = 60.0  # an exec plugin may ask a cloud for its token


class ClusterConfigError(Exception):
    """No configuration could be loaded: the message says which file or variable, and why."""


@dataclass(frozen=True)
class Endpoint:
    """How to reach the API server. The attribute names are the kubernetes package's
    Configuration's; the CA and the client certificate come as PEM data, and the proxy is
    the one that applies to `host` (None when no_proxy names it)."""

    host: str
    ca_pem: str | None = None
    cert_pem: bytes | None = None
    key_pem: bytes | None = None
    verify_ssl: bool = True
    tls_server_name: str | None = None
    proxy: str | None = None
    proxy_headers: Mapping[str, str] = field(default_factory=dict)


# A token and how many seconds it stays good (None: until the API server refuses it).
Lasting = tuple[str | None, float | None]


class Token:
    """The current bearer token: loaded again once it has lasted as long as its load said,
    and after a 401 (`renew`), at most once per RENEW_SECONDS (a refused credential never costs
    more than that)."""

    def __init__(
        self,
        load: Callable[[], Lasting],
        first: Lasting | None = None,  # already loaded
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load = load
        self._clock = clock
        self._lock = threading.Lock()
        self._value, self._lasts = first if first is not None else load()
        self._read_at = clock()

    def value(self) -> str | None:
        if self._lasts is not None and self._clock() - self._read_at >= self._lasts:
            self._reload(self._lasts)
        return self._value

    def renew(self) -> None:
        self._reload(RENEW_SECONDS)

    def _reload(self, after: float) -> None:
        with self._lock:  # one thread loads; the others find it fresh
            if self._clock() - self._read_at < after:
                return
            try:
                self._value, self._lasts = self._load()
            except ClusterConfigError as error:  # the last token stays; tried again later
                log.warning("cannot renew the API server token: %s", error)
            self._read_at = self._clock()


@dataclass(frozen=True)
class ApiConfig:
    endpoint: Endpoint
    token: Token

    @classmethod
    def at(cls, host: str, token: str | None = None) -> ApiConfig:
        """An API server at `host` (verified against the system's CAs), with a fixed token."""
        return cls(Endpoint(host), Token(lambda: (token, None)))


def load(kubeconfig: str | None) -> ApiConfig:
    """From a kubeconfig file, or from the pod's service account when None."""
    loaded = _run_loader(kubeconfig)
    endpoint = Endpoint(
        host=loaded["host"],
        ca_pem=loaded.get("ca_pem"),
        cert_pem=_bytes(loaded.get("cert_pem")),
        key_pem=_bytes(loaded.get("key_pem")),
        verify_ssl=loaded.get("verify_ssl", True),
        tls_server_name=loaded.get("tls_server_name"),
        proxy=loaded.get("proxy"),
        proxy_headers=loaded.get("proxy_headers") or {},
    )
    token_file = loaded.get("token_file")
    if token_file:
        return ApiConfig(
            endpoint, Token(lambda: (_read_token(Path(token_file)), TOKEN_FILE_SECONDS))
        )
    return ApiConfig(
        endpoint, Token(lambda: _lasting(_run_loader(kubeconfig)), first=_lasting(loaded))
    )


def _lasting(loaded: Mapping[str, Any]) -> Lasting:
    seconds = loaded.get("token_seconds")
    return loaded.get("token"), None if seconds is None else float(seconds)


def _read_token(path: Path) -> str:
    try:
        token = path.read_text().strip()
    except OSError as error:
        raise ClusterConfigError(f"{path}: {error.strerror}") from None
    if not token:
        raise ClusterConfigError(f"{path}: the service account's token is empty")
    return token


def _bytes(text: str | None) -> bytes | None:
    return text.encode() if text else None


def _run_loader(kubeconfig: str | None) -> dict[str, Any]:
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "scheduler_runtime.live.apiconfig",
                *([kubeconfig] if kubeconfig else []),
            ],
            capture_output=True,
            check=False,
            timeout=LOAD_TIMEOUT,
        )
    except subprocess.TimeoutExpired:
        raise ClusterConfigError(f"not loaded within {LOAD_TIMEOUT:.0f}s") from None
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no reason"]
        raise ClusterConfigError(why[0])
    loaded: dict[str, Any] = json.loads(done.stdout)
    return loaded


# ----- the child process


def resolve(kubeconfig: str | None) -> dict[str, Any]:
    """What the kubernetes package's loader makes of a kubeconfig (or of the pod's service
    account): inline certificate data read back from the files it wrote (they are removed when
    this process exits), the proxy as it applies to the API server, and how long an exec
    plugin's or auth provider's token lasts (its expiry less the loader's own 5 minutes)."""
    import kubernetes  # noqa: PLC0415 - only ever in the child process
    from kubernetes.client.rest import should_bypass_proxies  # noqa: PLC0415
    from kubernetes.config import kube_config  # noqa: PLC0415

    configuration = kubernetes.client.Configuration()
    expiry = None
    if kubeconfig:
        # load_kube_config's steps, keeping the loader to read the token's expiry
        merged = kube_config.KubeConfigMerger(kubeconfig)  # type: ignore[no-untyped-call]
        if merged.config is None:
            raise kubernetes.config.ConfigException(
                "Invalid kube-config file. No configuration found."
            )
        loader = kube_config.KubeConfigLoader(  # type: ignore[no-untyped-call]
            config_dict=merged.config, config_base_path=None, config_persister=merged.save_changes
        )
        loader.load_and_set(configuration)  # type: ignore[no-untyped-call]
        expiry = loader.__dict__.get("expiry")  # set by exec plugins and auth providers
    else:
        kubernetes.config.load_incluster_config(  # type: ignore[no-untyped-call]
            client_configuration=configuration
        )
    keys = configuration.api_key
    header = str(keys.get("BearerToken") or keys.get("authorization") or "")
    token = header.split(" ", 1)[1] if header.lower().startswith("bearer ") else None
    proxy = configuration.proxy
    if proxy and configuration.no_proxy:
        proxy = None if should_bypass_proxies(configuration.host, configuration.no_proxy) else proxy
    resolved = {
        "host": configuration.host,
        "ca_pem": _read(configuration.ssl_ca_cert),
        "cert_pem": _read(configuration.cert_file),
        "key_pem": _read(configuration.key_file),
        "verify_ssl": bool(configuration.verify_ssl),
        "tls_server_name": configuration.tls_server_name,
        "proxy": proxy,
        "proxy_headers": dict(configuration.proxy_headers or {}),
        "token": token,
        "token_seconds": _seconds_left(expiry, kube_config),
    }
    if not kubeconfig:
        resolved["token_file"] = kubernetes.config.incluster_config.SERVICE_TOKEN_FILENAME
    return resolved


def _seconds_left(expiry: Any, kube_config: Any) -> float | None:
    if not expiry:
        return None
    ends = kube_config.parse_rfc3339(expiry) - kube_config.EXPIRY_SKEW_PREVENTION_DELAY
    left: datetime.timedelta = ends - datetime.datetime.now(datetime.UTC)
    return max(0.0, left.total_seconds())


def _read(path: str | None) -> str | None:
    return Path(path).read_text() if path else None


def main(argv: list[str]) -> int:
    if len(argv) > 2:
        print("usage: python -m scheduler_runtime.live.apiconfig [KUBECONFIG]", file=sys.stderr)
        return 2
    try:
        resolved = resolve(argv[1] if len(argv) == 2 else None)
    except Exception as error:  # one line for the parent to show, never a traceback
        where = f"kubeconfig {argv[1]}" if len(argv) == 2 else "in-cluster configuration"
        print(f"{where}: {' '.join(str(error).split())}", file=sys.stderr)  # one line
        return 1
    print(json.dumps(resolved))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
