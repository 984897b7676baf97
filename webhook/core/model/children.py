"""The objects Grove makes for a PodCliqueSet that own shared claims: PodCliqueScalingGroups and
PodCliques, as far as their claims read them (name, labels, UID, owners, current replicas)."""

from __future__ import annotations

from pydantic import Field, TypeAdapter
from pydantic.dataclasses import dataclass

from webhook.core.model.meta import Int32, ObjectMeta, MODEL


@dataclass(frozen=True, slots=True, config=MODEL)
class ReplicasSpec:
    replicas: Int32 | None = None


@dataclass(frozen=True, slots=True, config=MODEL)
class PodCliqueScalingGroup:
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ReplicasSpec = Field(default_factory=ReplicasSpec)


@dataclass(frozen=True, slots=True, config=MODEL)
class PodClique:
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ReplicasSpec = Field(default_factory=ReplicasSpec)


read_scaling_group = TypeAdapter(PodCliqueScalingGroup).validate_python
read_podclique = TypeAdapter(PodClique).validate_python
