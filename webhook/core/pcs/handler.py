"""The validating webhook for PodCliqueSets (DECISIONS.md §3), as controller-runtime's validator.

A review is read, decided and answered. Reading takes ``object`` and ``oldObject`` as Go's decoder
would (code 400 for what it refuses, templates included). CREATE runs the create-time rules; UPDATE
runs them on the new object and, only when they pass, the immutability rules (Grove's
short-circuit, BEHAVIOUR.md §2.2). The checks beyond Grove are warnings, or denials under
``strict``; an owner needing more claims than the reconciler makes (``max_claims_per_owner``) is
only ever a warning. Everything else is answered as controller-runtime's ``validatorForType``
answers it: DELETE and CONNECT allowed, other operations refused with code 400. A CREATE the
rules allow may still be refused for templates of other namespaces the user may not read
(``authorization``); one allowed gets a warning for each external template that does not exist
(``missingtemplates``).

What a spec says is found once per spec (``specchecks``): the validator remembers the specs it read
(by what of them a decision reads, ``spectext.json_key``) and what it found about each
(``KnownSpec``), the last ``SPECS`` of them, and the templates it read by their JSON, which an
UPDATE sends twice (they are immutable) and a workload's specs share. A review's spec is decoded in
the body's one pass into the declarations of ``model.wire`` (``objects``), its pod templates
skipped, and turned into the model only when it is not one of them. An UPDATE's old spec sent
with the new one's ``template`` (a scale, a change of metadata) is the new spec at its own
replicas (``old_reader``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypedDict

import msgspec
from msgspec.structs import replace

from webhook.core.admission import response
from webhook.core.admission.envelope import envelope
from webhook.core.admission.request import NO_CONTENT, AdmissionRequest, read_objects
from webhook.core.admission.response import AdmissionResponse
from webhook.core.boundedcache import Memo
from webhook.core.gocompat import gojson
from webhook.core.gocompat.fielderrors import aggregate
from webhook.core.model.meta import GroupVersionKind
from webhook.core.model.podcliqueset import PodCliqueSet, PodCliqueSetSpec
from webhook.core.model.reader import read_podcliqueset, read_spec, read_templates
from webhook.core.model.spectext import SpecJson, json_key
from webhook.core.model.wire import SpecWire
from webhook.core.pcs.authorization import TemplateAuthorization, User
from webhook.core.pcs.claimnames import name_warnings
from webhook.core.pcs.immutability import validate_update
from webhook.core.pcs.missingtemplates import TemplateLookup, warn_missing
from webhook.core.pcs.specchecks import KnownSpec
from webhook.core.pcs.warnings import limit_warnings
from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER

PODCLIQUESET = GroupVersionKind("grove.io", "v1alpha1", "PodCliqueSet")
SPECS = 512


class PodCliqueSetJson(TypedDict, total=False):
    """The members of a PodCliqueSet the validator reads, as a review's body is decoded for it
    (``admission.envelope``): the spec by the declarations of ``model.wire``, turned into the model
    only when it is not remembered; the metadata as its JSON text, so that orjson reads it as it
    reads a body decoded whole."""

    apiVersion: Any
    kind: Any
    metadata: msgspec.Raw
    spec: SpecWire


def _undecodable(field: str, problem: str) -> AdmissionResponse:
    return response.errored(400, f"cannot decode request.{field} as {PODCLIQUESET}: {problem}")


def _operation_answer(operation: str, new: PodCliqueSet | None, old: PodCliqueSet | None) -> AdmissionResponse | None:
    """The answer to a review that has nothing to validate, or None."""
    if operation in ("DELETE", "CONNECT"):
        return response.allowed()
    if operation not in ("CREATE", "UPDATE"):
        return response.errored(400, f"unknown operation {gojson.quote(operation)}")
    if new is None:
        return response.errored(400, f"{NO_CONTENT}: request.object is missing")
    if operation == "UPDATE" and old is None:
        return response.errored(400, f"{NO_CONTENT}: request.oldObject is missing")
    return None


class PodCliqueSetValidator:
    kind = PODCLIQUESET
    objects = envelope(PodCliqueSetJson)

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
        read_templates_once = Memo(read_templates, SPECS, key=json_key)
        self.read_spec = Memo(functools.partial(read_spec, templates=read_templates_once), SPECS, key=json_key)
        self.known = Memo.by_identity(KnownSpec, SPECS)

    def read(self, obj: Any) -> PodCliqueSet:
        return read_podcliqueset(obj, self.read_spec)

    def old_reader(self, new: Any) -> Callable[[Any], PodCliqueSet]:
        """How an UPDATE's old object is read, ``new`` the new one as sent: a spec whose ``template``
        was sent as the new one's (a scale, a change of metadata) is the new spec at its own
        ``replicas``, not read again; every rule of an UPDATE reads the template alone."""
        new_spec = new.get("spec") if type(new) is dict else None
        if type(new_spec) is not SpecWire:
            return self.read

        def read_spec(spec: SpecJson) -> PodCliqueSetSpec:
            if type(spec) is not SpecWire or spec.template != new_spec.template:
                return self.read_spec(spec)
            read = self.read_spec(new_spec)
            return read if read.replicas == spec.replicas else replace(read, replicas=spec.replicas)

        return lambda obj: read_podcliqueset(obj, read_spec)

    async def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        read_old = None if request.old_object is None else self.old_reader(request.object)
        objects = read_objects(request, self.read, PODCLIQUESET, read_old)
        if isinstance(objects, AdmissionResponse):
            return objects
        new, old = objects
        answered = _operation_answer(request.operation, new, old)
        if answered is not None or new is None:
            return answered or response.allowed()
        if request.operation == "UPDATE":
            return self.validate(new, old)
        return await self.create(new, request)

    async def create(self, new: PodCliqueSet, request: AdmissionRequest) -> AdmissionResponse:
        decided = self.validate(new, None)
        if self.templates is not None:
            decided = await self.templates.review(decided, new, request.user_info, request.namespace)
        if self.lookup is None:
            return decided
        namespace = request.namespace or new.namespace
        return await warn_missing(decided, new, namespace, self.lookup, self._readable(request.user_info))

    def _readable(self, user_info: object) -> Callable[[str, str], bool]:
        """Whether the user may read a template of another namespace, as the templates' check
        found (nothing is readable without that check)."""
        user = User.read(user_info) if self.templates is not None else None
        if self.templates is None or not isinstance(user, User):
            return lambda _namespace, _name: False
        access = self.templates.access
        return lambda namespace, name: access.known(user, namespace, name) is True

    def undecodable_templates(self, new: KnownSpec, old: KnownSpec | None) -> AdmissionResponse | None:
        """Code 400 for templates Go's decoder would refuse: the new object's, then the old one's
        (``old`` None for a CREATE, or an UPDATE whose templates are the new one's), unless sent
        as the same JSON (then they are not looked at twice)."""
        problem = new.templates_problem()
        if problem:
            return _undecodable("object", problem)
        if old is None:
            return None
        text = new.templates_text()
        problem = None if text is not None and text == old.templates_text() else old.templates_problem()
        return _undecodable("oldObject", problem) if problem else None

    def known_old(self, new: PodCliqueSet, old: PodCliqueSet | None) -> KnownSpec | None:
        """What the validator knows of an UPDATE's old spec, of which an UPDATE needs only the
        templates: None for a CREATE, and when the old templates are the new ones (templates read
        from one text are one object, by the templates' memo)."""
        if old is None or old.spec.templates is new.spec.templates:
            return None
        return self.known(old.spec)

    def validate(self, new: PodCliqueSet, old: PodCliqueSet | None) -> AdmissionResponse:
        """A CREATE (``old`` None) or an UPDATE from ``old``."""
        known = self.known(new.spec)
        known_old = self.known_old(new, old)
        undecodable = self.undecodable_templates(known, known_old)
        if undecodable is not None:
            return undecodable
        checks = known.checks()
        messages = list(checks.errors)
        warnings = [*name_warnings(new.name, checks.families), *checks.unmatched]
        if self.strict:
            messages, warnings = messages + warnings, []
        if checks.most_claims > self.max_claims_per_owner:
            warnings += limit_warnings(new, self.max_claims_per_owner)
        if old is not None and not messages and new.spec is not old.spec:
            old_text = (known_old or known).templates_text()
            messages = [str(e) for e in validate_update(new.spec, old.spec, known.templates_text(), old_text)]
        message = aggregate(messages)
        if message is None:
            return response.allowed(warnings)
        return response.denied(message, warnings)
