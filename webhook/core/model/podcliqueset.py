"""Grove's PodCliqueSet as far as resource sharing reads it, the one declaration every decision
reads, and its children that own shared claims. The classes follow Grove's Go types
(``operator/api/core/v1alpha1``) field for field, in order and by JSON name, so that a rule reads
like Grove's and ``gotypes.of_model`` prints them as ``json.Marshal`` does. ``templateSpec`` is kept
as sent: its Go types are ``gocompat.dra``'s, checked by the validating webhook alone."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Final

from pydantic import Field, Strict, TypeAdapter
from pydantic.dataclasses import dataclass

from webhook.core.model.meta import (
    MODEL, GoList, GoStr, GoStrList, GoStrMap, Int32, NilList, ObjectKey, ObjectMeta, omitted_when_empty,
)

# ``ResourceSharingScope``: one claim per owner, or one per replica of the owner. An entry keeps its
# scope as the string sent (Grove ignores one of another value).
ALL_REPLICAS: Final = "AllReplicas"
PER_REPLICA: Final = "PerReplica"
SUPPORTED_SCOPES = [ALL_REPLICAS, PER_REPLICA]


@dataclass(frozen=True, slots=True, config=MODEL)
class ResourceSharingSpec:
    """A clique's entry, and the fields every level's entry has (Grove inlines them)."""

    name: GoStr = ""
    namespace: GoStr = omitted_when_empty(default="")
    scope: GoStr = ""

    def selects(self, clique: str, scaling_group: str | None = None) -> bool:
        """Whether the filter leaves a pod of ``clique`` (in ``scaling_group``) in (§5.3)."""
        return True


@dataclass(frozen=True, slots=True, config=MODEL)
class PCSResourceSharingFilter:
    child_clique_names: GoStrList = omitted_when_empty(default_factory=list, alias="childCliqueNames")
    child_scaling_group_names: GoStrList = omitted_when_empty(default_factory=list, alias="childScalingGroupNames")


@dataclass(frozen=True, slots=True, config=MODEL)
class PCSResourceSharingSpec(ResourceSharingSpec):
    filter: PCSResourceSharingFilter | None = omitted_when_empty(default=None)

    def selects(self, clique: str, scaling_group: str | None = None) -> bool:
        """Both lists are compared with both the clique's and the scaling group's names (§9 item 11)."""
        flt = self.filter
        if flt is None:
            return True
        names = (clique,) if scaling_group is None else (clique, scaling_group)
        return any(n in flt.child_clique_names or n in flt.child_scaling_group_names for n in names)


@dataclass(frozen=True, slots=True, config=MODEL)
class PCSGResourceSharingFilter:
    child_clique_names: GoStrList = omitted_when_empty(default_factory=list, alias="childCliqueNames")


@dataclass(frozen=True, slots=True, config=MODEL)
class PCSGResourceSharingSpec(ResourceSharingSpec):
    filter: PCSGResourceSharingFilter | None = omitted_when_empty(default=None)

    def selects(self, clique: str, scaling_group: str | None = None) -> bool:
        return self.filter is None or clique in self.filter.child_clique_names


Entries = Sequence[ResourceSharingSpec]
"""One ``resourceSharing`` list, of any level."""


@dataclass(frozen=True, slots=True, config=MODEL)
class ResourceClaimTemplateConfig:
    name: GoStr = ""
    template_spec: Annotated[dict[str, Any], Strict()] = Field(default_factory=dict, alias="templateSpec")

    @property
    def device_requests(self) -> int:
        """How many entries ``templateSpec.spec.devices.requests`` holds (0 when any level is absent)."""
        devices = self.claim_spec().get("devices")
        requests = devices.get("requests") if isinstance(devices, dict) else None
        return len(requests) if isinstance(requests, list) else 0

    def claim_spec(self) -> dict[str, Any]:
        """``templateSpec.spec``: the spec a claim made from it gets (its metadata is not copied, §6.4)."""
        spec = self.template_spec.get("spec")
        return spec if isinstance(spec, dict) else {}


@dataclass(frozen=True, slots=True, config=MODEL)
class AutoScalingConfig:
    """How far an autoscaler may take the replicas, so how long claim names' indices may grow."""

    max_replicas: Int32 | None = Field(default=None, alias="maxReplicas")


