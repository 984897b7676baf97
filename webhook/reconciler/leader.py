"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``leaderelection`` does it:
a candidate takes the lease when nobody holds it or it was not renewed for a lease duration (of this
replica's clock: the lease's times come from other clocks); the holder renews it every retry period,
and one that could not for the renew deadline has lost it for good (``on_stopped``). A request the
API server does not answer is a failed attempt like any other. On shutdown the holder releases the
lease, as client-go's ``ReleaseOnCancel`` does, so that a standby takes over at once.
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

from webhook.kube.api import CONFLICT, LEASES, Objects, connection_problem, is_connection_error, status_message
from webhook.reconciler import ReconcileSettings

log = logging.getLogger(__name__)


def _now() -> str:
    """A ``metav1.MicroTime``."""
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(self, api: client.ApiClient, settings: ReconcileSettings, namespace: str, identity: str,
                 on_started: Callable[[], None], on_stopped: Callable[[], None]) -> None:
        self.identity, self.namespace, self.name = identity, namespace, settings.leader_election_id
        self.lease_duration, self._renew_deadline, self._retry_period = (
            settings.lease_duration, settings.renew_deadline, settings.retry_period)
        self._leases = Objects(api, LEASES, namespace)
        self._on_started, self._on_stopped = on_started, on_stopped
        self._leading = threading.Event()
        self._released = threading.Event()
        self._observed: tuple[Any, float] = (None, 0.0)  # the lease's spec as last read, and since when
        self.last_success: float | None = None
        self._unreachable_since: float | None = None
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)

    @property
    def leading(self) -> bool:
        return self._leading.is_set()

    @property
    def healthy(self) -> bool:
        """The lease was read or written successfully within the last lease duration."""
        return self.last_success is not None and time.monotonic() - self.last_success <= self.lease_duration

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        try:
            self._campaign()
        except Exception:  # noqa: BLE001 - a crashed elector must not leave a silent leader
            log.exception("leader election failed")
            self._lose()

    def _campaign(self) -> None:
        while not self._attempt():
            if self._released.wait(self._retry_period):
                return
        log.info("%s leads (lease %s/%s)", self.identity, self.namespace, self.name)
        self._leading.set()
        self._on_started()
        renewed = time.monotonic()
        while not self._released.wait(self._retry_period):
            if self._attempt():
                renewed = time.monotonic()
            elif time.monotonic() - renewed >= self._renew_deadline:
                self._lose()
                return

    def _lose(self) -> None:
        if self._leading.is_set() and not self._released.is_set():
            self._leading.clear()
            log.error("%s lost the lease %s/%s", self.identity, self.namespace, self.name)
            self._on_stopped()

    def _attempt(self) -> bool:
        """Takes or renews the lease; False when another replica holds it or the attempt failed."""
        try:
            return self._take_or_renew()
        except Exception as err:
            if is_connection_error(err):
                self._unreachable(err)
            elif isinstance(err, ApiException):
                log.debug("lease %s/%s: %s", self.namespace, self.name, status_message(err))
            else:
                raise
        return False

    def _take_or_renew(self) -> bool:
        lease = self._leases.find(self.name)
        self._reached()
        if self._released.is_set():
            return False
        spec = (lease or {}).get("spec") or {}
        if spec != self._observed[0]:
            self._observed = (spec, time.monotonic())
        holder = spec.get("holderIdentity")
        if holder and holder != self.identity and time.monotonic() < self._observed[1] + self.lease_duration:
            return False
        now = _now()
        acquired = spec.get("acquireTime") if holder == self.identity else now
        spec = {**spec, "holderIdentity": self.identity, "leaseDurationSeconds": self.lease_duration,
                "acquireTime": acquired, "renewTime": now}
        if lease is None:
            self._leases.create({"apiVersion": LEASES.api_version, "kind": LEASES.kind, "metadata": {"name": self.name}, "spec": spec})
        else:
            self._leases.replace({**lease, "spec": spec})
        return True

    def _reached(self) -> None:
        self.last_success = time.monotonic()
        if self._unreachable_since is not None:
            log.info("the lease %s/%s can be reached again after %.0fs", self.namespace, self.name,
                     self.last_success - self._unreachable_since)
            self._unreachable_since = None

    def _unreachable(self, err: BaseException) -> None:
        if self._unreachable_since is None:
            self._unreachable_since = time.monotonic()
            log.warning("cannot reach the lease %s/%s (%s); retrying", self.namespace, self.name, connection_problem(err))

    def release(self) -> None:
        """Stops campaigning and, if this replica holds the lease, hands it back."""
        self._released.set()
        if not self._leading.is_set():
            return
        self._leading.clear()
        for _ in range(3):
            try:
                lease = self._leases.get(self.name)
                if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                    return
                now = _now()
                lease["spec"] = {**lease["spec"], "holderIdentity": None, "leaseDurationSeconds": 1, "acquireTime": now, "renewTime": now}
                self._leases.replace(lease)
                log.info("%s released the lease %s/%s", self.identity, self.namespace, self.name)
                return
            except ApiException as err:
                if err.status != CONFLICT:
                    log.warning("cannot release the lease %s/%s: %s", self.namespace, self.name, status_message(err))
                    return
            except Exception as err:  # noqa: BLE001 - shutting down: report and go on
                log.warning("cannot release the lease %s/%s: %s", self.namespace, self.name, err)
                return
