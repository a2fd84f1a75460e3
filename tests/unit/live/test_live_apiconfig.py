"""The API server's address and the runtime's credentials: resolved by the kubernetes package's
loaders in a child process, the token renewed as it changes."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from scheduler_runtime.live import apiconfig
from scheduler_runtime.live.apiconfig import REFRESH_SECONDS, ClusterConfigError, Token
from scheduler_runtime.live.kube import Kube


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


def self_signed_pem() -> tuple[bytes, bytes]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "client")])
    import datetime  # noqa: PLC0415

    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return cert.public_bytes(serialization.Encoding.PEM), key_pem


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def test_inline_certificates_come_back_as_pem_and_make_a_tls_context(tmp_path: Path) -> None:
    cert, key = self_signed_pem()
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
    assert not loaded.token._changes


def test_an_exec_plugins_token_is_resolved_again_when_renewed(tmp_path: Path) -> None:
    calls = tmp_path / "calls"
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "import json, pathlib, sys\n"
        f"calls = pathlib.Path({str(calls)!r})\n"
        "n = len(calls.read_text()) if calls.exists() else 0\n"
        "calls.write_text('x' * (n + 1))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
        "'kind': 'ExecCredential', 'status': {'token': f'token-{n + 1}'}}))\n"
    )
    exec_user = {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": sys.executable,
            "args": [str(plugin)],
            "interactiveMode": "Never",
        }
    }
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig", exec_user, {"server": "https://127.0.0.1:6443"}
    )
    now = [0.0]
    loaded = apiconfig.load(str(kubeconfig))
    token = loaded.token
    token._clock = lambda: now[0]
    token._read_at = 0.0
    assert token.value() == "token-1"
    token.renew()  # a 401 right after loading: not again within the minute
    assert token.value() == "token-1"
    now[0] = REFRESH_SECONDS
    assert token.value() == "token-2"  # a minute old: resolved again


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
    now[0] = REFRESH_SECONDS
    assert loaded.token.value() == "second"
    token_file.write_text("")
    now[0] = 2 * REFRESH_SECONDS
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

    def load() -> str:
        loads.append(now[0])
        return "t"

    token = Token(load, changes=False, clock=lambda: now[0])
    for second in range(0, 150):
        now[0] = float(second)
        token.renew()
    assert loads == [0.0, 60.0, 120.0]


def test_the_scheduler_never_loads_the_kubernetes_package(tmp_path: Path) -> None:
    """The kubeconfig is resolved by a child process: the scheduler's own memory holds what it
    resolved, not the 14 MiB of the package and what its loaders import."""
    kubeconfig = write_kubeconfig(
        tmp_path / "kubeconfig", {"token": "t"}, {"server": "https://127.0.0.1:6443"}
    )
    probe = (
        "import sys; import scheduler_runtime.cli.run; "
        "from scheduler_runtime.live.kube import Kube, load_client; "
        f"Kube(load_client({str(kubeconfig)!r})); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'kubernetes', 'requests', 'oauthlib', 'urllib3', 'aiohttp'}))"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert ran.stdout.decode().strip() == "[]"
