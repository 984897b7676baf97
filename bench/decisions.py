"""The decision path's targets: the two webhooks in-process, on Grove's end-to-end workload.

- Validating Grove's e2e PodCliqueSet: a CREATE, and an UPDATE that changes only ``spec.replicas``
  (target: at most 60 µs each). Measured as the server answers them (the PodCliqueSet content seen
  before, as retries, dry runs and controllers' updates repeat it) and cold (a fresh validator per
  review, as for a content never seen).
- Mutating a Grove pod (2 containers, 1 init container) against stores of 1, 1,000 and 10,000
  PodCliqueSets (target: at most 30 µs with 1,000, not growing with the store); and a pod of
  worker-a, whose clique-level PerReplica claim sets it apart, so its patch is built every time.

Each figure is the median of ``--runs`` timings of ``--n`` calls (microseconds per call), the
whole answer included: the body decoded, the decision, the response AdmissionReview written as
bytes. Over TLS the same reviews go through ``webhook serve``; ``../shared/perf/compare.sh`` (not in
this repository) compares that with a Go webhook. Run: ``python bench/decisions.py [--n N]``.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import subprocess
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from serving import KeepAliveConnection, answered, machine, measure, serve_tls

from webhook.core.admission.handling import Handler
from webhook.core.pcs.handler import PodCliqueSetValidator
from webhook.core.pod.handler import PodMutator
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from generate_podcliquesets import pcs_review, workload_pcs  # noqa: E402
from mutate import grove_review, podcliquesets  # noqa: E402

TARGETS = {"validate": 60.0, "mutate": 30.0}


def micros(call: Callable[[], Any], n: int, runs: int) -> float:
    call()
    return statistics.median(timeit.repeat(call, number=n, repeat=runs)) / n * 1e6


def content(handler: Handler, name: str, body: bytes) -> Callable[[], bytes]:
    return lambda: answered(handler, name, body).content()


def reviews() -> dict[str, bytes]:
    pcs = workload_pcs()
    scaled = copy.deepcopy(pcs)
    scaled["spec"]["replicas"] = pcs["spec"].get("replicas", 1) + 1
    return {
        "CREATE": orjson.dumps(pcs_review(pcs)),
        "UPDATE of spec.replicas only": orjson.dumps(pcs_review(scaled, operation="UPDATE", old=pcs)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="calls per timing")
    parser.add_argument("--runs", type=int, default=7, help="timings per figure")
    arguments = parser.parse_args()
    n, runs = arguments.n, arguments.runs
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    print(f"{machine()}; {time.strftime('%Y-%m-%d')}; commit {commit}; n={n}, median of {runs}\n")
    print("| in-process, µs per review | seen before | cold | target |\n|---|---|---|---|")
    validator = PodCliqueSetValidator()
    for name, body in reviews().items():
        assert answered(validator, "validate-podcliqueset", body).outcome == "allowed"
        warm = micros(content(validator, "validate-podcliqueset", body), n, runs)
        cold = micros(lambda body=body: answered(PodCliqueSetValidator(), "validate-podcliqueset", body).content(), max(n // 10, 50), runs)  # type: ignore[misc]
        print(f"| validate, {len(body):,}-byte {name} | {warm:.1f} | {cold:.1f} | {TARGETS['validate']:.0f} |")
    for size in (1, 1000, 10_000):
        store = EmbeddedStore.of(podcliquesets(size))
        body = grove_review(size)
        mutator = PodMutator(store)
        assert answered(mutator, "mutate-pod", body).outcome == "patched"
        warm = micros(content(mutator, "mutate-pod", body), n, runs)
        cold = micros(lambda: answered(PodMutator(store), "mutate-pod", body).content(), max(n // 10, 50), runs)  # noqa: B023
        target = f"{TARGETS['mutate']:.0f}" if size == 1000 else ""
        print(f"| mutate, {len(body):,}-byte Grove pod, {size:,} PodCliqueSets stored | {warm:.1f} | {cold:.1f} | {target} |")
    body = grove_review(1000, per_pod=True)
    mutator = PodMutator(EmbeddedStore.of(podcliquesets(1000)))
    assert answered(mutator, "mutate-pod", body).outcome == "patched"
    warm = micros(content(mutator, "mutate-pod", body), n, runs)
    print(f"| mutate, {len(body):,}-byte pod with a claim of its own (patched each time), 1,000 stored | {warm:.1f} | | |")

    print("\n| over TLS, one kept-alive connection | median ms | p99 ms | per second |\n|---|---|---|---|")
    app = create_app(ServeSettings(), EmbeddedStore.of(podcliquesets(1000)))
    with serve_tls(app) as endpoint, KeepAliveConnection(endpoint) as connection:
        for name, body in reviews().items():
            print(measure(connection, body, n, "/webhooks/validate-podcliqueset").row(f"validate, {name}"))
        print(measure(connection, grove_review(1000), n, "/webhooks/mutate-pod").row("mutate, Grove pod"))


if __name__ == "__main__":
    main()
