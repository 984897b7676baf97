"""The PodCliqueSet fields resource sharing reads, as pydantic checks them: for the messages only.

A PodCliqueSet is read directly from its JSON (``reader.read_podcliqueset``) when every
member has the type Go's decoder expects. Anything else is read through these models, whose first
complaint (``path: problem``) is the message a review gets when Go's decoder would refuse the
object, and whose reading of ``null`` as a zero value is Go's; the direct reader gives the same
result as this one for every object it reads. Fields not declared here are ignored, as Go ignores
unknown fields; ``templateSpec`` is kept as sent. ``read_through_schema`` reads an object
through them into the same ``PodCliqueSet`` the direct reader makes.
"""

from __future__ import annotations

import sys
from typing import Any

from pydantic import Field

from webhook.core.model import podcliqueset as model
from webhook.core.model.meta import GoList, GoStr, GoStrList, GoStrMap, Int32, KubeModel, ObjectMeta

_intern = sys.intern


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


def _schema_entry(spec: ResourceSharingSpec) -> model.SharingEntry:
    entry_filter = None
    if isinstance(spec, PCSResourceSharingSpec) and spec.filter is not None:
        entry_filter = model.EntryFilter(_schema_names(spec.filter.child_clique_names), _schema_names(spec.filter.child_scaling_group_names))
    elif isinstance(spec, PCSGResourceSharingSpec) and spec.filter is not None:
        entry_filter = model.EntryFilter(_schema_names(spec.filter.child_clique_names))
    return model.SharingEntry(_intern(spec.name), _intern(spec.scope), _intern(spec.namespace), entry_filter)


def _schema_names(names: list[str]) -> tuple[str, ...]:
    return tuple(map(_intern, names))


def _schema_most(config: AutoScalingConfig | None) -> int | None:
    return None if config is None else config.max_replicas


def read_through_schema(obj: Any) -> model.PodCliqueSet:
    """The PodCliqueSet in parsed JSON ``obj``, read through the schema; raises pydantic's
    ``ValidationError`` where Go's decoder would refuse it."""
    pcs = PodCliqueSetSchema.model_validate(obj)
    metadata = pcs.metadata
    spec = _spec_from_schema(pcs)
    return model.PodCliqueSet(_intern(metadata.namespace), metadata.name, metadata.uid, spec, bool(metadata.deletion_timestamp))


def _spec_from_schema(pcs: PodCliqueSetSchema) -> model.PodCliqueSetSpec:
    template = pcs.spec.template
    return model.PodCliqueSetSpec(
        pcs.spec.replicas,
        tuple(map(_schema_entry, template.resource_sharing)),
        tuple(
            model.CliqueTemplate(
                _intern(c.name),
                c.spec.replicas,
                tuple(map(_schema_entry, c.resource_sharing)),
                "resource_sharing" in c.model_fields_set,
                _schema_most(c.spec.auto_scaling_config),
            )
            for c in template.cliques
        ),
        tuple(
            model.ScalingGroupConfig(
                _intern(g.name),
                _schema_names(g.clique_names),
                g.replicas,
                tuple(map(_schema_entry, g.resource_sharing)),
                "resource_sharing" in g.model_fields_set,
                _schema_most(g.scale_config),
            )
            for g in template.pod_clique_scaling_groups
        ),
        model.ClaimTemplates(
            model.ClaimTemplate(t.name, t.template_spec, model.device_requests(t.template_spec))
            for t in template.resource_claim_templates
        ),
        "resource_sharing" in template.model_fields_set,
        "resource_claim_templates" in template.model_fields_set,
    )
