"""The API resources this project reads or writes, as data."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Resource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.plural}.{self.group}" if self.group else self.plural


PODCLIQUESETS = Resource("grove.io", "v1alpha1", "podcliquesets", "PodCliqueSet")
PODCLIQUESCALINGGROUPS = Resource("grove.io", "v1alpha1", "podcliquescalinggroups", "PodCliqueScalingGroup")
PODCLIQUES = Resource("grove.io", "v1alpha1", "podcliques", "PodClique")
RESOURCECLAIMS = Resource("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim")
RESOURCECLAIMTEMPLATES = Resource("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate")
EVENTS = Resource("", "v1", "events", "Event")
PODS = Resource("", "v1", "pods", "Pod")
LEASES = Resource("coordination.k8s.io", "v1", "leases", "Lease")
SUBJECTACCESSREVIEWS = Resource("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False)
SECRETS = Resource("", "v1", "secrets", "Secret")
VALIDATINGWEBHOOKCONFIGURATIONS = Resource(
    "admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False
)
MUTATINGWEBHOOKCONFIGURATIONS = Resource(
    "admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", False
)
