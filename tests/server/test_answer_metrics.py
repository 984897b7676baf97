"""The answers' counter and latency histogram, kept as plain numbers (``server.metrics``), are
exported exactly as prometheus_client's own ``Counter`` and ``Histogram`` export the same answers:
latencies on a bucket's bound, between, below the first and above the last, any operation."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from webhook.core.admission import Answer
from webhook.exposition import new_registry
from webhook.server.limits import Budget, Lifecycle
from webhook.server.metrics import LATENCY_BUCKETS, OPERATIONS, UNKNOWN, ServerMetrics
from webhook.stores import EmbeddedStore

answers = st.tuples(
    st.sampled_from(["mutate-pod", "validate-podcliqueset", "validate-scale"]),
    st.sampled_from([*sorted(OPERATIONS), "", "PATCH"]),
    st.sampled_from(["allowed", "patched", "denied", "error", "rejected"]),
    st.sampled_from(LATENCY_BUCKETS) | st.floats(0, 100, allow_nan=False),
)


def answer_lines(exposition: bytes) -> list[str]:
    return [line for line in exposition.decode().splitlines() if "webhook_request_duration_seconds" in line or "webhook_requests_total" in line]


def reference(observed: list[tuple[str, str, str, float]]) -> bytes:
    """What prometheus_client's own metrics export for the answers."""
    new_registry()  # the same process-wide switch: no ``*_created`` series
    registry = CollectorRegistry()
    requests = Counter(
        "webhook_requests",
        "Admission requests answered, by webhook, operation and decision (allowed, patched, denied, error, rejected).",
        ["webhook", "operation", "decision"],
        registry=registry,
    )
    duration = Histogram(
        "webhook_request_duration_seconds",
        "Time from the first byte of the body read to the decision, by webhook.",
        ["webhook"],
        buckets=LATENCY_BUCKETS,
        registry=registry,
    )
    for webhook, operation, decision, seconds in observed:
        requests.labels(webhook, operation if operation in OPERATIONS else UNKNOWN, decision).inc()
        duration.labels(webhook).observe(seconds)
    return generate_latest(registry)


@settings(max_examples=100, deadline=None)
@given(observed=st.lists(answers, max_size=30))
def test_answers_are_exported_as_prometheus_clients_counter_and_histogram(observed: list[tuple[str, str, str, float]]) -> None:
    metrics = ServerMetrics(EmbeddedStore.of([]), Lifecycle(), Budget(1024))
    for webhook, operation, decision, seconds in observed:
        metrics.observe(webhook, Answer(200, {}, operation, decision), seconds)
    assert answer_lines(metrics.exposition()) == answer_lines(reference(observed))
