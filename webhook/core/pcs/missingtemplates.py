"""A warning at CREATE for an external template that does not exist (DECISIONS.md §3.4).

A PodCliqueSet naming a ResourceClaimTemplate that is not there is valid (the template may come
later: a GitOps tool applies a directory in its own order), but its claims cannot be made until it
exists, and its pods stay Pending. A typo should show at ``kubectl apply``, not as a Pending pod an
hour later: so an allowed CREATE gets a warning per missing template, never a denial (not even
under ``--strict``: a template created after its PodCliqueSet is no mistake). The shell asks whether
each exists (``TemplateLookup``); an answer it cannot get says nothing.

A template of another namespace is looked up only when the requesting user may read it (the answer
``pcs.authorization`` got): the webhook reads with its own rights, and "not found" would tell anyone
allowed to create a PodCliqueSet what templates other namespaces hold.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Protocol

from msgspec.structs import replace

from webhook.core.admission.response import AdmissionResponse
from webhook.core.gocompat import gojson
from webhook.core.model.podcliqueset import Entries, PodCliqueSet, PodCliqueSetSpec, SharingEntry
from webhook.core.sharing.owners import PCS_ENTRIES, Level, entries_source


class TemplateLookup(Protocol):
    async def exists(self, namespace: str, name: str) -> bool | None:
        """Whether the ResourceClaimTemplate ``namespace/name`` exists; None when that cannot be
        found out (the API server unreachable, no answer in time, no right to read it)."""


@dataclass(frozen=True, slots=True)
class ExternalTemplate:
    """A template an entry names outside the PodCliqueSet, and the path of its first entry."""

    namespace: str
    name: str
    path: str

    def warning(self) -> str:
        where = gojson.quote(f"{self.namespace}/{self.name}")
        return (
            f"{self.path}: ResourceClaimTemplate {where} not found; "
            "its claims are not created, and the pods that need them stay Pending, until it exists"
        )


def _entries(spec: PodCliqueSetSpec) -> Iterator[tuple[str, SharingEntry]]:
    """Every entry with its path, in the order Grove's rules visit the lists."""
    lists: list[tuple[str, Entries]] = [(PCS_ENTRIES, spec.entries)]
    lists += [(entries_source(Level.CLIQUE, c), clique.entries) for c, clique in enumerate(spec.cliques)]
    lists += [(entries_source(Level.SCALING_GROUP, g), group.entries) for g, group in enumerate(spec.scaling_groups)]
    for source, entries in lists:
        for i, entry in enumerate(entries):
            yield f"{source}[{i}]", entry


def external_templates(pcs: PodCliqueSet, namespace: str) -> list[ExternalTemplate]:
    """The distinct templates the entries name outside the PodCliqueSet (BEHAVIOUR.md §6.1: an entry
    with a namespace, or without one whose name is no internal template), each with its first
    entry; ``namespace`` is the PodCliqueSet's. Entries without a name name nothing."""
    internal = set(pcs.spec.templates.names)
    found: dict[tuple[str, str], ExternalTemplate] = {}
    for path, entry in _entries(pcs.spec):
        if not entry.name or (not entry.namespace and entry.name in internal):
            continue
        key = (entry.namespace or namespace, entry.name)
        found.setdefault(key, ExternalTemplate(*key, path))
    return list(found.values())


async def warn_missing(
    decided: AdmissionResponse,
    pcs: PodCliqueSet,
    namespace: str,
    lookup: TemplateLookup,
    readable: Callable[[str, str], bool],
) -> AdmissionResponse:
    """``decided`` with a warning added for each external template that does not exist, when it
    admits the CREATE. ``readable(namespace, name)`` says whether the user may read a template of
    another namespace (one the user may not read is not looked up)."""
    if not decided.allowed:
        return decided
    checked = [t for t in external_templates(pcs, namespace) if t.namespace == namespace or readable(t.namespace, t.name)]
    if not checked:
        return decided
    found = await asyncio.gather(*(lookup.exists(t.namespace, t.name) for t in checked))
    missing = [t.warning() for t, exists in zip(checked, found, strict=True) if exists is False]
    if not missing:
        return decided
    return replace(decided, warnings=(*decided.warnings, *missing))
