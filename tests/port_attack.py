"""Attacks on a scheduler's secure port, and a prober that measures /healthz as the kubelet does.

The attackers run in a process of their own (`python tests/port_attack.py MODE PORT SECONDS`),
so the load they make does not share the prober's interpreter:

- `anonymous`: 300 clients that each connect, complete the TLS handshake, ask `GET /healthz`
  without credentials, read the answer, close and start again;
- `bogus-token`: the same, each asking `GET /metrics` with a new made-up bearer token (a
  TokenReview each);
- `starve`: 256 kept-alive connections with a real ServiceAccount token that has no rights,
  each pipelining requests for paths never asked before (a SubjectAccessReview each, a 403).

Only 127.0.0.1 is attacked, for a bounded time; the process stops by itself and prints what it
did as one JSON line.

The prober opens a fresh connection for every probe, every 0.5 s, and gives each probe one
second in all (connect, handshake, answer): the kubelet's defaults for a probe."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
PROBE_PERIOD = 0.5
PROBE_TIMEOUT = 1.0
CHURN_CLIENTS = 300
STARVING_CONNECTIONS = 256
PIPELINED = 8  # requests a starving connection sends before reading the answers


def client_context() -> ssl.SSLContext:
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the scheduler's self-signed certificate
    return context


# ----- the prober


@dataclass
class Probes:
    """What the prober saw: each answered probe's time, and each failure's reason."""

    times: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    answered: list[bool] = field(default_factory=list)  # each probe in turn

    def longest_failing_run(self) -> int:
        """The most probes in a row that failed: the kubelet restarts a container after 3."""
        longest = run = 0
        for ok in self.answered:
            run = 0 if ok else run + 1
            longest = max(longest, run)
        return longest

    def summary(self) -> str:
        count = len(self.times) + len(self.failures)
        if not self.times:
            return f"{count} probes, all failed: {Counter(self.failures).most_common(3)}"
        ordered = sorted(self.times)
        p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
        text = (
            f"{count} probes, {len(self.failures)} failed; answered in p50 "
            f"{statistics.median(ordered) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
            f"max {ordered[-1] * 1000:.0f} ms"
        )
        if self.failures:
            text += f"; failures: {Counter(self.failures).most_common(3)}"
        return text


def probe(port: int, context: ssl.SSLContext, path: str = "/healthz") -> float:
    """One probe as the kubelet makes it; its time, or raises (TimeoutError past a second)."""
    started = time.monotonic()
    deadline = started + PROBE_TIMEOUT

    def left() -> float:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError("no answer within a second")
        return remaining

    with socket.create_connection((HOST, port), timeout=left()) as raw:
        raw.settimeout(left())
        with context.wrap_socket(raw, server_hostname=HOST) as sock:
            sock.settimeout(left())
            sock.sendall(
                f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUser-Agent: kube-probe/1.36\r\n"
                "Accept: */*\r\nConnection: close\r\n\r\n".encode()
            )
            answer = b""
            while b"\r\n\r\n" not in answer:
                sock.settimeout(left())
                chunk = sock.recv(4096)
                if not chunk:
                    break
                answer += chunk
    status = answer.split(b" ", 2)[1:2]
    if status != [b"200"]:
        raise ConnectionError(f"answered {answer[:40]!r}")
    left()
    return time.monotonic() - started


class Prober:
    """Probes `port` every PROBE_PERIOD seconds on a thread until stopped."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.probes = Probes()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="prober", daemon=True)
        self._context = client_context()

    def __enter__(self) -> Prober:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        next_probe = time.monotonic()
        while not self._stop.is_set():
            try:
                self.probes.times.append(probe(self.port, self._context))
                self.probes.answered.append(True)
            except (OSError, ssl.SSLError) as error:
                self.probes.failures.append(f"{type(error).__name__}: {error}"[:80])
                self.probes.answered.append(False)
            next_probe += PROBE_PERIOD
            self._stop.wait(max(0.0, next_probe - time.monotonic()))


# ----- the attackers (in a process of their own)


@dataclass
class Tally:
    answered: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


def _status(head: bytes) -> str:
    parts = head.split(b" ", 2)
    return parts[1].decode() if len(parts) > 1 else "?"


async def _read_answer(reader: asyncio.StreamReader) -> str:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    await reader.readexactly(length)
    return _status(head)


async def _churn(port: int, until: float, token: bool, tally: Tally) -> None:
    context = client_context()
    while time.monotonic() < until:
        writer = None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(HOST, port, ssl=context, server_hostname=HOST), 10
            )
            if token:
                request = (
                    f"GET /metrics HTTP/1.1\r\nHost: {HOST}\r\n"
                    f"Authorization: Bearer bogus-{uuid.uuid4().hex}\r\n\r\n"
                )
            else:
                request = f"GET /healthz HTTP/1.1\r\nHost: {HOST}\r\n\r\n"
            writer.write(request.encode())
            tally.answered[await asyncio.wait_for(_read_answer(reader), 10)] += 1
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError, TimeoutError) as error:
            tally.errors[type(error).__name__] += 1
            await asyncio.sleep(0.01)
        finally:
            if writer is not None:
                writer.transport.abort()


async def _starve(port: int, until: float, token: str, tally: Tally) -> None:
    context = client_context()
    while time.monotonic() < until:
        writer = None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(HOST, port, ssl=context, server_hostname=HOST), 10
            )
            while time.monotonic() < until:
                batch = "".join(
                    f"GET /x/{uuid.uuid4().hex} HTTP/1.1\r\nHost: {HOST}\r\n"
                    f"Authorization: Bearer {token}\r\n\r\n"
                    for _ in range(PIPELINED)
                )
                writer.write(batch.encode())
                for _ in range(PIPELINED):
                    status = await asyncio.wait_for(_read_answer(reader), 30)
                    tally.answered[status] += 1
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError, TimeoutError) as error:
            tally.errors[type(error).__name__] += 1
            await asyncio.sleep(0.01)
        finally:
            if writer is not None:
                writer.transport.abort()


async def attack(mode: str, port: int, seconds: float, token: str | None) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds
    if mode == "starve":
        assert token, "starve needs --token"
        clients = [_starve(port, until, token, tally) for _ in range(STARVING_CONNECTIONS)]
    else:
        clients = [_churn(port, until, mode == "bogus-token", tally) for _ in range(CHURN_CLIENTS)]
    await asyncio.gather(*clients)
    return tally


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=("anonymous", "bogus-token", "starve"))
    parser.add_argument("port", type=int)
    parser.add_argument("seconds", type=float)
    parser.add_argument("--token")
    args = parser.parse_args()
    assert args.seconds <= 120, "attacks are bounded"
    tally = asyncio.run(attack(args.mode, args.port, args.seconds, args.token))
    print(json.dumps({"answered": tally.answered, "errors": tally.errors}))


# ----- running one attack from a test


@dataclass
class Outcome:
    probes: Probes
    attackers: dict[str, dict[str, int]]
    serves_after: bool

    def summary(self) -> str:
        answered = sum(self.attackers.get("answered", {}).values())
        return (
            f"{self.probes.summary()}; the attackers got {answered} answers "
            f"({dict(self.attackers.get('answered', {}))}, errors "
            f"{dict(self.attackers.get('errors', {}))}); afterwards the port "
            + ("serves" if self.serves_after else "is dead")
        )


def run_attack(mode: str, port: int, seconds: float, token: str | None = None) -> Outcome:
    """Attacks `port` for `seconds` while probing it; then probes it once more."""
    command = [sys.executable, str(Path(__file__)), mode, str(port), str(seconds)]
    if token:
        command += ["--token", token]
    with Prober(port) as prober:
        time.sleep(1.0)  # a few probes before the attack, as a baseline
        attackers = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=seconds + 60,
            check=False,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
    if attackers.returncode != 0:
        raise AssertionError(f"the attack failed: {attackers.stderr[-2000:]}")
    time.sleep(1.0)
    try:
        probe(port, client_context())
        serves_after = True
    except (OSError, ssl.SSLError):
        serves_after = False
    return Outcome(prober.probes, json.loads(attackers.stdout), serves_after)


if __name__ == "__main__":
    main()
