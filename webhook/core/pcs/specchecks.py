"""What a PodCliqueSet's spec says, whoever's name the PodCliqueSet carries.

Every check of the validating webhook but those of the claim names' first part (the PodCliqueSet's
name) and of the claim limit depends on the spec alone: whether Go's decoder takes the templates,
Grove's create-time rules, the claim-name families and their collisions, the filters that match no
pod. The validating webhook finds them once per spec (a workload applied under several names, an
UPDATE that changes only metadata, a retried request) and puts the name in front.
"""

from __future__ import annotations

import msgspec

from webhook.core.gocompat import dra
from webhook.core.model.podcliqueset import PodCliqueSetSpec
from webhook.core.pcs.claimnames import NameFamilies, name_families
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
    return dra.templates_problem(spec.templates)


def check_spec(spec: PodCliqueSetSpec) -> SpecChecks:
    """Everything but the templates."""
    return SpecChecks(
        tuple(str(e) for e in validate_create(spec)),
        name_families(spec),
        tuple(unmatched_filters(spec)),
        most_claims(spec),
    )
