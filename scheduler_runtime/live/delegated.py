"""Delegated authentication and authorization for the secure port, as kube-scheduler's
(k8s.io/apiserver's delegating authenticator and authorizer): bearer tokens are checked with a
TokenReview, client certificates against the cluster's client CA (by the TLS layer), and every
path but the always-allowed ones with a SubjectAccessReview for a non-resource URL. Answers
are cached briefly (10 s by default, as upstream), so a scrape every few seconds costs the API
server a review now and then, not one per request.

One difference from upstream, on purpose: a request without credentials is accepted only on
the always-allowed paths (as the API server's anonymous authenticator does when given path
conditions); anywhere else it gets 401 instead of a SubjectAccessReview for system:anonymous."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import orjson

log = logging.getLogger(__name__)

DEFAULT_TTL = 10.0  # upstream's token, authorized and unauthorized cache TTLs
DEFAULT_ALWAYS_ALLOW = ("/healthz", "/readyz", "/livez")
PRIVILEGED_GROUPS = ("system:masters",)  # upstream's AlwaysAllowGroups
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
REVIEW_TIMEOUT = 10.0  # upstream's TokenRequestTimeout and authorization client timeout
# Upstream's webhook retry backoff (500 ms, x1.5), with fewer steps: a request waits at most a
# few seconds for a review, then fails and the client asks again.
RETRY_DELAYS = (0.5, 0.75)
MAX_CACHED = 4096

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"  # noqa: S105 - a path
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"


class Api(Protocol):
    """What the reviews need of live.kube.Kube."""

    def request(
        self, method: str, path: str, *, body: Any = None, timeout: float | None = None
    ) -> dict[str, Any]: ...


class ReviewError(Exception):
    """The API server could not be asked (or answered with an error)."""


@dataclass(frozen=True)
class User:
    """Who a request comes from, as user.Info: name, uid, groups and extra."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def of(
        cls,
        name: str,
        uid: str = "",
        groups: Iterable[str] = (),
        extra: Mapping[str, Iterable[str]] | None = None,
    ) -> User:
        """A user with system:authenticated among its groups, as upstream's authenticated
        group adder makes sure."""
        listed = tuple(groups)
        if AUTHENTICATED not in listed and UNAUTHENTICATED not in listed:
            listed = (*listed, AUTHENTICATED)
        pairs = tuple(sorted((key, tuple(values)) for key, values in (extra or {}).items()))
        return cls(name, uid, listed, pairs)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, as upstream's bearertoken
    authenticator reads it; None when there is none (another scheme, or an empty token)."""
    value = (authorization or "").strip()
    if not value:
        return None
    parts = value.split(" ", 2)
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


def certificate_user(peer: Mapping[str, Any] | None) -> User | None:
    """The user of a verified client certificate (ssl's getpeercert()): its common name, with
    its organizations as groups, as upstream's x509 authenticator maps them."""
    if not peer:
        return None
    name = ""
    groups: list[str] = []
    for rdn in peer.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                name = value
            elif key == "organizationName":
                groups.append(value)
    return User.of(name, groups=groups) if name else None


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass
class _Pending(Generic[V]):
    done: threading.Event = field(default_factory=threading.Event)
    value: V | None = None
    error: BaseException | None = None


class ExpiringCache(Generic[K, V]):
    """Answers kept for a time that depends on the answer; errors are not kept. Concurrent
    misses for one key wait for a single lookup (as upstream's cached token authenticator
    does), and the least recently used entries go beyond `max_entries`."""

    def __init__(
        self,
        ttl: Callable[[V], float],
        max_entries: int = MAX_CACHED,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.ttl = ttl
        self.max_entries = max_entries
        self.clock = clock
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()
        self._pending: dict[K, _Pending[V]] = {}
        self._lock = threading.Lock()

    def get(self, key: K, lookup: Callable[[], V]) -> V:
        with self._lock:
            kept = self._entries.get(key)
            if kept is not None and kept[0] > self.clock():
                self._entries.move_to_end(key)
                return kept[1]
            pending = self._pending.get(key)
            owner = pending is None
            if pending is None:
                pending = self._pending[key] = _Pending()
        if not owner:
            pending.done.wait()
            if pending.error is not None:
                raise pending.error
            return pending.value  # type: ignore[return-value]
        try:
            value = lookup()
        except BaseException as error:
            pending.error = error
            raise
        else:
            pending.value = value
            with self._lock:
                ttl = self.ttl(value)
                if ttl > 0:
                    self._entries[key] = (self.clock() + ttl, value)
                    self._entries.move_to_end(key)
                    while len(self._entries) > self.max_entries:
                        self._entries.popitem(last=False)
            return value
        finally:
            with self._lock:
                del self._pending[key]
            pending.done.set()

    def __len__(self) -> int:
        return len(self._entries)


def _ask(api: Api, path: str, body: dict[str, Any], sleep: Callable[[float], None]) -> Any:
    """POSTs a review, retrying a failed call twice after a short pause."""
    for delay in (*RETRY_DELAYS, None):
        try:
            return api.request("POST", path, body=body, timeout=REVIEW_TIMEOUT)
        except Exception as error:  # an ApiError, a transport error, a timeout
            if delay is None:
                raise ReviewError(f"{type(error).__name__}: {error}") from error
            sleep(delay)
    raise AssertionError("unreachable")


class TokenReviewer:
    """Bearer tokens checked with TokenReviews, kept `ttl` seconds (a rejection too); the cache
    is keyed by a keyed hash of the token, so tokens themselves are not kept."""

    def __init__(
        self,
        api: Api,
        ttl: float = DEFAULT_TTL,
        audiences: Sequence[str] = (),
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api = api
        self.audiences = list(audiences)
        self.sleep = sleep
        self._key = os.urandom(32)
        self.cache: ExpiringCache[bytes, User | None] = ExpiringCache(lambda _: ttl, clock=clock)

    def review(self, token: str) -> User | None:
        """The token's user, None when the API server does not accept the token."""
        key = hmac.new(self._key, token.encode(), hashlib.sha256).digest()
        return self.cache.get(key, lambda: self._ask(token))

    def _ask(self, token: str) -> User | None:
        spec: dict[str, Any] = {"token": token}
        if self.audiences:
            spec["audiences"] = self.audiences
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
        status = _ask(self.api, TOKEN_REVIEWS, review, self.sleep).get("status") or {}
        if status.get("error"):
            log.debug("token review: %s", status["error"])
        if not status.get("authenticated"):
            return None
        user = status.get("user") or {}
        return User.of(
            str(user.get("username", "")),
            str(user.get("uid", "")),
            user.get("groups") or (),
            user.get("extra") or {},
        )


@dataclass(frozen=True)
class Verdict:
    allowed: bool
    reason: str = ""


class AccessReviewer:
    """SubjectAccessReviews for non-resource URLs; an allowed answer is kept `allowed_ttl`
    seconds, a refusal `denied_ttl` (upstream's authorized and unauthorized TTLs)."""

    def __init__(
        self,
        api: Api,
        allowed_ttl: float = DEFAULT_TTL,
        denied_ttl: float = DEFAULT_TTL,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.api = api
        self.sleep = sleep
        self.cache: ExpiringCache[tuple[User, str, str], Verdict] = ExpiringCache(
            lambda verdict: allowed_ttl if verdict.allowed else denied_ttl, clock=clock
        )

    def review(self, user: User, verb: str, path: str) -> Verdict:
        return self.cache.get((user, verb, path), lambda: self._ask(user, verb, path))

    def _ask(self, user: User, verb: str, path: str) -> Verdict:
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {key: list(values) for key, values in user.extra}
        review = {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": spec,
        }
        status = _ask(self.api, ACCESS_REVIEWS, review, self.sleep).get("status") or {}
        return Verdict(bool(status.get("allowed")), str(status.get("reason") or ""))


class AlwaysAllowPaths:
    """Paths anyone may get (--authorization-always-allow-paths): exact, or a prefix ending
    in `*`, as upstream's path authorizer matches them."""

    def __init__(self, paths: Iterable[str]) -> None:
        self.exact: set[str] = set()
        self.prefixes: list[str] = []
        for given in paths:
            path = given.removeprefix("/")
            if "*" in path[:-1]:
                raise ValueError(f"only trailing * allowed in {given!r}")
            if path.endswith("*"):
                self.prefixes.append(path[:-1])
            else:
                self.exact.add(path)

    def __contains__(self, path: str) -> bool:
        trimmed = path.removeprefix("/")
        return trimmed in self.exact or any(trimmed.startswith(p) for p in self.prefixes)


@dataclass(frozen=True)
class Refusal:
    """An answer in place of the endpoint's: 401, 403 or 500, body and content type."""

    code: int
    body: bytes
    content_type: str = "application/json"


def _status(code: int, reason: str, message: str) -> bytes:
    """A metav1.Status, as upstream's handlers write it."""
    document: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
    }
    if code == 403:
        document["details"] = {}
    document["code"] = code
    return orjson.dumps(document)


UNAUTHORIZED = Refusal(401, _status(401, "Unauthorized", "Unauthorized"))


def forbidden(user: User, verb: str, path: str, reason: str) -> Refusal:
    """Upstream's message for a refused non-resource request."""
    message = f'forbidden: User "{_go_escape(user.name)}" cannot {verb} path "{_go_escape(path)}"'
    if reason:
        message += f": {reason}"
    return Refusal(403, _status(403, "Forbidden", message))


def internal_error(request_uri: str, error: Exception) -> Refusal:
    body = f'Internal Server Error: "{_go_escape(request_uri)}": {error}\n'.encode()
    return Refusal(500, body, "text/plain; charset=utf-8")


def _go_escape(text: str) -> str:
    """Go's %q for the common case: backslashes and quotes escaped, controls as \\xNN."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in escaped)


@dataclass(frozen=True)
class Credentials:
    """What a request brings: its Authorization header and its verified client certificate."""

    authorization: str | None = None
    certificate: User | None = None


class Gate:
    """Decides whether a request reaches its endpoint: None when it may, else the refusal."""

    def __init__(
        self,
        tokens: TokenReviewer | None,
        access: AccessReviewer | None,
        always_allow: AlwaysAllowPaths | None = None,
        privileged_groups: Sequence[str] = PRIVILEGED_GROUPS,
    ) -> None:
        self.tokens = tokens
        self.access = access
        self.always_allow = always_allow or AlwaysAllowPaths(DEFAULT_ALWAYS_ALLOW)
        self.privileged_groups = frozenset(privileged_groups)

    def needs_review(self, path: str, credentials: Credentials) -> bool:
        """Whether check() may call the API server (so had better not run on the event loop)."""
        if self.tokens is not None and bearer_token(credentials.authorization) is not None:
            return True
        return path not in self.always_allow and credentials.certificate is not None

    def check(
        self, method: str, path: str, request_uri: str, credentials: Credentials
    ) -> Refusal | None:
        authenticated = self.authenticate(credentials)
        if isinstance(authenticated, Refusal):
            return authenticated
        return self.authorize(authenticated, method, path, request_uri)

    def authenticate(self, credentials: Credentials) -> User | Refusal | None:
        """The client certificate's user, else the bearer token's; None for a request without
        credentials (anonymous), 401 for a token the API server does not accept."""
        if credentials.certificate is not None:
            return credentials.certificate
        token = bearer_token(credentials.authorization) if self.tokens is not None else None
        if token is None or self.tokens is None:
            return None
        try:
            user = self.tokens.review(token)
        except ReviewError as error:
            log.warning("unable to authenticate the request: %s", error)
            return UNAUTHORIZED
        return UNAUTHORIZED if user is None else user

    def authorize(
        self, user: User | None, method: str, path: str, request_uri: str
    ) -> Refusal | None:
        if path in self.always_allow or (
            user is not None and self.privileged_groups.intersection(user.groups)
        ):
            return None
        if user is None:
            return UNAUTHORIZED
        verb = method.lower()
        if self.access is None:
            return forbidden(user, verb, path, "")
        try:
            verdict = self.access.review(user, verb, path)
        except ReviewError as error:
            log.warning("unable to authorize %s %s for %s: %s", verb, path, user.name, error)
            return internal_error(request_uri, error)
        if verdict.allowed:
            return None
        log.debug("forbidden: %s %s for %s: %s", verb, path, user.name, verdict.reason)
        return forbidden(user, verb, path, verdict.reason)
