"""The three PATCH body formats the official client sends.

- ``application/merge-patch+json``: RFC 7386, exactly.
- ``application/json-patch+json``: RFC 6902 through the ``jsonpatch`` library
  (all six operations, JSON-pointer escaping, ``test``).
- ``application/strategic-merge-patch+json``: what the typed ``*Api`` classes
  send for a dict body. A merge patch plus the strategic parts code usually
  relies on, keyed by field *name* rather than by Go struct tags: lists named
  in `MERGE_KEYS` merge element-wise by their key (``ownerReferences`` by uid,
  ``containers`` by name, claim ``reservedFor`` by uid, ...), lists named in
  `MERGED_PRIMITIVE_LISTS` (``finalizers``) are unions, and the directives
  ``$patch: delete|replace`` and ``$deleteFromPrimitiveList/<field>`` work.
  ``$setElementOrder`` and ``$retainKeys`` are accepted and ignored.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

#: List fields merged element-wise by the named key, as their patchMergeKey says.
MERGE_KEYS: dict[str, str] = {
    "ownerReferences": "uid", "reservedFor": "uid",
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name",
    "env": "name", "volumes": "name", "volumeMounts": "mountPath",
    "ports": "containerPort", "imagePullSecrets": "name", "conditions": "type",
    "resourceClaims": "name", "resourceClaimStatuses": "name",
    "containerStatuses": "name", "initContainerStatuses": "name",
}
#: Lists of scalars whose patchStrategy is merge: a patch adds to them.
MERGED_PRIMITIVE_LISTS = frozenset({"finalizers"})


class PatchError(ValueError):
    """The patch cannot be applied (the server answers 422)."""


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: objects merge recursively, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def json_patch(target: Any, operations: Any) -> Any:
    """RFC 6902 through ``jsonpatch``; a failing op or ``test`` is a `PatchError`."""
    if not isinstance(operations, list):
        raise PatchError("json patch must be a list of operations")
    try:
        return jsonpatch.JsonPatch(operations).apply(target)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, KeyError,
            TypeError, IndexError) as exc:
        raise PatchError(f"the server rejected our request due to an error in our request: {exc}") from exc


def _merge_keyed_list(target: list[Any], patch: list[Any], key: str) -> list[Any]:
    result = [copy.deepcopy(item) for item in target]
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            raise PatchError(f"map: {item!r} does not contain declared merge key: {key}")
        at = next((i for i, old in enumerate(result) if isinstance(old, dict) and old.get(key) == item[key]), None)
        directive = item.get("$patch")
        if directive == "delete":
            if at is not None:
                del result[at]
            continue
        body = {k: v for k, v in item.items() if k != "$patch"}
        if at is None:
            result.append(strategic_merge_patch({}, body))
        elif directive == "replace":
            result[at] = strategic_merge_patch({}, body)
        else:
            result[at] = strategic_merge_patch(result[at], body)
    return result


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    """Approximate strategic merge patch, see the module docstring."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return strategic_merge_patch({}, {k: v for k, v in patch.items() if k != "$patch"})
    if patch.get("$patch") == "delete":
        return None
    result = dict(target) if isinstance(target, dict) else {}
    deletions: dict[str, list[Any]] = {}
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            deletions[key.split("/", 1)[1]] = value or []
        elif key.startswith("$"):
            continue  # $setElementOrder/..., $retainKeys: ordering hints, ignored
        elif value is None:
            result.pop(key, None)
        elif isinstance(value, list) and key in MERGE_KEYS and isinstance(result.get(key), list):
            result[key] = _merge_keyed_list(result[key], value, MERGE_KEYS[key])
        elif isinstance(value, list) and key in MERGED_PRIMITIVE_LISTS:
            old = list(result.get(key) or [])
            result[key] = old + [v for v in value if v not in old]
        else:
            merged = strategic_merge_patch(result.get(key), value)
            if merged is None:
                result.pop(key, None)
            else:
                result[key] = merged
    for key, values in deletions.items():
        if isinstance(result.get(key), list):
            result[key] = [v for v in result[key] if v not in values]
    return result


def apply_patch(target: dict[str, Any], body: Any, content_type: str) -> dict[str, Any]:
    """Apply a PATCH body of the given media type to a copy of `target`."""
    media = content_type.split(";", 1)[0].strip().lower()
    if media == JSON_PATCH:
        patched = json_patch(copy.deepcopy(target), body)
    elif media == MERGE_PATCH:
        patched = merge_patch(target, body)
    elif media == STRATEGIC_MERGE_PATCH:
        patched = strategic_merge_patch(target, body)
    else:
        raise LookupError(media)
    if not isinstance(patched, dict):
        raise PatchError("the patch did not produce an object")
    return patched
