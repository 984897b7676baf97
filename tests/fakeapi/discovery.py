"""Discovery documents built from the registry.

The official client's typed APIs never read these, but ``kubernetes.dynamic``
does (``/api``, ``/apis``, then each ``/api(s)/<group>/<version>`` for its
resources, verbs and subresources, and ``/version``), and so would kubectl.
"""

from __future__ import annotations

from typing import Any

from .resources import Registry

#: What ``/version`` says: resource.k8s.io/v1 is served from Kubernetes 1.34 on.
VERSION_INFO: dict[str, str] = {
    "major": "1", "minor": "34", "gitVersion": "v1.34.0-fakeapi", "gitCommit": "",
    "gitTreeState": "clean", "buildDate": "2025-08-27T00:00:00Z", "goVersion": "go1.24",
    "compiler": "gc", "platform": "linux/amd64",
}


def api_versions(server_address: str) -> dict[str, Any]:
    """``/api``: the core group's versions."""
    return {"kind": "APIVersions", "versions": ["v1"],
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}]}


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {"name": name, "versions": gvs, "preferredVersion": gvs[0]}


def api_group_list(registry: Registry) -> dict[str, Any]:
    """``/apis``: every named group with its versions (the first is preferred)."""
    groups = [_group(name, versions) for name, versions in registry.group_versions().items() if name]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(registry: Registry, group: str) -> dict[str, Any] | None:
    """``/apis/<group>``, or None for a group nothing is served in."""
    versions = registry.group_versions().get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(group, versions)}


def api_resource_list(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    """``/api/v1`` or ``/apis/<group>/<version>``: resources with verbs and subresources."""
    resources: list[dict[str, Any]] = []
    for rt in registry:
        if rt.group != group or rt.version != version:
            continue
        entry: dict[str, Any] = {
            "name": rt.plural, "singularName": rt.singular, "namespaced": rt.namespaced,
            "kind": rt.kind, "verbs": list(rt.verbs),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        resources.append(entry)
        if rt.status_subresource:
            resources.append({"name": f"{rt.plural}/status", "singularName": "", "namespaced": rt.namespaced,
                              "kind": rt.kind, "verbs": ["get", "patch", "update"]})
    if not resources:
        return None
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version,
            "resources": resources}
