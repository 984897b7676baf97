"""``webhook reconcile``: configuration, signals and exit codes around the controller.

A lost lease (another replica took it, or the API server could not be reached for
``--renew-deadline``) ends that controller's writes; the command then runs a new one, which
campaigns again. The process ends only on SIGTERM or SIGINT, with code 0.
"""

from __future__ import annotations

import logging
import signal
import socket
import threading
import uuid
from types import FrameType

from kubernetes import client

from webhook import logs
from webhook.errors import CommandError
from webhook.kube.config import KubeConfigError, api_client, own_namespace
from webhook.reconciler.controller import LOST_LEASE, Controller, reconciler_client
from webhook.reconciler.settings import ReconcileSettings

log = logging.getLogger(__name__)

def identity() -> str:
    """Unique per process, recognisable per pod (the hostname is the pod's name)."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


def _stop_on_signals(stopping: threading.Event, running: list[Controller]) -> None:
    """SIGTERM and SIGINT stop the controller running, and the campaign."""

    def stop(signum: int, _frame: FrameType | None) -> None:
        log.info("received %s", signal.Signals(signum).name)
        stopping.set()
        for controller in running:
            controller.request_stop()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


def _client(settings: ReconcileSettings) -> client.ApiClient:
    try:
        return api_client(str(settings.kubeconfig) if settings.kubeconfig else None, settings.context)
    except KubeConfigError as err:
        raise CommandError(str(err)) from None


def reconcile(settings: ReconcileSettings) -> int:
    logs.configure(settings.log_level, settings.log_format)
    if settings.log_level != "debug":
        # The library logs every retry of a standby at INFO.
        logging.getLogger("leaderelection").setLevel(logging.WARNING)
    api = _client(settings)
    namespace = settings.leader_election_namespace or own_namespace(settings.kubeconfig, settings.context)
    me = identity()
    stopping = threading.Event()
    running: list[Controller] = []
    _stop_on_signals(stopping, running)
    while True:
        try:
            running[:] = [Controller(reconciler_client(api, namespace), settings, me, namespace)]
        except OSError as err:
            raise CommandError(f"cannot listen on {settings.health_host}:{settings.health_port}: {err.strerror or err}") from None
        if stopping.is_set():
            return 0
        if running[0].run() != LOST_LEASE or stopping.is_set():
            return 0
        # As a restarted pod would, without the restart: fresh caches, and the same identity, so
        # that a lease nobody else took in the meantime (the API server was away) is taken back at
        # the first retry rather than after a whole lease duration.
        log.info("reconciler %s campaigns again for the lease, with fresh caches", me)
