"""Resource types the fake API server serves, registered as data.

The server has no per-resource code: everything it needs to know about a
resource (its URL, its kind, whether it lives in a namespace, how the real API
server treats it on writes) is one `ResourceType` record. A test that needs one
more resource registers one more record instead of writing handlers.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

ALL_VERBS: tuple[str, ...] = (
    "create", "delete", "deletecollection", "get", "list", "patch", "update", "watch",
)

#: Field selectors every resource supports, mapped to the object path they read.
BASE_FIELD_LABELS: Mapping[str, str] = MappingProxyType(
    {"metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace"}
)


@dataclass(frozen=True)
class ResourceType:
    """One served resource, described the way API discovery describes it.

    The behaviour flags copy what the real API server does for the resource,
    so code that passes here does not trip on the real one:

    - ``status_subresource``: writes to the object ignore ``status`` and writes
      to ``/status`` change only ``status`` (and API creates drop ``status``).
    - ``crd``: a custom resource: PUT must carry ``metadata.resourceVersion``
      and strategic merge patch is refused with 415, as for real CRDs.
    - ``returns_deleted_object``: DELETE answers with the object instead of a
      success ``Status`` (what the official client's return types reflect).
    - ``create_on_update``: PUT on a missing object creates it (core events).
    - ``field_labels``: field selectors accepted, mapped to object paths;
      any other field selector is refused with 400 as the real server does.
    """

    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool = True
    short_names: tuple[str, ...] = ()
    status_subresource: bool = False
    crd: bool = False
    returns_deleted_object: bool = True
    create_on_update: bool = False
    field_labels: Mapping[str, str] = field(default_factory=lambda: BASE_FIELD_LABELS)
    verbs: tuple[str, ...] = ALL_VERBS

    @property
    def key(self) -> tuple[str, str, str]:
        """Identity of the resource: (group, version, plural)."""
        return (self.group, self.version, self.plural)

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` of its objects: ``v1`` for core, else ``group/version``."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified(self) -> str:
        """``plural.group`` as the real server names it in error messages."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def singular(self) -> str:
        return self.kind.lower()

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"


def _fields(extra: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType({**BASE_FIELD_LABELS, **extra})


_POD_FIELDS = _fields({
    name: name for name in (
        "spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
        "spec.serviceAccountName", "status.phase", "status.podIP",
        "status.nominatedNodeName",
    )
})
_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
_CORE_EVENT_FIELDS = _fields({
    **{f"involvedObject.{f}": f"involvedObject.{f}" for f in _INVOLVED},
    "reason": "reason", "reportingComponent": "reportingComponent",
    "source": "source.component", "type": "type",
})
# events.k8s.io/v1 shares storage with core events, so it takes the same field
# labels; they read the renamed fields of the new schema.
_EVENTS_K8S_IO_FIELDS = _fields({
    **{f"involvedObject.{f}": f"regarding.{f}" for f in _INVOLVED},
    "reason": "reason", "reportingComponent": "reportingController",
    "source": "deprecatedSource.component", "type": "type",
})

DEFAULT_RESOURCES: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "namespaces", "Namespace", namespaced=False,
                 short_names=("ns",), status_subresource=True),
    ResourceType("", "v1", "pods", "Pod", short_names=("po",),
                 status_subresource=True, field_labels=_POD_FIELDS),
    ResourceType("", "v1", "events", "Event", short_names=("ev",),
                 returns_deleted_object=False, create_on_update=True,
                 field_labels=_CORE_EVENT_FIELDS),
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease",
                 returns_deleted_object=False),
    ResourceType("events.k8s.io", "v1", "events", "Event", short_names=("ev",),
                 returns_deleted_object=False, field_labels=_EVENTS_K8S_IO_FIELDS),
    ResourceType("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim",
                 status_subresource=True),
    ResourceType("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate"),
    ResourceType("grove.io", "v1alpha1", "podcliquesets", "PodCliqueSet",
                 short_names=("pcs",), status_subresource=True, crd=True),
    ResourceType("grove.io", "v1alpha1", "podcliquescalinggroups", "PodCliqueScalingGroup",
                 short_names=("pcsg",), status_subresource=True, crd=True),
    ResourceType("grove.io", "v1alpha1", "podcliques", "PodClique",
                 short_names=("pclq",), status_subresource=True, crd=True),
    ResourceType("", "v1", "secrets", "Secret"),
    ResourceType("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
                 "ValidatingWebhookConfiguration", namespaced=False),
    ResourceType("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
                 "MutatingWebhookConfiguration", namespaced=False),
)


class Registry:
    """The set of served resources, looked up by URL, by kind, or by a loose name."""

    def __init__(self, resources: Iterable[ResourceType] = DEFAULT_RESOURCES) -> None:
        self._by_key: dict[tuple[str, str, str], ResourceType] = {}
        for rt in resources:
            self.register(rt)

    def register(self, rt: ResourceType) -> None:
        self._by_key[rt.key] = rt

    def __iter__(self) -> Iterator[ResourceType]:
        return iter(list(self._by_key.values()))

    def by_path(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self._by_key.get((group, version, plural))

    def by_kind(self, api_version: str, kind: str) -> ResourceType | None:
        return next((rt for rt in self if rt.api_version == api_version and rt.kind == kind), None)

    def group_versions(self) -> dict[str, list[str]]:
        """Served versions per group, in registration order ('' is the core group)."""
        out: dict[str, list[str]] = {}
        for rt in self:
            versions = out.setdefault(rt.group, [])
            if rt.version not in versions:
                versions.append(rt.version)
        return out

    def resolve(self, ref: ResourceType | str) -> ResourceType:
        """Find a resource from what a test finds natural to write.

        Accepts a `ResourceType`, ``group/version/plural``, ``apiVersion/Kind``
        (``v1/pods``, ``resource.k8s.io/v1/ResourceClaim``), ``plural.group``,
        or a bare plural, kind, singular or short name. A bare name served by
        several groups (``events``) resolves to the core group, as kubectl does.
        """
        if isinstance(ref, ResourceType):
            return ref
        if "/" in ref:
            api_version, _, name = ref.rpartition("/")
            found = [rt for rt in self if rt.api_version == api_version and name in (rt.plural, rt.kind)]
        elif "." in ref:
            plural, _, group = ref.partition(".")
            found = [rt for rt in self if rt.group == group and plural in (rt.plural, rt.kind)]
        else:
            low = ref.lower()
            found = [rt for rt in self
                     if low in (rt.plural, rt.singular) or ref == rt.kind or low in rt.short_names]
            if len(found) > 1:
                found = [rt for rt in found if rt.group == ""] or found
        if len(found) != 1:
            raise ValueError(f"resource {ref!r} matches {[rt.key for rt in found]}; be more specific")
        return found[0]
