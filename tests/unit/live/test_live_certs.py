"""The secure port's certificates: self-signed as kube-scheduler makes them (in memory, or kept
in --cert-dir), given files, and a TLS context rebuilt when the files or the client CA change."""

from __future__ import annotations

import datetime
import ipaddress
import os
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import ExtendedKeyUsageOID

from scheduler_runtime.live.certs import PAIR_NAME, ServingTLS, self_signed, serving_pair
from scheduler_runtime.live.selfsigned import generate


def chain(pem: bytes) -> list[x509.Certificate]:
    return x509.load_pem_x509_certificates(pem)


def names(certificate: x509.Certificate) -> tuple[list[str], list[str]]:
    san = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    return (
        san.get_values_for_type(x509.DNSName),
        [str(ip) for ip in san.get_values_for_type(x509.IPAddress)],
    )


def test_a_self_signed_certificate_is_a_year_long_for_localhost_signed_by_its_own_ca() -> None:
    now = datetime.datetime(2026, 11, 23, 12, 0, tzinfo=datetime.UTC)
    pem, key_pem = generate("0.0.0.0", now)
    leaf, ca = chain(pem)
    assert names(leaf) == (["localhost"], ["127.0.0.1"])
    assert leaf.not_valid_before_utc == now - datetime.timedelta(hours=1)
    assert leaf.not_valid_after_utc == now + datetime.timedelta(days=365)
    assert leaf.issuer == ca.subject
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    usage = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usage) == [ExtendedKeyUsageOID.SERVER_AUTH]
    leaf.verify_directly_issued_by(ca)
    assert b"PRIVATE KEY" in key_pem


def test_the_scheduler_never_loads_the_cryptography_package() -> None:
    """The certificate is made by a child process: the scheduler's own memory holds the PEM,
    not the 16 MiB of the library that made it."""
    probe = (
        "import sys; import scheduler_runtime.live.run; "
        "from scheduler_runtime.live.certs import serving_pair; "
        "pair = serving_pair(None, None, None, '127.0.0.1'); "
        "assert b'BEGIN CERTIFICATE' in pair.cert_pem and b'PRIVATE KEY' in pair.key_pem; "
        "print(sorted(m for m in sys.modules if m.startswith('cryptography')))"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, check=True)
    assert ran.stdout.decode().strip() == "[]"


def test_a_child_that_fails_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "/bin/false")
    with pytest.raises(RuntimeError, match="could not make a self-signed serving certificate"):
        self_signed("127.0.0.1")


def test_a_specific_bind_address_is_named_in_the_certificate() -> None:
    leaf, _ = chain(self_signed("10.1.2.3")[0])
    assert names(leaf) == (["localhost"], ["127.0.0.1", "10.1.2.3"])
    leaf, _ = chain(self_signed("::1")[0])
    assert str(ipaddress.ip_address("::1")) in names(leaf)[1]


def test_a_self_signed_certificate_is_verified_by_its_ca() -> None:
    pem, _ = self_signed("")
    _, ca = chain(pem)
    context = ssl.create_default_context(cadata=ca.public_bytes(encoding=Encoding.PEM).decode())
    assert context.cert_store_stats()["x509_ca"] == 1


def test_without_files_or_directory_the_pair_lives_in_memory_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def no_disk(*args: object, **kwargs: object) -> None:
        raise AssertionError("a temporary directory was made")

    monkeypatch.setattr("tempfile.TemporaryDirectory", no_disk)
    pair = serving_pair(None, None, None, "0.0.0.0")
    assert pair.cert_file is None
    assert pair.stamp() is None
    tls = ServingTLS(pair, lambda: None)
    assert tls.context().verify_mode == ssl.CERT_NONE


def test_the_cert_dir_pair_is_made_once_and_kept(tmp_path: Path) -> None:
    directory = tmp_path / "certs"
    first = serving_pair(None, None, str(directory), "0.0.0.0")
    assert first.cert_file == directory / f"{PAIR_NAME}.crt"
    assert first.key_file == directory / f"{PAIR_NAME}.key"
    assert oct(os.stat(directory / f"{PAIR_NAME}.key").st_mode & 0o777) == "0o600"
    again = serving_pair(None, None, str(directory), "0.0.0.0")
    assert again.cert_pem == first.cert_pem


def test_given_files_win_and_must_come_in_pairs(tmp_path: Path) -> None:
    pem, key = self_signed("")
    (tmp_path / "tls.crt").write_bytes(pem)
    (tmp_path / "tls.key").write_bytes(key)
    pair = serving_pair(str(tmp_path / "tls.crt"), str(tmp_path / "tls.key"), str(tmp_path), "")
    assert pair.cert_pem == pem
    assert not (tmp_path / f"{PAIR_NAME}.crt").exists()
    with pytest.raises(ValueError, match="go together"):
        serving_pair(str(tmp_path / "tls.crt"), None, None, "")


def client_ca() -> str:
    pem, _ = self_signed("")
    return chain(pem)[1].public_bytes(Encoding.PEM).decode()


def test_the_context_follows_rotated_files_and_a_changed_client_ca(tmp_path: Path) -> None:
    pem, key = self_signed("")
    cert_file, key_file = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert_file.write_bytes(pem)
    key_file.write_bytes(key)
    cas = {"now": client_ca()}
    tls = ServingTLS(serving_pair(str(cert_file), str(key_file), None, ""), lambda: cas["now"])
    first = tls.context()
    assert first.verify_mode == ssl.CERT_OPTIONAL
    assert not tls.refresh()
    assert tls.context() is first

    rotated, rotated_key = self_signed("")
    cert_file.write_bytes(rotated)
    key_file.write_bytes(rotated_key)
    os.utime(cert_file, (1, 1))
    assert tls.refresh()
    assert tls.pair.cert_pem == rotated
    second = tls.context()
    assert second is not first

    cas["now"] = client_ca()
    assert tls.refresh()
    assert tls.context() is not second


def test_a_failed_client_ca_lookup_keeps_the_last_one_and_first_means_no_client_certificates() -> (
    None
):
    def unreachable() -> str:
        raise ConnectionError("api server down")

    tls = ServingTLS(serving_pair(None, None, None, ""), unreachable)
    assert tls.context().verify_mode == ssl.CERT_NONE
    up = {"now": True}
    known = client_ca()

    def lookup() -> str:
        return known if up["now"] else unreachable()

    tls = ServingTLS(serving_pair(None, None, None, ""), lookup)
    context = tls.context()
    assert context.verify_mode == ssl.CERT_OPTIONAL
    up["now"] = False
    assert not tls.refresh()
    assert tls.context() is context


def test_a_bad_rotated_pair_keeps_the_current_context(tmp_path: Path) -> None:
    pem, key = self_signed("")
    cert_file, key_file = tmp_path / "tls.crt", tmp_path / "tls.key"
    cert_file.write_bytes(pem)
    key_file.write_bytes(key)
    tls = ServingTLS(serving_pair(str(cert_file), str(key_file), None, ""), lambda: None)
    context = tls.context()
    other_key = ec.generate_private_key(ec.SECP256R1())
    key_file.write_bytes(
        other_key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    os.utime(key_file, (2, 2))
    assert not tls.refresh()
    assert tls.context() is context


def test_where_anonymous_memory_files_are_refused_a_private_temporary_directory_serves(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def refused(name: str) -> int:
        raise PermissionError("memfd_create: operation not permitted")

    monkeypatch.setattr(os, "memfd_create", refused)
    tls = ServingTLS(serving_pair(None, None, None, ""), lambda: None)
    assert tls.context().verify_mode == ssl.CERT_NONE
