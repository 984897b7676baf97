"""The validating webhook's latency on a large PodCliqueSet, in-process and over TLS with keep-alive.

The PodCliqueSet has 20 cliques (10 standalone, 10 in 5 scaling groups of two), 10 internal claim
templates and 40 resource-sharing entries over the three levels, and pod specs as a serving stack
writes them (two containers with probes, environment, resources and mounts, an init container,
affinity, tolerations, volumes). Measured: CREATE, UPDATE of an unchanged object (the immutability
rules run), UPDATE that changes a template (denied, the message prints every template), and
the same CREATE with replica counts in the billions (the claim checks must not grow with them).
The in-process decision is measured twice: as is, and after ``gc.freeze()``, which shows how much
of the tail is CPython's full garbage collections walking every object the process holds.
Run: ``python bench/validate.py [--n N]``.
"""

from __future__ import annotations

import argparse
import copy
import gc
from pathlib import Path
from typing import Any

import orjson
from serving import (
    KeepAliveConnection,
    answered,
    heading,
    measure,
    measure_asgi,
    serve_tls,
    timed,
)

from webhook.core.pcs.validator import PodCliqueSetValidator
from webhook.server.app import create_app
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

ROOT = Path(__file__).resolve().parents[1]
VALIDATE = "/webhooks/validate-podcliqueset"
CLIQUES = 20
GROUPS = 5
TEMPLATES = 10


def pod_spec(name: str) -> dict[str, Any]:
    """A serving container, a metrics sidecar and an init container, as in a real model deployment."""
    probe = {"httpGet": {"path": "/health", "port": 8000}, "periodSeconds": 10, "failureThreshold": 3}
    main = {
        "name": name,
        "image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.1",
        "command": ["python3", "-m", "dynamo.vllm"],
        "args": ["--model", "meta-llama/Llama-3.1-70B-Instruct", "--tensor-parallel-size", "8", "--port", "8000"],
        "env": [{"name": f"DYN_SETTING_{i}", "value": f"value-{i}"} for i in range(16)]
        + [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "ports": [{"name": "http", "containerPort": 8000}, {"name": "metrics", "containerPort": 9090}],
        "resources": {"requests": {"cpu": "16", "memory": "200Gi"}, "limits": {"memory": "220Gi"}},
        "volumeMounts": [{"name": "model-cache", "mountPath": "/models"}, {"name": "shm", "mountPath": "/dev/shm"}],
        "readinessProbe": probe,
        "livenessProbe": {**probe, "initialDelaySeconds": 600},
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
    }
    sidecar = {
        "name": "metrics",
        "image": "registry.example.com/exporter:1.2",
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}},
    }
    return {
        "terminationGracePeriodSeconds": 30,
        "schedulerName": "kai-scheduler",
        "initContainers": [{"name": "fetch-model", "image": "busybox:1.36", "command": ["sh", "-c", "true"]}],
        "containers": [main, sidecar],
        "affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "nvidia.com/gpu.product", "operator": "In", "values": ["H100-SXM"]}]}]
                }
            }
        },
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "volumes": [
            {"name": "model-cache", "persistentVolumeClaim": {"claimName": "model-cache"}},
            {"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}},
        ],
    }


