"""The operator logs in again with the kubeconfig it started with, whatever $KUBECONFIG says
by then (kopf logs in again after the API server has refused it for a while)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import kopf
import pytest
from scheduler_operator import credentials, handlers

KUBECONFIG = """
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443"}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
users: [{name: u, user: {token: operator}}]
"""


def test_logging_in_again_uses_the_kubeconfig_of_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    monkeypatch.setattr(credentials._Start, "taken", False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(path))
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.kube/config to fall back on
    settings, logger = kopf.OperatorSettings(), logging.getLogger("test")
    first = handlers.login(settings=settings, logger=logger)
    assert first is not None
    assert first.server == "https://127.0.0.1:6443"
    monkeypatch.delenv("KUBECONFIG")
    again = handlers.login(settings=settings, logger=logger)
    assert again is not None
    assert (again.server, again.token) == ("https://127.0.0.1:6443", "operator")
    assert "KUBECONFIG" not in os.environ
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "elsewhere"))
    assert handlers.login(settings=settings, logger=logger) == again


def test_logging_in_never_rewrites_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment is read once and never written: another thread reading $KUBECONFIG
    meanwhile sees what was there."""
    path = tmp_path / "kubeconfig"
    path.write_text(KUBECONFIG)
    monkeypatch.setattr(credentials._Start, "taken", False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("KUBECONFIG", str(path))
    settings, logger = kopf.OperatorSettings(), logging.getLogger("test")
    assert handlers.login(settings=settings, logger=logger) is not None
    written: list[str] = []
    monkeypatch.setattr(os, "environ", WriteWatch(os.environ, written))
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "later"))
    written.clear()
    assert handlers.login(settings=settings, logger=logger) is not None
    assert written == []


class WriteWatch(dict[str, str]):
    """os.environ that notes every write."""

    def __init__(self, environ: os._Environ[str], written: list[str]) -> None:
        super().__init__(environ)
        self.written = written

    def __setitem__(self, key: str, value: str) -> None:
        self.written.append(key)
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        self.written.append(key)
        super().__delitem__(key)

    def pop(self, key: str, *default: object) -> object:  # type: ignore[override]
        self.written.append(key)
        return super().pop(key, *default)
