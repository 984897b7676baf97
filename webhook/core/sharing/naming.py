"""Grove's deterministic names: objects built from a PodCliqueSet, and the two claim formulas.

Every claim name in this project comes from ``claim_name``; nothing else concatenates one.
"""

from __future__ import annotations


def claim_name(owner: str, template: str, replica: int | None) -> str:
    """``<owner>-all-<template>`` for AllReplicas (``replica`` None), ``<owner>-<replica>-<template>``
    for PerReplica. The ``all`` keyword keeps the two apart when a template name starts with a digit."""
    if replica is None:
        return f"{owner}-all-{template}"
    return f"{owner}-{replica}-{template}"


def scaling_group_name(pcs: str, pcs_replica: int, group: str) -> str:
    """The PodCliqueScalingGroup object for config ``group`` in PodCliqueSet replica ``pcs_replica``."""
    return f"{pcs}-{pcs_replica}-{group}"


def standalone_clique_name(pcs: str, pcs_replica: int, clique: str) -> str:
    """The PodClique object of a clique outside any scaling group."""
    return f"{pcs}-{pcs_replica}-{clique}"


def member_clique_name(scaling_group: str, group_replica: int, clique: str) -> str:
    """The PodClique object of a clique in replica ``group_replica`` of scaling group object ``scaling_group``."""
    return f"{scaling_group}-{group_replica}-{clique}"