def template(i: int) -> dict[str, Any]:
    exactly = {"deviceClassName": f"gpu{i}.example.com", "count": 2, "selectors": [{"cel": {"expression": f"device.attributes['gpu'].index == {i}"}}]}
    return {
        "name": f"tpl-{i}",
        "templateSpec": {
            "metadata": {"labels": {"team": "inference"}},
            "spec": {"devices": {"requests": [{"name": "gpu", "exactly": exactly}],
                                 "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"sharing": {"strategy": "MPS"}}}}]}},
        },
    }


def large_pcs(replicas: int = 2, clique_replicas: int = 2, group_replicas: int = 3) -> dict[str, Any]:
    """20 cliques, 5 scaling groups, 40 resource-sharing entries: 10 at the PodCliqueSet level, 2 per
    scaling group, 1 per clique."""
    names = [f"worker-{c:02d}" for c in range(CLIQUES)]
    cliques = [
        {
            "name": name,
            "labels": {"kai.scheduler/queue": "inference"},
            "resourceSharing": [{"name": f"tpl-{c % TEMPLATES}", "scope": "PerReplica" if c % 2 else "AllReplicas"}],
            "spec": {"roleName": name, "replicas": clique_replicas, "minAvailable": 1, "podSpec": pod_spec(name)},
        }
        for c, name in enumerate(names)
    ]
    members = names[CLIQUES - 2 * GROUPS :]
    groups = [
        {
            "name": f"sg-{g}",
            "cliqueNames": members[2 * g : 2 * g + 2],
            "replicas": group_replicas,
            "minAvailable": 1,
            "resourceSharing": [
                {"name": f"tpl-{g}", "scope": "AllReplicas"},
                {"name": f"ext-{g}", "namespace": "shared", "scope": "PerReplica", "filter": {"childCliqueNames": [members[2 * g]]}},
            ],
        }
        for g in range(GROUPS)
    ]
    pcs_sharing = [{"name": f"tpl-{i}", "scope": "AllReplicas"} for i in range(4)]
    pcs_sharing += [{"name": f"ext-pcs-{i}", "scope": "PerReplica", "filter": {"childCliqueNames": names[i : i + 3]}} for i in range(3)]
    pcs_sharing += [{"name": f"ext-sg-{i}", "scope": "AllReplicas", "filter": {"childScalingGroupNames": [f"sg-{i}"]}} for i in range(3)]
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": "llm", "namespace": "default", "labels": {"app": "llm"}},
        "spec": {
            "replicas": replicas,
            "template": {
                "cliqueStartupType": "CliqueStartupTypeAnyOrder",
                "terminationDelay": "4h",
                "resourceClaimTemplates": [template(i) for i in range(TEMPLATES)],
                "resourceSharing": pcs_sharing,
                "cliques": cliques,
                "podCliqueScalingGroups": groups,
            },
        },
    }


def review(obj: dict[str, Any], operation: str = "CREATE", old: dict[str, Any] | None = None) -> bytes:
    kind = {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"}
    request = {"uid": "b3c1a2d4-0000-4000-8000-000000000001", "kind": kind, "name": "llm", "namespace": "default", "operation": operation,
               "userInfo": {"username": "admin"}, "object": obj, "oldObject": old}
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


def bodies() -> dict[str, tuple[bytes, str]]:
    """Name to (review body, the outcome it must get)."""
    pcs = large_pcs()
    changed = copy.deepcopy(pcs)
    changed["spec"]["template"]["resourceClaimTemplates"][3]["templateSpec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 4
    return {
        "CREATE, allowed": (review(pcs), "allowed"),
        "UPDATE unchanged, immutability checked, allowed": (review(pcs, "UPDATE", pcs), "allowed"),
        "UPDATE of a template, denied (U1)": (review(changed, "UPDATE", pcs), "denied"),
        "CREATE, replicas 2^31-1 at every level, allowed": (review(large_pcs(2**31 - 1, 2**31 - 1, 2**31 - 1)), "allowed"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000, help="requests per measurement")
    n = parser.parse_args().n
    cases = bodies()
    validator = PodCliqueSetValidator()
    for name, (body, outcome) in cases.items():
        got = answered(validator, "validate-podcliqueset", body).outcome
        if got != outcome:
            raise SystemExit(f"{name}: expected {outcome}, got {got}")
    sizes = ", ".join(f"{len(body):,}" for body, _ in cases.values())
    print(heading(f"review bodies {sizes} bytes; n={n}") + "\n")
    header = "| {} | median ms | p99 ms | per second |\n|---|---|---|---|"

    print(header.format("the validating handler, in-process"))
    for name, (body, _) in cases.items():
        print(timed(lambda body=body: answered(validator, "validate-podcliqueset", body), n).row(name))  # type: ignore[misc]

    gc.freeze()
    print("\n" + header.format("the validating handler, in-process, after `gc.freeze()`"))
    for name, (body, _) in cases.items():
        print(timed(lambda body=body: answered(validator, "validate-podcliqueset", body), n).row(name))  # type: ignore[misc]
    gc.unfreeze()

    app = create_app(ServeSettings(), EmbeddedStore.of([]))
    print("\n" + header.format("the app, in-process (no HTTP)"))
    for name, (body, _) in cases.items():
        print(measure_asgi(app, body, n, VALIDATE).row(name))

    print("\n" + header.format("`webhook serve` over TLS, one kept-alive connection"))
    with serve_tls(ServeSettings()) as endpoint, KeepAliveConnection(endpoint) as connection:
        for name, (body, _) in cases.items():
            print(measure(connection, body, n, VALIDATE).row(name))


if __name__ == "__main__":
    main()