@dataclass(frozen=True, slots=True, config=MODEL)
class PodCliqueSpec:
    replicas: Int32 | None = None
    auto_scaling_config: AutoScalingConfig | None = Field(default=None, alias="autoScalingConfig")


@dataclass(frozen=True, slots=True, config=MODEL)
class PodCliqueTemplateSpec:
    name: GoStr = ""
    labels: GoStrMap = Field(default_factory=dict)
    resource_sharing: NilList[ResourceSharingSpec] = Field(default=None, alias="resourceSharing")
    spec: PodCliqueSpec = Field(default_factory=PodCliqueSpec)

    @property
    def max_replicas(self) -> int | None:
        config = self.spec.auto_scaling_config
        return None if config is None else config.max_replicas


@dataclass(frozen=True, slots=True, config=MODEL)
class PodCliqueScalingGroupConfig:
    name: GoStr = ""
    clique_names: GoStrList = Field(default_factory=list, alias="cliqueNames")
    replicas: Int32 | None = None
    scale_config: AutoScalingConfig | None = Field(default=None, alias="scaleConfig")
    resource_sharing: NilList[PCSGResourceSharingSpec] = Field(default=None, alias="resourceSharing")

    @property
    def max_replicas(self) -> int | None:
        return None if self.scale_config is None else self.scale_config.max_replicas


@dataclass(frozen=True, slots=True, config=MODEL)
class PodCliqueSetTemplateSpec:
    cliques: GoList[PodCliqueTemplateSpec] = Field(default_factory=list)
    pod_clique_scaling_groups: GoList[PodCliqueScalingGroupConfig] = Field(default_factory=list, alias="podCliqueScalingGroups")
    resource_claim_templates: NilList[ResourceClaimTemplateConfig] = Field(default=None, alias="resourceClaimTemplates")
    resource_sharing: NilList[PCSResourceSharingSpec] = Field(default=None, alias="resourceSharing")

    def clique_index(self, name: str) -> int | None:
        """The position of the first clique template of that name, as Grove's lookup finds it."""
        return next((i for i, clique in enumerate(self.cliques) if clique.name == name), None)

    def clique(self, name: str) -> PodCliqueTemplateSpec | None:
        index = self.clique_index(name)
        return None if index is None else self.cliques[index]

    def internal_template(self, name: str) -> ResourceClaimTemplateConfig | None:
        return next((t for t in self.resource_claim_templates or () if t.name == name), None)


@dataclass(frozen=True, slots=True, config=MODEL)
class PodCliqueSetSpec:
    replicas: Int32 = 0
    template: PodCliqueSetTemplateSpec = Field(default_factory=PodCliqueSetTemplateSpec)


@dataclass(frozen=True, slots=True, config=MODEL)
class PodCliqueSet:
    api_version: GoStr = Field(default="", alias="apiVersion")
    kind: GoStr = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: PodCliqueSetSpec = Field(default_factory=PodCliqueSetSpec)

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.namespace

    @property
    def uid(self) -> str:
        return self.metadata.uid

    @property
    def key(self) -> ObjectKey:
        return ObjectKey(self.metadata.namespace, self.metadata.name)

    @property
    def deleting(self) -> bool:
        """It has a deletionTimestamp: the garbage collector is removing it and what it owns."""
        return bool(self.metadata.deletion_timestamp)


def read_without_templates(obj: Any) -> PodCliqueSet:
    """A PodCliqueSet as the stores keep it, its internal templates (never read there) left out."""
    spec = obj.get("spec") if isinstance(obj, dict) else None
    template = spec.get("template") if isinstance(spec, dict) else None
    if isinstance(spec, dict) and isinstance(template, dict) and "resourceClaimTemplates" in template:
        template = {k: v for k, v in template.items() if k != "resourceClaimTemplates"}
        obj = {**obj, "spec": {**spec, "template": template}}
    return read_podcliqueset(obj)


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


read_podcliqueset = TypeAdapter(PodCliqueSet).validate_python
read_scaling_group = TypeAdapter(PodCliqueScalingGroup).validate_python
read_podclique = TypeAdapter(PodClique).validate_python
