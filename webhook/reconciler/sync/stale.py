"""Stale PerReplica claims (BEHAVIOUR.md §4.8), found in the claim cache.

Which claims are stale is Grove's selector: the owner's labels, and a replica-index label that
is not one of ``0..N-1`` (``index_below``). The PodCliqueSet's cached claims are grouped once per
reconcile by the index label and the owner label each level selects on, so each owner looks only
at its own claims, however many the others have, and nothing is built per claim. A claim another
object controls is not the owner's to delete, and one already being deleted is not deleted again.
"""

from __future__ import annotations

from collections.abc import Iterable

from webhook.core.sharing.owners import LEVELS, Owner
from webhook.core.sharing.placement import index_below
from webhook.reconciler.cluster.claimrecord import INDEX_LABELS, ClaimRecord, Labels
from webhook.reconciler.sync.ownership import controlled_by_other

OWNER_LABEL = {level.replica_label: level.owner_label for level in LEVELS}
"""Replica-index label -> the label naming the owner at that level (None: the PodCliqueSet's)."""

GroupKey = tuple[str, str | None]
"""(replica-index label, owner name at that level, or None at the PodCliqueSet level)"""


class StaleCandidates:
    """The PodCliqueSet's cached claims with a replica-index label, by (index label, owner)."""

    def __init__(self, records: Iterable[ClaimRecord]) -> None:
        self._groups: dict[GroupKey, list[tuple[ClaimRecord, str]]] = {}
        extra: dict[Labels, list[tuple[str, str]]] = {}
        for record in records:
            if record.deleting or record.index_label is None or record.index_value is None:
                continue
            self._add(record, record.index_label, record.index_value, record.base_labels)
            others = extra.get(record.base_labels)
            if others is None:
                others = extra[record.base_labels] = [(k, v) for k, v in record.base_labels if k in INDEX_LABELS]
            for label, value in others:  # a claim with two index labels is a candidate of both levels
                self._add(record, label, value, record.base_labels)

    def _add(self, record: ClaimRecord, label: str, value: str, base: Labels) -> None:
        owner_label = OWNER_LABEL[label]
        owner = None if owner_label is None else dict(base).get(owner_label)
        if owner_label is None or owner is not None:
            self._groups.setdefault((label, owner), []).append((record, value))

    def stale(self, owner: Owner, replicas: int) -> list[ClaimRecord]:
        """This owner's claims for replicas at or above ``replicas``, that it may delete."""
        if not owner.entries:
            return []
        level = owner.level
        group = self._groups.get((level.replica_label, owner.name if level.owner_label else None), [])
        wanted = owner.owner_labels().items()
        selected: dict[Labels, bool] = {}
        found = []
        for record, value in group:
            if index_below(value, replicas):
                continue
            ok = selected.get(record.base_labels)
            if ok is None:
                base = dict(record.base_labels)
                ok = selected[record.base_labels] = all(base.get(k) == v for k, v in wanted)
            if ok and controlled_by_other(record.references, owner.reference) is None:
                found.append(record)
        return sorted(found, key=lambda r: r.name)
