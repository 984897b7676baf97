"""The decision path's targets: the two webhooks in-process, on Grove's end-to-end workload, on one
review repeated and on distinct reviews (the traffic of a cluster with many workloads).

- Validating Grove's e2e PodCliqueSet: a CREATE, and an UPDATE that changes only ``spec.replicas``
  (targets: at most 60 and 80 µs). Measured on one review repeated; on 4,096 distinct reviews (the
  PodCliqueSet under 4,096 names, what ``DISTINCT=4096 ../shared/perf/compare.sh`` sends), each
  taken in turn; and cold: a new validator per review (its making included), for a content no
  earlier review had.
- Mutating a Grove pod (2 containers, 1 init container) against 1,000 stored PodCliqueSets: a pod of
  worker-a, whose clique-level PerReplica claim is its own (target: at most 30 µs), and one of
  worker-b in a scaling group. Distinct: 4,096 pods spread over the 1,000 PodCliqueSets and pod
  indexes 0-7; cold: a fresh mutator per review.
- Memory: 200,000 distinct reviews of each kind, the process's RSS after the first 1,000 and after
  all of them (target: within 20 MiB).

Each figure is the median of ``--runs`` timings of CPU time (``time.process_time``, so that other
work on the machine moves it less than wall time), the whole answer included: the body decoded, the
decision, the response AdmissionReview written as bytes. ``../shared/perf/compare.sh`` (not in this
repository) compares ``webhook serve`` with a Go webhook. Run: ``python bench/decisions.py``.
"""

from __future__ import annotations

import argparse
import copy
import functools
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
from serving import answered, heading

from webhook.core.admission import Handler
from webhook.core.pcs.validator import PodCliqueSetValidator
from webhook.core.pod.mutator import PodMutator
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from generate_podcliquesets import pcs_review, workload_pcs  # noqa: E402
from generate_pods import grove_pod, pod_review, workload_pcs_raw  # noqa: E402
from mutate import NAMESPACES, podcliquesets  # noqa: E402

STORED = 1000
DISTINCT = 4096
VALIDATE, MUTATE = "validate-podcliqueset", "mutate-pod"
Review = Callable[[int], bytes]
"""The ``k``-th review of a kind of traffic: the same one for every ``k`` when it is repeated."""


def cpu_micros(kind: str, handler: Callable[[], Handler], review: Review, count: int, runs: int) -> float:
    """Median CPU µs per answer over ``runs`` passes of ``count`` reviews (bodies made beforehand;
    a cold handler is made for its review and dropped after it, its making included)."""
    bodies = [review(k) for k in range(count)]
    timings = []
    for _ in range(runs):
        began = time.process_time()
        for body in bodies:
            answered(handler(), kind, body).content()
        timings.append((time.process_time() - began) / count * 1e6)
    return statistics.median(timings)


def pcs_reviews() -> dict[str, Review]:
    """CREATE and UPDATE of spec.replicas, the ``k``-th under the name ``w<k>-rs-test``."""
    pcs = workload_pcs()

    def named(k: int) -> dict[str, Any]:
        obj = copy.deepcopy(pcs)
        obj["metadata"]["name"] = f"w{k:06d}-{pcs['metadata']['name']}"
        return obj

    def create(k: int) -> bytes:
        return orjson.dumps(pcs_review(named(k), uid=f"00000000-0000-4000-8000-{k:012d}"))

    def update(k: int) -> bytes:
        old = named(k)
        new = copy.deepcopy(old)
        new["spec"]["replicas"] = old["spec"].get("replicas", 1) + 1
        return orjson.dumps(pcs_review(new, operation="UPDATE", old=old, uid=f"00000000-0000-4000-8000-{k:012d}"))

    return {"CREATE": create, "UPDATE of spec.replicas only": update}


