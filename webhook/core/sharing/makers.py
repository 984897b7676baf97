"""Who makes a PodCliqueSet's shared claims: this project's reconciler, or Grove's operator, which
makes the same claims itself from v0.1.0-alpha.8 (DECISIONS.md §9). Two writers of the same claims
race for every one of them, so the reconciler steps back where Grove's operator makes them.

A claim says who made it in the ``metadata.managedFields`` the API server records on every write:
the entry of its create owns ``spec`` (immutable, so no later write takes it over) and names the
manager, the request's ``fieldManager`` or else its User-Agent up to the first ``/``. The
reconciler creates and patches with ``RECONCILER_MANAGER`` (the name its User-Agent gave every
claim it made before it said so itself); a claim another manager created with Grove's labels and
a controller reference was made as Grove's operator makes them (``EnsureResourceClaim``, as
``grove-operator``, controller-runtime's default User-Agent). A claim someone made by hand without
them, for the reconciler to adopt, says nothing either way.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal, NamedTuple

from webhook.core.model import labels

RECONCILER_MANAGER = "grove-sharing-webhook"
"""The field manager of the reconciler's claim writes."""

ClaimMaking = Literal["auto", "always", "never"]
"""``--claims``: who makes claims, decided per PodCliqueSet (``auto``), the reconciler everywhere
(``always``), or never the reconciler (``never``: Grove's operator, or someone else, makes them)."""


class Maker(StrEnum):
    RECONCILER = "reconciler"
    GROVE = "grove-operator"

    @property
    def who(self) -> str:
        return "the reconciler" if self is Maker.RECONCILER else "Grove's operator"


def claim_maker(metadata: Mapping[str, Any]) -> Maker | None:
    """Who created the claim of ``metadata``, from its managed fields; None when they do not say."""
    creator = _create(metadata.get("managedFields") or ())
    if creator is None:
        return None
    if creator.get("manager") == RECONCILER_MANAGER:
        return Maker.RECONCILER
    meta = _fields(creator).get("f:metadata")
    if not isinstance(meta, dict) or "f:ownerReferences" not in meta:
        return None
    created_labels = meta.get("f:labels")
    return Maker.GROVE if isinstance(created_labels, dict) and f"f:{labels.MANAGED_BY}" in created_labels else None


def _create(managed: Iterable[Any]) -> Mapping[str, Any] | None:
    """The entry of the object's create: the one that owns ``spec``, else the first (a create with
    an empty spec owns none of it); entries of subresources are later writes."""
    entries = [e for e in managed if isinstance(e, dict) and not e.get("subresource")]
    return next((e for e in entries if "f:spec" in _fields(e)), entries[0] if entries else None)


def _fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    fields = entry.get("fieldsV1")
    return fields if isinstance(fields, dict) else {}


@dataclass(frozen=True, slots=True)
class Evidence:
    """What the claims seen so far say about one PodCliqueSet."""

    made: frozenset[Maker]
    """Who made the claims of the PodCliqueSet seen since it was created."""
    in_namespace: frozenset[Maker]
    """Who made the claims seen in its namespace."""
    waited: float
    """Seconds since the reconciler first found the PodCliqueSet with claims to have."""


class Wait(NamedTuple):
    """Nobody has made a claim of the PodCliqueSet yet: ask again in ``seconds``."""

    seconds: float


def who_makes(setting: ClaimMaking, evidence: Evidence, grace: float) -> Maker | Wait:
    """Who makes a PodCliqueSet's claims. Under ``auto``: Grove's operator once it has made one of
    them (whoever made the others: a race lost once decides it for good); the reconciler once it
    has made one, or when in the namespace only it has, or when nobody has within ``grace``
    seconds. Beside an operator that makes claims, its first claims come a moment after the
    PodCliqueSet or its owners do, within ``grace``, so the reconciler makes none; beside one
    that does not, only the first PodCliqueSet of a namespace waits."""
    if setting != "auto":
        return Maker.RECONCILER if setting == "always" else Maker.GROVE
    if Maker.GROVE in evidence.made:
        return Maker.GROVE
    if Maker.RECONCILER in evidence.made or evidence.in_namespace == {Maker.RECONCILER}:
        return Maker.RECONCILER
    if evidence.waited >= grace:
        return Maker.RECONCILER
    return Wait(grace - evidence.waited)
