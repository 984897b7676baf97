"""A PodCliqueSet read as Go's decoder reads it: Grove's workload field for field, ``null`` as Go's
zero value or nil, the wrong type refused where it stands, and what the stores keep small."""

from __future__ import annotations

import copy
import tracemalloc
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

from core.workload import workload_pcs_raw
from webhook.core.model.meta import first_problem
from webhook.core.model.podcliqueset import read_podcliqueset, read_without_templates


def test_groves_workload_says_what_its_spec_says() -> None:
    raw = workload_pcs_raw(replicas=2)
    raw["metadata"]["uid"] = "pcs-uid"
    pcs = read_podcliqueset(raw)
    assert (pcs.namespace, pcs.name, pcs.uid, pcs.spec.replicas) == ("default", "rs-test", "pcs-uid", 2)
    template = pcs.spec.template
    templates = template.resource_claim_templates or []
    assert [t.name for t in templates] == [f"int-tpl{n}" if n > 1 else "int-tpl" for n in range(1, 9)]
    assert templates[0].claim_spec() == raw["spec"]["template"]["resourceClaimTemplates"][0]["templateSpec"]["spec"]
    entries = [(e.name, e.scope, e.namespace, e.filter and (e.filter.child_clique_names, e.filter.child_scaling_group_names))
               for e in template.resource_sharing or []]
    assert entries == [
        ("int-tpl5", "AllReplicas", "", None),
        ("ext-tpl", "PerReplica", "", None),
        ("int-tpl", "PerReplica", "", (["worker-a"], [])),
        ("int-tpl7", "AllReplicas", "", ([], ["sga"])),
    ]
    cliques = [(c.name, c.spec.replicas, [(e.name, e.scope, e.namespace) for e in c.resource_sharing or []]) for c in template.cliques]
    assert cliques == [
        ("worker-a", 1, [("int-tpl4", "PerReplica", ""), ("ext-ns-tpl", "AllReplicas", "rs-shared")]),
        ("worker-b", 1, [("int-tpl6", "AllReplicas", "")]),
    ]
    group = template.pod_clique_scaling_groups[0]
    assert (group.name, group.clique_names, group.replicas) == ("sga", ["worker-b"], 2)
    assert [(e.name, e.scope, e.filter and e.filter.child_clique_names) for e in group.resource_sharing or []] == [
        ("int-tpl2", "AllReplicas", None),
        ("int-tpl3", "PerReplica", None),
        ("int-tpl8", "AllReplicas", ["worker-b"]),
    ]


def test_an_empty_filter_is_kept_apart_from_no_filter() -> None:
    """Grove refuses an empty filter (F1, G1), but a store may still meet one, and it selects no pod."""
    raw = workload_pcs_raw()
    raw["spec"]["template"]["resourceSharing"][0]["filter"] = {}
    entry = (read_podcliqueset(raw).spec.template.resource_sharing or [])[0]
    assert entry.filter is not None and not entry.selects("worker-a", "sga")


@pytest.mark.parametrize(
    ("change", "read"),
    [
        pytest.param(lambda p: p["metadata"].update(labels={"a": None}), lambda pcs: pcs.metadata.labels, id="null-label"),
        pytest.param(lambda p: p["spec"]["template"]["cliques"][0].update(name=None), lambda pcs: pcs.spec.template.cliques[0].name, id="null-name"),
        pytest.param(lambda p: p["spec"]["template"].update(cliques=None), lambda pcs: pcs.spec.template.cliques, id="null-cliques"),
        pytest.param(lambda p: p["spec"]["template"].update(resourceSharing=None), lambda pcs: pcs.spec.template.resource_sharing, id="null-list-is-nil"),
    ],
)
def test_null_reads_as_gos_zero_value(change: Any, read: Any) -> None:
    obj = copy.deepcopy(workload_pcs_raw())
    change(obj)
    assert read(read_podcliqueset(obj)) in ({"a": ""}, "", [], None)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        pytest.param(lambda p: p["spec"].update(replicas=True), "spec.replicas: Input should be a valid integer", id="bool-replicas"),
        pytest.param(lambda p: p["spec"].update(replicas=2**31), "spec.replicas: Input should be less than or equal to 2147483647", id="int32"),
        pytest.param(
            lambda p: p["spec"]["template"]["resourceClaimTemplates"][0].update(templateSpec=None),
            "spec.template.resourceClaimTemplates[0].templateSpec: Input should be a valid dictionary",
            id="null-template-spec",
        ),
        pytest.param(lambda p: p["metadata"].update(ownerReferences=[{"name": 1}]), "metadata.ownerReferences: ", id="bad-owner-reference"),
        pytest.param(
            lambda p: p["spec"]["template"]["resourceSharing"][0].update(name=5),
            "spec.template.resourceSharing[0].name: Input should be a valid string",
            id="number-name",
        ),
    ],
)
def test_what_go_refuses_is_refused_where_it_stands(change: Any, problem: str) -> None:
    obj = copy.deepcopy(workload_pcs_raw())
    change(obj)
    with pytest.raises(ValidationError) as raised:
        read_podcliqueset(obj)
    assert first_problem(raised.value).startswith(problem)


def test_a_member_spelled_the_python_way_is_not_read() -> None:
    obj = workload_pcs_raw()
    obj["spec"]["template"]["resource_sharing"] = obj["spec"]["template"].pop("resourceSharing")
    assert read_podcliqueset(obj).spec.template.resource_sharing is None


def test_what_a_store_keeps_of_groves_workload_fits_150_mib_for_ten_thousand() -> None:
    """DECISIONS.md §2.1: the stores keep only what decisions need, <= 150 MiB with 10,000 PodCliqueSets."""
    raw = orjson.loads(orjson.dumps(workload_pcs_raw()))
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = read_without_templates(raw)
        size = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert kept.spec.template.resource_claim_templates is None
    assert size < 6 * 1024, size
