"""What decoding a review costs: the whole body (orjson, as every review was decoded before, and as
an unusual one still is) against the body decoded as far as its webhook reads it
(``admission.envelope``), on distinct reviews.

The pods of ``decisions.py`` (worker-a of 1,000 PodCliqueSets, under distinct names) and Grove's
e2e PodCliqueSet under distinct names, with the key the validating webhook remembers its spec by
(``json_key``: the spec written back to JSON after a whole decode, the declarations of
``model.wire`` it was decoded into written out after a partial one). Printed: the least CPU µs per body over ``--runs`` passes of ``--n`` distinct
bodies. Run: ``python bench/decoding.py``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

from decisions import pcs_reviews, pod_reviews
from serving import heading

from webhook.core.admission.envelope import Envelope
from webhook.core.admission.request import AdmissionReview, decode
from webhook.core.model.spectext import json_key
from webhook.core.pcs.handler import PodCliqueSetValidator
from webhook.core.pod.handler import PodMutator


def decoded(objects: Envelope | None) -> Callable[[bytes], Any]:
    def read(body: bytes) -> Any:
        review = decode(body, objects)
        assert isinstance(review, AdmissionReview)
        return review

    return read


def with_spec_key(objects: Envelope | None) -> Callable[[bytes], Any]:
    def read(body: bytes) -> Any:
        review = decode(body, objects)
        assert isinstance(review, AdmissionReview)
        return json_key(review.request.object["spec"])

    return read


def least_cpu(read: Callable[[bytes], Any], bodies: list[bytes], runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        began = time.process_time()
        for body in bodies:
            read(body)
        best = min(best, (time.process_time() - began) / len(bodies) * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=4096, help="distinct bodies of each kind")
    parser.add_argument("--runs", type=int, default=7)
    arguments = parser.parse_args()
    print(heading(f"{arguments.n:,} distinct bodies, least of {arguments.runs}") + "\n")
    pod = next(iter(pod_reviews().values()))
    pcs = pcs_reviews()["CREATE"]
    kinds = {
        "pod review (worker-a)": ([pod(k) for k in range(arguments.n)], decoded, PodMutator.objects),
        "PodCliqueSet CREATE, with its spec's key": ([pcs(k) for k in range(arguments.n)], with_spec_key, PodCliqueSetValidator.objects),
    }
    print("| CPU µs per body | bytes | whole (orjson) | as far as read (msgspec) |\n|---|---|---|---|")
    for name, (bodies, reader, objects) in kinds.items():
        size = sum(map(len, bodies)) // len(bodies)
        whole = least_cpu(reader(None), bodies, arguments.runs)
        parts = least_cpu(reader(objects), bodies, arguments.runs)
        print(f"| {name} | {size:,} | {whole:.1f} | {parts:.1f} |")


if __name__ == "__main__":
    main()
