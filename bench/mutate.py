"""The mutating webhook's latency: a Grove pod with 2 containers and 1 init container, against a store
of 1,000 PodCliqueSets, in-process and over TLS with keep-alive.

Also measured: the decision alone with stores of 1 and 10,000 PodCliqueSets (the lookup is a dict
read, so the figures must not move), a pod that is not Grove's (only its labels are read) and what
reading such a pod whole would cost instead. Run: ``python bench/mutate.py [--n N]``.
"""

from __future__ import annotations

import argparse
import copy
import logging
import os
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
import yaml
from serving import (
    KeepAliveConnection,
    answered,
    heading,
    measure,
    measure_asgi,
    serve_tls,
    timed,
)

from webhook import logs
from webhook.core.admission import AdmissionReview, decode
from webhook.core.model.pod import read_pod
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset
from webhook.core.pod.mutator import PodMutator
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from generate_pods import grove_pod, pod_review, workload_pcs_raw  # noqa: E402

MUTATE = "/webhooks/mutate-pod"
NAMESPACES = 10


def podcliquesets(count: int) -> list[PodCliqueSet]:
    """``count`` copies of the end-to-end workload's PodCliqueSet, spread over ten namespaces."""
    raw = workload_pcs_raw()
    result = []
    for number in range(count):
        pcs = copy.deepcopy(raw)
        pcs["metadata"]["name"] = f"rs-test-{number}"
        pcs["metadata"]["namespace"] = f"team-{number % NAMESPACES}"
        result.append(read_podcliqueset(pcs))
    return result


def grove_review(count: int, per_pod: bool = False) -> bytes:
    """worker-b of scaling-group replica 1 of the last PodCliqueSet, with a sidecar and an init
    container; ``per_pod``: pod 1 of worker-a instead, whose clique-level PerReplica claim is its own."""
    raw = workload_pcs_raw(namespace=f"team-{(count - 1) % NAMESPACES}")
    raw["metadata"]["name"] = f"rs-test-{count - 1}"
    pod = grove_pod(raw, 0, "worker-a", 1) if per_pod else grove_pod(raw, 0, "worker-b", 0, "sga", 1)
    pod["spec"]["containers"].append(
        {"name": "metrics", "image": "registry:5001/exporter:latest", "resources": {"limits": {"cpu": "100m"}}}
    )
    pod["spec"]["initContainers"] = [{"name": "fetch-weights", "image": "registry:5001/busybox:latest"}]
    return orjson.dumps(pod_review(pod))


def web_review() -> bytes:
    """A Deployment's pod of about the same size, without Grove's labels."""
    container = {
        "name": "web",
        "image": "nginx:1.27",
        "env": [{"name": f"SETTING_{i}", "value": "x" * 16} for i in range(12)],
        "resources": {"requests": {"cpu": "500m", "memory": "256Mi"}},
        "volumeMounts": [{"name": "data", "mountPath": "/data"}],
    }
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "web-5d7f8c9b6-", "namespace": "team-0", "labels": {"app": "web"}},
        "spec": {"containers": [container, {**container, "name": "proxy"}], "initContainers": [{**container, "name": "init"}],
                 "volumes": [{"name": "data", "emptyDir": {}}]},
    }
    return orjson.dumps(pod_review(pod))


def interleaved(calls: dict[str, Callable[[], Any]], repeat: int = 15, number: int = 1000) -> dict[str, float]:
    """Microseconds per call, the best of ``repeat`` runs taken in turn: a small difference shows
    through the noise of a shared machine, which a median of sequential runs does not."""
    best = {name: float("inf") for name in calls}
    for _ in range(repeat):
        for name, call in calls.items():
            best[name] = min(best[name], timeit.timeit(call, number=number) / number * 1e6)
    return best


def decision(body: bytes, store: EmbeddedStore) -> Callable[[], Any]:
    """What the route does, minus HTTP: read, look up, decide (no fetch: the store holds the PCS)."""
    mutator = PodMutator(store)

    def run() -> Any:
        result = answered(mutator, "mutate-pod", body)
        assert result.outcome in ("patched", "allowed"), result.body
        return result

    return run


@contextmanager
def decision_lines() -> Iterator[None]:
    """``--log-level debug --log-format json`` writing to /dev/null: a patched pod's decision line is
    written (at the default level it is not even built)."""
    with open(os.devnull, "w") as sink:
        logs.configure("debug", "json")
        handler = logging.getLogger().handlers[0]
        assert isinstance(handler, logging.StreamHandler)
        handler.setStream(sink)
        try:
            yield
        finally:
            logs.configure("info", "text")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=5000, help="requests per measurement")
    n = parser.parse_args().n
    logs.configure("info", "text")  # as `webhook serve` runs by default
    count = 1000
    objects = podcliquesets(count)
    store = EmbeddedStore.of(objects)
    grove = grove_review(count)
    web = web_review()
    print(heading(f"Grove pod review {len(grove)} bytes, other pod review {len(web)} bytes; store of {store.size} PodCliqueSets; n={n}") + "\n")
    header = "| {} | median ms | p99 ms | per second |\n|---|---|---|---|"

    print(header.format("in-process"))
    print(timed(decision(grove, store), n).row("Grove pod: read, store get, decide (1,000 PodCliqueSets)"))
    for size in (1, 10_000):
        other = EmbeddedStore.of(podcliquesets(size))
        body = grove_review(size)
        print(timed(decision(body, other), n).row(f"same, store of {size:,} PodCliqueSet{'s' if size > 1 else ''}"))
    print(timed(decision(web, store), n).row("other pod: labels read, allowed"))
    app = create_app(ServeSettings(), store)
    print(measure_asgi(app, grove, n, MUTATE).row("Grove pod through the ASGI app"))
    print(measure_asgi(app, web, n, MUTATE).row("other pod through the ASGI app"))
    with decision_lines():
        print(measure_asgi(app, grove, n, MUTATE).row("Grove pod, its decision logged (debug, JSON to /dev/null)"))

    def whole() -> Any:
        review = decode(web)
        assert isinstance(review, AdmissionReview)
        return read_pod(review.request.object)

    mutator = PodMutator(store)
    best = interleaved({"labels only (what the webhook does)": lambda: answered(mutator, "mutate-pod", web), "whole pod": whole})
    print("\nReading the other pod's review, best of 15 interleaved runs: "
          + ", ".join(f"{name} {micros:.1f} us" for name, micros in best.items()) + ".")

    with tempfile.TemporaryDirectory() as directory:
        manifests = Path(directory) / "podcliquesets.yaml"
        manifests.write_text(yaml.safe_dump_all([p.model_dump(by_alias=True, exclude_none=True) for p in objects]))
        began = time.perf_counter()
        EmbeddedStore([manifests]).load()
        print(f"\nStart-up: the embedded store reads {count:,} PodCliqueSets ({manifests.stat().st_size:,} bytes of YAML) "
              f"in {time.perf_counter() - began:.2f} s.")

        print("\n" + header.format("`webhook serve` over TLS, one kept-alive connection"))
        with serve_tls(ServeSettings(objects=[manifests])) as endpoint, KeepAliveConnection(endpoint) as connection:
            print(measure(connection, grove, n, MUTATE).row("Grove pod, patched"))
            print(measure(connection, web, n, MUTATE).row("other pod, allowed"))


if __name__ == "__main__":
    main()
