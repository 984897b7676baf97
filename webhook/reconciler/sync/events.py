"""Kubernetes Events on the objects that own shared claims, written through core v1.

Core v1 is what ``kubectl describe`` reads, and events.k8s.io cannot read core-written Events. Like
client-go's recorder, a repeat of the same Event on the same object within ``window`` seconds
raises the existing Event's ``count`` instead of adding another, so that a retry loop makes one
Event with a count, not a flood. Recording never raises: an Event is a report, and failing to
write one must not fail the reconcile that wanted to make it.
"""

from __future__ import annotations

import datetime
import logging
import time
from typing import Any, NamedTuple

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.boundedcache import BoundedCache
from webhook.core.model.meta import OwnerReference
from webhook.kube.apierrors import NOT_FOUND, status_message
from webhook.kube.objects import Objects
from webhook.kube.resources import EVENTS

log = logging.getLogger(__name__)

NORMAL, WARNING = "Normal", "Warning"
CLAIM_CREATED = "ResourceClaimCreated"
CLAIM_ADOPTED = "ResourceClaimAdopted"
CLAIM_DELETED = "ResourceClaimDeleted"
TEMPLATE_NOT_FOUND = "ResourceClaimTemplateNotFound"
OWNED_BY_OTHER = "ResourceClaimOwnedByOther"
SYNC_FAILED = "ResourceClaimSyncFailed"
LIMIT_EXCEEDED = "ResourceClaimLimitExceeded"
INVALID_REPLICAS = "ResourceClaimInvalidReplicas"

MESSAGE_BUDGET = 900


def event_message(verb: str, names: list[str]) -> str:
    """``Created ResourceClaim a`` or ``Created 3 ResourceClaims: a, b, c``, naming as many claims
    as fit in an Event's message and counting the rest."""
    if len(names) == 1:
        return f"{verb} ResourceClaim {names[0]}"
    head = f"{verb} {len(names)} ResourceClaims: "
    shown: list[str] = []
    for name in names:
        if len(head) + sum(len(n) + 2 for n in shown) + len(name) > MESSAGE_BUDGET:
            break
        shown.append(name)
    rest = len(names) - len(shown)
    return head + ", ".join(shown) + (f" and {rest} more" if rest else "")


class _Seen(NamedTuple):
    name: str
    occurrences: int


class EventRecorder:
    """Events about the owners of shared claims: ``about`` is the owner, in ``namespace``."""

    def __init__(self, api: client.ApiClient, component: str, instance: str, window: float = 600.0, remembered: int = 4096) -> None:
        self._api = api
        self.component, self.instance = component, instance
        self._seen: BoundedCache[tuple[str, OwnerReference, str, str, str], _Seen] = BoundedCache(remembered, window)

    def normal(self, namespace: str, about: OwnerReference, reason: str, message: str) -> None:
        self.record(namespace, about, NORMAL, reason, message)

    def warning(self, namespace: str, about: OwnerReference, reason: str, message: str) -> None:
        self.record(namespace, about, WARNING, reason, message)

    def record(self, namespace: str, about: OwnerReference, event_type: str, reason: str, message: str) -> None:
        key = (namespace, about, event_type, reason, message)
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()  # metav1.Time: seconds
        events = Objects(self._api, EVENTS, namespace)
        seen = self._seen.get(key)
        try:
            if seen is not None and self._bump(events, seen, now):
                self._seen.put(key, seen._replace(occurrences=seen.occurrences + 1))
                return
            created = events.create(self._event(namespace, about, event_type, reason, message, now))
        except ApiException as err:
            log.warning("cannot record event %s on %s %s/%s: %s", reason, about.kind, namespace, about.name, status_message(err))
            return
        except Exception as err:  # noqa: BLE001 - a report must never fail the work it reports on
            log.warning("cannot record event %s: %s", reason, err)
            return
        self._seen.put(key, _Seen(str(created["metadata"]["name"]), 1))

    @staticmethod
    def _bump(events: Objects, seen: _Seen, now: str) -> bool:
        """One more occurrence on the existing Event; False if it is gone (expired)."""
        try:
            events.patch(seen.name, {"count": seen.occurrences + 1, "lastTimestamp": now})
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            raise
        return True

    def _event(self, namespace: str, about: OwnerReference, event_type: str, reason: str, message: str, now: str) -> dict[str, Any]:
        return {
            "apiVersion": EVENTS.api_version,
            "kind": EVENTS.kind,
            "metadata": {"name": f"{about.name}.{time.time_ns():x}", "namespace": namespace},
            "involvedObject": {
                "apiVersion": about.api_version, "kind": about.kind, "namespace": namespace, "name": about.name, "uid": about.uid,
            },
            "type": event_type,
            "reason": reason,
            "message": message[:1024],
            "source": {"component": self.component},
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
        }
