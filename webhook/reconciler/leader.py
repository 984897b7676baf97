"""Leader election on a ``coordination.k8s.io/v1`` Lease, with the official client's
``kubernetes.leaderelection`` (LeaseLock).

Three things are added around the library. Its lock talks through our guarded client (the
library's own ``LeaseLock`` would use the process-wide default client). The elector reports
whether it is healthy (its last lease read or write succeeded within one lease duration), which
``/readyz`` uses for a standby replica. And on shutdown the lease is released (holder cleared, as
client-go's ``ReleaseOnCancel`` does), so a standby takes over within one retry period instead of
waiting for the lease to expire; once released, the library's threads end at their next call.

Losing the lease is final for the controller: ``on_stopped`` is called, it stops, and the command
campaigns again with a new one and fresh caches, as a restarted controller-runtime manager would.
"""

from __future__ import annotations

import datetime
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from kubernetes.leaderelection import electionconfig, leaderelection
from kubernetes.leaderelection.resourcelock.leaselock import LeaseLock

from webhook.kube.apierrors import CONFLICT, NOT_FOUND, status_message
from webhook.kube.connection import connection_problem, is_connection_error

log = logging.getLogger(__name__)


class _Released(Exception):
    """Raised into the library's loops once the lease is released: ends its threads."""


class _GuardedLeaseLock(LeaseLock):
    """The library's lock through our client. A request the API server did not answer counts as a
    failed attempt, as an error answer does: the library only catches ``ApiException``, and
    anything else ends its loop for good (a standby would never campaign again)."""

    def __init__(self, api: client.ApiClient, name: str, namespace: str, identity: str) -> None:
        super().__init__(name, namespace, identity)
        self.api_instance = client.CoordinationV1Api(api)
        self.released = threading.Event()
        self.last_success: float | None = None
        self._unreachable_since: float | None = None

    def _ok(self) -> None:
        self.last_success = time.monotonic()
        if self._unreachable_since is not None:
            log.info("the lease %s/%s can be reached again after %.0fs", self.namespace, self.name,
                     self.last_success - self._unreachable_since)
            self._unreachable_since = None

    def _unreachable(self, err: BaseException) -> ApiException:
        """Logs the first of a run of failures in one line; the failure as the library handles it."""
        if not is_connection_error(err):
            raise err
        if self._unreachable_since is None:
            self._unreachable_since = time.monotonic()
            log.warning("cannot reach the lease %s/%s (%s); retrying", self.namespace, self.name, connection_problem(err))
        return ApiException(status=0, reason=connection_problem(err))

    def get(self, name: str, namespace: str) -> tuple[bool, Any]:
        if self.released.is_set():
            raise _Released()
        try:
            found, record = super().get(name, namespace)
        except Exception as err:
            return False, self._unreachable(err)
        if found or getattr(record, "status", None) == NOT_FOUND:
            self._ok()
        return found, record

    def create(self, name: str, namespace: str, election_record: Any) -> bool:
        if self.released.is_set():
            raise _Released()
        try:
            created = bool(super().create(name, namespace, election_record))
        except Exception as err:
            self._unreachable(err)
            return False
        if created:
            self._ok()
        return created

    def update(self, name: str, namespace: str, updated_record: Any) -> bool:
        if self.released.is_set():
            raise _Released()
        try:
            updated = bool(super().update(name, namespace, updated_record))
        except Exception as err:
            self._unreachable(err)
            return False
        if updated:
            self._ok()
        return updated


class LeaderElector:
    def __init__(
        self,
        api: client.ApiClient,
        *,
        namespace: str,
        name: str,
        identity: str,
        lease_duration: int,
        renew_deadline: int,
        retry_period: int,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
    ) -> None:
        self.identity = identity
        self.namespace, self.name = namespace, name
        self.lease_duration = lease_duration
        self._api = client.CoordinationV1Api(api)
        self._lock = _GuardedLeaseLock(api, name, namespace, identity)
        self._leading = threading.Event()
        self._on_started, self._on_stopped = on_started, on_stopped
        self._config = electionconfig.Config(
            self._lock,
            lease_duration=lease_duration,
            renew_deadline=renew_deadline,
            retry_period=retry_period,
            onstarted_leading=self._started,
            onstopped_leading=self._stopped,
        )
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)

    @property
    def leading(self) -> bool:
        return self._leading.is_set()

    @property
    def healthy(self) -> bool:
        """The lease was read or written successfully within the last lease duration."""
        last = self._lock.last_success
        return last is not None and time.monotonic() - last <= self.lease_duration

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            leaderelection.LeaderElection(self._config).run()
        except _Released:
            return
        except Exception:  # noqa: BLE001 - a crashed elector must not leave a silent leader
            log.exception("leader election failed")
            if self._leading.is_set():
                self._stopped()

    def _started(self) -> None:
        log.info("%s leads (lease %s/%s)", self.identity, self.namespace, self.name)
        self._leading.set()
        self._on_started()

    def _stopped(self) -> None:
        was_leading = self._leading.is_set()
        self._leading.clear()
        if was_leading and not self._lock.released.is_set():
            log.error("%s lost the lease %s/%s", self.identity, self.namespace, self.name)
            self._on_stopped()

    def release(self) -> None:
        """Stop campaigning and, if this replica holds the lease, hand it back."""
        self._lock.released.set()
        if not self._leading.is_set():
            return
        self._leading.clear()
        for _ in range(3):
            try:
                lease = self._api.read_namespaced_lease(self.name, self.namespace)
                if lease.spec is None or lease.spec.holder_identity != self.identity:
                    return
                now = datetime.datetime.now(datetime.timezone.utc)
                lease.spec.holder_identity = None
                lease.spec.lease_duration_seconds = 1
                lease.spec.acquire_time = now
                lease.spec.renew_time = now
                self._api.replace_namespaced_lease(self.name, self.namespace, lease)
                log.info("%s released the lease %s/%s", self.identity, self.namespace, self.name)
                return
            except ApiException as err:
                if err.status != CONFLICT:
                    log.warning("cannot release the lease %s/%s: %s", self.namespace, self.name, status_message(err))
                    return
            except Exception as err:  # noqa: BLE001 - shutting down: report and go on
                log.warning("cannot release the lease %s/%s: %s", self.namespace, self.name, err)
                return
