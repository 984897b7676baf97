"""ResourceClaimTemplates read from the API server: whether one exists, for the validating webhook
(DECISIONS.md §3.4), and the spec a claim gets from one, for the reconciler (BEHAVIOUR.md §6).
Whether one exists is advice: one GET bounded by ``timeout``, None when unanswered, as a slow API
server must not read as a missing template. Specs go through one cache for all reconciler workers,
so that many PodCliqueSets naming a template cost one read, a few seconds stale at most (Grove's
informer cache lags too); one found missing is looked for again sooner.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from cachetools import TLRUCache, cached
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import PodCliqueSet, ResourceSharingSpec
from webhook.core.sharing.desired import template_source
from webhook.kube.api import CONNECTION_ERRORS, NOT_FOUND, RESOURCECLAIMTEMPLATES, Objects, connection_problem, status_message

log = logging.getLogger(__name__)

FOUND_TTL = 5.0
MISSING_TTL = 2.0
KEPT = 1024
"""Template specs remembered at most."""


class TemplateError(Exception):
    """An external template that cannot be used; ``missing`` when it does not exist."""

    def __init__(self, message: str, missing: bool) -> None:
        super().__init__(message)
        self.missing = missing


def _kept_until(_key: Any, read: dict[str, Any] | TemplateError, now: float) -> float:
    return now + (MISSING_TTL if isinstance(read, TemplateError) else FOUND_TTL)


class TemplateReads:
    def __init__(self, api: client.ApiClient, timeout: float = 2.0, clock: Callable[[], float] = time.monotonic) -> None:
        self._api = api
        self.timeout = timeout
        self._load = cached(TLRUCache(KEPT, _kept_until, clock), condition=threading.Condition())(self._read)
        """One read per template for all the threads asking at once; what it raises is not kept."""

    async def exists(self, namespace: str, name: str) -> bool | None:
        templates = Objects(self._api, RESOURCECLAIMTEMPLATES, namespace, self.timeout)
        try:
            await asyncio.wait_for(asyncio.to_thread(templates.get, name), self.timeout)
        except ApiException as err:
            if err.status == NOT_FOUND:
                return False
            problem = connection_problem(err)
        except TimeoutError:
            problem = f"no answer within {self.timeout:g} s"
        except CONNECTION_ERRORS as err:
            problem = connection_problem(err)
        else:
            return True
        log.warning("GET of ResourceClaimTemplate %s/%s failed: %s", namespace, name, problem)
        return None

    def claim_spec(self, pcs: PodCliqueSet, entry: ResourceSharingSpec) -> dict[str, Any]:
        """The spec a claim of ``entry`` gets: its internal template's, or the external one's."""
        source = template_source(pcs, entry)
        return self.spec(source) if isinstance(source, ObjectKey) else source.claim_spec

    def spec(self, template: ObjectKey) -> dict[str, Any]:
        """The template's ``spec.spec``; ``TemplateError``, or, not remembered, an unreachable API server."""
        found = self._load(template)
        if isinstance(found, TemplateError):
            raise found
        return found

    def _read(self, template: ObjectKey) -> dict[str, Any] | TemplateError:
        try:
            read = Objects(self._api, RESOURCECLAIMTEMPLATES, template.namespace).get(template.name)
        except ApiException as err:
            if err.status == 0:
                raise
            return TemplateError(
                f"failed to get external ResourceClaimTemplate {template}: {status_message(err)}", missing=err.status == NOT_FOUND
            )
        spec = (read.get("spec") or {}).get("spec")
        return spec if isinstance(spec, dict) else {}
