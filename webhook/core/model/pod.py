"""The parts of a Pod that claim injection reads, and nothing more.

The mutating webhook reads a pod's labels to place it (§5.1), and its claim lists to know where the
patch must create arrays and which names are already present. Everything else in a pod (images,
env, volumes, affinity) is ignored by the model, so a large pod costs little more than a small one.

``None`` and ``[]`` are kept apart where the patch needs them apart: a JSON Patch can append to an
existing array but must create an absent or ``null`` one.
"""

from __future__ import annotations

from pydantic import Field

from webhook.core.model.meta import GoList, GoStr, GoStrMap, KubeModel

GROVE_INIT_CONTAINER = "grove-initc"
"""The init container Grove appends after injection (only when ``startsAfter`` is set); it gets no claims."""


class PodMeta(KubeModel):
    name: GoStr = ""
    generate_name: GoStr = Field("", alias="generateName")
    namespace: GoStr = ""
    labels: GoStrMap = Field(default_factory=dict)


class ContainerClaim(KubeModel):
    """``resources.claims[]``: a container's reference to one of the pod's claims."""

    name: GoStr = ""


class ResourceRequirements(KubeModel):
    claims: list[ContainerClaim] | None = None


class Container(KubeModel):
    name: GoStr = ""
    resources: ResourceRequirements | None = None


class PodResourceClaim(KubeModel):
    """``spec.resourceClaims[]``: only the name matters, the rest is the user's and left alone."""

    name: GoStr = ""


class PodSpec(KubeModel):
    containers: GoList[Container] = Field(default_factory=list)
    init_containers: GoList[Container] = Field(default_factory=list, alias="initContainers")
    resource_claims: list[PodResourceClaim] | None = Field(None, alias="resourceClaims")


class PodHeader(KubeModel):
    """A pod read no further than its metadata: all the webhook reads of a pod it does not mutate."""

    api_version: GoStr = Field("", alias="apiVersion")
    kind: GoStr = ""
    metadata: PodMeta = Field(default_factory=PodMeta)


class Pod(PodHeader):
    """A ``v1`` Pod, as far as claim injection reads it."""

    spec: PodSpec | None = None
