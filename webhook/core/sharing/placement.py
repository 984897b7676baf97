"""Where a PodClique or its pod sits in its PodCliqueSet, read from its labels as Grove reads them,
with Grove's error texts (§5.1), and so which claims a pod gets (§5.2, §5.3)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple

from webhook.core.gocompat.gojson import atoi, quote
from webhook.core.model import labels
from webhook.core.model.meta import ObjectKey
from webhook.core.model.podcliqueset import (
    ALL_REPLICAS, PER_REPLICA, Entries, PodCliqueScalingGroupConfig, PodCliqueSet, PodCliqueTemplateSpec,
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
        raise ValueError(f"FQN {quote(fqn)} does not have expected prefix {quote(prefix)}")
    return fqn[len(prefix) :]


def _index_label(object_labels: Mapping[str, str], key: str, object_key: str) -> int:
    value = object_labels.get(key)
    if value is None:
        raise ValueError(f"missing label {key} on PodClique: {object_key}")
    try:
        return atoi(value)
    except ValueError as err:
        raise ValueError(f"invalid label {key} on PodClique: {object_key}: {err}") from None


def clique_identity(
    namespace: str, pcs_name: str, clique_fqn: str, object_labels: Mapping[str, str]
) -> CliqueIdentity:
    """Place a PodClique (or its pod) by its labels as Grove does, or ``IdentityError``."""
    object_key = f"{namespace}/{clique_fqn}"
    try:
        pcs_replica = _pcs_replica_from_fqn(pcs_name, clique_fqn)
    except ValueError as err:
        raise IdentityError(f"error extracting PCS replica index for PodClique {object_key}: {err}") from None
    try:
        group = object_labels.get(labels.PCSG)
        if group is not None:
            group_replica = _index_label(object_labels, labels.PCSG_REPLICA_INDEX, object_key)
            clique_name = _strip_prefix(clique_fqn, group, group_replica)
            return CliqueIdentity(namespace, pcs_name, pcs_replica, clique_fqn, clique_name, group, group_replica)
        part_of = object_labels.get(labels.PART_OF)
        if part_of is None:
            raise ValueError(f"missing label {labels.PART_OF} on PodClique: {object_key}")
        replica_in_label = _index_label(object_labels, labels.PCS_REPLICA_INDEX, object_key)
        clique_name = _strip_prefix(clique_fqn, part_of, replica_in_label)
    except ValueError as err:
        raise IdentityError(f"failed to get PodClique name: {err}") from None
    return CliqueIdentity(namespace, pcs_name, pcs_replica, clique_fqn, clique_name)


def clique_of(pcs: PodCliqueSet, identity: CliqueIdentity) -> PodCliqueTemplateSpec:
    """The clique template the PodClique (or its pod) was built from: the first of its name."""
    clique = pcs.spec.template.clique(identity.clique_name)
    if clique is None:
        raise IdentityError(f"PodClique template {quote(identity.clique_name)} not found in PCS spec")
    return clique


def scaling_group_of(pcs: PodCliqueSet, identity: CliqueIdentity) -> PodCliqueScalingGroupConfig | None:
    """The scaling-group config of a member PodClique (None for a standalone one)."""
    if not identity.scaling_group_fqn:
        return None
    for group in pcs.spec.template.pod_clique_scaling_groups:
        if scaling_group_name(pcs.name, identity.pcs_replica, group.name) == identity.scaling_group_fqn:
            return group
    raise IdentityError(
        f"PCSG label {quote(identity.scaling_group_fqn)} present on PodClique {quote(identity.clique_fqn)} "
        f"but no matching PodCliqueScalingGroupConfig found in PCS {quote(pcs.name)}"
    )


def pod_index(pod_labels: Mapping[str, str], pod_key: str) -> int:
    """The pod index a clique-level PerReplica claim is keyed by. Grove makes claims for indices
    0..replicas-1 only, so a negative one, whose claim never exists, is refused."""
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
    """Appends the claims of one level that a pod of ``clique`` (in ``group``) gets: the AllReplicas
    entries its filter leaves the pod in, then the PerReplica ones, of ``replica``."""
    selected = [e for e in entries or () if e.selects(clique, group)]
    names += [claim_name(owner, e.name, None) for e in selected if e.scope == ALL_REPLICAS]
    names += [claim_name(owner, e.name, replica) for e in selected if e.scope == PER_REPLICA]


def pod_claims(pcs: PodCliqueSet, identity: CliqueIdentity, pod_index: Callable[[], int]) -> list[str]:
    """The claim names a pod of the PodClique ``identity`` gets, by level as Grove orders them;
    ``pod_index`` is called only if a clique-level PerReplica entry needs it: a pod may lack it."""
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
