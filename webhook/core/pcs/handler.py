"""The validating webhook for PodCliqueSets (DECISIONS.md §3), as controller-runtime's validator.

CREATE runs the create-time rules; UPDATE runs them on the new object and, only when they pass,
the immutability rules (Grove's short-circuit, BEHAVIOUR.md §2.2). A CREATE they allow goes on to
the templates of other namespaces (``authorization``), then to a warning for each external
template that does not exist (``missingtemplates``). The checks beyond Grove are
warnings, or denials under ``strict``; an owner needing more claims than the reconciler makes
(``max_claims_per_owner``) is only ever a warning. Everything else is answered as
controller-runtime's ``validatorForType`` answers it: DELETE and CONNECT allowed, other operations
and objects Go could not decode refused with code 400. Objects are read through ``decisions``, so a content seen lately
is neither read nor checked again.
"""

from __future__ import annotations

from collections.abc import Callable

from webhook.core.admission import response
from webhook.core.admission.request import NO_CONTENT, AdmissionRequest, ExpectedKind
from webhook.core.admission.response import AdmissionResponse
from webhook.core.gocompat import gojson
from webhook.core.gocompat.fielderrors import aggregate
from webhook.core.pcs.authorization import TemplateAuthorization, User
from webhook.core.pcs.decisions import PodCliqueSetRead, PodCliqueSetReads
from webhook.core.pcs.immutability import validate_update
from webhook.core.pcs.missingtemplates import TemplateLookup, warn_missing
from webhook.core.sharing.desired import MAX_CLAIMS_PER_OWNER

PODCLIQUESET = ExpectedKind("grove.io", "v1alpha1", "PodCliqueSet")


def _undecodable(field: str, problem: str) -> AdmissionResponse:
    return response.errored(400, f"cannot decode request.{field} as {PODCLIQUESET}: {problem}")


def _same_templates(old: PodCliqueSetRead, new: PodCliqueSetRead) -> bool:
    """Templates sent as the same JSON are the same (Go compares RawExtensions as bytes); templates
    too deep to write as text are decoded and compared instead."""
    text = new.templates_text()
    return old is new or (text is not None and text == old.templates_text())


class PodCliqueSetValidator:
    kind = PODCLIQUESET

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
        self.reads = PodCliqueSetReads()

    async def handle(self, request: AdmissionRequest) -> AdmissionResponse:
        read: list[PodCliqueSetRead | None] = []
        for field, raw in (("object", request.object), ("oldObject", request.old_object)):
            found = None if raw is None else self.reads.read(raw)
            if found is not None and found.model is None:
                return _undecodable(field, found.problem)
            read.append(found)
        new, old = read
        operation = request.operation
        if operation in ("DELETE", "CONNECT"):
            return response.allowed()
        if operation not in ("CREATE", "UPDATE"):
            return response.errored(400, f"unknown operation {gojson.quote(operation)}")
        if new is None:
            return response.errored(400, f"{NO_CONTENT}: request.object is missing")
        if operation == "CREATE":
            return await self.create(new, request)
        if old is None:
            return response.errored(400, f"{NO_CONTENT}: request.oldObject is missing")
        return self.validate(new, old)

    async def create(self, new: PodCliqueSetRead, request: AdmissionRequest) -> AdmissionResponse:
        decided = self.validate(new, None)
        if self.templates is not None:
            decided = await self.templates.review(decided, new.pcs, request.user_info, request.namespace)
        if self.lookup is None:
            return decided
        namespace = request.namespace or new.pcs.metadata.namespace
        return await warn_missing(decided, new.pcs, namespace, self.lookup, self._readable(request.user_info))

    def _readable(self, user_info: object) -> Callable[[str, str], bool]:
        """Whether the user may read a template of another namespace, as the templates' check
        found (nothing is readable without that check)."""
        user = User.read(user_info) if self.templates is not None else None
        if self.templates is None or not isinstance(user, User):
            return lambda _namespace, _name: False
        access = self.templates.access
        return lambda namespace, name: access.known(user, namespace, name) is True

    def validate(self, new: PodCliqueSetRead, old: PodCliqueSetRead | None) -> AdmissionResponse:
        """A CREATE (``old`` None) or an UPDATE from ``old``."""
        problem = new.templates_problem()
        if problem:
            return _undecodable("object", problem)
        if old is not None and not _same_templates(old, new):
            problem = old.templates_problem()
            if problem:
                return _undecodable("oldObject", problem)
        messages, warnings = new.checked()
        if self.strict:
            messages += warnings
            warnings = []
        warnings += new.over_limit(self.max_claims_per_owner)
        if old is not None and not messages:
            unchanged = old is new or (new.immutable_text() is not None and new.immutable_text() == old.immutable_text())
            if not unchanged:
                messages = [str(e) for e in validate_update(new.pcs, old.pcs)]
        message = aggregate(messages)
        if message is None:
            return response.allowed(warnings)
        return response.denied(message, warnings)
