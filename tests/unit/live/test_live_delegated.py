"""Delegated authentication and authorization as kube-scheduler's secure port does them: bearer
tokens by TokenReview, client certificates by their subject, SubjectAccessReviews for
non-resource URLs, upstream's always-allowed paths and messages, and the brief caches."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest

from scheduler_runtime.live.delegated import (
    ACCESS_REVIEWS,
    TOKEN_REVIEWS,
    UNAUTHORIZED,
    AccessReviewer,
    AlwaysAllowPaths,
    Credentials,
    ExpiringCache,
    Gate,
    ReviewError,
    TokenReviewer,
    User,
    bearer_token,
    certificate_user,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeApi:
    """Answers TokenReviews from `tokens` and SubjectAccessReviews from `allowed`."""

    def __init__(self) -> None:
        self.tokens: dict[str, dict[str, Any]] = {}
        self.allowed: dict[tuple[str, str], str] = {}  # (user, path) -> reason
        self.denied_reason = ""
        self.failures = 0  # the next N calls fail
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def request(
        self, method: str, path: str, *, body: Any = None, timeout: float | None = None
    ) -> dict[str, Any]:
        assert method == "POST"
        assert timeout == 10.0
        self.calls.append((path, body))
        if self.failures:
            self.failures -= 1
            raise ConnectionError("connection refused")
        if path == TOKEN_REVIEWS:
            user = self.tokens.get(body["spec"]["token"])
            return {"status": {"authenticated": True, "user": user} if user else {}}
        assert path == ACCESS_REVIEWS
        spec = body["spec"]
        key = (spec["user"], spec["nonResourceAttributes"]["path"])
        if key in self.allowed:
            return {"status": {"allowed": True, "reason": self.allowed[key]}}
        return {"status": {"allowed": False, "reason": self.denied_reason}}


def no_sleep(_: float) -> None:
    pass


READER = {
    "username": "system:serviceaccount:monitoring:prometheus",
    "uid": "u-1",
    "groups": ["system:serviceaccounts", "system:authenticated"],
    "extra": {"authentication.kubernetes.io/pod-name": ["prometheus-0"]},
}


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("", None),
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("  Bearer abc  ", "abc"),
        ("Bearer abc def", "abc"),
        ("Bearer  abc", None),  # the space before the token: an empty token
        ("Bearer", None),
        ("Basic dXNlcjpwYXNz", None),
    ],
)
def test_bearer_tokens_are_read_as_upstream_reads_them(
    header: str | None, token: str | None
) -> None:
    assert bearer_token(header) == token


def test_a_client_certificate_names_the_user_and_its_organizations_the_groups() -> None:
    peer = {
        "subject": (
            (("organizationName", "system:masters"),),
            (("organizationName", "ops"),),
            (("commonName", "kwok-admin"),),
        )
    }
    assert certificate_user(peer) == User(
        "kwok-admin", groups=("system:masters", "ops", "system:authenticated")
    )
    assert certificate_user(None) is None
    assert certificate_user({}) is None
    assert certificate_user({"subject": ((("organizationName", "x"),),)}) is None


def test_the_cache_keeps_an_answer_for_its_ttl_and_never_keeps_an_error() -> None:
    clock = Clock()
    cache: ExpiringCache[str, str] = ExpiringCache(
        lambda v: 10.0 if v == "yes" else 2.0, clock=clock
    )
    calls: list[str] = []

    def lookup(answer: str) -> str:
        calls.append(answer)
        return answer

    assert cache.get("a", lambda: lookup("yes")) == "yes"
    clock.now += 9.9
    assert cache.get("a", lambda: lookup("other")) == "yes"
    clock.now += 0.2
    assert cache.get("a", lambda: lookup("no")) == "no"
    clock.now += 2.1
    assert cache.get("a", lambda: lookup("no")) == "no"
    assert calls == ["yes", "no", "no"]

    def failing() -> str:
        raise ReviewError("down")

    with pytest.raises(ReviewError):
        cache.get("b", failing)
    assert cache.get("b", lambda: lookup("yes")) == "yes"


def test_the_cache_forgets_the_least_recently_used_beyond_its_size() -> None:
    cache: ExpiringCache[int, int] = ExpiringCache(lambda _: 60.0, max_entries=3)
    for key in range(3):
        cache.get(key, lambda k=key: k)  # type: ignore[misc]
    cache.get(0, lambda: -1)  # used: stays
    cache.get(3, lambda: 3)
    assert len(cache) == 3
    assert cache.get(1, lambda: -1) == -1  # the least recently used went
    assert cache.get(0, lambda: -1) == 0


def test_concurrent_misses_for_one_key_wait_for_a_single_lookup() -> None:
    cache: ExpiringCache[str, int] = ExpiringCache(lambda _: 10.0)
    release = threading.Event()
    calls = []

    def slow() -> int:
        calls.append(1)
        release.wait(5)
        return 42

    results: list[int] = []
    threads = [
        threading.Thread(target=lambda: results.append(cache.get("k", slow))) for _ in range(8)
    ]
    for thread in threads:
        thread.start()
    time.sleep(0.2)
    release.set()
    for thread in threads:
        thread.join(5)
    assert results == [42] * 8
    assert len(calls) == 1


def test_token_reviews_are_cached_for_their_ttl_rejections_too() -> None:
    api, clock = FakeApi(), Clock()
    api.tokens["good"] = READER
    reviewer = TokenReviewer(api, ttl=10.0, sleep=no_sleep, clock=clock)
    user = reviewer.review("good")
    assert user == User(
        READER["username"],
        "u-1",
        ("system:serviceaccounts", "system:authenticated"),
        (("authentication.kubernetes.io/pod-name", ("prometheus-0",)),),
    )
    assert reviewer.review("bad") is None
    assert reviewer.review("good") == user
    assert reviewer.review("bad") is None
    assert len(api.calls) == 2
    assert api.calls[0] == (
        TOKEN_REVIEWS,
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "TokenReview",
            "spec": {"token": "good"},
        },
    )
    clock.now += 10.5
    reviewer.review("good")
    reviewer.review("bad")
    assert len(api.calls) == 4


def test_a_failed_review_is_retried_then_reported_and_not_cached() -> None:
    api = FakeApi()
    api.tokens["good"] = READER
    delays: list[float] = []
    reviewer = TokenReviewer(api, sleep=delays.append)
    api.failures = 2
    assert reviewer.review("good") is not None  # the third attempt answers
    assert delays == [0.5, 0.75]
    api.failures = 3
    with pytest.raises(ReviewError, match="connection refused"):
        reviewer.review("other")
    api.tokens["other"] = READER
    assert reviewer.review("other") is not None


def test_access_reviews_ask_for_the_path_and_keep_allowed_and_denied_apart() -> None:
    api, clock = FakeApi(), Clock()
    reviewer = AccessReviewer(api, allowed_ttl=10.0, denied_ttl=2.0, sleep=no_sleep, clock=clock)
    user = User.of("alice", "u-2", ["devs"], {"scopes": ["a", "b"]})
    api.allowed[("alice", "/metrics")] = "RBAC: allowed by ClusterRoleBinding"
    assert reviewer.review(user, "get", "/metrics").allowed
    assert not reviewer.review(user, "get", "/explain/ns/pod").allowed
    assert api.calls[0] == (
        ACCESS_REVIEWS,
        {
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SubjectAccessReview",
            "spec": {
                "user": "alice",
                "groups": ["devs", "system:authenticated"],
                "nonResourceAttributes": {"path": "/metrics", "verb": "get"},
                "uid": "u-2",
                "extra": {"scopes": ["a", "b"]},
            },
        },
    )
    api.allowed[("alice", "/explain/ns/pod")] = ""
    clock.now += 2.5  # the refusal expired, the permission not
    assert reviewer.review(user, "get", "/explain/ns/pod").allowed
    assert reviewer.review(user, "get", "/metrics").allowed
    assert len(api.calls) == 3


@pytest.mark.parametrize(
    ("paths", "path", "allowed"),
    [
        (["/healthz", "/readyz", "/livez"], "/healthz", True),
        (["/healthz"], "/healthz/", False),
        (["/healthz"], "/healthzz", False),
        (["/healthz/*"], "/healthz/ping", True),
        (["/healthz/*"], "/healthz", False),
        (["/"], "/", True),
        (["/"], "/metrics", False),
        (["/*"], "/metrics", True),
        ([], "/healthz", False),
    ],
)
def test_always_allowed_paths_match_exactly_or_by_trailing_star(
    paths: list[str], path: str, allowed: bool
) -> None:
    assert (path in AlwaysAllowPaths(paths)) is allowed


def test_a_star_inside_an_always_allowed_path_is_refused() -> None:
    with pytest.raises(ValueError, match=r"only trailing \* allowed in '/a\*/b'"):
        AlwaysAllowPaths(["/a*/b"])


def gate(api: FakeApi) -> Gate:
    return Gate(TokenReviewer(api, sleep=no_sleep), AccessReviewer(api, sleep=no_sleep), None)


def status(refusal: Any) -> dict[str, Any]:
    assert refusal is not None
    document: dict[str, Any] = json.loads(refusal.body)
    return document


def test_without_credentials_only_the_always_allowed_paths_answer() -> None:
    api = FakeApi()
    checked = gate(api)
    for path in ("/healthz", "/livez", "/readyz"):
        assert checked.check("GET", path, path, Credentials()) is None
    refusal = checked.check("GET", "/metrics", "/metrics", Credentials())
    assert refusal == UNAUTHORIZED
    assert status(refusal) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    assert api.calls == []


def test_a_token_the_api_server_rejects_gets_401_even_on_an_open_path() -> None:
    api = FakeApi()
    refusal = gate(api).check("GET", "/healthz", "/healthz", Credentials("Bearer forged"))
    assert refusal == UNAUTHORIZED


def test_a_reviewed_token_without_permission_gets_upstreams_403() -> None:
    api = FakeApi()
    api.tokens["t"] = READER
    refusal = gate(api).check("GET", "/metrics", "/metrics", Credentials("Bearer t"))
    assert refusal is not None
    assert refusal.code == 403
    assert status(refusal) == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'forbidden: User "system:serviceaccount:monitoring:prometheus" cannot get '
        'path "/metrics"',
        "reason": "Forbidden",
        "details": {},
        "code": 403,
    }
    api.denied_reason = "no RBAC policy matched"
    head = gate(api).check("HEAD", "/explain/a/b", "/explain/a/b", Credentials("Bearer t"))
    assert status(head)["message"] == (
        'forbidden: User "system:serviceaccount:monitoring:prometheus" cannot head path '
        '"/explain/a/b": no RBAC policy matched'
    )


def test_a_permitted_token_passes() -> None:
    api = FakeApi()
    api.tokens["t"] = READER
    api.allowed[(READER["username"], "/metrics")] = ""
    assert gate(api).check("GET", "/metrics", "/metrics", Credentials("Bearer t")) is None


def test_an_unreachable_api_server_is_401_for_tokens_and_500_for_access() -> None:
    api = FakeApi()
    checked = gate(api)
    api.failures = 3
    assert checked.check("GET", "/metrics", "/metrics", Credentials("Bearer t")) == UNAUTHORIZED
    api.tokens["t"] = READER
    api.failures = 0
    assert checked.tokens is not None
    checked.tokens.review("t")  # cached now
    api.failures = 3
    refusal = checked.check("GET", "/metrics", "/metrics?x=1", Credentials("Bearer t"))
    assert refusal is not None
    assert refusal.code == 500
    assert refusal.body.startswith(b'Internal Server Error: "/metrics?x=1": ')


def test_privileged_groups_and_certificates_need_no_review() -> None:
    api = FakeApi()
    admin = User.of("kwok-admin", groups=["system:masters"])
    checked = gate(api)
    assert checked.check("GET", "/metrics", "/metrics", Credentials(certificate=admin)) is None
    # The certificate's user wins over a token, as upstream's x509 authenticator comes first.
    assert checked.check("GET", "/metrics", "/metrics", Credentials("Bearer junk", admin)) is None
    assert api.calls == []
    alice = User.of("alice")
    refusal = checked.check("GET", "/metrics", "/metrics", Credentials(certificate=alice))
    assert refusal is not None
    assert refusal.code == 403
    assert [path for path, _ in api.calls] == [ACCESS_REVIEWS]


def test_without_reviewers_tokens_are_ignored_and_everything_else_is_forbidden() -> None:
    checked = Gate(None, None)
    assert checked.check("GET", "/metrics", "/metrics", Credentials("Bearer t")) == UNAUTHORIZED
    refusal = checked.check("GET", "/metrics", "/metrics", Credentials(certificate=User.of("a")))
    assert refusal is not None
    assert refusal.code == 403


def test_a_hostile_user_name_stays_inside_the_message() -> None:
    api = FakeApi()
    api.tokens["t"] = {"username": 'evil"\n{"x":1}'}
    refusal = gate(api).check("GET", "/metrics", "/metrics", Credentials("Bearer t"))
    assert status(refusal)["message"].startswith('forbidden: User "evil\\"\\x0a{\\"x\\":1}"')
