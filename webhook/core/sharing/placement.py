"""Where a PodClique (or one of its pods) sits in its PodCliqueSet, read from Grove's labels (§5.1),
and so which claims a pod gets (§5.2, §5.3).

Grove derives these values from the PodClique's name and labels while it builds a pod; a pod carries
the same labels, so the pod webhook derives them from the pod and the claim reconciler from the
PodClique object, both through ``clique_identity``. Error texts are Grove's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from webhook.core.gocompat import gojson
from webhook.core.gocompat.gojson import atoi
from webhook.core.model import labels
from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import (
    ALL_REPLICAS,
    PER_REPLICA,
    Entries,
    PodCliqueScalingGroupConfig,
    PodCliqueSet,
    PodCliqueTemplateSpec,
)
from webhook.core.sharing.naming import claim_name, scaling_group_name


class IdentityError(ValueError):
    """Grove's labels on a PodClique or pod do not place it in its PodCliqueSet."""


class CliqueIdentity(NamedTuple):
    """A PodClique's place: PodCliqueSet replica, clique template and, for members, scaling group."""

    namespace: str
    pcs_name: str
    pcs_replica: int
    clique_fqn: str
    clique_name: str
    scaling_group_fqn: str = ""
    scaling_group_replica: int = 0

    @property
    def key(self) -> ObjectKey:
        return ObjectKey(self.namespace, self.clique_fqn)


def _pcs_replica_from_fqn(pcs_name: str, clique_fqn: str) -> int:
    """Grove's ``GetPodCliqueSetReplicaIndexFromPodCliqueFQN``: the digits after ``<pcs>-``."""
    start = len(pcs_name) + 1
    hyphen = clique_fqn.find("-", start) if start <= len(clique_fqn) else -1
    if hyphen == -1:
        raise ValueError(
            "PodClique FQN is not in the expected format of "
            f"<pcs-name>-<pcs-replica-index>-<pclq-template-name>: {clique_fqn}"
        )
    return atoi(clique_fqn[start:hyphen])


def _strip_prefix(fqn: str, owner: str, replica: int) -> str:
    prefix = f"{owner}-{replica}-"
    if not fqn.startswith(prefix):
        raise ValueError(f"FQN {gojson.quote(fqn)} does not have expected prefix {gojson.quote(prefix)}")
    return fqn[len(prefix) :]


def _index_label(value: str | None, key: str, object_key: str) -> int:
    if value is None:
        raise ValueError(f"missing label {key} on PodClique: {object_key}")
    try:
        return atoi(value)
    except ValueError as err:
        raise ValueError(f"invalid label {key} on PodClique: {object_key}: {err}") from None


@dataclass(frozen=True, slots=True)
class Placement:
    """All that places a PodClique or one of its pods: where it is, its PodClique's name, and the
    four labels Grove reads (None where absent). Every pod of a PodClique has the same."""

    namespace: str
    pcs_name: str
    clique_fqn: str
    scaling_group: str | None
    scaling_group_replica: str | None
    part_of: str | None
    pcs_replica: str | None

    @classmethod
    def of(cls, namespace: str, pcs_name: str, clique_fqn: str, object_labels: Mapping[str, str]) -> Placement:
        get = object_labels.get
        return cls(
            namespace, pcs_name, clique_fqn, get(labels.PCSG), get(labels.PCSG_REPLICA_INDEX), get(labels.PART_OF), get(labels.PCS_REPLICA_INDEX)
        )


def clique_identity(
    namespace: str, pcs_name: str, clique_fqn: str, object_labels: Mapping[str, str]
) -> CliqueIdentity:
    """Place a PodClique named ``clique_fqn`` (or a pod of it) from its labels, as Grove does."""
    return place(Placement.of(namespace, pcs_name, clique_fqn, object_labels))


def place(found: Placement) -> CliqueIdentity:
    """The PodClique's identity; ``IdentityError`` with Grove's text where the labels do not place it."""
    object_key = f"{found.namespace}/{found.clique_fqn}"
    try:
        pcs_replica = _pcs_replica_from_fqn(found.pcs_name, found.clique_fqn)
    except ValueError as err:
        raise IdentityError(f"error extracting PCS replica index for PodClique {object_key}: {err}") from None
    try:
        return _placed(found, pcs_replica, object_key)
    except ValueError as err:
        raise IdentityError(f"failed to get PodClique name: {err}") from None


def _placed(found: Placement, pcs_replica: int, object_key: str) -> CliqueIdentity:
    namespace, pcs_name, clique_fqn = found.namespace, found.pcs_name, found.clique_fqn
    if found.scaling_group is not None:
        group_replica = _index_label(found.scaling_group_replica, labels.PCSG_REPLICA_INDEX, object_key)
        clique_name = _strip_prefix(clique_fqn, found.scaling_group, group_replica)
        return CliqueIdentity(namespace, pcs_name, pcs_replica, clique_fqn, clique_name, found.scaling_group, group_replica)
    if found.part_of is None:
        raise ValueError(f"missing label {labels.PART_OF} on PodClique: {object_key}")
    replica_in_label = _index_label(found.pcs_replica, labels.PCS_REPLICA_INDEX, object_key)
    clique_name = _strip_prefix(clique_fqn, found.part_of, replica_in_label)
    return CliqueIdentity(namespace, pcs_name, pcs_replica, clique_fqn, clique_name)


