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
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from kubernetes import client
from kubernetes.client.exceptions import ApiException

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


@dataclass(frozen=True, slots=True)
class Regarding:
    """The object an Event is about."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str


@dataclass(slots=True)
class _Seen:
    name: str
    count: int
    last: float


class EventRecorder:
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
        self._window, self._remembered = window, remembered
        self._seen: OrderedDict[tuple[Regarding, str, str, str], _Seen] = OrderedDict()
        self._lock = threading.Lock()

    def normal(self, regarding: Regarding, reason: str, message: str) -> None:
        self.record(regarding, NORMAL, reason, message)

    def warning(self, regarding: Regarding, reason: str, message: str) -> None:
        self.record(regarding, WARNING, reason, message)

    def record(self, regarding: Regarding, event_type: str, reason: str, message: str) -> None:
        key = (regarding, event_type, reason, message)
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)  # metav1.Time is seconds
        with self._lock:
            seen = self._seen.get(key)
            if seen is not None and time.monotonic() - seen.last > self._window:
                seen = None
        try:
            if seen is not None and self._bump(regarding.namespace, seen, now):
                return
            name = self._create(regarding, event_type, reason, message, now)
        except ApiException as err:
            log.warning("cannot record event %s on %s %s/%s: %s", reason, regarding.kind,
                        regarding.namespace, regarding.name, status_message(err))
            return
        except Exception as err:  # noqa: BLE001 - a report must never fail the work it reports on
            log.warning("cannot record event %s: %s", reason, err)
            return
        with self._lock:
            self._seen[key] = _Seen(name, 1, time.monotonic())
            self._seen.move_to_end(key)
            while len(self._seen) > self._remembered:
                self._seen.popitem(last=False)

    def _bump(self, namespace: str, seen: _Seen, now: datetime.datetime) -> bool:
        """Count one more occurrence on the existing Event; False if it is gone (expired)."""
        count = seen.count + 1
        patch = {"count": count, "lastTimestamp": now.isoformat()}
        try:
            response = self._core.patch_namespaced_event(
                seen.name, namespace, patch, _content_type=MERGE_PATCH, _preload_content=False
            )
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            raise
        read_json(response)
        with self._lock:
            seen.count, seen.last = count, time.monotonic()
        return True

    def _create(
        self, regarding: Regarding, event_type: str, reason: str, message: str, now: datetime.datetime
    ) -> str:
        event = client.CoreV1Event(
            metadata=client.V1ObjectMeta(
                name=f"{regarding.name}.{time.time_ns():x}", namespace=regarding.namespace
            ),
            involved_object=client.V1ObjectReference(
                api_version=regarding.api_version,
                kind=regarding.kind,
                namespace=regarding.namespace,
                name=regarding.name,
                uid=regarding.uid,
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
        response = self._core.create_namespaced_event(regarding.namespace, event, _preload_content=False)
        created = read_json(response)
        return str(created["metadata"]["name"])
