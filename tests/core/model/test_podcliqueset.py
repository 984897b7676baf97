"""A PodCliqueSet as decisions read it: its sharing and templates in the spec's order, read directly
from the usual JSON exactly as the schema reads any JSON, and what the stores keep of it small."""

from __future__ import annotations

import copy
import tracemalloc
from typing import Any

import msgspec
import orjson
import pytest
from fuzz.answers import FUZZ
from fuzz.strategies import dumps, mutated
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from core.model.sent import read_as_sent
from core.workload import workload_pcs, workload_pcs_raw
from webhook.core.model.podcliqueset import (
    ClaimTemplates,
    CliqueTemplate,
    EntryFilter,
    PodCliqueSet,
    PodCliqueSetSpec,
    ScalingGroupConfig,
    SharingEntry,
)
from webhook.core.model.reader import read_podcliqueset
from webhook.core.model.schema import read_through_schema
from webhook.core.pcs.rules import validate_create


def test_groves_workload_says_what_its_spec_says() -> None:
    raw = workload_pcs_raw(replicas=2)
    raw["metadata"]["uid"] = "pcs-uid"
    pcs = read_podcliqueset(raw)
    assert [t.name for t in pcs.spec.templates] == [f"int-tpl{n}" if n > 1 else "int-tpl" for n in range(1, 9)]
    assert pcs.spec.templates[0].claim_spec() == raw["spec"]["template"]["resourceClaimTemplates"][0]["templateSpec"]["spec"]
    assert pcs.without_templates() == PodCliqueSet(
        namespace="default",
        name="rs-test",
        uid="pcs-uid",
        spec=PodCliqueSetSpec(
            replicas=2,
            entries=(
                SharingEntry("int-tpl5", "AllReplicas"),
                SharingEntry("ext-tpl", "PerReplica"),
                SharingEntry(
                    "int-tpl",
                    "PerReplica",
                    filter=EntryFilter(clique_names=("worker-a",)),
                ),
                SharingEntry(
                    "int-tpl7",
                    "AllReplicas",
                    filter=EntryFilter(scaling_group_names=("sga",)),
                ),
            ),
            cliques=(
                CliqueTemplate(
                    "worker-a",
                    1,
                    (
                        SharingEntry("int-tpl4", "PerReplica"),
                        SharingEntry("ext-ns-tpl", "AllReplicas", "rs-shared"),
                    ),
                ),
                CliqueTemplate("worker-b", 1, (SharingEntry("int-tpl6", "AllReplicas"),)),
            ),
            scaling_groups=(
                ScalingGroupConfig(
                    "sga",
                    ("worker-b",),
                    2,
                    (
                        SharingEntry("int-tpl2", "AllReplicas"),
                        SharingEntry("int-tpl3", "PerReplica"),
                        SharingEntry(
                            "int-tpl8",
                            "AllReplicas",
                            filter=EntryFilter(clique_names=("worker-b",)),
                        ),
                    ),
                ),
            ),
        ),
    )


def test_templates_sent_as_text_are_parsed_only_when_one_is_asked_for() -> None:
    """Grove's rules read the templates' names and request counts alone: a spec whose templates
    came as text Go's decoder takes is validated without parsing them, and a template asked for
    (a claim's spec) is the one the parsed JSON gives."""
    raw = workload_pcs_raw()
    sent = read_as_sent(orjson.dumps(raw)).spec.templates
    assert sent.text is not None and sent == read_podcliqueset(raw).spec.templates
    assert sent.names == tuple(t["name"] for t in raw["spec"]["template"]["resourceClaimTemplates"])
    unparsable = msgspec.structs.replace(
        workload_pcs().spec, templates=ClaimTemplates.decodable(list(sent.names), list(sent.requests), b"not JSON")
    )
    assert validate_create(unparsable) == validate_create(workload_pcs().spec)
    with pytest.raises(orjson.JSONDecodeError):
        unparsable.template("int-tpl")


def test_an_empty_filter_is_kept_apart_from_no_filter() -> None:
    """Grove refuses an empty filter (F1, G1), but a store may still meet one, and it selects no pod."""
    raw = workload_pcs_raw()
    raw["spec"]["template"]["resourceSharing"][0]["filter"] = {}
    assert read_podcliqueset(raw).spec.entries[0].filter == EntryFilter()


def test_what_a_store_keeps_is_a_fraction_of_the_object_and_repeated_names_are_shared() -> None:
    kept = workload_pcs().without_templates()  # the names every copy shares are interned by the first
    reads = []
    for _ in range(2):  # the least of two: a one-off allocation of the process (a table growing) is not the copy's
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            raw = orjson.loads(orjson.dumps(workload_pcs_raw()))
            parsed = tracemalloc.get_traced_memory()[0] - before
            other = read_podcliqueset(raw).without_templates()
            reads.append(tracemalloc.get_traced_memory()[0] - before - parsed)
        finally:
            tracemalloc.stop()
    read = min(reads)
    assert read < 2_500 and read * 8 < parsed, (reads, parsed)
    assert other.spec.cliques[0].name is kept.spec.cliques[0].name
    assert other.spec.entries[0].scope is kept.spec.entries[0].scope


def _schema_read(obj: Any) -> PodCliqueSet | str:
    try:
        return read_through_schema(obj)
    except ValidationError as err:
        return str(err.errors(include_url=False)[0]["loc"])


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


WORKLOAD = workload_pcs_raw()


@settings(FUZZ, max_examples=300)
@given(data=st.data())
def test_any_object_is_read_as_the_schema_reads_it(data: st.DataObject) -> None:
    """Whether read directly, from its JSON text as the validating webhook hands it over, or
    through the schema, an object is the same PodCliqueSet, or refused at the same member."""
    body = dumps(data.draw(mutated(WORKLOAD, depths=(64,))))
    try:
        obj = orjson.loads(body)
    except orjson.JSONDecodeError:
        return
    read = _read(obj)
    assert read == _schema_read(obj)
    if type(obj) is dict and "spec" in obj:
        assert _read_as_sent(body) == read


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda p: p["metadata"].update(labels={"a": None}), id="null-label"),
        pytest.param(lambda p: p["spec"]["template"].update(resourceSharing=None), id="null-list"),
        pytest.param(
            lambda p: p["spec"]["template"]["cliques"][0].update(name=None),
            id="null-name",
        ),
        pytest.param(lambda p: p["spec"].update(replicas=True), id="bool-replicas"),
        pytest.param(
            lambda p: p["spec"]["template"]["resourceClaimTemplates"][0].update(templateSpec=None),
            id="null-template-spec",
        ),
        pytest.param(
            lambda p: p["metadata"].update(ownerReferences=[{"name": 1}]),
            id="bad-owner-reference",
        ),
    ],
)
def test_unusual_members_read_as_the_schema_reads_them(change: Any) -> None:
    obj = copy.deepcopy(WORKLOAD)
    change(obj)
    assert _read(obj) == _schema_read(obj)
