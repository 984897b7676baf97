"""Grove's end-to-end resource-sharing workload (BEHAVIOUR.md §7) and the pods Grove builds
from it, labelled as Grove labels them (§4.3, §4.4), for tests of claim injection.

The pods come from the examples generator, so the example AdmissionReviews and the tests are built
by the same code.
"""

from __future__ import annotations

from core.generators import load
from webhook.core.model.podcliqueset import PodCliqueSet
from webhook.core.model.podcliqueset import read_podcliqueset

generate_pods = load("generate_pods")
grove_pod = generate_pods.grove_pod
pod_review = generate_pods.pod_review
workload_pcs_raw = generate_pods.workload_pcs_raw


def workload_pcs(replicas: int = 1, namespace: str = "default") -> PodCliqueSet:
    return read_podcliqueset(workload_pcs_raw(replicas, namespace))
