"""What the webhook server's and the reconciler's ``/metrics`` share.

Each component counts in a registry of its own (tests run several in one process), made here: with
the process's metrics (``process_resident_memory_bytes``, ``process_cpu_seconds_total``,
``process_open_fds``, ...), the Python runtime's (``python_gc_*``, ``python_info``), all read when
scraped, and without the ``*_created`` series prometheus_client adds to every counter and histogram
(a timestamp per label set that no dashboard reads; Go's client does not export them).
"""

from __future__ import annotations

from prometheus_client import (
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)

def new_registry() -> CollectorRegistry:
    # prometheus_client's switch is process-wide and read at every scrape: set for every registry.
    disable_created_metrics()
    registry = CollectorRegistry(auto_describe=True)
    ProcessCollector(registry=registry)
    PlatformCollector(registry=registry)
    GCCollector(registry=registry)
    return registry
