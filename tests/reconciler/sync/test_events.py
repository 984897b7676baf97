"""Events: written and read through core v1, repeats counted on one Event, failures never raised."""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from fakeapi import FakeApiServer
from kubernetes import client

from webhook.kube.access import Component, guarded
from webhook.core.model.meta import OwnerReference
from webhook.reconciler.sync.reconcile import EventRecorder

PCS = OwnerReference.controlling("PodCliqueSet", "solo", "uid-1")


@pytest.fixture
def recorder(kube_api_client: Any) -> EventRecorder:
    return EventRecorder(guarded(kube_api_client, Component.RECONCILER), "grove-sharing-reconciler", "pod-a_1234")


def test_a_repeat_counts_on_the_same_event(fake_api: FakeApiServer, kube_api_client: Any, recorder: EventRecorder) -> None:
    for _ in range(3):
        recorder.record("default", PCS, "Warning", "ResourceClaimTemplateNotFound", "template default/t not found")
    recorder.record("default", PCS, "Normal", "ResourceClaimCreated", "Created ResourceClaim solo-all-gpu")

    found = client.CoreV1Api(kube_api_client).list_namespaced_event("default").items
    summary = sorted((e.reason, e.type, e.message, e.count) for e in found)
    assert summary == [
        ("ResourceClaimCreated", "Normal", "Created ResourceClaim solo-all-gpu", 1),
        ("ResourceClaimTemplateNotFound", "Warning", "template default/t not found", 3),
    ]
    event = next(e for e in found if e.count == 3)
    assert event.involved_object.to_dict() == {
        "api_version": "grove.io/v1alpha1", "kind": "PodCliqueSet", "namespace": "default", "name": "solo",
        "uid": "uid-1", "field_path": None, "resource_version": None,
    }
    assert (event.source.component, event.reporting_component, event.reporting_instance) == (
        "grove-sharing-reconciler", "grove-sharing-reconciler", "pod-a_1234",
    )
    assert event.first_timestamp.tzinfo is not None and event.last_timestamp >= event.first_timestamp
    assert event.metadata.name.startswith("solo.")
    assert fake_api.requests.count("POST", "/events") == 2
    assert fake_api.requests.count("PATCH", "/events/") == 2
    raw = fake_api.get("events", "default", event.metadata.name)
    for field in ("firstTimestamp", "lastTimestamp"):
        assert datetime.datetime.fromisoformat(raw[field]).utcoffset() == datetime.timedelta(0)


def test_an_expired_event_is_written_anew(fake_api: FakeApiServer, recorder: EventRecorder) -> None:
    recorder.record("default", PCS, "Warning", "ResourceClaimOwnedByOther", "owned by another")
    fake_api.reset()  # the API server dropped it (events expire after an hour)
    recorder.record("default", PCS, "Warning", "ResourceClaimOwnedByOther", "owned by another")
    assert [e["count"] for e in fake_api.list("events", "default")] == [1]


def test_a_failure_to_record_is_logged_not_raised(
    fake_api: FakeApiServer, recorder: EventRecorder, caplog: pytest.LogCaptureFixture
) -> None:
    fake_api.fail_next("POST", "/events", 403, "Forbidden", message="events is forbidden")
    recorder.record("default", PCS, "Normal", "ResourceClaimCreated", "Created ResourceClaim solo-all-gpu")
    assert fake_api.list("events", "default") == []
    assert "cannot record event ResourceClaimCreated on PodCliqueSet default/solo: events is forbidden" in caplog.text
