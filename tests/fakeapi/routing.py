"""URL shapes of the Kubernetes API, parsed into what a request is about.

The official client builds exactly these paths::

    /api/v1/<plural>[/<name>[/<sub>]]                     core, cluster-scoped or all namespaces
    /api/v1/namespaces/<ns>/<plural>[/<name>[/<sub>]]     core, one namespace
    /apis/<group>/<version>/...                           the same under a named group

``/api/v1/namespaces/<name>`` is the Namespace object itself; the legacy
``.../watch/...`` prefix is accepted too. Discovery paths are told apart here
so the app can answer them from the registry.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import errors
from .resources import Registry, ResourceType


@dataclass(frozen=True)
class Target:
    """A request for a resource: collection (no name) or one object, maybe a subresource."""

    rt: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None
    watch_path: bool = False


@dataclass(frozen=True)
class Discovery:
    """A discovery request: ``kind`` is api, apis, group or resources."""

    kind: str
    group: str = ""
    version: str = ""


def parse(registry: Registry, path: str) -> Target | Discovery:
    """Parse an API path, raising the real server's 404 for anything not served."""
    segments = [s for s in path.split("/") if s]
    if segments[:1] == ["api"]:
        if len(segments) == 1:
            return Discovery("api")
        group, version, rest = "", segments[1], segments[2:]
    elif segments[:1] == ["apis"]:
        if len(segments) == 1:
            return Discovery("apis")
        if len(segments) == 2:
            return Discovery("group", segments[1])
        group, version, rest = segments[1], segments[2], segments[3:]
    else:
        raise errors.unknown_resource()
    if not rest:
        return Discovery("resources", group, version)
    watch_path = rest[0] == "watch"
    if watch_path:
        rest = rest[1:]
    namespace: str | None = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        candidate = registry.by_path(group, version, rest[2])
        if candidate is not None and candidate.namespaced:
            namespace, rest = rest[1], rest[2:]
    if not rest:
        raise errors.unknown_resource()
    rt = registry.by_path(group, version, rest[0])
    if rt is None or len(rest) > 3 or (namespace is not None and not rt.namespaced):
        raise errors.unknown_resource()
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else None
    if rt.namespaced and name is not None and namespace is None:
        raise errors.unknown_resource()
    if subresource is not None and not (subresource == "status" and rt.status_subresource):
        raise errors.unknown_resource()
    return Target(rt, namespace, name, subresource, watch_path)
