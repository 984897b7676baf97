"""``webhook unregister``: deletes the release's two webhook configurations, as the chart's
pre-delete hook, so that ``helm uninstall`` does not leave webhooks that fail closed (every Grove
pod and PodCliqueSet refused) pointing at pods that are going away.

A configuration already gone counts as deleted, so the hook can run again. The API server may be
briefly unreachable or answer a server error: the command tries again for ``--timeout`` seconds;
a refusal (no RBAC, say) is reported at once, in one line, with a non-zero exit.
"""

from __future__ import annotations

import logging
import time

from kubernetes.client.exceptions import ApiException

from webhook import logs
from webhook.errors import CommandError
from webhook.kube.access import Component, KubeConfigError, api_client, guarded
from webhook.kube.api import CONNECTION_ERRORS, connection_problem, is_connection_error, status_message
from webhook.kube.attempts import Attempts
from webhook.registration.configurations import KINDS, WebhookConfigurations
from webhook.registration.settings import UnregisterSettings

log = logging.getLogger(__name__)

REQUEST_TIMEOUT = (5.0, 10.0)
FAILURES: tuple[type[BaseException], ...] = (ApiException, *CONNECTION_ERRORS)


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
            if not _worth_retrying(err) or time.monotonic() >= deadline:
                raise CommandError(f"cannot delete {kind} {configurations.name}: {_problem(err)}") from None
            time.sleep(attempts.failed(_problem(err)))


def _worth_retrying(err: BaseException) -> bool:
    return is_connection_error(err) or (isinstance(err, ApiException) and err.status >= 500)


def _problem(err: BaseException) -> str:
    if isinstance(err, ApiException) and err.status:
        return status_message(err)
    return connection_problem(err)
