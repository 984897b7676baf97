"""The ValidatingAdmissionPolicy's decisions beside the validating webhook's, for many objects at once.

Each object is sent twice as a server-side dry run: to a namespace no validation looks at, which
answers with the object as the API server holds it (after Grove's CRD schema: pruned, defaulted)
or refuses it by that schema; then, when held, to a namespace only the policy decides. The webhook
(what ``python -m webhook review`` runs, in-process) decides the held object, sent to it as the
API server wrote it. Dry runs store nothing, so UPDATEs all start from the same stored old
objects, and a few threads keep the API server busy while this process decides.

Bodies go out and come back as bytes (the random objects nest deeper than the Python client's
recursive serialisation and orjson's writer reach).
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import orjson
from fuzz.strategies import dumps
from kubernetes import client

from core.answers import validated
from core.podcliquesets import pcs_review

Obj = dict[str, Any]
THREADS = 4
DENIAL = "ValidatingAdmissionPolicy '"
"""How the API server's message of a policy's denial starts (after the object's name)."""
PATH = re.compile(r"(?:^|\[|, |: )(spec\.template[^\s:,]*):")
"""A field path a message names: ``spec.template...`` followed by a colon."""


@dataclass
class Case:
    """One PodCliqueSet to decide: a CREATE, or an UPDATE of the stored object named ``old``."""

    origin: str
    obj: Obj
    old: str | None = None

    @property
    def operation(self) -> str:
        return "CREATE" if self.old is None else "UPDATE"


@dataclass
class Outcome:
    case: Case
    held: bytes | None = None
    """The object as the API server holds it; None when Grove's CRD schema refuses it."""
    policy: str | None = None
    """The policy's denial (the API server's message), None when it admits the object."""
    webhook: Obj | None = None
    """The webhook's response."""

    def disagreement(self, old: bytes | None) -> str | None:
        """What is wrong, with the objects attached; None when the two decide alike."""
        if self.webhook is None:
            return None
        allowed = bool(self.webhook["allowed"])
        problem = None
        if allowed != (self.policy is None):
            problem = "the policy denies what the webhook admits" if allowed else "the policy admits what the webhook denies"
        elif self.policy is not None and not shared_paths(self.policy, self.webhook["status"]["message"]):
            problem = "the policy's denial names no field path the webhook's names"
        if problem is None:
            return None
        return (
            f"{problem} ({self.case.operation}, {self.case.origin}):\n  policy: {self.policy}\n"
            f"  webhook: {self.webhook.get('status')}\n  object: {self.held!r}\n  old: {old!r}"
        )


def shared_paths(policy: str, webhook: str) -> list[str]:
    """The field paths the policy's denial names that the webhook's names too."""
    named = PATH.findall(policy.partition(" denied request: ")[2])
    return [path for path in named if f"{path}:" in webhook]


class Refused(Exception):
    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"{status}: {body[:300]!r}")
        self.status = status
        self.message = str(orjson.loads(body).get("message", "")) if body.startswith(b"{") else body.decode(errors="replace")


class Decider:
    """Sends cases to the API server: ``unchecked`` is a namespace no validation looks at,
    ``checked`` one only the policy decides; both hold the same old objects."""

    def __init__(self, api: client.ApiClient, unchecked: str, checked: str) -> None:
        self.api = api
        self.unchecked = unchecked
        self.checked = checked
        self.olds: dict[str, bytes] = {}
        self.versions: dict[tuple[str, str], str] = {}

    def _request(self, method: str, path: str, body: bytes) -> bytes:
        configuration = self.api.configuration
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        token = configuration.get_api_key_with_prefix("authorization")
        if token:
            headers["Authorization"] = token
        answer = self.api.rest_client.pool_manager.request(method, configuration.host + path, body=body, headers=headers)
        if answer.status >= 300:
            raise Refused(answer.status, answer.data)
        return bytes(answer.data)

    def _write(self, namespace: str, obj: Obj, old: str | None, dry_run: bool) -> bytes:
        body = copy.copy(obj)
        body["metadata"] = {**obj["metadata"], "namespace": namespace}
        collection = f"/apis/grove.io/v1alpha1/namespaces/{namespace}/podcliquesets"
        query = "?dryRun=All" if dry_run else ""
        if old is None:
            return self._request("POST", collection + query, dumps(body))
        body["metadata"].update(name=old, resourceVersion=self.versions[namespace, old])
        return self._request("PUT", f"{collection}/{old}{query}", dumps(body))

    def check(self, obj: Obj) -> None:
        """A dry-run CREATE of ``obj`` where only the policy decides; raises ``Refused`` when denied."""
        self._write(self.checked, obj, None, dry_run=True)

    def store_old(self, obj: Obj) -> None:
        """Creates ``obj`` in both namespaces, to be UPDATEd by cases naming it."""
        name = obj["metadata"]["name"]
        for namespace in (self.unchecked, self.checked):
            held = self._write(namespace, obj, None, dry_run=False)
            self.versions[namespace, name] = orjson.loads(held)["metadata"]["resourceVersion"]
        self.olds[name] = held

    def _held(self, case: Case) -> bytes | None:
        """The object as the API server holds it, from the namespace nothing checks."""
        try:
            return self._write(self.unchecked, case.obj, case.old, dry_run=True)
        except Refused as refused:
            if refused.status in (400, 422):
                return None  # Grove's CRD schema refuses it: no policy runs
            raise

    def _decide(self, case: Case) -> Outcome:
        """The policy's decision first: what it admits comes back as held, and an object the schema
        refuses is not sent again; only a denied one is sent where nothing checks it."""
        outcome = Outcome(case)
        try:
            held: bytes | None = self._write(self.checked, case.obj, case.old, dry_run=True)
        except Refused as refused:
            if refused.status not in (403, 422):
                raise
            if DENIAL not in refused.message:
                return outcome
            outcome.policy = refused.message
            held = self._held(case)
            if held is None:
                raise AssertionError(f"the policy decided what the schema refuses: {refused.message}") from None
            held = held.replace(f'"namespace":"{self.unchecked}"'.encode(), f'"namespace":"{self.checked}"'.encode(), 1)
        outcome.held = held
        review = pcs_review(None, operation=case.operation)
        review["request"]["namespace"] = self.checked
        text = json.dumps(review).replace('"object": null', f'"object": {held.decode()}', 1)
        if case.old is not None:
            text = text.replace('"oldObject": null', f'"oldObject": {self.olds[case.old].decode()}', 1)
        outcome.webhook = validated(text.encode()).body["response"]
        return outcome

    def decide(self, cases: Iterable[Case]) -> list[Outcome]:
        with ThreadPoolExecutor(THREADS) as pool:
            return list(pool.map(self._decide, cases))
