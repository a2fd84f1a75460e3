"""The API server's address and the runtime's credentials: resolved by the kubernetes package's
loaders in a child process, the token renewed as it changes."""

from __future__ import annotations

import base64
import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from scheduler_runtime.live import apiconfig, certs
from scheduler_runtime.live.apiconfig import (
    RENEW_SECONDS,
    TOKEN_FILE_SECONDS,
    ApiConfig,
    ClusterConfigError,
    Endpoint,
    Token,
)
from scheduler_runtime.live.kube import ApiError, Kube


def write_kubeconfig(path: Path, user: dict[str, Any], cluster: dict[str, Any]) -> Path:
    path.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": cluster}],
                "users": [{"name": "u", "user": user}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    return path


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_inline_certificates_come_back_as_pem_and_make_a_tls_context(tmp_path: Path) -> None:
    cert, key = certs.self_signed("127.0.0.1")
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig",
        {"client-certificate-data": b64(cert), "client-key-data": b64(key)},
        {"server": "https://127.0.0.1:6443", "certificate-authority-data": b64(cert)},
    )
    loaded = apiconfig.load(str(kubeconfig))
    assert loaded.endpoint.host == "https://127.0.0.1:6443"
    assert loaded.endpoint.cert_pem == cert
    assert loaded.endpoint.key_pem == key
    assert loaded.endpoint.ca_pem == cert.decode()
    assert loaded.token.value() is None
    Kube(loaded)  # the TLS context loads the CA and the client pair from memory


def test_a_written_down_token_is_read_once(tmp_path: Path) -> None:
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig",
        {"token": "secret"},
        {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True},
    )
    loaded = apiconfig.load(str(kubeconfig))
    assert loaded.token.value() == "secret"
    assert not loaded.endpoint.verify_ssl
    assert loaded.token._lasts is None  # good until refused


def exec_kubeconfig(tmp_path: Path, expires_in: int | None) -> Path:
    """A kubeconfig whose user's token comes from an exec plugin: token-1, token-2, ... on
    each run, expiring `expires_in` seconds after it is made (or never said)."""
    calls = tmp_path / "calls"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import datetime, json, pathlib\n"
        f"calls = pathlib.Path({str(calls)!r})\n"
        "n = len(calls.read_text()) + 1 if calls.exists() else 1\n"
        "calls.write_text('x' * n)\n"
        "status = {'token': f'token-{n}'}\n"
        f"expires_in = {expires_in!r}\n"
        "if expires_in is not None:\n"
        "    ends = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=expires_in)\n"
        "    status['expirationTimestamp'] = ends.strftime('%Y-%m-%dT%H:%M:%SZ')\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
        "'kind': 'ExecCredential', 'status': status}))\n"
    )
    user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    return write_kubeconfig(tmp_path / "kubeconfig", user, {"server": "https://127.0.0.1:6443"})


def controlled(token: Token) -> list[float]:
    """The token on a clock the test moves (now[0]), read at 0."""
    now = [0.0]
    token._clock = lambda: now[0]
    token._read_at = 0.0
    return now


def test_an_exec_plugins_token_is_resolved_again_before_it_expires(tmp_path: Path) -> None:
    token = apiconfig.load(str(exec_kubeconfig(tmp_path, expires_in=600))).token
    lasts = token._lasts
    assert lasts is not None
    assert 280 < lasts <= 300  # its expiry less the kubernetes package's 5 minutes
    now = controlled(token)
    assert token.value() == "token-1"
    token.renew()  # a 401 right after loading: not again within the minute
    assert token.value() == "token-1"
    now[0] = lasts
    assert token.value() == "token-2"


def test_an_exec_token_without_expiry_is_renewed_only_when_refused(tmp_path: Path) -> None:
    token = apiconfig.load(str(exec_kubeconfig(tmp_path, expires_in=None))).token
    now = controlled(token)
    now[0] = 3600.0
    assert token.value() == "token-1"  # good until the API server refuses it
    token.renew()
    assert token.value() == "token-2"


def test_the_in_cluster_token_file_is_read_again_once_a_minute_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("first\n")
    resolved = {"host": "https://10.0.0.1:443", "token_file": str(token_file)}
    monkeypatch.setattr(apiconfig, "_run_loader", lambda kubeconfig: resolved)
    loaded = apiconfig.load(None)
    now = [0.0]
    loaded.token._clock = lambda: now[0]
    loaded.token._read_at = 0.0
    token_file.write_text("second\n")  # the kubelet rotated it
    assert loaded.token.value() == "first"
    now[0] = TOKEN_FILE_SECONDS
    assert loaded.token.value() == "second"
    token_file.write_text("")
    now[0] = 2 * TOKEN_FILE_SECONDS
    assert loaded.token.value() == "second"  # an empty file keeps the last good token


def test_no_proxy_naming_the_server_bypasses_the_kubeconfigs_proxy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster = {"server": "https://127.0.0.1:6443", "proxy-url": "http://proxy.example:3128"}
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", {"token": "t"}, cluster)
    assert apiconfig.load(str(kubeconfig)).endpoint.proxy == "http://proxy.example:3128"
    monkeypatch.setenv("NO_PROXY", "127.0.0.0/8")
    assert apiconfig.load(str(kubeconfig)).endpoint.proxy is None


def test_an_unreadable_kubeconfig_is_one_clear_line(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    with pytest.raises(ClusterConfigError, match=f"kubeconfig {missing}: ") as raised:
        apiconfig.load(str(missing))
    assert "Traceback" not in str(raised.value)
    broken = tmp_path / "broken"
    broken.write_text("clusters: [")
    with pytest.raises(ClusterConfigError, match=f"kubeconfig {broken}: "):
        apiconfig.load(str(broken))


def test_renewals_of_a_refused_credential_are_at_most_one_a_minute() -> None:
    loads: list[float] = []
    now = [0.0]

    def load() -> tuple[str, None]:
        loads.append(now[0])
        return "t", None

    token = Token(load, clock=lambda: now[0])
    for second in range(150):
        now[0] = float(second)
        token.renew()
    assert loads == [0.0, RENEW_SECONDS, 2 * RENEW_SECONDS]


def test_the_scheduler_never_loads_the_kubernetes_package(tmp_path: Path) -> None:
    """The kubeconfig is resolved by a child process: the scheduler's own memory holds what it
    resolved, not the 14 MiB of the package and what its loaders import."""
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig", {"token": "t"}, {"server": "https://127.0.0.1:6443"}
    )
    probe = (
        "import sys; import scheduler_runtime.cli.run; "
        "from scheduler_runtime.live.kube import ApiError, Kube, load_client; "
        f"Kube(load_client({str(kubeconfig)!r})); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'kubernetes', 'requests', 'oauthlib', 'urllib3', 'aiohttp'}))"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert ran.stdout.decode().strip() == "[]"


def test_a_401_asks_for_a_new_token_and_the_next_request_carries_it() -> None:
    seen: list[str | None] = []

    class Refusing(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            status = 401 if len(seen) == 1 else 200
            body = b"{}"
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    tokens = iter(["expired", "fresh"])
    now = [0.0]
    token = Token(lambda: (next(tokens), None), clock=lambda: now[0])
    kube = Kube(ApiConfig(Endpoint(f"http://127.0.0.1:{server.server_address[1]}"), token))
    try:
        now[0] = RENEW_SECONDS  # the expired token was loaded a minute ago
        with pytest.raises(ApiError, match="401"):
            kube.get("/api")
        kube.get("/api")
    finally:
        server.shutdown()
        server.server_close()
    assert seen == ["Bearer expired", "Bearer fresh"]
