"""The objects Grove makes for a PodCliqueSet that own shared claims: PodCliqueScalingGroups and
PodCliques, as far as their claims read them (name, labels, UID, owners, current replicas)."""

from __future__ import annotations

from pydantic import Field

from webhook.core.model.meta import Int32, KubeModel, ObjectMeta


class ReplicasSpec(KubeModel):
    replicas: Int32 | None = None


class PodCliqueScalingGroup(KubeModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ReplicasSpec = Field(default_factory=ReplicasSpec)


class PodClique(KubeModel):
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: ReplicasSpec = Field(default_factory=ReplicasSpec)
