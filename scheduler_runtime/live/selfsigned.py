"""The self-signed serving certificate kube-scheduler makes when it is given none
(upstream's GenerateSelfSignedCertKey), made with the cryptography package.

The scheduler runs this module as a child process (`certs.self_signed`): the package is needed
once, at start-up, and loaded it would stay in the scheduler's memory for good (about 16 MiB,
an eighth of a scheduler's at 500 nodes). The child writes the chain and the key, as PEM, to
its standard output: the key never touches a disk."""

from __future__ import annotations

import datetime
import ipaddress
import sys

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

PUBLIC_ADDRESS = "localhost"
VALIDITY = datetime.timedelta(days=365)  # upstream's self-signed certificates last a year
BACKDATE = datetime.timedelta(hours=1)  # and start an hour early, for clock skew
UNSPECIFIED = ("", "0.0.0.0", "::")  # noqa: S104 - the addresses meaning "all interfaces"


def generate(bind_address: str, now: datetime.datetime | None = None) -> tuple[bytes, bytes]:
    """A serving certificate for localhost (and 127.0.0.1, and a specific bind address) signed
    by a CA made for it, as upstream's GenerateSelfSignedCertKey: the certificate chain (the
    certificate, then the CA) and the key, as PEM."""
    now = now or datetime.datetime.now(datetime.UTC)
    stamp = int(now.timestamp())
    ips: list[ipaddress.IPv4Address | ipaddress.IPv6Address] = [ipaddress.ip_address("127.0.0.1")]
    dns = [PUBLIC_ADDRESS]
    if bind_address not in UNSPECIFIED:
        try:
            ips.append(ipaddress.ip_address(bind_address))
        except ValueError:
            dns.append(bind_address)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{PUBLIC_ADDRESS}-ca@{stamp}")])
    ca = (
        _builder(ca_name, ca_name, ca_key.public_key(), now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=True), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{PUBLIC_ADDRESS}@{stamp}")])
    names: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
    names += [x509.IPAddress(ip) for ip in ips]
    certificate = (
        _builder(name, ca_name, key.public_key(), now)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(cert_sign=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectAlternativeName(names), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    chain = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in (certificate, ca))
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    return chain, key_pem


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    now: datetime.datetime,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + VALIDITY)
    )


def _key_usage(*, cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=not cert_sign,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=cert_sign,
        crl_sign=False,
        encipher_only=False,
        decipher_only=False,
    )


def main() -> None:
    """`python -m scheduler_runtime.live.selfsigned BIND_ADDRESS`: the chain, then the key."""
    chain, key = generate(sys.argv[1] if len(sys.argv) > 1 else "")
    sys.stdout.buffer.write(chain + key)


if __name__ == "__main__":
    main()
