"""Go's field order for ``resource.k8s.io/v1`` ResourceClaimTemplateSpec, for rendering values.

An immutability error prints the new ``resourceClaimTemplates`` list as Go's ``json.Marshal``
writes the typed structs: fields in declaration order, empty ``omitempty`` fields left out, maps
with sorted keys, and ``metadata`` always carrying ``"creationTimestamp":null``.
"""

from __future__ import annotations

from typing import Any

from webhook.core.gojson import GoMap

# Field order per struct, keyed by the JSON key under which the struct appears.
_ORDER: dict[str, tuple[str, ...]] = {
    "templateSpec": ("metadata", "spec"),
    "metadata": (
        "name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
        "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "labels",
        "annotations", "ownerReferences", "finalizers", "managedFields",
    ),
    "spec": ("devices",),
    "devices": ("requests", "constraints", "config"),
    "requests": ("name", "exactly", "firstAvailable"),
    "exactly": ("deviceClassName", "selectors", "allocationMode", "count", "adminAccess", "tolerations", "capacity"),
    "firstAvailable": ("name", "deviceClassName", "selectors", "allocationMode", "count", "tolerations", "capacity"),
    "selectors": ("cel",),
    "cel": ("expression",),
    "constraints": ("requests", "matchAttribute", "distinctAttribute"),
    "config": ("requests", "opaque"),
    "opaque": ("driver", "parameters"),
    "tolerations": ("key", "operator", "value", "effect", "tolerationSeconds"),
    "capacity": ("requests",),
}
# Values Go holds as maps or raw JSON: keys come out sorted.
_MAPS = {"labels", "annotations", "parameters"}


def _struct(key: str, value: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    order = _ORDER.get(key, ())
    ranked = sorted(value, key=lambda k: (order.index(k) if k in order else len(order), k))
    result: dict[str, Any] = {}
    for k in ranked:
        rendered = render(k, value[k], (*path, k))
        if rendered is None or rendered == "" or rendered == [] or rendered == {}:
            if not (key == "metadata" and k == "creationTimestamp"):
                continue
        result[k] = rendered
    if key == "metadata":
        result.setdefault("creationTimestamp", None)
        result = {k: result[k] for k in sorted(result, key=lambda k: order.index(k) if k in order else len(order))}
    return result


def render(key: str, value: Any, path: tuple[str, ...] = ()) -> Any:
    """``value`` found under ``key``, reshaped so that ``gojson.marshal`` prints what Go prints."""
    if isinstance(value, list):
        # Constraint and config entries hold a list of request *names* under "requests".
        return [render(key, item, path) for item in value]
    if not isinstance(value, dict):
        return value
    if key in _MAPS or (key == "requests" and path[-2:-1] == ("capacity",)):
        return GoMap({k: _plain(v) for k, v in value.items()})
    return _struct(key, value, path)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return GoMap({k: _plain(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def template_spec(value: dict[str, Any]) -> dict[str, Any]:
    """A ``templateSpec`` as Go marshals it (``metadata`` is a struct, so it is never omitted)."""
    rendered = _struct("templateSpec", {"metadata": {}, **value}, ("templateSpec",))
    rendered.setdefault("metadata", {"creationTimestamp": None})
    return {k: rendered[k] for k in ("metadata", "spec") if k in rendered}
