"""Cross-namespace ResourceClaimTemplates: only for users who may read them (DECISIONS.md §3.1).

An entry with ``namespace: B`` makes the reconciler copy a template of namespace B into a claim of
the PodCliqueSet's namespace, with the reconciler's own rights: whoever may create a PodCliqueSet
could read any template of the cluster through its claims. So a CREATE naming a template of another
namespace is allowed only when the requesting user may ``get`` that template. This module decides
which references need the question, asks it through ``TemplateAccess`` (a shell implements it with
SubjectAccessReviews), and words the answer; it never talks to the API server itself.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from webhook.core.admission import response
from webhook.core.admission.response import AdmissionResponse
from webhook.core.admission.userinfo import UserInfo, read_user_info
from webhook.core.gocompat import gojson
from webhook.core.gocompat.fielderrors import Path, aggregate, forbidden
from webhook.core.model.podcliqueset import Entries, PodCliqueSet, PodCliqueSetSpec
from webhook.core.pcs import details

TEMPLATE = Path("spec").child("template")

WARN_SUFFIX = "admitted because --template-authorization is warn"


@dataclass(frozen=True, slots=True)
class User:
    """The requesting user as authorization sees them; hashable, so answers can be kept per user."""

    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def of(cls, info: UserInfo) -> User:
        extra = tuple(sorted((key, tuple(values)) for key, values in info.extra.items()))
        return cls(info.username, info.uid, tuple(info.groups), extra)

    @classmethod
    def read(cls, raw: object) -> User | str:
        """``request.userInfo`` as sent (absent: nobody), or why it cannot be read. The usual shape
        is read directly; anything else (``null`` members too) through the model."""
        user = _plain_user({} if raw is None else raw)
        if user is not None:
            return user
        info = read_user_info(raw)
        return info if isinstance(info, str) else cls.of(info)

    @property
    def anonymous(self) -> bool:
        """No name and no group: nothing an authorizer could be asked about."""
        return not self.username and not self.groups

    def __str__(self) -> str:
        return f"user {gojson.quote(self.username)}"


def _plain_user(raw: object) -> User | None:
    if not isinstance(raw, dict):
        return None
    username, uid, groups, extra = (raw.get("username", ""), raw.get("uid", ""), raw.get("groups", []), raw.get("extra", {}))
    if type(username) is not str or type(uid) is not str or type(groups) is not list or type(extra) is not dict:
        return None
    if not all(type(group) is str for group in groups):
        return None
    pairs = _plain_extra(extra)
    return None if pairs is None else User(username, uid, tuple(groups), pairs)


def _plain_extra(extra: dict[str, object]) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    pairs = []
    for key, values in extra.items():
        if type(values) is not list or not all(type(value) is str for value in values):
            return None
        pairs.append((key, tuple(values)))
    return tuple(sorted(pairs))


@dataclass(frozen=True, slots=True)
class TemplateReference:
    """A template of another namespace, and where the first entry naming it is: ``level`` (``""``
    for the PodCliqueSet's list, ``cliques`` or ``podCliqueScalingGroups``), the index of the
    clique or group, and the entry's. Its path is made only for a message."""

    namespace: str
    name: str
    level: str
    index: int
    entry: int

    @property
    def path(self) -> Path:
        """The entry's ``namespace`` field, e.g. ``spec.template.cliques[0].resourceSharing[1].namespace``."""
        owner = TEMPLATE.child(self.level).index(self.index) if self.level else TEMPLATE
        return owner.child("resourceSharing").index(self.entry).child("namespace")

    def __str__(self) -> str:
        return f"ResourceClaimTemplate {gojson.quote(f'{self.namespace}/{self.name}')}"


class AccessUnknown(Exception):
    """The question could not be answered (API server unreachable, an error, no answer in time);
    the message says why, in one line."""


REVIEW_RESULTS = ("allowed", "denied", "error")
"""How a question asked of the API server ended; ``error``: ``AccessUnknown``."""


class TemplateAccess(Protocol):
    def known(self, user: User, namespace: str, name: str) -> bool | None:
        """The answer ``may_get`` would give at once (one it remembers), else None."""

    async def may_get(self, user: User, namespace: str, name: str) -> bool:
        """Whether ``user`` may get the ResourceClaimTemplate ``namespace/name``; raises
        ``AccessUnknown`` when that cannot be found out."""


def cross_namespace_references(spec: PodCliqueSetSpec, namespace: str) -> list[TemplateReference]:
    """The distinct templates of namespaces other than ``namespace`` (the PodCliqueSet's) that the
    entries name, each with its first entry, in the order Grove's rules visit the lists. Internal
    templates and entries without a namespace, or with the PodCliqueSet's own, name none. A
    PodCliqueSet without such a reference costs one look at each entry's namespace."""
    lists = _entry_lists(spec)
    if not any(e.namespace and e.namespace != namespace for _, _, entries in lists for e in entries):
        return []
    found: dict[tuple[str, str], TemplateReference] = {}
    for level, index, entries in lists:
        for i, entry in enumerate(entries):
            if entry.namespace and entry.namespace != namespace and (entry.namespace, entry.name) not in found:
                found[entry.namespace, entry.name] = TemplateReference(entry.namespace, entry.name, level, index, i)
    return list(found.values())


def _entry_lists(spec: PodCliqueSetSpec) -> list[tuple[str, int, Entries]]:
    """(level, index of the clique or group, entries) of every list, in the order Grove's rules visit them."""
    lists = [("", 0, spec.entries)]
    lists += [("cliques", c, clique.entries) for c, clique in enumerate(spec.cliques)]
    lists += [("podCliqueScalingGroups", g, group.entries) for g, group in enumerate(spec.scaling_groups)]
    return lists


def refusal(user: User, reference: TemplateReference) -> str:
    return str(forbidden(reference.path, details.TEMPLATE_REFUSED.format(user, reference)))


def unchecked(user: User, reference: TemplateReference, problem: str) -> str:
    return str(
        forbidden(reference.path, f"authorization could not be checked for {user} to get {reference}: {problem}")
    )


def as_warning(denial: str, reference: TemplateReference) -> str:
    """A denial's text as the warning ``warn`` gives instead: without Go's ``Forbidden:``."""
    prefix = f"{reference.path}: Forbidden: "
    return f"{reference.path}: {denial.removeprefix(prefix)}; {WARN_SUFFIX}"


class TemplateAuthorization:
    """The check on an allowed CREATE: ``enforce`` (denied, code 403) or ``warn`` (admitted with a
    warning) when the user may not get a template of another namespace, or when that cannot be
    found out (fail closed)."""

    def __init__(self, access: TemplateAccess, *, warn: bool = False) -> None:
        self.access = access
        self.warn = warn

    async def review(self, decided: AdmissionResponse, pcs: PodCliqueSet, user_info: object, namespace: str) -> AdmissionResponse:
        """``decided``, the answer of the rules, as it stands once the user's access is known
        (``user_info``: ``request.userInfo`` as sent, read only when there is a question)."""
        if not decided.allowed:
            return decided
        references = cross_namespace_references(pcs.spec, namespace or pcs.namespace)
        if not references:
            return decided
        user = User.read(user_info)
        if isinstance(user, str):
            return response.errored(400, user)
        denials = _denials(user, references, await self._answers(user, references))
        return self._with_denials(decided, denials)

    async def _answers(self, user: User, references: list[TemplateReference]) -> list[bool | BaseException | None]:
        """Whether the user may get each template: remembered, else asked (nobody may get any)."""
        if user.anonymous:
            return [False] * len(references)
        answers: list[bool | BaseException | None] = [self.access.known(user, r.namespace, r.name) for r in references]
        if None in answers:
            await self._ask(user, references, answers)
        return answers

    def _with_denials(self, decided: AdmissionResponse, denials: list[tuple[TemplateReference, str]]) -> AdmissionResponse:
        if not denials:
            return decided
        if self.warn:
            return response.allowed([*decided.warnings, *(as_warning(d, r) for r, d in denials)])
        message = aggregate([d for _, d in denials])
        assert message is not None
        return response.denied(message, decided.warnings)

    async def _ask(self, user: User, references: list[TemplateReference], answers: list[bool | BaseException | None]) -> None:
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
    user: User, references: list[TemplateReference], answers: list[bool | BaseException | None]
) -> list[tuple[TemplateReference, str]]:
    denials: list[tuple[TemplateReference, str]] = []
    for reference, answer in zip(references, answers, strict=True):
        if isinstance(answer, AccessUnknown):
            denials.append((reference, unchecked(user, reference, str(answer))))
        elif isinstance(answer, BaseException):
            raise answer
        elif not answer:
            denials.append((reference, refusal(user, reference)))
    return denials
