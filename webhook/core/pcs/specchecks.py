"""What a PodCliqueSet's spec says, whoever's name the PodCliqueSet carries.

Every check of the validating webhook but those of the claim names' first part (the PodCliqueSet's
name) and of the claim limit depends on the spec alone: whether Go's decoder takes the templates,
Grove's create-time rules, the claim-name families and their collisions, the filters that match no
pod. The validating webhook finds them once per spec (a workload applied under several names, an
UPDATE that changes only metadata, a retried request) and puts the name in front: each spec it
has read is a ``KnownSpec``, which finds each of these once, when first asked.
"""

from __future__ import annotations

from typing import Any

import msgspec

from webhook.core.gocompat import dra
from webhook.core.model.podcliqueset import PodCliqueSetSpec
from webhook.core.pcs.claimnames import NameFamilies, name_families
from webhook.core.pcs.immutability import templates_text
from webhook.core.pcs.rules import validate_create
from webhook.core.pcs.warnings import most_claims, unmatched_filters


class SpecChecks(msgspec.Struct, frozen=True, gc=False):
    errors: tuple[str, ...]
    """Grove's create-time errors, as messages."""
    families: NameFamilies
    unmatched: tuple[str, ...]
    """Warnings about filters that match no pod."""
    most_claims: int
    """At least as many claims as any owner needs (``warnings.most_claims``)."""


def templates_problem(spec: PodCliqueSetSpec) -> str | None:
    """Where Go's decoder would refuse the templates (``path: problem``), or None: all an UPDATE
    needs of the old spec, and only when its templates were not sent as the new one's
    (``immutability.templates_text``)."""
    if spec.templates.text is not None:
        return None
    return dra.templates_problem(spec.templates)


def check_spec(spec: PodCliqueSetSpec) -> SpecChecks:
    """Everything but the templates."""
    return SpecChecks(
        tuple(str(e) for e in validate_create(spec)),
        name_families(spec),
        tuple(unmatched_filters(spec)),
        most_claims(spec),
    )


_UNKNOWN: Any = object()


class KnownSpec:
    """A spec the validating webhook has read, with what it found about it so far: the checks of a
    new object, and of an UPDATE's old one only its templates (as text, and whether Go's decoder
    takes them when their text is not the new object's)."""

    __slots__ = ("spec", "_checks", "_problem", "_text")

    def __init__(self, spec: PodCliqueSetSpec) -> None:
        self.spec = spec
        self._checks: SpecChecks | None = None
        self._problem: str | None = _UNKNOWN
        self._text: bytes | None = _UNKNOWN

    def checks(self) -> SpecChecks:
        if self._checks is None:
            self._checks = check_spec(self.spec)
        return self._checks

    def templates_problem(self) -> str | None:
        if self._problem is _UNKNOWN:
            self._problem = templates_problem(self.spec)
        return self._problem

    def templates_text(self) -> bytes | None:
        if self._text is _UNKNOWN:
            self._text = templates_text(self.spec)
        return self._text