def clique_of(pcs: PodCliqueSet, identity: CliqueIdentity) -> PodCliqueTemplateSpec:
    """The clique template the PodClique (or its pod) was built from: the first of its name."""
    clique = pcs.spec.template.clique(identity.clique_name)
    if clique is None:
        raise template_not_found(identity)
    return clique


def scaling_group_of(pcs: PodCliqueSet, identity: CliqueIdentity) -> PodCliqueScalingGroupConfig | None:
    """The scaling-group config of a member PodClique (None for a standalone one)."""
    if not identity.scaling_group_fqn:
        return None
    for group in pcs.spec.template.pod_clique_scaling_groups:
        if scaling_group_name(pcs.name, identity.pcs_replica, group.name) == identity.scaling_group_fqn:
            return group
    raise scaling_group_not_found(identity, pcs.name)


def template_not_found(identity: CliqueIdentity) -> IdentityError:
    return IdentityError(f"PodClique template {gojson.quote(identity.clique_name)} not found in PCS spec")


def scaling_group_not_found(identity: CliqueIdentity, pcs_name: str) -> IdentityError:
    return IdentityError(
        f"PCSG label {gojson.quote(identity.scaling_group_fqn)} present on PodClique "
        f"{gojson.quote(identity.clique_fqn)} but no matching PodCliqueScalingGroupConfig found in PCS "
        f"{gojson.quote(pcs_name)}"
    )


def pod_index(pod_labels: Mapping[str, str], pod_key: str) -> int:
    """The pod index ``k`` a clique-level PerReplica claim is keyed by.

    Grove numbers pods from 0 and creates claims for indices 0..replicas-1 only, so a negative
    index would name a claim that never exists and leave the pod waiting for it: refused instead.
    """
    if labels.POD_INDEX not in pod_labels:
        raise IdentityError(f"missing label {labels.POD_INDEX} on Pod: {pod_key}")
    try:
        index = atoi(pod_labels[labels.POD_INDEX])
    except ValueError as err:
        raise IdentityError(f"invalid label {labels.POD_INDEX} on Pod: {pod_key}: {err}") from None
    if index < 0:
        raise IdentityError(f"invalid label {labels.POD_INDEX} on Pod: {pod_key}: must be greater than or equal to 0")
    return index


def index_below(value: str, replicas: int) -> bool:
    """Whether a replica-index label names one of ``0..replicas-1``, as Grove's cleanup selector
    spells them (``notin (0,1,...)`` compares text: ``01`` or ``+1`` is no valid index)."""
    if not (value.isascii() and value.isdigit()) or (len(value) > 1 and value[0] == "0"):
        return False
    return len(value) <= len(str(replicas)) and int(value) < replicas


def _level(names: list[str], entries: Entries | None, owner: str, replica: int, clique: str, group: str | None) -> None:
    """The claims of one level a pod of ``clique`` (in ``group``) gets, appended to ``names``: the
    AllReplicas entries its filter leaves the pod in, then the PerReplica ones, of ``replica``."""
    selected = [e for e in entries or () if e.selects(clique, group)]
    names += [claim_name(owner, e.name, None) for e in selected if e.scope == ALL_REPLICAS]
    names += [claim_name(owner, e.name, replica) for e in selected if e.scope == PER_REPLICA]


def pod_claims(pcs: PodCliqueSet, identity: CliqueIdentity, pod_index: Callable[[], int]) -> list[str]:
    """The claim names a pod of the PodClique ``identity`` gets, in Grove's order: for its
    PodCliqueSet, its scaling group if any, then its PodClique, that level's AllReplicas claims, then
    its PerReplica claims for the pod's replica of that level, skipping entries whose filter leaves
    the pod out. ``pod_index`` is called only when a clique-level PerReplica entry needs it, so a pod
    without the pod-index label is refused only when the label matters."""
    clique = clique_of(pcs, identity)
    group = scaling_group_of(pcs, identity)
    names: list[str] = []
    group_name = None if group is None else group.name
    _level(names, pcs.spec.template.resource_sharing, pcs.name, identity.pcs_replica, clique.name, group_name)
    if group is not None:
        _level(names, group.resource_sharing, identity.scaling_group_fqn, identity.scaling_group_replica, clique.name, None)
    own = clique.resource_sharing or ()
    names += [claim_name(identity.clique_fqn, e.name, None) for e in own if e.scope == ALL_REPLICAS]
    per_pod = [e.name for e in own if e.scope == PER_REPLICA]
    if per_pod:
        index = pod_index()
        names += [claim_name(identity.clique_fqn, name, index) for name in per_pod]
    return names
