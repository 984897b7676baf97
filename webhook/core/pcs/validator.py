"""The validating webhook for PodCliqueSets (DECISIONS.md §3), as a controller-runtime validator.

UPDATE runs the immutability rules only when the new object passes the create-time ones (Grove's
short-circuit, BEHAVIOUR.md §2.2). Templates Go's decoder would refuse are answered code 400 first,
as Grove's webhook fails to decode such an object."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterable
from itertools import islice

from webhook.core.admission import AdmissionRequest, AdmissionResponse, allowed, decided, missing, undecodable
from webhook.core.gocompat import dra
from webhook.core.gocompat.rawjson import ANY, RawJSON, Route, as_sent
from webhook.core.model.meta import GroupVersionKind
from webhook.core.model.podcliqueset import PodCliqueSet, PodCliqueSetSpec, read_podcliqueset
from webhook.core.pcs.authorization import TemplateAuthorization, TemplateLookup, User, warn_missing
from webhook.core.pcs.rules import validate_create, validate_update
from webhook.core.pcs.warnings import claim_warnings, limit_warnings, most_claims
from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER

PODCLIQUESET = GroupVersionKind("grove.io", "v1alpha1", "PodCliqueSet")
MAX_ERRORS = 100
"""Errors a denial lists: each is made as listed, so an object built to have a million makes 100."""
MORE_ERRORS = f"spec: Too many errors: only the first {MAX_ERRORS} are listed"


def first_errors(errors: Iterable[object]) -> list[str]:
    found = list(map(str, islice(errors, MAX_ERRORS + 1)))
    return found if len(found) <= MAX_ERRORS else [*found[:MAX_ERRORS], MORE_ERRORS]


def undecodable_templates(pcs: PodCliqueSet, field: str = "object") -> AdmissionResponse | None:
    problem = dra.templates_problem([t.template_spec for t in pcs.spec.template.resource_claim_templates or ()])
    return None if problem is None else undecodable(field, PODCLIQUESET, problem)


PARAMETERS: Route = (
    "request", frozenset({"object", "oldObject"}), "spec", "template", "resourceClaimTemplates", ANY,
    "templateSpec", "spec", "devices", "config", ANY, "opaque", "parameters",
)
"""Where opaque device parameters are in a review: ``runtime.RawExtension``s, compared and printed as written."""


def _opaque_parameters(spec: PodCliqueSetSpec) -> bool:
    for template in spec.template.resource_claim_templates or ():
        devices = template.claim_spec().get("devices")
        configs = devices.get("config") if isinstance(devices, dict) else None
        for config in configs if isinstance(configs, list) else ():
            opaque = config.get("opaque") if isinstance(config, dict) else None
            if isinstance(opaque, dict) and opaque.get("parameters") is not None:
                return True
    return False


def parameters_as_sent(body: bytes, new: PodCliqueSetSpec, old: PodCliqueSetSpec) -> tuple[PodCliqueSetSpec, PodCliqueSetSpec]:
    """Both specs with their templates' opaque parameters as the review wrote them, which Grove
    compares and prints (a review without any, or decided without its body, as they are)."""
    if not body or not (_opaque_parameters(new) or _opaque_parameters(old)):
        return new, old
    texts = as_sent(body, PARAMETERS)
    return _with_texts(new, texts, "object"), _with_texts(old, texts, "oldObject")


def _with_texts(spec: PodCliqueSetSpec, texts: dict[tuple[str | int, ...], bytes], side: str) -> PodCliqueSetSpec:
    templates = list(spec.template.resource_claim_templates or ())
    for path, text in texts.items():
        if path[1] != side:
            continue
        i, j = path[5], path[10]
        assert isinstance(i, int) and isinstance(j, int)
        template_spec = copy.deepcopy(templates[i].template_spec)
        opaque = template_spec["spec"]["devices"]["config"][j]["opaque"]
        if opaque.get("parameters") is not None:
            opaque["parameters"] = RawJSON(opaque["parameters"], text)
        templates[i] = dataclasses.replace(templates[i], templateSpec=template_spec)
    if spec.template.resource_claim_templates is None:
        return spec
    return dataclasses.replace(spec, template=dataclasses.replace(spec.template, resourceClaimTemplates=templates))


class PodCliqueSetValidator:
    kind = PODCLIQUESET
    read = staticmethod(read_podcliqueset)

    def __init__(
        self,
        strict: bool = False,
        templates: TemplateAuthorization | None = None,
        max_claims_per_owner: int = MAX_CLAIMS_PER_OWNER,
        lookup: TemplateLookup | None = None,
    ) -> None:
        self.strict = strict
        """Deny, rather than warn about, claim names pods cannot use, collisions and unmatched filters."""
        self.max_claims_per_owner = max_claims_per_owner
        """The claim reconciler's limit, for a warning (never a denial) about owners above it."""
        self.templates = templates
        """Asks whether the user may read the templates of other namespaces a CREATE names (DECISIONS.md §3.1)."""
        self.lookup = lookup
        """Asks whether the external templates a CREATE names exist (DECISIONS.md §3.4)."""

    async def create(self, request: AdmissionRequest, pcs: PodCliqueSet) -> AdmissionResponse:
        refused = undecodable_templates(pcs)
        if refused:
            return refused
        errors, warnings = self.validate(pcs)
        response = decided(errors, warnings)
        if self.templates is not None:
            response = await self.templates.review(response, pcs, request.user_info, request.namespace)
        if self.lookup is None:
            return response
        return await warn_missing(response, pcs, request.namespace or pcs.namespace, self.lookup, self._readable(request.user_info))

    async def update(self, request: AdmissionRequest, pcs: PodCliqueSet, old: PodCliqueSet | None) -> AdmissionResponse:
        if old is None:
            return missing("oldObject")
        refused = undecodable_templates(pcs) or undecodable_templates(old, "oldObject")
        if refused:
            return refused
        errors, warnings = self.validate(pcs)
        if not errors:
            errors = first_errors(validate_update(*parameters_as_sent(request.body, pcs.spec, old.spec)))
        return decided(errors, warnings)

    async def delete(self, request: AdmissionRequest, old: PodCliqueSet | None) -> AdmissionResponse:
        return allowed()

    def validate(self, pcs: PodCliqueSet) -> tuple[list[str], list[str]]:
        """Grove's create-time errors and the warnings beyond Grove (errors under ``strict``)."""
        errors = first_errors(validate_create(pcs.spec))
        warnings = claim_warnings(pcs)
        if self.strict:
            errors, warnings = errors + warnings, []
        if most_claims(pcs.spec) > self.max_claims_per_owner:
            warnings += limit_warnings(pcs, self.max_claims_per_owner)
        return errors, warnings

    def _readable(self, user_info: object) -> Callable[[str, str], bool]:
        """Whether the user may read a template of another namespace, as the check found."""
        user = User.read(user_info) if self.templates is not None else None
        if self.templates is None or not isinstance(user, User):
            return lambda _namespace, _name: False
        access = self.templates.access
        return lambda namespace, name: access.known(user, namespace, name) is True
