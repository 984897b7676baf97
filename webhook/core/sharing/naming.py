"""Grove's deterministic names of the objects built from a PodCliqueSet and of their claims: every
name in this project comes from here. A formula is also written as parts (``*_parts``) where an
index may be left open (``OpenIndex``), so that a whole family of owners' names can be reasoned
about without listing them (``patterns``); joined by ``-``, a concrete name's parts are its name."""

from __future__ import annotations

from typing import NamedTuple


class OpenIndex(NamedTuple):
    """Any replica index of ``range(size)``, where a concrete name has one number."""

    size: int


Index = int | OpenIndex
Parts = tuple[str | Index, ...]


def claim_name(owner: str, template: str, replica: int | None) -> str:
    """``all`` (AllReplicas) tells it from PerReplica's when a template starts with a digit."""
    if replica is None:
        return f"{owner}-all-{template}"
    return f"{owner}-{replica}-{template}"


def extra_digits(size: int) -> int:
    """Digits an open index of ``size`` values may print beyond the one of its first value."""
    return len(str(size - 1)) - 1


def claim_parts(owner: Parts, template: str, replica: Index | None) -> Parts:
    return (*owner, "all", template) if replica is None else (*owner, replica, template)


def scaling_group_name(pcs: str, pcs_replica: int, group: str) -> str:
    """The PodCliqueScalingGroup object for config ``group`` in PodCliqueSet replica ``pcs_replica``."""
    return f"{pcs}-{pcs_replica}-{group}"


def scaling_group_parts(pcs: str, pcs_replica: Index, group: str) -> Parts:
    return (pcs, pcs_replica, group)


def standalone_clique_name(pcs: str, pcs_replica: int, clique: str) -> str:
    """The PodClique object of a clique outside any scaling group."""
    return f"{pcs}-{pcs_replica}-{clique}"


def member_clique_name(scaling_group: str, group_replica: int, clique: str) -> str:
    """The PodClique object of a clique in replica ``group_replica`` of a scaling group object."""
    return f"{scaling_group}-{group_replica}-{clique}"


def member_clique_parts(scaling_group: Parts, group_replica: Index, clique: str) -> Parts:
    return (*scaling_group, group_replica, clique)

