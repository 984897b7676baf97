"""The registry the webhook server's and the reconciler's ``/metrics`` are each made of (tests run
several in one process): with the process's and the Python runtime's series, read when scraped,
and without the ``*_created`` series no dashboard reads (Go's client does not export them)."""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry, GCCollector, PlatformCollector, ProcessCollector, disable_created_metrics,
)


def new_registry() -> CollectorRegistry:
    # prometheus_client's switch is process-wide and read at every scrape: set for every registry.
    disable_created_metrics()
    registry = CollectorRegistry(auto_describe=True)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry
