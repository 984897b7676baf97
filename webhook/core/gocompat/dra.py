"""The Go types of ``resourceClaimTemplates[].templateSpec``: ``resource.k8s.io/v1``
``ResourceClaimTemplateSpec`` of k8s.io/api v0.35, the version Grove pins. Fields, order and
``omitempty`` tags are copied from Go because the U1 message prints the templates as ``json.Marshal``
does: ``metadata`` always present, ``devices`` and ``requests`` never omitted, the zero
``creationTimestamp`` left out (``omitzero``, apimachinery 0.33 on), opaque ``parameters`` as sent."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from webhook.core.gocompat.fielderrors import Path
from webhook.core.gocompat.gotypes import (
    BOOL, INT64, QUANTITY, RAW, STRING, TIME, DecodeError, Field, Map, Ptr, Slice, Struct, decodes,
)

_OWNER_REFERENCE = Struct("v1.OwnerReference", (
    Field("apiVersion", STRING), Field("kind", STRING), Field("name", STRING), Field("uid", STRING),
    Field("controller", Ptr(BOOL), omitempty=True), Field("blockOwnerDeletion", Ptr(BOOL), omitempty=True),
))
_MANAGED_FIELDS_ENTRY = Struct("v1.ManagedFieldsEntry", (
    Field("manager", STRING, omitempty=True), Field("operation", STRING, omitempty=True),
    Field("apiVersion", STRING, omitempty=True), Field("time", Ptr(TIME), omitempty=True),
    Field("fieldsType", STRING, omitempty=True), Field("fieldsV1", Ptr(RAW), omitempty=True),
    Field("subresource", STRING, omitempty=True),
))
OBJECT_META = Struct("v1.ObjectMeta", (
    Field("name", STRING, omitempty=True), Field("generateName", STRING, omitempty=True),
    Field("namespace", STRING, omitempty=True), Field("selfLink", STRING, omitempty=True),
    Field("uid", STRING, omitempty=True), Field("resourceVersion", STRING, omitempty=True),
    Field("generation", INT64, omitempty=True), Field("creationTimestamp", TIME, omitempty=True, omitzero=True),
    Field("deletionTimestamp", Ptr(TIME), omitempty=True),
    Field("deletionGracePeriodSeconds", Ptr(INT64), omitempty=True),
    Field("labels", Map(STRING), omitempty=True), Field("annotations", Map(STRING), omitempty=True),
    Field("ownerReferences", Slice(_OWNER_REFERENCE), omitempty=True),
    Field("finalizers", Slice(STRING), omitempty=True),
    Field("managedFields", Slice(_MANAGED_FIELDS_ENTRY), omitempty=True),
))

_SELECTOR = Struct("v1.DeviceSelector", (
    Field("cel", Ptr(Struct("v1.CELDeviceSelector", (Field("expression", STRING),))), omitempty=True),
))
_TOLERATION = Struct("v1.DeviceToleration", (
    Field("key", STRING, omitempty=True), Field("operator", STRING, omitempty=True),
    Field("value", STRING, omitempty=True), Field("effect", STRING, omitempty=True),
    Field("tolerationSeconds", Ptr(INT64), omitempty=True),
))
_CAPACITY = Struct("v1.CapacityRequirements", (Field("requests", Map(QUANTITY), omitempty=True),))


def _device_request_fields(admin_access: bool) -> tuple[Field, ...]:
    """The fields ``ExactDeviceRequest`` and ``DeviceSubRequest`` share (only the former has adminAccess)."""
    return (
        Field("deviceClassName", STRING),
        Field("selectors", Slice(_SELECTOR), omitempty=True),
        Field("allocationMode", STRING, omitempty=True),
        Field("count", INT64, omitempty=True),
        *((Field("adminAccess", Ptr(BOOL), omitempty=True),) if admin_access else ()),
        Field("tolerations", Slice(_TOLERATION), omitempty=True),
        Field("capacity", Ptr(_CAPACITY), omitempty=True),
    )


_DEVICE_REQUEST = Struct("v1.DeviceRequest", (
    Field("name", STRING),
    Field("exactly", Ptr(Struct("v1.ExactDeviceRequest", _device_request_fields(True))), omitempty=True),
    Field("firstAvailable", Slice(Struct("v1.DeviceSubRequest", (
        Field("name", STRING), *_device_request_fields(False),
    ))), omitempty=True),
))
_DEVICE_CLAIM = Struct("v1.DeviceClaim", (
    Field("requests", Slice(_DEVICE_REQUEST)),
    Field("constraints", Slice(Struct("v1.DeviceConstraint", (
        Field("requests", Slice(STRING), omitempty=True),
        Field("matchAttribute", Ptr(STRING), omitempty=True),
        Field("distinctAttribute", Ptr(STRING), omitempty=True),
    ))), omitempty=True),
    Field("config", Slice(Struct("v1.DeviceClaimConfiguration", (
        Field("requests", Slice(STRING), omitempty=True),
        Field("opaque", Ptr(Struct("v1.OpaqueDeviceConfiguration", (
            Field("driver", STRING), Field("parameters", RAW),
        ))), omitempty=True),
    ))), omitempty=True),
))
TEMPLATE_SPEC = Struct("v1.ResourceClaimTemplateSpec", (
    Field("metadata", OBJECT_META, omitempty=True),
    Field("spec", Struct("v1.ResourceClaimSpec", (Field("devices", _DEVICE_CLAIM),))),
))
PATH = Path("spec").child("template", "resourceClaimTemplates")
"""Where the templates are, for the path of a ``DecodeError`` (``err.at(PATH)``)."""
_DECODES = decodes(Slice(TEMPLATE_SPEC))


def templates_problem(specs: Sequence[dict[str, Any]]) -> str | None:
    """Where Go's decoder would first refuse a template's ``templateSpec`` (``path: problem``)."""
    if _DECODES(specs):
        return None
    try:
        decode_templates(specs)
    except DecodeError as err:
        return err.at(PATH)
    return None


def decode_templates(specs: Sequence[dict[str, Any]]) -> list[Any]:
    """Each ``templateSpec`` as Go holds it; ``DecodeError`` where Go's decoder would refuse one."""
    decoded = []
    for i, spec in enumerate(specs):
        try:
            decoded.append(TEMPLATE_SPEC.decode(spec))
        except DecodeError as err:
            raise err.within("templateSpec").within(i) from None
    return decoded
