"""The spec a new claim gets: from an internal template, or read from an external
ResourceClaimTemplate (resource-sharing.md §6).

Templates are resolved only for claims that must be created, so a deleted external template does
not stop the reconciler from keeping existing claims (unlike Grove, §9 item 14). Each external
template is read at most once per reconcile of a PodCliqueSet, straight from the API: no cache of
templates is kept, so a claim created later gets the template as it is then (as in Grove, §6.4).
"""

from __future__ import annotations

from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from webhook.core.podcliqueset import PodCliqueSet, ResourceSharingSpec
from webhook.core.templates import ExternalTemplate, template_source
from webhook.reconciler.apierrors import NOT_FOUND, read_json, status_message


class TemplateError(Exception):
    """An external template that cannot be used; ``missing`` when it does not exist."""

    def __init__(self, message: str, missing: bool) -> None:
        super().__init__(message)
        self.missing = missing


class Templates:
    """Template specs for one reconcile of one PodCliqueSet."""

    def __init__(self, api: client.ApiClient, pcs: PodCliqueSet) -> None:
        self._api = client.ResourceV1Api(api)
        self._pcs = pcs
        self._external: dict[tuple[str, str], dict[str, Any] | TemplateError] = {}

    def claim_spec(self, entry: ResourceSharingSpec) -> dict[str, Any]:
        source = template_source(self._pcs, entry)
        if not isinstance(source, ExternalTemplate):
            return source.claim_spec
        key = (source.namespace, source.name)
        if key not in self._external:
            self._external[key] = self._read(source)
        found = self._external[key]
        if isinstance(found, TemplateError):
            raise found
        return found

    def _read(self, source: ExternalTemplate) -> dict[str, Any] | TemplateError:
        where = f"{source.namespace}/{source.name}"
        try:
            response = self._api.read_namespaced_resource_claim_template(
                source.name, source.namespace, _preload_content=False
            )
        except ApiException as err:
            return TemplateError(
                f"failed to get external ResourceClaimTemplate {where}: {status_message(err)}",
                missing=err.status == NOT_FOUND,
            )
        template = read_json(response)
        spec = (template.get("spec") or {}).get("spec") if isinstance(template, dict) else None
        return spec if isinstance(spec, dict) else {}
