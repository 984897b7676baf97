"""Kubernetes Events on the objects that own shared claims, written through core v1 only.

Core v1 is the API ``kubectl describe`` reads and the one both writing and reading stay on
(events.k8s.io cannot read core-written Events in kubernetes 37, see the platform notes). Like
client-go's recorder, a repeat of the same event on the same object within ``window`` seconds
bumps the existing Event's ``count`` instead of creating another, so a retry loop with backoff
produces one Event with a count, not a flood. Recording never raises: an Event is a report, and
failing to write one must not fail the reconcile that wanted to report.
"""

from __future__ import annotations

import datetime
import logging
import time
from typing import NamedTuple

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.boundedcache import BoundedCache
from webhook.core.model.meta import OwnerReference
from webhook.kube.apierrors import NOT_FOUND, read_json, status_message
from webhook.reconciler.sync.claimapi import MERGE_PATCH

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
    as fit in an Event message and counting the rest."""
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
    """The Event written for a key, and how many times it happened."""

    name: str
    occurrences: int


class EventRecorder:
    """Events about the owners of shared claims: ``about`` is the owner, in ``namespace``."""

    def __init__(
        self,
        api: client.ApiClient,
        component: str,
        instance: str,
        window: float = 600.0,
        remembered: int = 4096,
    ) -> None:
        self._core = client.CoreV1Api(api)
        self.component, self.instance = component, instance
        self._seen: BoundedCache[tuple[str, OwnerReference, str, str, str], _Seen] = BoundedCache(remembered, window)

    def normal(self, namespace: str, about: OwnerReference, reason: str, message: str) -> None:
        self.record(namespace, about, NORMAL, reason, message)

    def warning(self, namespace: str, about: OwnerReference, reason: str, message: str) -> None:
        self.record(namespace, about, WARNING, reason, message)

    def record(self, namespace: str, about: OwnerReference, event_type: str, reason: str, message: str) -> None:
        key = (namespace, about, event_type, reason, message)
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)  # metav1.Time is seconds
        seen = self._seen.get(key)
        try:
            if seen is not None and self._bump(namespace, seen, now):
                self._seen.put(key, seen._replace(occurrences=seen.occurrences + 1))
                return
            name = self._create(namespace, about, event_type, reason, message, now)
        except ApiException as err:
            log.warning("cannot record event %s on %s %s/%s: %s", reason, about.kind, namespace, about.name, status_message(err))
            return
        except Exception as err:  # noqa: BLE001 - a report must never fail the work it reports on
            log.warning("cannot record event %s: %s", reason, err)
            return
        self._seen.put(key, _Seen(name, 1))

    def _bump(self, namespace: str, seen: _Seen, now: datetime.datetime) -> bool:
        """Count one more occurrence on the existing Event; False if it is gone (expired)."""
        patch = {"count": seen.occurrences + 1, "lastTimestamp": now.isoformat()}
        try:
            response = self._core.patch_namespaced_event(
                seen.name, namespace, patch, _content_type=MERGE_PATCH, _preload_content=False
            )
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            raise
        read_json(response)
        return True

    def _create(
        self, namespace: str, about: OwnerReference, event_type: str, reason: str, message: str, now: datetime.datetime
    ) -> str:
        event = client.CoreV1Event(
            metadata=client.V1ObjectMeta(name=f"{about.name}.{time.time_ns():x}", namespace=namespace),
            involved_object=client.V1ObjectReference(
                api_version=about.api_version,
                kind=about.kind,
                namespace=namespace,
                name=about.name,
                uid=about.uid,
            ),
            type=event_type,
            reason=reason,
            message=message[:1024],
            source=client.V1EventSource(component=self.component),
            reporting_component=self.component,
            reporting_instance=self.instance,
            first_timestamp=now,
            last_timestamp=now,
            count=1,
        )
        response = self._core.create_namespaced_event(namespace, event, _preload_content=False)
        created = read_json(response)
        return str(created["metadata"]["name"])
