"""SubjectAccessReviews (``authorization.k8s.io/v1``), answered from a policy the test sets.

The real API server asks its authorizers (RBAC, webhooks) whether the spec's user, with its groups,
uid and extra, may do ``resourceAttributes``' verb; here the answer comes from grants
(``allow``) or from a function of the spec (``policy``), and nothing is allowed until a test
says so. Every review that passes validation is recorded (``reviews``), so tests can count them.
Validation follows the real server's: exactly one of ``resourceAttributes`` and
``nonResourceAttributes``, and a user or a group (422 Invalid otherwise). Answered 201 with the
review and its ``status``, as the real server answers a create.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import errors
from .resources import ResourceType

PATH = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
RESOURCE = ResourceType("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview",
                        namespaced=False, verbs=("create",))

Spec = dict[str, Any]
Policy = Callable[[Spec], bool]


@dataclass(frozen=True)
class Grant:
    """One allowed (subject, verb, group, resource, namespace, name); ``*`` matches anything."""

    user: str | None
    group: str | None
    verb: str
    api_group: str
    resource: str
    namespace: str
    name: str

    def allows(self, spec: Spec) -> bool:
        attributes = spec.get("resourceAttributes") or {}
        subject = (self.user is not None and spec.get("user") == self.user) or (
            self.group is not None and self.group in (spec.get("groups") or []))
        wanted = (self.verb, self.api_group, self.resource, self.namespace, self.name)
        asked = (attributes.get(k, "") for k in ("verb", "group", "resource", "namespace", "name"))
        return subject and all(w in ("*", a) for w, a in zip(wanted, asked, strict=True))


class Authorizer:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._grants: list[Grant] = []
        self._policy: Policy | None = None
        self._reviews: list[Spec] = []

    def allow(self, *, user: str | None = None, group: str | None = None, verb: str = "get",
              api_group: str = "resource.k8s.io", resource: str = "resourceclaimtemplates",
              namespace: str = "*", name: str = "*") -> None:
        """Grant ``user`` (or everyone in ``group``) the verb on the resource."""
        assert (user is None) != (group is None), "a grant names a user or a group"
        with self._lock:
            self._grants.append(Grant(user, group, verb, api_group, resource, namespace, name))

    def set_policy(self, policy: Policy | None) -> None:
        """Answer with ``policy(spec)`` instead of the grants (None: back to the grants)."""
        with self._lock:
            self._policy = policy

    @property
    def reviews(self) -> list[Spec]:
        """The spec of every review answered, in order."""
        with self._lock:
            return copy.deepcopy(self._reviews)

    def clear(self) -> None:
        with self._lock:
            self._grants.clear()
            self._policy = None
            self._reviews.clear()

    def review(self, body: Any) -> dict[str, Any]:
        spec = body.get("spec") if isinstance(body, dict) else None
        spec = spec if isinstance(spec, dict) else {}
        if bool(spec.get("resourceAttributes")) == bool(spec.get("nonResourceAttributes")):
            raise errors.invalid(RESOURCE, "", "spec.resourceAttributes", "Required value",
                                 "exactly one of nonResourceAttributes or resourceAttributes must be specified")
        if not spec.get("user") and not spec.get("groups"):
            raise errors.invalid(RESOURCE, "", "spec.user", "Invalid value",
                                 "at least one of user or group must be specified", "")
        with self._lock:
            self._reviews.append(copy.deepcopy(spec))
            policy, grants = self._policy, list(self._grants)
        allowed = policy(spec) if policy is not None else any(g.allows(spec) for g in grants)
        status: dict[str, Any] = {"allowed": bool(allowed)}
        if allowed:
            status["reason"] = "allowed by the fake API server's policy"
        return {"kind": RESOURCE.kind, "apiVersion": RESOURCE.api_version,
                "metadata": {"creationTimestamp": None}, "spec": spec, "status": status}
