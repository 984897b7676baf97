"""What the object stores keep of a PodCliqueSet: its sharing, in the spec's order, and little else."""

from __future__ import annotations

import tracemalloc

from core.workload import workload_pcs, workload_pcs_raw
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.projection import (
    CliqueSharing,
    EntryFilter,
    PodCliqueSetSharing,
    ScalingGroupSharing,
    SharingEntry,
    project,
)


def test_the_projection_of_groves_workload_says_what_its_spec_says() -> None:
    raw = workload_pcs_raw(replicas=2)
    raw["metadata"]["uid"] = "pcs-uid"
    assert project(PodCliqueSet.model_validate(raw)) == PodCliqueSetSharing(
        namespace="default",
        name="rs-test",
        uid="pcs-uid",
        replicas=2,
        entries=(
            SharingEntry("int-tpl5", "AllReplicas"),
            SharingEntry("ext-tpl", "PerReplica"),
            SharingEntry("int-tpl", "PerReplica", filter=EntryFilter(clique_names=("worker-a",))),
            SharingEntry("int-tpl7", "AllReplicas", filter=EntryFilter(scaling_group_names=("sga",))),
        ),
        cliques=(
            CliqueSharing("worker-a", 1, (SharingEntry("int-tpl4", "PerReplica"), SharingEntry("ext-ns-tpl", "AllReplicas", "rs-shared"))),
            CliqueSharing("worker-b", 1, (SharingEntry("int-tpl6", "AllReplicas"),)),
        ),
        scaling_groups=(
            ScalingGroupSharing(
                "sga",
                ("worker-b",),
                2,
                (
                    SharingEntry("int-tpl2", "AllReplicas"),
                    SharingEntry("int-tpl3", "PerReplica"),
                    SharingEntry("int-tpl8", "AllReplicas", filter=EntryFilter(clique_names=("worker-b",))),
                ),
            ),
        ),
    )


def test_an_empty_filter_is_kept_apart_from_no_filter() -> None:
    """Grove refuses an empty filter (F1, G1), but a store may still meet one, and it selects no pod."""
    raw = workload_pcs_raw()
    raw["spec"]["template"]["resourceSharing"][0]["filter"] = {}
    assert project(PodCliqueSet.model_validate(raw)).entries[0].filter == EntryFilter()


def test_it_is_a_twentieth_of_the_parsed_model_and_repeated_names_are_shared() -> None:
    project(workload_pcs())  # the names every copy shares are interned by the first
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        model = workload_pcs()
        parsed = tracemalloc.get_traced_memory()[0] - before
        sharing = project(model)
        projected = tracemalloc.get_traced_memory()[0] - before - parsed
    finally:
        tracemalloc.stop()
    assert projected < 2_500 and projected * 15 < parsed, (projected, parsed)
    other = project(workload_pcs())
    assert other.cliques[0].name is sharing.cliques[0].name
    assert other.entries[0].scope is sharing.entries[0].scope
