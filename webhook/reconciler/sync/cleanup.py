"""Stale PerReplica claims (BEHAVIOUR.md §4.8): found in the claim cache, confirmed with the
owner as the API server has it, deleted one by one by name and UID.

Which claims are stale is Grove's selector: the owner's labels, and a replica-index label that
is not one of ``0..N-1`` (``index_below``). The PodCliqueSet's cached claims are grouped once per
reconcile by the index label and the owner label each level selects on, so each owner looks only
at its own claims, however many the others have, and nothing is built per claim.

The caches are separate streams: a claim Grove's operator has just created for a scaled-out owner
may be cached before the owner's new replica count is. So claims that look stale are deleted
only when a read of the owner (``LiveOwners``) agrees: same UID, not being deleted, and the index
at or above its replicas now. A claim another object controls is not the owner's to delete, and
one already being deleted is not deleted again.
"""

from __future__ import annotations

from collections.abc import Iterable

from webhook.core.sharing.owners import Level, OwnedSharing
from webhook.core.sharing.placement import index_below
from webhook.reconciler.cluster.claimrecord import INDEX_LABELS, ClaimRecord, Labels
from webhook.reconciler.sync.batches import ClaimWriter, slow_start
from webhook.reconciler.sync.outcome import OwnerWork, Pass, api_failure
from webhook.reconciler.sync.ownership import controlled_by_other

OWNER_LABEL = {label: level.value.owner_label for level in Level for label in (level.value.replica_label,)}
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

    def stale(self, owned: OwnedSharing, replicas: int) -> list[ClaimRecord]:
        """This owner's claims for replicas at or above ``replicas``, that it may delete."""
        owner = owned.owner
        if not owner.entries:
            return []
        level = owner.level.value
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
            if ok and controlled_by_other(record.references, owned.reference) is None:
                found.append(record)
        return sorted(found, key=lambda r: r.name)


class StaleCleaner(ClaimWriter):
    def clean_up(self, p: Pass, work: OwnerWork, candidates: StaleCandidates) -> None:
        owned = work.owned
        stale = candidates.stale(owned, owned.replicas)
        if not stale:
            return
        try:
            replicas = p.live.replicas(owned)
        except Exception as err:  # noqa: BLE001 - api_failure raises what is not an API answer
            work.fail(api_failure(err, stale[0].name, f"cannot read {owned.reference.kind} {owned.owner.name} to delete "))
            return
        if replicas is None:
            return  # gone, or re-created: the owner's own event is on its way
        if replicas != owned.replicas:
            # The owner's cache is behind: delete only what is stale both ways; its event is on its way.
            stale = candidates.stale(owned, max(replicas, owned.replicas))
        self._delete(p, work, stale)

    def _delete(self, p: Pass, work: OwnerWork, stale: list[ClaimRecord]) -> None:
        for claim, result in slow_start(self._pool, stale, self._claims.delete, self._check_stopping):
            if isinstance(result, Exception):
                work.fail(api_failure(result, claim.name, "failed to delete stale "))
                continue
            self._caches.wrote(claim, deleted=True)
            if result:
                work.deleted.append(claim.name)
                p.wrote = True
                self._metrics.claim_written("deleted")

