"""``webhook reconcile``: the reconciler process (caches, work queue, workers, resync, leader
election, probes) and the signals and exit codes around it.

Caches run on every replica, so that a standby that takes over starts warm; workers run only while
this replica may write. Stopping lets the claim write under way finish and starts no other. A lost
lease ends the controller and the command runs a new one, with fresh caches and the same identity,
as a restarted pod would, so that a lease nobody took meanwhile is taken back at the first retry.
Probes and metrics are a few requests a minute: a standard library server in a thread serves them.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType

from kubernetes import client
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from webhook import logs
from webhook.core.model.meta import ObjectKey
from webhook.errors import CommandError
from webhook.kube.access import Component, GuardedApiClient, KubeConfigError, api_client, guarded, own_namespace
from webhook.reconciler import ReconcileSettings
from webhook.reconciler.cluster import Caches
from webhook.reconciler.leader import LeaderElector
from webhook.reconciler.metrics import ReconcilerMetrics
from webhook.reconciler.queue import WorkQueue
from webhook.reconciler.sync.reconcile import EventRecorder, Interrupted, Outcome, PodCliqueSetReconciler, Unreachable

log = logging.getLogger(__name__)

COMPONENT = "grove-sharing-reconciler"
LOST_LEASE = 1
JOIN_TIMEOUT = 60.0
REQUEST_TIMEOUT = (5.0, 30.0)
"""Seconds to connect and to read an answer, for every request but the watches (which have their
own): a hung API server holds a worker for a while at most."""


def reconciler_client(api: client.ApiClient, own_namespace: str) -> GuardedApiClient:
    """No retries of urllib3's own, which would retry a refused connection at once and log each
    retry: the informers and the work queue retry with backoff."""
    api.configuration.retries = False
    return guarded(api, Component.RECONCILER, own_namespace, REQUEST_TIMEOUT)


def reconcile(settings: ReconcileSettings) -> int:
    logs.configure(settings.log_level, settings.log_format)
    try:
        api = api_client(str(settings.kubeconfig) if settings.kubeconfig else None, settings.context)
    except KubeConfigError as err:
        raise CommandError(str(err)) from None
    namespace = settings.leader_election_namespace or own_namespace(settings.kubeconfig, settings.context)
    identity = f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"  # unique per process, the pod's name in a pod
    stopping = threading.Event()
    running: list[Controller] = []
    _stop_on_signals(stopping, running)
    while True:
        try:
            running[:] = [Controller(reconciler_client(api, namespace), settings, identity, namespace)]
        except OSError as err:
            raise CommandError(f"cannot listen on {settings.health_host}:{settings.health_port}: {err.strerror or err}") from None
        if stopping.is_set() or running[0].run() != LOST_LEASE or stopping.is_set():
            return 0
        log.info("reconciler %s campaigns again for the lease, with fresh caches", identity)


def _stop_on_signals(stopping: threading.Event, running: list[Controller]) -> None:
    def stop(signum: int, _frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(signum).name)
        stopping.set()
        for controller in running:
            controller.request_stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


class Controller:
    def __init__(self, api: GuardedApiClient, settings: ReconcileSettings, identity: str, own_namespace: str) -> None:
        self.api = api
        self.settings = settings
        self.identity = identity
        self.metrics = ReconcilerMetrics()
        self.queue: WorkQueue[ObjectKey] = WorkQueue(settings.backoff_base, settings.backoff_max)
        self.caches = Caches(api, settings.namespace, self.queue.add_after, on_recovered=self._recovered)
        self.metrics.queue_depth.set_function(lambda: len(self.queue))
        self.metrics.queue_retrying.set_function(lambda: self.queue.waiting)
        self.metrics.caches_synced.set_function(lambda: 1 if self.caches.synced else 0)
        for informers in self.caches.informers:
            self.metrics.cached.labels(informers.resource.plural).set_function(informers.__len__)
        self.stopping = threading.Event()  # no new write may start: workers stop between two writes
        recorder = EventRecorder(api, COMPONENT, identity)
        self.reconciler = PodCliqueSetReconciler(api, self.caches, recorder, self.metrics, self.stopping, settings.max_claims_per_owner,
                                                 settings.claims, settings.claims_grace)
        self.elector = LeaderElector(api, settings, own_namespace, identity, self._activate, self._lose) if settings.leader_elect else None
        self.health = HealthServer(settings.health_host, settings.health_port, self.readiness, self.metrics.registry)
        self._stop = threading.Event()
        self._lost = threading.Event()
        self._active = threading.Event()
        self._workers: list[threading.Thread] = []
        self._workers_lock = threading.Lock()

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
        """Workers are running: this replica may write claims."""
        return self._active.is_set()

    def request_stop(self) -> None:
        """Safe from a signal handler: only sets an event."""
        self._stop.set()

    def run(self) -> int:
        """0 once stopped, or ``LOST_LEASE``."""
        self.health.start()
        self.caches.start()
        where = f"namespace {', '.join(self.settings.namespace)}" if self.settings.namespace else "all namespaces"
        log.info("reconciler %s started: %s, %d workers, probes on %s:%d",
                 self.identity, where, self.settings.workers, self.settings.health_host, self.health.port)
        if self.elector is not None:
            self.elector.start()
        else:
            self._activate()
        while not self._stop.wait(self.settings.resync_period):
            if self.active:
                self._enqueue_all()
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
        """The API server is back: what failed while it was away runs now, not after its backoff."""
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
                self._finish(key, self.reconciler.reconcile(key))
            except Interrupted:
                self.queue.done(key)
                return
            except Unreachable as err:
                self._failed()
                delay = self.queue.add_rate_limited(key)
                log.warning("PodCliqueSet %s/%s: %s; retrying in %.1fs or when the API server is back", *key, err, delay)
            except Exception:  # noqa: BLE001 - one PodCliqueSet's trouble must not end the worker
                log.exception("reconcile of PodCliqueSet %s/%s failed", *key)
                self._failed()
                self.queue.add_rate_limited(key)
            finally:
                self.metrics.duration.observe(time.perf_counter() - started)
            self.queue.done(key)

    def _failed(self) -> None:
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
        if not outcome.failed:
            self.queue.forget(key)
            self.metrics.reconciles.labels("success").inc()
            if outcome.requeue_after:
                self.queue.add_after(key, outcome.requeue_after)
            return
        self._failed()
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
        self.reconciler.pool.shutdown(wait=True)
        self._active.clear()
        if self.elector is not None:
            self.elector.release()
        self.metrics.leader.set(0)
        self.caches.stop()
        self.health.stop()
        return LOST_LEASE if lost else 0


class HealthServer:
    """``/healthz``, ``/readyz`` (503 with ``readiness``'s answer, when not None) and ``/metrics``."""

    def __init__(self, host: str, port: int, readiness: Callable[[], str | None], registry: CollectorRegistry) -> None:
        self._server = ThreadingHTTPServer((host, port), _handler(readiness, registry))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="health", daemon=True)

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def _handler(readiness: Callable[[], str | None], registry: CollectorRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
            path = self.path.split("?", 1)[0]
            if path == "/healthz":
                self._send(200, b"ok\n")
            elif path == "/readyz":
                why = readiness()
                self._send(200, b"ok\n") if why is None else self._send(503, f"not ready: {why}\n".encode())
            elif path == "/metrics":
                self._send(200, generate_latest(registry), CONTENT_TYPE_LATEST)
            else:
                self._send(404, b"not found\n")

        def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the http.server signature
            log.debug("health: " + format, *args)

    return Handler
