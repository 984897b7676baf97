"""Leader election on a ``coordination.k8s.io/v1`` Lease, with the official client's
``kubernetes.leaderelection``.

Three things are added around the library. Its lock talks through our guarded client (its own
would use the process-wide default client), and counts a request the API server did not answer as
a failed attempt, as an error answer is: the library catches only ``ApiException``, and anything
else would end a standby's campaign for good. The elector says whether it is healthy (the lease was
read or written within one lease duration), which ``/readyz`` uses on a standby. And on shutdown
the lease is released (holder cleared, as client-go's ``ReleaseOnCancel`` does), so that a standby
takes over within one retry period rather than once the lease expires.

Losing the lease is final for the controller: ``on_stopped`` is called and it stops.
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
    def __init__(self, api: client.ApiClient, name: str, namespace: str, identity: str) -> None:
        super().__init__(name, namespace, identity)
        self.api_instance = client.CoordinationV1Api(api)
        self.released = threading.Event()
        self.last_success: float | None = None
        self._unreachable_since: float | None = None

    def get(self, name: str, namespace: str) -> tuple[bool, Any]:
        answer = self._attempt(super().get, name, namespace)
        if isinstance(answer, ApiException):
            return False, answer
        found, record = answer
        if found or getattr(record, "status", None) == NOT_FOUND:
            self._reached()
        return found, record

    def create(self, name: str, namespace: str, election_record: Any) -> bool:
        return self._written(self._attempt(super().create, name, namespace, election_record))

    def update(self, name: str, namespace: str, updated_record: Any) -> bool:
        return self._written(self._attempt(super().update, name, namespace, updated_record))

    def _attempt(self, call: Callable[..., Any], *args: Any) -> Any:
        """The library's call, or the failure it reads when the API server did not answer (logged
        once per outage)."""
        if self.released.is_set():
            raise _Released()
        try:
            return call(*args)
        except Exception as err:
            if not is_connection_error(err):
                raise
            problem = connection_problem(err)
            if self._unreachable_since is None:
                self._unreachable_since = time.monotonic()
                log.warning("cannot reach the lease %s/%s (%s); retrying", self.namespace, self.name, problem)
            return ApiException(status=0, reason=problem)

    def _written(self, done: Any) -> bool:
        if done is True:
            self._reached()
        return done is True

    def _reached(self) -> None:
        self.last_success = time.monotonic()
        if self._unreachable_since is not None:
            log.info("the lease %s/%s can be reached again after %.0fs", self.namespace, self.name,
                     self.last_success - self._unreachable_since)
            self._unreachable_since = None


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
            self._lock, lease_duration=lease_duration, renew_deadline=renew_deadline, retry_period=retry_period,
            onstarted_leading=self._started, onstopped_leading=self._stopped,
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
        """Stops campaigning and, if this replica holds the lease, hands it back (read again after a
        conflict, a few times)."""
        self._lock.released.set()
        if not self._leading.is_set():
            return
        self._leading.clear()
        for _ in range(3):
            try:
                self._hand_back()
                return
            except ApiException as err:
                if err.status != CONFLICT:
                    log.warning("cannot release the lease %s/%s: %s", self.namespace, self.name, status_message(err))
                    return
            except Exception as err:  # noqa: BLE001 - shutting down: report and go on
                log.warning("cannot release the lease %s/%s: %s", self.namespace, self.name, err)
                return

    def _hand_back(self) -> None:
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
