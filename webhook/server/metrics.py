"""The server's Prometheus metrics, in a registry of its own so that every app (and test) counts
alone; docs/metrics.md maps them onto controller-runtime's webhook metrics."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from itertools import accumulate

from prometheus_client import Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from webhook.webhooks import Answer
from webhook.core.pcs.authorization import REVIEW_RESULTS
from webhook.exposition import new_registry
from webhook.server.limits import DROP_REASONS, Budget, Connections, Lifecycle
from webhook.server.listener import ACCEPT_ERRORS, AcceptErrors
from webhook.stores import AuthorizingStore, ObjectStore

UNKNOWN = "unknown"
"""The operation of a request whose body could not be read (rejected before any decision)."""

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
"""Webhook calls take well under a millisecond to decide; the top buckets reach the API server's
timeout (10 s in the chart, at most 30 s), so a p99 near it can be told from one far below."""


class _Counts(Collector):
    """A family kept elsewhere as plain numbers by label value (counted on the event loop, without
    a lock), read when scraped: each of ``values``, 0 until counted, or else each value counted."""

    def __init__(self, kind: type[CounterMetricFamily | GaugeMetricFamily], name: str, documentation: str, label: str,
                 counts: Callable[[], Mapping[str, int]], values: Iterable[str] = ()) -> None:
        self._kind, self._name, self._documentation, self._label = kind, name, documentation, label
        self._counts, self._values = counts, tuple(values)

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily]:
        family = self._kind(self._name, self._documentation, labels=[self._label])
        counts = self._counts()
        for value in self._values or list(counts):
            family.add_metric([value], counts.get(value, 0))
        yield family


class _AnswersCollector(Collector):
    """Every answer's count and latency, kept as plain numbers (prometheus_client's children would
    take a lock twice a request) and exported as its ``Counter`` and ``Histogram`` would be."""

    def __init__(self) -> None:
        self.counts: dict[tuple[str, str, str], int] = {}
        self.buckets: dict[str, list[int]] = {}
        """Answers by webhook and latency bucket (the first bound at or above; the last: above all)."""
        self.sums: dict[str, float] = {}

    def count(self, key: tuple[str, str, str], seconds: float) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1
        webhook = key[0]
        buckets = self.buckets.get(webhook)
        if buckets is None:
            buckets = self.buckets[webhook] = [0] * (len(LATENCY_BUCKETS) + 1)
            self.sums[webhook] = 0.0
        buckets[bisect_left(LATENCY_BUCKETS, seconds)] += 1
        self.sums[webhook] += seconds

    def collect(self) -> Iterator[CounterMetricFamily | HistogramMetricFamily]:
        requests = CounterMetricFamily(
            "webhook_requests",
            "Admission requests answered, by webhook, operation and decision (allowed, patched, denied, error, rejected).",
            labels=["webhook", "operation", "decision"],
        )
        for key, count in list(self.counts.items()):
            requests.add_metric(list(key), count)
        yield requests
        duration = HistogramMetricFamily(
            "webhook_request_duration_seconds",
            "Time from the first byte of the body read to the decision, by webhook.",
            labels=["webhook"],
        )
        bounds = [*map(floatToGoString, LATENCY_BUCKETS), "+Inf"]
        for webhook, buckets in list(self.buckets.items()):
            duration.add_metric([webhook], list(zip(bounds, accumulate(buckets), strict=True)), self.sums[webhook])
        yield duration


OPERATIONS = frozenset({"CREATE", "UPDATE", "DELETE", "CONNECT"})


class ServerMetrics:
    def __init__(self, store: ObjectStore, lifecycle: Lifecycle, budget: Budget, connections: Connections | None = None,
                 accept_errors: AcceptErrors | None = None) -> None:
        """``connections`` and ``accept_errors``: the webhooks' listener's (none in-process)."""
        self.registry = new_registry()
        self.answers = _AnswersCollector()
        self.registry.register(self.answers)
        self.in_flight: dict[str, int] = {}
        """Requests being read or decided, by webhook: a plain count, as ``_AnswersCollector``'s."""
        self.certificate_reloads = Counter(
            "webhook_certificate_reloads", "Serving certificate reloads after the files changed.", registry=self.registry
        )
        self.certificate_reload_errors = Counter(
            "webhook_certificate_reload_errors",
            "Changed certificate files that could not be loaded (the previous certificate stays).",
            registry=self.registry,
        )
        self.certificate_expiry = Gauge(
            "webhook_certificate_expiry_timestamp_seconds",
            "When the serving certificate in use expires, as a Unix time.",
            registry=self.registry,
        )
        # Gauges read when scraped rather than set on every change.
        self._gauge("webhook_store_objects", "PodCliqueSets held by the object store.", lambda: store.size)
        self._gauge("webhook_store_synced", "1 once the object store has synced, else 0.", lambda: 1 if store.ready else 0)
        self.registry.register(_Counts(
            GaugeMetricFamily, "webhook_requests_in_flight", "Admission requests being read or decided, by webhook.",
            "webhook", lambda: self.in_flight,
        ))
        self.registry.register(_Counts(
            CounterMetricFamily,
            "webhook_connections_dropped",
            "Connections the server dropped, by reason: header_timeout (no complete request head in "
            "time), header_too_large (431, or a head past --max-header-bytes), over_budget "
            "(--max-held-bytes: 503 for a body), write_timeout (an answer not taken in time), "
            "drained_idle (idle when the listener closed), drain_timeout (open at the drain's end), "
            "max_connections (accepted past --max-connections, and reset at once).",
            "reason", lambda: lifecycle.dropped, DROP_REASONS,
        ))
        self._gauge(
            "webhook_held_bytes",
            "Bytes held for clients: request heads and bodies being read, answers being handed over.",
            lambda: budget.held,
        )
        self._gauge("webhook_held_bytes_limit", "The most bytes held for clients at once (--max-held-bytes).", lambda: budget.limit)
        if connections is not None:
            self._gauge(
                "webhook_connections",
                "Connections open on the webhooks' port: waiting for TLS, in the handshake, serving or idle.",
                lambda: connections.count,
            )
            self._gauge(
                "webhook_connections_limit", "The most connections open at once (--max-connections).",
                lambda: connections.settings.max_connections,
            )
        if accept_errors is not None:
            self.registry.register(_Counts(
                CounterMetricFamily,
                "webhook_accept_errors",
                "Connections the listeners could not accept, by error: EMFILE (the process's descriptors "
                "are all in use), ENFILE (the system's), ENOBUFS and ENOMEM (kernel memory), other; each "
                "is retried after a pause, 5 ms doubling to 1 s.",
                "error", lambda: accept_errors.counts, ACCEPT_ERRORS,
            ))
        if isinstance(store, AuthorizingStore):
            # A rising ``error`` is PodCliqueSets refused (or, under ``warn``, admitted unchecked)
            # because the API server could not say (DECISIONS.md §3.1).
            self.registry.register(_Counts(
                CounterMetricFamily,
                "webhook_template_authorization_reviews",
                "SubjectAccessReviews made for ResourceClaimTemplates of other namespaces, by result "
                "(allowed, denied, error: no answer).",
                "result", store.template_reviews, REVIEW_RESULTS,
            ))

    def _gauge(self, name: str, documentation: str, value: Callable[[], float]) -> None:
        Gauge(name, documentation, registry=self.registry).set_function(value)

    def observe(self, webhook: str, decision: Answer, seconds: float) -> None:
        """Counts one answer; an operation the API server never sends as ``unknown``, so that a
        caller cannot make series without end."""
        operation = decision.operation if decision.operation in OPERATIONS else UNKNOWN
        self.answers.count((webhook, operation, decision.outcome), seconds)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
