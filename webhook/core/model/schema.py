"""The PodCliqueSet fields resource sharing reads, as pydantic checks them: for the messages only.

A PodCliqueSet is read directly from its JSON (``podcliqueset.read_podcliqueset``) when every
member has the type Go's decoder expects. Anything else is read through these models, whose first
complaint (``path: problem``) is the message a review gets when Go's decoder would refuse the
object, and whose reading of ``null`` as a zero value is Go's; the direct reader gives the same
result as this one for every object it reads. Fields not declared here are ignored, as Go ignores
unknown fields; ``templateSpec`` is kept as sent.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from webhook.core.model.meta import GoList, GoStr, GoStrList, GoStrMap, Int32, KubeModel, ObjectMeta


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
    filter: PCSResourceSharingFilter | None = None


class PCSGResourceSharingSpec(ResourceSharingSpec):
    filter: PCSGResourceSharingFilter | None = None


class ResourceClaimTemplateConfig(KubeModel):
    name: GoStr = ""
    template_spec: dict[str, Any] = Field(default_factory=dict, alias="templateSpec")


class AutoScalingConfig(KubeModel):
    """``autoScalingConfig`` of a clique, ``scaleConfig`` of a scaling group: how far an autoscaler
    may take the replicas, and so how long the replica indices in claim names may grow."""

    max_replicas: Int32 | None = Field(None, alias="maxReplicas")


class PodCliqueSpec(KubeModel):
    replicas: Int32 | None = None
    auto_scaling_config: AutoScalingConfig | None = Field(None, alias="autoScalingConfig")


class PodCliqueTemplateSpec(KubeModel):
    name: GoStr = ""
    labels: GoStrMap = Field(default_factory=dict)
    resource_sharing: GoList[ResourceSharingSpec] = Field(default_factory=list, alias="resourceSharing")
    spec: PodCliqueSpec = Field(default_factory=PodCliqueSpec)


class PodCliqueScalingGroupConfig(KubeModel):
    name: GoStr = ""
    clique_names: GoStrList = Field(default_factory=list, alias="cliqueNames")
    replicas: Int32 | None = None
    scale_config: AutoScalingConfig | None = Field(None, alias="scaleConfig")
    resource_sharing: GoList[PCSGResourceSharingSpec] = Field(default_factory=list, alias="resourceSharing")


class PodCliqueSetTemplateSpec(KubeModel):
    cliques: GoList[PodCliqueTemplateSpec] = Field(default_factory=list)
    pod_clique_scaling_groups: GoList[PodCliqueScalingGroupConfig] = Field(
        default_factory=list, alias="podCliqueScalingGroups"
    )
    resource_claim_templates: GoList[ResourceClaimTemplateConfig] = Field(
        default_factory=list, alias="resourceClaimTemplates"
    )
    resource_sharing: GoList[PCSResourceSharingSpec] = Field(default_factory=list, alias="resourceSharing")


class PodCliqueSetSpec(KubeModel):
    replicas: Int32 = 0
    template: PodCliqueSetTemplateSpec = Field(default_factory=PodCliqueSetTemplateSpec)


class PodCliqueSetSchema(KubeModel):
    """A ``grove.io/v1alpha1`` PodCliqueSet, as far as resource sharing reads it."""

    api_version: GoStr = Field("", alias="apiVersion")
    kind: GoStr = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodCliqueSetSpec = Field(default_factory=PodCliqueSetSpec)
