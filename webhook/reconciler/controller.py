"""The reconciler process: caches, work queue, workers, resync, leader election and probes, wired.

Caches run on every replica, leader or not, so a standby that takes over starts from warm caches.
Workers run only while this replica may write: always without leader election, and between
acquiring and losing (or releasing) the lease with it. Events keep queueing keys on a standby; the
queue holds each key once, so that costs one entry per PodCliqueSet at most.

Stopping (SIGTERM, or a lost lease) lets the claim write under way finish, then workers take no
more keys and no further write is started; informers and probes stop, the lease is released if
held, and ``run`` returns 0, or ``LOST_LEASE`` after a lost lease (the command then campaigns
again with a new controller).

A reconcile that ran out of budget goes to the back of the queue at once; one that failed waits
for its backoff, and no longer once an informer is back after failing (the API server was away:
what failed meanwhile runs again at once).
"""

from __future__ import annotations

import logging
import threading
import time

from kubernetes import client

from webhook.core.model.meta import ObjectKey
from webhook.kube.access import Component, GuardedApiClient, guarded
from webhook.reconciler.cluster import Caches
from webhook.reconciler.health import HealthServer
from webhook.reconciler.leader import LeaderElector
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.queue import WorkQueue
from webhook.reconciler.settings import ReconcileSettings
from webhook.reconciler.sync.events import EventRecorder
from webhook.reconciler.sync.reconcile import Outcome, PodCliqueSetReconciler
from webhook.reconciler.sync.writes import Interrupted, Unreachable, write_pool

log = logging.getLogger(__name__)

COMPONENT = "grove-sharing-reconciler"
LOST_LEASE = 1
JOIN_TIMEOUT = 60.0
REQUEST_TIMEOUT = (5.0, 30.0)
"""Seconds to connect and to read an answer, for every request but the watches (which have their
own): a hung API server holds a worker for half a minute at most."""


def reconciler_client(api: client.ApiClient, own_namespace: str) -> GuardedApiClient:
    """The reconciler's client: its access table, a timeout on every request, and no retries of
    urllib3's own. The informers and the work queue retry with backoff; urllib3 would retry a
    refused connection three times at once and log a WARNING line with the URL for each."""
    api.configuration.retries = False
    return guarded(api, Component.RECONCILER, own_namespace, REQUEST_TIMEOUT)


