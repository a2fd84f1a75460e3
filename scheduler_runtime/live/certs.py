"""The secure port's TLS: its serving certificate (given, or self-signed as kube-scheduler makes
one: written to --cert-dir, or kept in memory) and the client CA that client certificates are
verified against. The TLS context is rebuilt when either changes, so a rotated certificate or
CA is used from the next connection on."""

from __future__ import annotations

import logging
import os
import ssl
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

PAIR_NAME = "kube-scheduler"  # --cert-dir holds kube-scheduler.crt and kube-scheduler.key
GENERATE_TIMEOUT = 60.0
KEY_BEGIN = b"-----BEGIN PRIVATE KEY-----"


@dataclass(frozen=True)
class KeyPair:
    """A certificate chain and its key, as PEM: read from files (`cert_file` set, reloaded
    when they change) or generated and held in memory."""

    cert_pem: bytes
    key_pem: bytes
    cert_file: Path | None = None
    key_file: Path | None = None

    def stamp(self) -> tuple[float, float] | None:
        """The files' modification times (None for a pair held in memory)."""
        if self.cert_file is None or self.key_file is None:
            return None
        return (self.cert_file.stat().st_mtime, self.key_file.stat().st_mtime)


def read_pair(cert_file: Path, key_file: Path) -> KeyPair:
    return KeyPair(cert_file.read_bytes(), key_file.read_bytes(), cert_file, key_file)


def self_signed(bind_address: str) -> tuple[bytes, bytes]:
    """A serving certificate for localhost (and 127.0.0.1, and a specific bind address) signed
    by a CA made for it, as upstream's: the chain and the key, as PEM, made by a child process
    (selfsigned), so the cryptography package never stays in the scheduler's memory."""
    made = subprocess.run(
        [sys.executable, "-m", "scheduler_runtime.live.selfsigned", bind_address],
        capture_output=True,
        check=False,
        timeout=GENERATE_TIMEOUT,
    )
    split = made.stdout.find(KEY_BEGIN)
    if made.returncode != 0 or split <= 0:
        why = made.stderr.decode(errors="replace").strip().splitlines()[-1:] or ["no key"]
        raise RuntimeError(f"could not make a self-signed serving certificate: {why[0]}")
    return made.stdout[:split], made.stdout[split:]


def serving_pair(
    cert_file: str | None, key_file: str | None, cert_dir: str | None, bind_address: str
) -> KeyPair:
    """The serving certificate as upstream chooses it: --tls-cert-file and
    --tls-private-key-file; else the pair in --cert-dir, generated there when it cannot be
    read; else one generated in memory."""
    if cert_file or key_file:
        if not (cert_file and key_file):
            raise ValueError("--tls-cert-file and --tls-private-key-file go together")
        return read_pair(Path(cert_file), Path(key_file))
    if cert_dir:
        directory = Path(cert_dir)
        cert, key = directory / f"{PAIR_NAME}.crt", directory / f"{PAIR_NAME}.key"
        try:
            return read_pair(cert, key)
        except FileNotFoundError:
            pass
        chain, key_pem = self_signed(bind_address)
        directory.mkdir(parents=True, exist_ok=True)
        cert.write_bytes(chain)
        cert.chmod(0o644)
        _write_private(key, key_pem)
        log.info("generated a self-signed certificate (%s, %s)", cert, key)
        return read_pair(cert, key)
    chain, key_pem = self_signed(bind_address)
    log.info("generated a self-signed certificate in memory")
    return KeyPair(chain, key_pem)


def _write_private(path: Path, data: bytes) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "wb") as file:
        file.write(data)


def load_chain(context: ssl.SSLContext, pair: KeyPair) -> None:
    """ssl loads a key pair only from files: a pair held in memory goes through anonymous
    memory files (Linux), else a private temporary directory, never kept on disk."""
    if pair.cert_file is not None and pair.key_file is not None:
        context.load_cert_chain(pair.cert_file, pair.key_file)
        return
    try:
        cert_fd, key_fd = os.memfd_create("tls-cert"), os.memfd_create("tls-key")
    except (AttributeError, OSError):  # not Linux, or a sandbox that forbids it
        pass
    else:
        try:
            os.write(cert_fd, pair.cert_pem)
            os.write(key_fd, pair.key_pem)
            context.load_cert_chain(f"/proc/self/fd/{cert_fd}", f"/proc/self/fd/{key_fd}")
        finally:
            os.close(cert_fd)
            os.close(key_fd)
        return
    with tempfile.TemporaryDirectory() as directory:
        cert, key = Path(directory) / "tls.crt", Path(directory) / "tls.key"
        cert.write_bytes(pair.cert_pem)
        _write_private(key, pair.key_pem)
        context.load_cert_chain(cert, key)


def server_context(pair: KeyPair, client_ca: str | None) -> ssl.SSLContext:
    """TLS 1.2 or later, HTTP/1.1 by ALPN; with a client CA, a client certificate is asked for
    (not required) and, when one is given, it must verify against that CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    load_chain(context, pair)
    if client_ca:
        context.load_verify_locations(cadata=client_ca)
        context.verify_mode = ssl.CERT_OPTIONAL
    return context


class ServingTLS:
    """The secure port's current TLS context, refreshed every `period` seconds: a new one is
    built when the certificate files or the client CA changed."""

    def __init__(
        self,
        pair: KeyPair,
        client_ca: Callable[[], str | None],
        period: float = 60.0,
    ) -> None:
        self.pair = pair
        self.client_ca_source = client_ca
        self.period = period
        self._stamp = pair.stamp()
        self._client_ca = self._read_client_ca(None)
        self._context = server_context(pair, self._client_ca)
        self._stopping = threading.Event()

    def context(self) -> ssl.SSLContext:
        return self._context

    def _read_client_ca(self, previous: str | None) -> str | None:
        try:
            return self.client_ca_source()
        except Exception as error:  # kube-scheduler tolerates a failed lookup, so do we
            log.warning(
                "cannot read the client CA, client certificates %s: %s",
                "keep the CA read before" if previous else "are not accepted",
                error,
            )
            return previous

    def refresh(self) -> bool:
        """Rebuilds the context if anything changed; whether it did."""
        pair = self.pair
        try:
            stamp = pair.stamp()
            if stamp != self._stamp and pair.cert_file and pair.key_file:
                pair = read_pair(pair.cert_file, pair.key_file)
        except OSError as error:
            log.warning("cannot read the serving certificate, keeping the current one: %s", error)
            return False
        client_ca = self._read_client_ca(self._client_ca)
        if stamp == self._stamp and client_ca == self._client_ca:
            return False
        try:
            context = server_context(pair, client_ca)
        except (ssl.SSLError, OSError, ValueError) as error:
            log.warning("cannot use the new serving certificate or client CA: %s", error)
            return False
        self.pair, self._stamp, self._client_ca, self._context = pair, stamp, client_ca, context
        log.info("serving certificate or client CA changed: new connections use them")
        return True

    def run(self) -> None:
        while not self._stopping.wait(self.period):
            self.refresh()

    def start(self) -> None:
        threading.Thread(target=self.run, name="tls-refresh", daemon=True).start()

    def stop(self) -> None:
        self._stopping.set()
