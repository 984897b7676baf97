"""A PodCliqueSet read out of its JSON, as strictly as Go's decoder reads it.

Every member resource sharing declares is checked for the type Go gives it (``null`` reads as the
zero value of a string or a list; a number where Go expects a string, or the reverse, is refused),
whether or not a decision reads it, and every other member is ignored. The usual object, every
member of the type it should be, is read directly from the parsed JSON. Anything unusual is read
through the pydantic schema instead (``schema.read_through_schema``), whose first complaint is the
message Go's refusal gets; it gives the same PodCliqueSet for the objects both read.

The spec is read on its own (``read_spec``), so that a caller may remember what it read by the
spec (``spectext.json_key``): many PodCliqueSets are one workload under several names. A spec may
come as the validating webhook's review decoding takes it (``wire.SpecWire``, decoded in the
body's one pass), its templates' list as its JSON text, checked for Go's decoder from that text
and kept as it when Go's decoder takes them (``ClaimTemplates.decodable``). An object whose spec
came so but whose other members are unusual is read again from the body decoded whole
(``DecodeWhole``), for the schema's message.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import msgspec

from webhook.core.gocompat.dra import decodable_templates
from webhook.core.model.meta import INT32, DecodeWhole, Unusual, read_owner_references
from webhook.core.model.podcliqueset import (
    ClaimTemplate,
    ClaimTemplates,
    CliqueTemplate,
    Entries,
    EntryFilter,
    PodCliqueSet,
    PodCliqueSetSpec,
    ScalingGroupConfig,
    SharingEntry,
    device_requests,
)
from webhook.core.model.schema import read_through_schema
from webhook.core.model.spectext import SpecJson, parsed
from webhook.core.model.wire import SpecWire, TemplatesReader, read_wire

_intern = sys.intern


SpecReader = Callable[[SpecJson], PodCliqueSetSpec]


def read_podcliqueset(obj: Any, spec_reader: SpecReader | None = None) -> PodCliqueSet:
    """The PodCliqueSet ``obj`` holds (parsed JSON, its metadata and spec possibly as their JSON
    text), its spec read by ``spec_reader`` (``read_spec`` by default, or one that remembers it);
    raises pydantic's ``ValidationError`` (a ``ValueError``) where Go's decoder would refuse it."""
    if type(obj) is dict and type(obj.get("metadata")) is msgspec.Raw:
        obj = {**obj, "metadata": parsed(obj["metadata"])}
    try:
        return _direct(obj, spec_reader or read_spec)
    except Unusual:
        if type(obj) is dict and type(obj.get("spec")) is SpecWire:
            raise DecodeWhole from None
        return read_through_schema(obj)


# --- the usual object, read directly --------------------------------------------------------------


def _text(value: Any) -> str:
    if type(value) is str:
        return value
    if value is None:
        return ""
    raise Unusual


def _member(parent: dict[str, Any], name: str) -> dict[str, Any]:
    """A nested object: absent reads as empty, anything but an object (``null`` too) is unusual."""
    value = parent.get(name, _EMPTY)
    if type(value) is not dict:
        raise Unusual
    return value


_EMPTY: dict[str, Any] = {}


def _list(value: Any) -> list[Any]:
    if type(value) is list:
        return value
    if value is None:
        return []
    raise Unusual


def _names(value: Any) -> tuple[str, ...]:
    return tuple([_intern(_text(name)) for name in _list(value)])


def _int32(value: Any) -> int:
    if type(value) is not int or value not in INT32:
        raise Unusual
    return value


def _labels(value: Any) -> None:
    if value is None:
        return
    if type(value) is not dict:
        raise Unusual
    for key, text in value.items():
        if type(key) is not str or (type(text) is not str and text is not None):
            raise Unusual


def _metadata(obj: dict[str, Any]) -> tuple[str, str, str, bool]:
    """(namespace, name, uid, being deleted); the other members declared are only checked."""
    metadata = _member(obj, "metadata")
    namespace, name, uid = _text(metadata.get("namespace")), _text(metadata.get("name")), _text(metadata.get("uid"))
    _text(metadata.get("generateName"))
    _text(metadata.get("resourceVersion"))
    _labels(metadata.get("labels"))
    deletion = metadata.get("deletionTimestamp")
    if deletion is not None and type(deletion) is not str:
        raise Unusual
    references = metadata.get("ownerReferences")
    if references is not None:
        try:
            read_owner_references(references)
        except ValueError:
            raise Unusual from None
    return _intern(namespace), name, uid, bool(deletion)


def _filter(value: Any, scaling_groups: bool) -> EntryFilter | None:
    if value is None:
        return None
    if type(value) is not dict:
        raise Unusual
    groups = _names(value.get("childScalingGroupNames")) if scaling_groups else ()
    return EntryFilter(_names(value.get("childCliqueNames")), groups)


def _entries(value: Any, level: str) -> Entries:
    """``level``: ``pcs`` and ``group`` entries have a filter (a group's names only cliques)."""
    entries = []
    for entry in _list(value):
        if type(entry) is not dict:
            raise Unusual
        flt = None if level == "clique" else _filter(entry.get("filter"), level == "pcs")
        name, scope, namespace = _text(entry.get("name")), _text(entry.get("scope")), _text(entry.get("namespace"))
        entries.append(SharingEntry(_intern(name), _intern(scope), _intern(namespace), flt))
    return tuple(entries)


def _clique(value: Any) -> CliqueTemplate:
    if type(value) is not dict:
        raise Unusual
    _labels(value.get("labels"))
    spec = _member(value, "spec")
    replicas = spec.get("replicas")
    return CliqueTemplate(
        _intern(_text(value.get("name"))),
        None if replicas is None else _int32(replicas),
        _entries(value.get("resourceSharing"), "clique"),
        "resourceSharing" in value,
        _max_replicas(spec.get("autoScalingConfig")),
    )


def _scaling_group(value: Any) -> ScalingGroupConfig:
    if type(value) is not dict:
        raise Unusual
    replicas = value.get("replicas")
    return ScalingGroupConfig(
        _intern(_text(value.get("name"))),
        _names(value.get("cliqueNames")),
        None if replicas is None else _int32(replicas),
        _entries(value.get("resourceSharing"), "group"),
        "resourceSharing" in value,
        _max_replicas(value.get("scaleConfig")),
    )


def _max_replicas(config: Any) -> int | None:
    """``maxReplicas`` of an ``autoScalingConfig`` or ``scaleConfig`` (None when either is absent)."""
    if config is None:
        return None
    if type(config) is not dict:
        raise Unusual
    most = config.get("maxReplicas")
    return None if most is None else _int32(most)


def _template(value: Any) -> ClaimTemplate:
    if type(value) is not dict:
        raise Unusual
    spec = _member(value, "templateSpec")
    return ClaimTemplate(_text(value.get("name")), spec, device_requests(spec))


def read_templates(value: Any) -> ClaimTemplates:
    """The templates, parsed or as their JSON text: kept as that text, and parsed only when a
    template is asked for (``ClaimTemplates.decodable``), when msgspec finds that Go's decoder
    takes them (``dra.decodable_templates``)."""
    if type(value) is msgspec.Raw:
        decodable = decodable_templates(value)
        if decodable is not None:
            return ClaimTemplates.decodable(*decodable, bytes(value))
        value = parsed(value)
    return ClaimTemplates([_template(t) for t in _list(value)])


def read_spec(spec: SpecJson, templates: TemplatesReader = read_templates) -> PodCliqueSetSpec:
    """A ``spec`` read directly, its templates by ``templates`` (``read_templates``, or one that
    remembers them); raises ``Unusual`` for anything the schema must read."""
    if isinstance(spec, SpecWire):
        return read_wire(spec, templates)
    template = _member(spec, "template")
    return PodCliqueSetSpec(
        _int32(spec.get("replicas", 0)),
        _entries(template.get("resourceSharing"), "pcs"),
        tuple([_clique(c) for c in _list(template.get("cliques"))]),
        tuple([_scaling_group(g) for g in _list(template.get("podCliqueScalingGroups"))]),
        templates(template.get("resourceClaimTemplates")),
        "resourceSharing" in template,
        "resourceClaimTemplates" in template,
    )


def _direct(obj: Any, spec_reader: SpecReader) -> PodCliqueSet:
    if type(obj) is not dict:
        raise Unusual
    _text(obj.get("apiVersion"))
    _text(obj.get("kind"))
    namespace, name, uid, deleting = _metadata(obj)
    spec = obj.get("spec")
    return PodCliqueSet(namespace, name, uid, spec_reader(spec if type(spec) is SpecWire else _member(obj, "spec")), deleting)
