"""The release's two webhook configurations, by name: the ValidatingWebhookConfiguration of
PodCliqueSets and the MutatingWebhookConfiguration of pods (the chart names both ``<fullname>``),
read and written as plain JSON, each write a PUT with the ``resourceVersion`` read, so that a change
made meanwhile is never overwritten.

``webhook unregister``, the chart's pre-delete hook, deletes both, so that ``helm uninstall`` leaves
no webhook that fails closed pointing at pods that are going away (DECISIONS.md §1).
"""

from __future__ import annotations

import base64
import binascii
import time
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook import logs
from webhook.errors import CommandError
from webhook.kube.access import Component, KubeConfigError, api_client, guarded
from webhook.kube.api import (
    CONNECTION_ERRORS, MUTATINGWEBHOOKCONFIGURATIONS, NOT_FOUND, VALIDATINGWEBHOOKCONFIGURATIONS, Objects, connection_problem,
    is_connection_error, status_message,
)
from webhook.kube.attempts import Attempts
from webhook.registration import UnregisterSettings

Obj = dict[str, Any]
KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
REQUEST_TIMEOUT = (5.0, 10.0)
"""Seconds to connect and to read each request of ``unregister``."""
FAILURES: tuple[type[BaseException], ...] = (ApiException, *CONNECTION_ERRORS)


@dataclass
class Configuration:
    kind: str
    obj: Obj

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    def bundles(self) -> list[bytes]:
        """The ``caBundle`` of each of its webhooks (PEM; empty where there is none)."""
        return [decode_base64(webhook.get("clientConfig", {}).get("caBundle")) for webhook in self.obj.get("webhooks") or []]

    def with_bundle(self, pem: bytes) -> Obj:
        """The object with ``pem`` as the ``caBundle`` of every webhook."""
        encoded = base64.b64encode(pem).decode()
        webhooks = [{**w, "clientConfig": {**w.get("clientConfig", {}), "caBundle": encoded}} for w in self.obj.get("webhooks") or []]
        return {**self.obj, "webhooks": webhooks}


def decode_base64(value: str | None) -> bytes:
    """A base64 value of the API (a caBundle, a Secret's data); one that is not reads as empty."""
    try:
        return base64.b64decode(value or "", validate=True)
    except (binascii.Error, ValueError):
        return b""


class WebhookConfigurations:
    """The configurations of one name, through ``api`` (a guarded client names what it may touch):
    both ``KINDS``, or the kinds the release has (no validating one where a policy decides)."""

    def __init__(self, api: client.ApiClient, name: str, kinds: tuple[str, ...] = KINDS) -> None:
        self.name = name
        plurals = {KINDS[0]: VALIDATINGWEBHOOKCONFIGURATIONS, KINDS[1]: MUTATINGWEBHOOKCONFIGURATIONS}
        self._kinds = {kind: Objects(api, plurals[kind]) for kind in kinds}

    def read(self) -> dict[str, Configuration | None]:
        """Each kind's configuration, None where it does not exist."""
        found = {kind: objects.find(self.name) for kind, objects in self._kinds.items()}
        return {kind: None if obj is None else Configuration(kind, obj) for kind, obj in found.items()}

    def replace(self, configuration: Configuration, obj: Obj) -> None:
        self._kinds[configuration.kind].replace(obj)

    def delete(self, kind: str) -> bool:
        """Deletes the configuration of ``kind``; False when there was none (already gone)."""
        try:
            self._kinds[kind].delete(self.name)
        except ApiException as err:
            if err.status != NOT_FOUND:
                raise
            return False
        return True


def unregister(settings: UnregisterSettings) -> int:
    logs.configure(settings.log_level, settings.log_format)
    try:
        api = api_client(str(settings.kubeconfig) if settings.kubeconfig else None, settings.context)
    except KubeConfigError as err:
        raise CommandError(str(err)) from None
    api.configuration.retries = False  # the command retries, with its own delays and log lines
    name = settings.webhook_configuration
    configurations = WebhookConfigurations(guarded(api, Component.UNREGISTER, None, REQUEST_TIMEOUT, frozenset({name})), name)
    deadline = time.monotonic() + settings.timeout
    print(_said(name, [kind for kind in KINDS if _delete(configurations, kind, deadline)]))
    return 0


def _said(name: str, deleted: list[str]) -> str:
    if not deleted:
        return f"no webhook configuration {name} to delete"
    gone = [kind for kind in KINDS if kind not in deleted]
    return f"deleted {' and '.join(deleted)} {name}" + (f" ({' and '.join(gone)} already gone)" if gone else "")


def _delete(configurations: WebhookConfigurations, kind: str, deadline: float) -> bool:
    attempts = Attempts(f"deleting {kind} {configurations.name}", initial=0.5, cap=5.0)
    while True:
        try:
            return configurations.delete(kind)
        except FAILURES as err:
            worth_retrying = is_connection_error(err) or (isinstance(err, ApiException) and err.status >= 500)
            if not worth_retrying or time.monotonic() >= deadline:
                raise CommandError(f"cannot delete {kind} {configurations.name}: {_problem(err)}") from None
            time.sleep(attempts.failed(_problem(err)))


def _problem(err: BaseException) -> str:
    if isinstance(err, ApiException) and err.status:
        return status_message(err)
    return connection_problem(err)
