"""The spec a new claim gets: its internal template's, or an external ResourceClaimTemplate's
(BEHAVIOUR.md §6), read only for claims that must be created, so that a deleted external template
does not stop the reconciler keeping existing claims (unlike Grove, §9 item 14).

External templates are read through one cache for every worker: a template read less than
``FOUND_TTL`` seconds ago (``MISSING_TTL`` for one found missing, which may be created any moment)
is not read again, and workers needing the same one at once wait for one read. So many
PodCliqueSets naming one template cost one read, and a claim gets the template's spec as it was a
few seconds before the claim was made at most (Grove reads templates through its informer cache,
which lags too), and keeps it (§6.4).
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


class TemplateReads:
    """External template specs by namespace and name, shared by all reconciles."""

    def __init__(self, api: client.ApiClient, clock: Callable[[], float] = time.monotonic) -> None:
        self._api = client.ResourceV1Api(api)
        self._specs: BoundedCache[ObjectKey, dict[str, Any] | TemplateError] = BoundedCache(KEPT, clock=clock)

    def claim_spec(self, pcs: PodCliqueSet, entry: ResourceSharingSpec) -> dict[str, Any]:
        source = template_source(pcs, entry)
        return self.spec(source) if isinstance(source, ObjectKey) else source.claim_spec

    def spec(self, template: ObjectKey) -> dict[str, Any]:
        """The template's ``spec.spec``; raises ``TemplateError``, or what the client raised when the
        API server could not be reached (not remembered)."""
        found = self._specs.load(
            template, lambda: self._read(template), lambda read: MISSING_TTL if isinstance(read, TemplateError) else FOUND_TTL
        )
        if isinstance(found, TemplateError):
            raise found
        return found

    def _read(self, template: ObjectKey) -> dict[str, Any] | TemplateError:
        try:
            response = self._api.read_namespaced_resource_claim_template(template.name, template.namespace, _preload_content=False)
        except ApiException as err:
            if err.status == 0:
                raise
            return TemplateError(
                f"failed to get external ResourceClaimTemplate {template}: {status_message(err)}", missing=err.status == NOT_FOUND
            )
        read = read_json(response)
        spec = (read.get("spec") or {}).get("spec") if isinstance(read, dict) else None
        return spec if isinstance(spec, dict) else {}
