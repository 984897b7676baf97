"""A spec is decoded in the review's one pass by msgspec (``model.wire``) when it is usual, and from
the body decoded whole otherwise: at every member the one pass declares, any value reads to the
same PodCliqueSet, or the same refusal, as the parsed JSON and the schema read it."""

from __future__ import annotations

import copy
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from core.model.sent import in_parts, read_as_sent
from core.workload import workload_pcs_raw
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.reader import read_podcliqueset
from webhook.core.model.schema import read_through_schema
from webhook.core.model.wire import SpecWire

_SCALED = copy.deepcopy(workload_pcs_raw())
_SCALED["spec"]["template"]["cliques"][0]["spec"]["autoScalingConfig"] = {"maxReplicas": 3, "minReplicas": 1}
_SCALED["spec"]["template"]["cliques"][0]["labels"] = {"tier": "a"}
_SCALED["spec"]["template"]["podCliqueScalingGroups"][0]["scaleConfig"] = {"maxReplicas": 4}
_TEMPLATE = ("spec", "template")
_CLIQUE = (*_TEMPLATE, "cliques", 0)
_GROUP = (*_TEMPLATE, "podCliqueScalingGroups", 0)

MEMBERS = {
    "spec.replicas": ("spec", "replicas"),
    "template": _TEMPLATE,
    "template.resourceSharing": (*_TEMPLATE, "resourceSharing"),
    "entry.name": (*_TEMPLATE, "resourceSharing", 0, "name"),
    "entry.scope": (*_TEMPLATE, "resourceSharing", 1, "scope"),
    "entry.namespace": (*_TEMPLATE, "resourceSharing", 0, "namespace"),
    "entry.filter": (*_TEMPLATE, "resourceSharing", 2, "filter"),
    "filter.childCliqueNames": (*_TEMPLATE, "resourceSharing", 2, "filter", "childCliqueNames"),
    "filter.childScalingGroupNames": (*_TEMPLATE, "resourceSharing", 3, "filter", "childScalingGroupNames"),
    "cliques": (*_TEMPLATE, "cliques"),
    "clique": _CLIQUE,
    "clique.name": (*_CLIQUE, "name"),
    "clique.labels": (*_CLIQUE, "labels"),
    "clique.labels.value": (*_CLIQUE, "labels", "tier"),
    "clique.resourceSharing": (*_CLIQUE, "resourceSharing"),
    "clique entry.filter": (*_CLIQUE, "resourceSharing", 0, "filter"),
    "clique.spec": (*_CLIQUE, "spec"),
    "clique.spec.replicas": (*_CLIQUE, "spec", "replicas"),
    "clique.autoScalingConfig": (*_CLIQUE, "spec", "autoScalingConfig"),
    "clique.maxReplicas": (*_CLIQUE, "spec", "autoScalingConfig", "maxReplicas"),
    "groups": (*_TEMPLATE, "podCliqueScalingGroups"),
    "group.name": (*_GROUP, "name"),
    "group.cliqueNames": (*_GROUP, "cliqueNames"),
    "group.cliqueNames[0]": (*_GROUP, "cliqueNames", 0),
    "group.replicas": (*_GROUP, "replicas"),
    "group entry.filter.childScalingGroupNames": (*_GROUP, "resourceSharing", 2, "filter", "childScalingGroupNames"),
    "group.scaleConfig": (*_GROUP, "scaleConfig"),
    "group.maxReplicas": (*_GROUP, "scaleConfig", "maxReplicas"),
    "resourceClaimTemplates": (*_TEMPLATE, "resourceClaimTemplates"),
    "template.name": (*_TEMPLATE, "resourceClaimTemplates", 0, "name"),
    "template.templateSpec": (*_TEMPLATE, "resourceClaimTemplates", 1, "templateSpec"),
    "template.requests": (*_TEMPLATE, "resourceClaimTemplates", 2, "templateSpec", "spec", "devices", "requests"),
}
VALUES = [
    2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 0, 1.0, True, None, "1", "", [], ["a", None], {}, {"a": None},
]
ABSENT = object()


def _changed(path: tuple[str | int, ...], value: Any) -> Any:
    obj = copy.deepcopy(_SCALED)
    parent = obj
    for step in path[:-1]:
        parent = parent[step]
    if value is ABSENT and isinstance(parent, list):
        del parent[int(path[-1])]
    elif value is ABSENT:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = value
    return obj


def _read(obj: Any) -> PodCliqueSet | str:
    try:
        return read_podcliqueset(obj)
    except ValidationError as err:
        return str(err.errors(include_url=False)[0]["loc"])


def _read_as_sent(body: bytes) -> PodCliqueSet | str:
    try:
        return read_as_sent(body)
    except ValidationError as err:
        return str(err.errors(include_url=False)[0]["loc"])


@pytest.mark.parametrize("member", MEMBERS)
def test_every_value_of_a_declared_member_reads_as_from_the_parsed_json(member: str) -> None:
    for value in [*VALUES, ABSENT]:
        obj = _changed(MEMBERS[member], value)
        parsed = _read(obj)
        assert _read_as_sent(orjson.dumps(obj)) == parsed, (member, value)
        try:
            assert parsed == read_through_schema(obj), (member, value)
        except ValidationError as err:
            assert parsed == str(err.errors(include_url=False)[0]["loc"]), (member, value)


def test_a_usual_spec_is_read_in_one_pass() -> None:
    """The spec of Grove's workload, scaling configs and labels included, is what the one pass
    takes: the test above compares something."""
    obj = in_parts(orjson.dumps(_SCALED))
    assert obj is not None and type(obj["spec"]) is SpecWire
