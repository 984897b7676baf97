"""External ResourceClaimTemplates at CREATE (DECISIONS.md §3.1, DECISIONS.md §3.4), asked through
``TemplateAccess`` and ``TemplateLookup``: this module never talks to the API server itself.

The reconciler copies a template of another namespace into a claim with its own rights, so whoever
may create a PodCliqueSet could read any template through its claims: a CREATE naming one is
allowed only for a user who may ``get`` it. A template that is not there is valid (a GitOps tool
applies a directory in its own order) but its pods stay Pending: a warning, never a denial. One of
another namespace is looked up only for a user who may read it, or "not found" would tell anyone
allowed to create a PodCliqueSet what other namespaces hold."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterator
from typing import Annotated, Protocol

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from webhook.core.admission import AdmissionResponse, allowed, denied, errored
from webhook.core.gocompat import gojson
from webhook.core.gocompat.fielderrors import Path, forbidden
from webhook.core.model.meta import GoStr, GoStrList, first_problem, MODEL
from webhook.core.model.podcliqueset import Entries, PodCliqueSet, PodCliqueSetSpec, ResourceSharingSpec
from webhook.core.sharing.owners import PCS_ENTRIES, Level, entries_source

TEMPLATE = Path("spec").child("template")

WARN_SUFFIX = "admitted because --template-authorization is warn"
MAX_TEMPLATES = 16
"""Templates a CREATE may name in other namespaces, and external templates looked up for the
missing-template warnings, at most: each is a request to the API server, and an object naming
thousands would make one review send thousands. The ValidatingAdmissionPolicy has as many slots."""
TOO_MANY_TEMPLATES = (
    "names {} ResourceClaimTemplates of other namespaces; "
    f"the webhook checks at most {MAX_TEMPLATES}"
)
TEMPLATE_REFUSED = "{} may not get {}; a template of another namespace may be used only by users who may read it"
"""Completed with ``user "<name>"`` and ``ResourceClaimTemplate "<ns>/<name>"``."""
REVIEW_RESULTS = ("allowed", "denied", "error")
"""How a question asked of the API server ended; ``error``: ``AccessUnknown``."""


@dataclass(frozen=True, slots=True, config=MODEL)
class UserInfo:
    """``request.userInfo`` (``authentication.k8s.io/v1``), as the API server authenticated the user."""

    username: GoStr = ""
    uid: GoStr = ""
    groups: GoStrList = Field(default_factory=list)
    extra: Annotated[dict[str, GoStrList], BeforeValidator(lambda v: {} if v is None else v)] = Field(default_factory=dict)


_read_user_info = TypeAdapter(UserInfo).validate_python


@dataclasses.dataclass(frozen=True, slots=True)
class User:
    """The requesting user, hashable so that answers can be kept per user."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def read(cls, raw: object) -> User | str:
        """``request.userInfo`` as sent (absent: nobody), or why it cannot be read."""
        try:
            info = _read_user_info({} if raw is None else raw)
        except ValidationError as err:
            return f"cannot decode request.userInfo: {first_problem(err)}"
        extra = tuple(sorted((key, tuple(values)) for key, values in info.extra.items()))
        return cls(info.username, info.uid, tuple(info.groups), extra)

    @property
    def anonymous(self) -> bool:
        """No name and no group: nothing an authorizer could be asked about."""
        return not self.username and not self.groups

    def __str__(self) -> str:
        return f"user {gojson.quote(self.username)}"


@dataclasses.dataclass(frozen=True, slots=True)
class ExternalTemplate:
    """A template an entry names outside the PodCliqueSet, and where its first entry is."""

    namespace: str
    name: str
    source: str
    """The first entry's field path, e.g. ``spec.template.cliques[0].resourceSharing[1]``."""

    @property
    def path(self) -> Path:
        """The first entry's ``namespace`` field: what a denial names."""
        return Path(self.source).child("namespace")

    def warning(self) -> str:
        return (
            f"{self.source}: {self} not found; "
            "its claims are not created, and the pods that need them stay Pending, until it exists"
        )

    def __str__(self) -> str:
        return f"ResourceClaimTemplate {gojson.quote(f'{self.namespace}/{self.name}')}"


class AccessUnknown(Exception):
    """The question could not be answered (no API server, an error, no answer in time)."""


class TemplateAccess(Protocol):
    def known(self, user: User, namespace: str, name: str) -> bool | None:
        """The answer ``may_get`` would give at once (one it remembers), else None."""

    async def may_get(self, user: User, namespace: str, name: str) -> bool:
        """Whether ``user`` may get the template; ``AccessUnknown`` if that cannot be found out."""


def _entries(spec: PodCliqueSetSpec) -> Iterator[tuple[str, ResourceSharingSpec]]:
    """Each entry with its field path, in Grove's order."""
    template = spec.template
    lists: list[tuple[str, Entries | None]] = [(PCS_ENTRIES, template.resource_sharing)]
    lists += [(entries_source(Level.CLIQUE, c), clique.resource_sharing) for c, clique in enumerate(template.cliques)]
    groups = template.pod_clique_scaling_groups
    lists += [(entries_source(Level.SCALING_GROUP, g), group.resource_sharing) for g, group in enumerate(groups)]
    for source, entries in lists:
        for i, entry in enumerate(entries or ()):
            yield f"{source}[{i}]", entry


def cross_namespace_references(spec: PodCliqueSetSpec, namespace: str) -> list[ExternalTemplate]:
    """The distinct templates of other namespaces than ``namespace`` that the entries name, each
    with its first entry."""
    found: dict[tuple[str, str], ExternalTemplate] = {}
    for source, entry in _entries(spec):
        if entry.namespace and entry.namespace != namespace and (entry.namespace, entry.name) not in found:
            found[entry.namespace, entry.name] = ExternalTemplate(entry.namespace, entry.name, source)
    return list(found.values())


class TemplateAuthorization:
    """The check on an allowed CREATE: denied (code 403), or under ``warn`` admitted with a warning,
    when the user may not get a template of another namespace or that cannot be found out."""

    def __init__(self, access: TemplateAccess, *, warn: bool = False) -> None:
        self.access = access
        self.warn = warn

    async def review(self, decided: AdmissionResponse, pcs: PodCliqueSet, user_info: object, namespace: str) -> AdmissionResponse:
        """The rules' answer ``decided`` once the user's access is known, if it is in question."""
        if not decided.allowed:
            return decided
        references = cross_namespace_references(pcs.spec, namespace or pcs.namespace)
        if not references:
            return decided
        user = User.read(user_info)
        if isinstance(user, str):
            return errored(400, user)
        if len(references) > MAX_TEMPLATES:
            return self._with_denials(decided, [(TEMPLATE, TOO_MANY_TEMPLATES.format(len(references)))])
        return self._with_denials(decided, _denials(user, references, await self._answers(user, references)))

    async def _answers(self, user: User, references: list[ExternalTemplate]) -> list[bool | BaseException | None]:
        """Whether the user may get each template: remembered, else asked (nobody may get any)."""
        if user.anonymous:
            return [False] * len(references)
        answers: list[bool | BaseException | None] = [self.access.known(user, r.namespace, r.name) for r in references]
        if None in answers:
            await self._ask(user, references, answers)
        return answers

    def _with_denials(self, decided: AdmissionResponse, denials: list[tuple[Path, str]]) -> AdmissionResponse:
        """Each (path, problem) a Forbidden error, or under ``warn`` a warning."""
        if not denials:
            return decided
        if self.warn:
            return allowed([*decided.warnings, *(f"{path}: {problem}; {WARN_SUFFIX}" for path, problem in denials)])
        return denied([forbidden(path, problem) for path, problem in denials], decided.warnings)

    async def _ask(self, user: User, references: list[ExternalTemplate], answers: list[bool | BaseException | None]) -> None:
        """The answers not remembered, into ``answers``: all asked at once (a single one without a task)."""
        unknown = [i for i, answer in enumerate(answers) if answer is None]
        if len(unknown) > 1:
            asked = await asyncio.gather(
                *(self.access.may_get(user, references[i].namespace, references[i].name) for i in unknown),
                return_exceptions=True,
            )
            for i, answer in zip(unknown, asked, strict=True):
                answers[i] = answer
            return
        reference = references[unknown[0]]
        try:
            answers[unknown[0]] = await self.access.may_get(user, reference.namespace, reference.name)
        except AccessUnknown as err:
            answers[unknown[0]] = err


def _denials(
    user: User, references: list[ExternalTemplate], answers: list[bool | BaseException | None]
) -> list[tuple[Path, str]]:
    denials: list[tuple[Path, str]] = []
    for reference, answer in zip(references, answers, strict=True):
        if isinstance(answer, AccessUnknown):
            problem = f"authorization could not be checked for {user} to get {reference}: {answer}"
        elif isinstance(answer, BaseException):
            raise answer
        elif answer:
            continue
        else:
            problem = TEMPLATE_REFUSED.format(user, reference)
        denials.append((reference.path, problem))
    return denials


class TemplateLookup(Protocol):
    async def exists(self, namespace: str, name: str) -> bool | None:
        """Whether the ResourceClaimTemplate exists; None when that cannot be found out."""


def external_templates(pcs: PodCliqueSet, namespace: str) -> list[ExternalTemplate]:
    """The distinct templates entries name outside the PodCliqueSet (§6.1), with first entries."""
    internal = {t.name for t in pcs.spec.template.resource_claim_templates or ()}
    found: dict[tuple[str, str], ExternalTemplate] = {}
    for source, entry in _entries(pcs.spec):
        if entry.name and (entry.namespace or entry.name not in internal):
            key = (entry.namespace or namespace, entry.name)
            found.setdefault(key, ExternalTemplate(*key, source))
    return list(found.values())


async def warn_missing(
    decided: AdmissionResponse,
    pcs: PodCliqueSet,
    namespace: str,
    lookup: TemplateLookup,
    readable: Callable[[str, str], bool],
) -> AdmissionResponse:
    """``decided`` with a warning for each external template that does not exist, when it admits the
    CREATE; one of another namespace is looked up only if ``readable`` for the user."""
    if not decided.allowed:
        return decided
    checked = [t for t in external_templates(pcs, namespace) if t.namespace == namespace or readable(t.namespace, t.name)]
    checked = checked[:MAX_TEMPLATES]
    if not checked:
        return decided
    found = await asyncio.gather(*(lookup.exists(t.namespace, t.name) for t in checked))
    missing = [t.warning() for t, exists in zip(checked, found, strict=True) if exists is False]
    if not missing:
        return decided
    return decided._replace(warnings=(*decided.warnings, *missing))
