"""The PodCliqueSet fields that resource sharing reads (BEHAVIOUR.md §1.1), and nothing more.

Every other field (pod specs above all) is ignored by the model and never re-serialised, so the
request path does not pay for parsing what no rule reads. ``templateSpec`` is kept as the raw
mapping: only its request list is checked, and the claim reconciler copies its ``spec`` verbatim.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from webhook.core.model.meta import (
    GoList,
    GoStr,
    GoStrList,
    GoStrMap,
    Int32,
    KubeModel,
    ObjectMeta,
)


class Scope(StrEnum):
    """``ResourceSharingScope``: one claim per owner, or one per replica of the owner."""

    ALL_REPLICAS = "AllReplicas"
    PER_REPLICA = "PerReplica"


SUPPORTED_SCOPES = [Scope.ALL_REPLICAS.value, Scope.PER_REPLICA.value]


class ResourceSharingSpec(KubeModel):
    """A clique-level entry (Grove's ``ResourceSharingSpec``); also the base of the other two."""

    name: GoStr = ""
    namespace: GoStr = ""
    scope: GoStr = ""


class PCSResourceSharingFilter(KubeModel):
    child_clique_names: GoStrList = Field(default_factory=list, alias="childCliqueNames")
    child_scaling_group_names: GoStrList = Field(default_factory=list, alias="childScalingGroupNames")


class PCSGResourceSharingFilter(KubeModel):
    child_clique_names: GoStrList = Field(default_factory=list, alias="childCliqueNames")


class PCSResourceSharingSpec(ResourceSharingSpec):
    """A PodCliqueSet-level entry: its filter may name cliques and scaling groups."""

    filter: PCSResourceSharingFilter | None = None


class PCSGResourceSharingSpec(ResourceSharingSpec):
    """A scaling-group-level entry: its filter may name the group's cliques."""

    filter: PCSGResourceSharingFilter | None = None


class ResourceClaimTemplateConfig(KubeModel):
    name: GoStr = ""
    template_spec: dict[str, Any] = Field(default_factory=dict, alias="templateSpec")

    def device_request_count(self) -> int:
        """How many entries ``templateSpec.spec.devices.requests`` holds (0 when any level is absent)."""
        spec = self.template_spec.get("spec")
        devices = spec.get("devices") if isinstance(spec, dict) else None
        requests = devices.get("requests") if isinstance(devices, dict) else None
        return len(requests) if isinstance(requests, list) else 0


class AutoScalingConfig(KubeModel):
    """``autoScalingConfig`` of a clique, ``scaleConfig`` of a scaling group: how far an autoscaler
    may take the replicas, and so how long the replica indices in claim names may grow."""

    max_replicas: Int32 | None = Field(None, alias="maxReplicas")


class PodCliqueSpec(KubeModel):
    replicas: Int32 | None = None
    auto_scaling_config: AutoScalingConfig | None = Field(None, alias="autoScalingConfig")


class PodCliqueTemplateSpec(KubeModel):
    """A clique template (``spec.template.cliques[]``)."""

    name: GoStr = ""
    labels: GoStrMap = Field(default_factory=dict)
    resource_sharing: GoList[ResourceSharingSpec] = Field(default_factory=list, alias="resourceSharing")
    spec: PodCliqueSpec = Field(default_factory=PodCliqueSpec)


class PodCliqueScalingGroupConfig(KubeModel):
    """A scaling-group config (``spec.template.podCliqueScalingGroups[]``)."""

    name: GoStr = ""
    clique_names: GoStrList = Field(default_factory=list, alias="cliqueNames")
    replicas: Int32 | None = None
    scale_config: AutoScalingConfig | None = Field(None, alias="scaleConfig")
    resource_sharing: GoList[PCSGResourceSharingSpec] = Field(default_factory=list, alias="resourceSharing")

    def template_replicas(self) -> int:
        """Replicas a new scaling group object starts with (the CRD defaults an absent value to 1)."""
        return 1 if self.replicas is None else self.replicas


class PodCliqueSetTemplateSpec(KubeModel):
    cliques: GoList[PodCliqueTemplateSpec] = Field(default_factory=list)
    pod_clique_scaling_groups: GoList[PodCliqueScalingGroupConfig] = Field(
        default_factory=list, alias="podCliqueScalingGroups"
    )
    resource_claim_templates: GoList[ResourceClaimTemplateConfig] = Field(
        default_factory=list, alias="resourceClaimTemplates"
    )
    resource_sharing: GoList[PCSResourceSharingSpec] = Field(default_factory=list, alias="resourceSharing")

    def clique(self, name: str) -> PodCliqueTemplateSpec | None:
        """The first clique template of that name, as Grove's lookup finds it."""
        return next((c for c in self.cliques if c.name == name), None)

    def internal_template(self, name: str) -> ResourceClaimTemplateConfig | None:
        return next((t for t in self.resource_claim_templates if t.name == name), None)


class PodCliqueSetSpec(KubeModel):
    replicas: Int32 = 0
    template: PodCliqueSetTemplateSpec = Field(default_factory=PodCliqueSetTemplateSpec)


class PodCliqueSet(KubeModel):
    """A ``grove.io/v1alpha1`` PodCliqueSet, as far as resource sharing reads it."""

    api_version: GoStr = Field("", alias="apiVersion")
    kind: GoStr = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodCliqueSetSpec = Field(default_factory=PodCliqueSetSpec)


class PodCliqueScalingGroup(KubeModel):
    """A PodCliqueScalingGroup object: its name, UID and current replicas drive its claims."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodCliqueSpec = Field(default_factory=PodCliqueSpec)


class PodClique(KubeModel):
    """A PodClique object: its name, labels, UID and current replicas drive its claims."""

    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodCliqueSpec = Field(default_factory=PodCliqueSpec)
