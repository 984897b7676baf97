"""The spec a new claim gets: from an internal template, or read from an external
ResourceClaimTemplate (BEHAVIOUR.md §6).

Templates are resolved only for claims that must be created, so a deleted external template does
not stop the reconciler from keeping existing claims (unlike Grove, §9 item 14). External
templates are read through one cache shared by every worker (``TemplateReads``): a template read
less than ``FOUND_TTL`` seconds ago (``MISSING_TTL`` for one found missing) is not read again, and
workers that need the same template at the same moment wait for a single read. So 200
PodCliqueSets naming one template cost about one read, and a template created after a claim
needing it was reported missing is seen within ``MISSING_TTL`` seconds. A claim gets the
template's spec as it was at most ``FOUND_TTL`` seconds before the claim was created (Grove reads
templates through its informer cache, which lags a little too), and keeps it (§6.4).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.boundedcache import BoundedCache
from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import PodCliqueSet, ResourceSharingSpec
from webhook.core.sharing.templatesource import template_source
from webhook.kube.apierrors import NOT_FOUND, read_json, status_message

FOUND_TTL = 5.0
MISSING_TTL = 2.0
KEPT = 1024
"""Templates remembered at most."""


class TemplateError(Exception):
    """An external template that cannot be used; ``missing`` when it does not exist."""

    def __init__(self, message: str, missing: bool) -> None:
        super().__init__(message)
        self.missing = missing


def _ttl(found: dict[str, Any] | TemplateError) -> float:
    """How long a read is good for: a missing template may be created any moment."""
    return MISSING_TTL if isinstance(found, TemplateError) else FOUND_TTL


class TemplateReads:
    """External template specs by namespace and name, shared by all reconciles."""

    def __init__(self, api: client.ApiClient, clock: Callable[[], float] = time.monotonic) -> None:
        self._api = client.ResourceV1Api(api)
        self._read_specs: BoundedCache[ObjectKey, dict[str, Any] | TemplateError] = BoundedCache(KEPT, clock=clock)
        self.reads = 0

    def spec(self, template: ObjectKey) -> dict[str, Any]:
        """The template's ``spec.spec``; raises ``TemplateError``, or what the client raised when
        the API server could not be reached (not remembered)."""
        found = self._read_specs.load(template, lambda: self._read(template), _ttl)
        if isinstance(found, TemplateError):
            raise found
        return found

    def _read(self, template: ObjectKey) -> dict[str, Any] | TemplateError:
        self.reads += 1
        try:
            response = self._api.read_namespaced_resource_claim_template(template.name, template.namespace, _preload_content=False)
        except ApiException as err:
            if err.status == 0:
                raise
            return TemplateError(
                f"failed to get external ResourceClaimTemplate {template}: {status_message(err)}",
                missing=err.status == NOT_FOUND,
            )
        read = read_json(response)
        spec = (read.get("spec") or {}).get("spec") if isinstance(read, dict) else None
        return spec if isinstance(spec, dict) else {}


class Templates:
    """Template specs for one reconcile of one PodCliqueSet."""

    def __init__(self, reads: TemplateReads, pcs: PodCliqueSet) -> None:
        self._reads = reads
        self._pcs = pcs

    def claim_spec(self, entry: ResourceSharingSpec) -> dict[str, Any]:
        source = template_source(self._pcs, entry)
        return self._reads.spec(source) if isinstance(source, ObjectKey) else source.claim_spec