class Controller:
    def __init__(self, api: GuardedApiClient, settings: ReconcileSettings, identity: str, own_namespace: str) -> None:
        self.api = api
        self.settings = settings
        self.identity = identity
        self.metrics = ReconcilerMetrics()
        self.queue: WorkQueue[ObjectKey] = WorkQueue(settings.backoff_base, settings.backoff_max)
        self.metrics.observe_queue(lambda: len(self.queue), lambda: self.queue.waiting)
        self.caches = Caches(api, settings.namespace, self.queue.add_after, on_recovered=self._recovered)
        self.metrics.caches_synced.set_function(lambda: 1 if self.caches.synced else 0)
        for informer in self.caches.informers:
            self.metrics.observe_cache(informer.resource.plural, informer.__len__)
        self.recorder = EventRecorder(api, COMPONENT, identity)
        self.stopping = threading.Event()
        """Set when no new write may start: workers stop between two writes."""
        self.writes = write_pool()
        self.reconciler = PodCliqueSetReconciler(
            api, self.caches, self.recorder, self.metrics, self.stopping, self.writes, settings.max_claims_per_owner
        )
        self.elector = (
            LeaderElector(
                api,
                namespace=own_namespace,
                name=settings.leader_election_id,
                identity=identity,
                lease_duration=settings.lease_duration,
                renew_deadline=settings.renew_deadline,
                retry_period=settings.retry_period,
                on_started=self._activate,
                on_stopped=self._lose,
            )
            if settings.leader_elect
            else None
        )
        self.health = HealthServer(settings.health_host, settings.health_port, self.readiness, self.metrics.registry)
        self._stop = threading.Event()
        self._lost = threading.Event()
        self._active = threading.Event()
        self._workers: list[threading.Thread] = []
        self._workers_lock = threading.Lock()

    # --- state -----------------------------------------------------------------------------------

    def readiness(self) -> str | None:
        """None when ready: caches synced and, with leader election, leading or a healthy standby."""
        if self.stopping.is_set():
            return "shutting down"
        if not self.caches.synced:
            return "caches not synced"
        if self.elector is not None and not (self.elector.leading or self.elector.healthy):
            return "leader election cannot reach the lease"
        return None

    @property
    def active(self) -> bool:
        """Workers are running (this replica may write claims)."""
        return self._active.is_set()

    # --- running ---------------------------------------------------------------------------------

    def request_stop(self) -> None:
        """Safe from a signal handler: only sets an event."""
        self._stop.set()

    def run(self) -> int:
        self.health.start()
        self.caches.start()
        log.info(
            "reconciler %s started: %s, %d workers, probes on %s:%d",
            self.identity,
            f"namespace {', '.join(self.settings.namespace)}" if self.settings.namespace else "all namespaces",
            self.settings.workers,
            self.settings.health_host,
            self.health.port,
        )
        if self.elector is not None:
            self.elector.start()
        else:
            self._activate()
        next_resync = time.monotonic() + self.settings.resync_period
        while not self._stop.is_set():
            now = time.monotonic()
            if now >= next_resync:
                next_resync = now + self.settings.resync_period
                if self.active:
                    self._enqueue_all()
            self._stop.wait(max(next_resync - now, 0.0))
        return self._shut_down()

    def _activate(self) -> None:
        self.metrics.leader.set(1)
        threading.Thread(target=self._start_workers, name="start-workers", daemon=True).start()

    def _start_workers(self) -> None:
        while not self.caches.synced:
            if self._stop.wait(0.05) or self.stopping.is_set():
                return
        with self._workers_lock:
            if self.stopping.is_set():
                return
            self._enqueue_all()
            for n in range(self.settings.workers):
                worker = threading.Thread(target=self._work, name=f"worker-{n}", daemon=True)
                self._workers.append(worker)
                worker.start()
            self._active.set()

    def _lose(self) -> None:
        self.metrics.leader.set(0)
        self._lost.set()
        self.stopping.set()
        self._stop.set()

    def _recovered(self) -> None:
        retried = self.queue.retry_failed_now()
        if retried:
            log.info("the API server is back: retrying %d PodCliqueSets now", retried)

    def _enqueue_all(self) -> None:
        for key in self.caches.pcs_keys():
            self.queue.add(key)

    def _work(self) -> None:
        while (key := self.queue.get()) is not None:
            started = time.perf_counter()
            try:
                outcome = self.reconciler.reconcile(key)
            except Interrupted:
                self.queue.done(key)
                return
            except Unreachable as err:
                self._unreachable(key, str(err))
            except Exception:  # noqa: BLE001 - one PodCliqueSet's trouble must not end the worker
                log.exception("reconcile of PodCliqueSet %s/%s failed", *key)
                self._count_failure()
                self.queue.add_rate_limited(key)
            else:
                self._finish(key, outcome)
            finally:
                self.metrics.duration.observe(time.perf_counter() - started)
            self.queue.done(key)

    def _unreachable(self, key: ObjectKey, why: str) -> None:
        """The API server did not answer: retried with backoff, and at once when the watches are
        back (``_recovered``). One line, no Events (they could not be written)."""
        self._count_failure()
        delay = self.queue.add_rate_limited(key)
        log.warning("PodCliqueSet %s/%s: %s; retrying in %.1fs or when the API server is back", *key, why, delay)

    def _count_failure(self) -> None:
        self.metrics.reconciles.labels("error").inc()
        self.metrics.reconcile_errors.inc()

    def _finish(self, key: ObjectKey, outcome: Outcome) -> None:
        """The key queued as the outcome says: at the back after progress with more to do, after a
        backoff (or the retry bound) when something failed, after ``requeue_after`` when asked."""
        if outcome.created or outcome.adopted or outcome.deleted:
            more = "; more to do after the PodCliqueSets waiting" if outcome.partial else ""
            log.info("PodCliqueSet %s/%s: created %d, adopted %d, deleted %d claims%s",
                     *key, outcome.created, outcome.adopted, outcome.deleted, more)
        if outcome.partial:
            self.queue.forget(key)
            self.queue.add(key)
        if outcome.ok:
            self.queue.forget(key)
            self.metrics.reconciles.labels("success").inc()
            if outcome.requeue_after:
                self.queue.add_after(key, outcome.requeue_after)
            return
        self._count_failure()
        delay = 0.0 if outcome.partial else self.queue.add_rate_limited(key, outcome.retry_within)
        log.warning("PodCliqueSet %s/%s: %d claims not as desired, retrying in %.1fs: %s",
                    *key, outcome.failed, delay, "; ".join(outcome.failures[:3]))

    def _shut_down(self) -> int:
        lost = self._lost.is_set()
        log.info("reconciler %s stopping%s", self.identity, " after losing the lease" if lost else "")
        with self._workers_lock:
            self.stopping.set()
            self.queue.shut_down()
            workers = list(self._workers)
        for worker in workers:
            worker.join(JOIN_TIMEOUT)
        self.writes.shutdown(wait=True)
        self._active.clear()
        if self.elector is not None:
            self.elector.release()
        self.metrics.leader.set(0)
        self.caches.stop()
        self.health.stop()
        return LOST_LEASE if lost else 0