def pod_reviews() -> dict[str, Review]:
    """Pods of worker-a (a claim of its own) and of worker-b (scaling group sga), the ``k``-th of the
    stored PodCliqueSet ``k mod 1,000``, pod index ``k div 1,000 mod 8``, named after ``k``."""

    @functools.cache
    def stored(number: int) -> dict[str, Any]:
        raw = workload_pcs_raw(namespace=f"team-{number % NAMESPACES}")
        raw["metadata"]["name"] = f"rs-test-{number}"
        return raw

    def pod(clique: str, k: int) -> bytes:
        raw = stored(k % STORED)
        index = (k // STORED) % 8
        made = grove_pod(raw, 0, clique, index) if clique == "worker-a" else grove_pod(raw, 0, clique, index, "sga", 1)
        made["metadata"]["name"] = f"{made['metadata'].get('generateName', 'pod-')}{k:06d}"
        return orjson.dumps(pod_review(made))

    return {"worker-a, a clique-level PerReplica claim": lambda k: pod("worker-a", k), "worker-b, in a scaling group": lambda k: pod("worker-b", k)}


def repeated(review: Review) -> Review:
    body = review(0)
    return lambda _k: body


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def memory(handler: Handler, kind: str, reviews: Iterator[bytes], total: int) -> tuple[float, float]:
    """RSS after the first 1,000 of ``total`` distinct reviews answered by one handler, and after all."""
    after_first = 0.0
    for k, body in enumerate(reviews, 1):
        answered(handler, kind, body).content()
        if k == 1000:
            after_first = rss_mib()
        if k == total:
            break
    return after_first, rss_mib()


def row(name: str, kind: str, handler: Callable[[], Handler], review: Review, n: int, runs: int, target: str) -> str:
    """Repeated and distinct reviews answered by one handler, and cold ones each by a new handler."""
    one = handler()
    warm = cpu_micros(kind, lambda: one, repeated(review), n, runs)
    one = handler()
    distinct = cpu_micros(kind, lambda: one, review, DISTINCT, runs)
    cold = cpu_micros(kind, handler, review, max(n // 10, 50), runs)
    return f"| {name} | {warm:.1f} | {distinct:.1f} | {cold:.1f} | {target} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="reviews per timing of one review repeated")
    parser.add_argument("--runs", type=int, default=7, help="timings per figure")
    parser.add_argument("--memory", type=int, default=200_000, help="distinct reviews of each kind for the RSS figures")
    arguments = parser.parse_args()
    n, runs = arguments.n, arguments.runs
    print(heading(f"n={n}, {DISTINCT:,} distinct, median of {runs}") + "\n")
    print("| in-process, CPU µs per review | repeated | distinct | cold | target |\n|---|---|---|---|---|")
    for (name, review), target in zip(pcs_reviews().items(), ("cold ≤ 60", "cold ≤ 80"), strict=True):
        print(row(f"validate, {name}", VALIDATE, PodCliqueSetValidator, review, n, runs, target))
    store = EmbeddedStore.of(podcliquesets(STORED))
    for (name, review), target in zip(pod_reviews().items(), ("distinct ≤ 30", ""), strict=True):
        print(row(f"mutate, {name}, {STORED:,} stored", MUTATE, lambda: PodMutator(store), review, n, runs, target))

    total = arguments.memory
    print(f"\n| {total:,} distinct reviews, one handler | RSS MiB after 1,000 | after {total:,} | growth |\n|---|---|---|---|")
    kinds: list[tuple[str, Handler, str, Review]] = [
        ("validate, CREATE", PodCliqueSetValidator(), VALIDATE, pcs_reviews()["CREATE"]),
        ("mutate, worker-a pods", PodMutator(store), MUTATE, next(iter(pod_reviews().values()))),
    ]
    for name, handler, kind, review in kinds:
        first, last = memory(handler, kind, (review(k) for k in range(total)), total)
        print(f"| {name} | {first:.1f} | {last:.1f} | {last - first:+.1f} |")


if __name__ == "__main__":
    main()
