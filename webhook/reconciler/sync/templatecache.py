"""The spec a new claim gets: from an internal template, or read from an external
ResourceClaimTemplate (BEHAVIOUR.md §6).

Templates are resolved only for claims that must be created, so a deleted external template does
not stop the reconciler from keeping existing claims (unlike Grove, §9 item 14). External
templates are read through one cache shared by every worker: a template read less than
``FOUND_TTL`` seconds ago (``MISSING_TTL`` for one found missing) is not read again, and workers
that need the same template at the same moment wait for a single read. So 200 PodCliqueSets
naming one template cost about one read, and a template created after a claim needing it was
reported missing is seen within ``MISSING_TTL`` seconds. A claim gets the template's spec as it
was at most ``FOUND_TTL`` seconds before the claim was created (Grove reads templates through its
informer cache, which lags a little too), and keeps it (§6.4).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.projection import SharingEntry
from webhook.core.sharing.templatesource import ExternalTemplate, template_source
from webhook.kube.apierrors import NOT_FOUND, read_json, status_message

FOUND_TTL = 5.0
MISSING_TTL = 2.0
KEPT = 1024
"""Templates remembered before expired ones are dropped."""
READ_WAIT = 60.0
"""Longest wait for another worker's read of the same template before reading it too."""

TemplateKey = tuple[str, str]


class TemplateError(Exception):
    """An external template that cannot be used; ``missing`` when it does not exist."""

    def __init__(self, message: str, missing: bool) -> None:
        super().__init__(message)
        self.missing = missing


class TemplateCache:
    """External template specs by (namespace, name), shared by all reconciles."""

    def __init__(self, api: client.ApiClient, clock: Callable[[], float] = time.monotonic) -> None:
        self._api = client.ResourceV1Api(api)
        self._clock = clock
        self._entries: dict[TemplateKey, tuple[float, dict[str, Any] | TemplateError]] = {}
        self._reading: dict[TemplateKey, threading.Event] = {}
        self._lock = threading.Lock()
        self.reads = 0

    def spec(self, namespace: str, name: str) -> dict[str, Any]:
        """The template's ``spec.spec``; raises ``TemplateError``, or what the client raised when
        the API server could not be reached (not remembered)."""
        key = (namespace, name)
        while True:
            with self._lock:
                entry = self._entries.get(key)
                if entry is not None and entry[0] > self._clock():
                    found = entry[1]
                    break
                reading = self._reading.get(key)
                if reading is None:
                    self._reading[key] = threading.Event()
            if reading is not None:
                reading.wait(READ_WAIT)
                continue
            try:
                found = self._read(namespace, name)
                ttl = MISSING_TTL if isinstance(found, TemplateError) else FOUND_TTL
                with self._lock:
                    self._remember(key, self._clock() + ttl, found)
            finally:
                with self._lock:
                    self._reading.pop(key).set()
            break
        if isinstance(found, TemplateError):
            raise found
        return found

    def _remember(self, key: TemplateKey, until: float, found: dict[str, Any] | TemplateError) -> None:
        if len(self._entries) >= KEPT:
            now = self._clock()
            self._entries = {k: v for k, v in self._entries.items() if v[0] > now}
        self._entries[key] = (until, found)

    def _read(self, namespace: str, name: str) -> dict[str, Any] | TemplateError:
        self.reads += 1
        try:
            response = self._api.read_namespaced_resource_claim_template(name, namespace, _preload_content=False)
        except ApiException as err:
            if err.status == 0:
                raise
            return TemplateError(
                f"failed to get external ResourceClaimTemplate {namespace}/{name}: {status_message(err)}",
                missing=err.status == NOT_FOUND,
            )
        template = read_json(response)
        spec = (template.get("spec") or {}).get("spec") if isinstance(template, dict) else None
        return spec if isinstance(spec, dict) else {}


class Templates:
    """Template specs for one reconcile of one PodCliqueSet."""

    def __init__(self, cache: TemplateCache, pcs: PodCliqueSet) -> None:
        self._cache = cache
        self._pcs = pcs

    def claim_spec(self, entry: SharingEntry) -> dict[str, Any]:
        source = template_source(self._pcs, entry)
        if not isinstance(source, ExternalTemplate):
            return source.claim_spec
        return self._cache.spec(source.namespace, source.name)
