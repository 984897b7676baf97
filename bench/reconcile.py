"""The claim reconciler, ``python -m webhook reconcile`` in a child process, against the tests' fake
API server in this process. Children of PodCliqueSets are made the way Grove makes them, by the
tests' Grove stand-in; the fake server's garbage collector removes the claims of deleted children.

Cases (``--case NAME``, repeatable; all by default):

- ``levels``, ``flat``: a PodCliqueSet of 1,000 claims from nothing, then a scale-in of half:
  wall time, reconciler CPU and API calls. ``levels``: 10 replicas, each with 5 PodCliqueSet
  PerReplica claims, a standalone clique of 8 pods (1 AllReplicas + 2 PerReplica entries) and a
  scaling group of 4 (1 + 2) whose clique has 8 pods (1 + 2), plus 10 PodCliqueSet AllReplicas
  claims. ``flat``: 100 replicas, 10 PodCliqueSet PerReplica entries.
- ``100k``: two PodCliqueSets, each with a PodClique of 100,000 pods and one PerReplica entry,
  ``--max-claims-per-owner 200000``: time to the first claim write, claims per second over the
  first 60 s, a small PodCliqueSet created 10 s in (time to its claims), peak RSS. Then the rest of
  the 200,000 claims are made by "Grove's operator" (the server's hooks) and, once the reconciler
  has them all cached: its RSS, and a small PodCliqueSet again; then a restart (the claims listed,
  in pages): time to sync, RSS.
- ``million``: a PodClique of 1,000,000 pods, default limit: time to the first write, to the
  10,000 claims of the limit, a small PodCliqueSet created 5 s in, peak RSS.
- ``templates``: 200 PodCliqueSets (Grove's end-to-end workload, renamed) created at once: API
  calls by kind, reads of the two external templates above all.
- ``recovery``: a reconciler behind a proxy; a 30 s outage during which a PodCliqueSet scales
  out, then a 1 s one 40 s later: seconds from each return to the claims, log lines meanwhile.

Run: ``python bench/reconcile.py [--case NAME] [--source DIR]``.
"""

from __future__ import annotations

import argparse
import copy
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from reconciling import ROOT, Reconciler, calls, quiet, timed  # first: puts tests/ on the path

from fakeapi import CuttableProxy, FakeApiServer, wait_until  # noqa: E402
from reconciler.grove import GroveOperator, ext_ns_template, workload  # noqa: E402
from serving import machine

SPEC = {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]}}
Row = dict[str, Any]


def entries(prefix: str, all_replicas: int, per_replica: int) -> list[dict[str, str]]:
    return [{"name": f"{prefix}-all-{n}", "scope": "AllReplicas"} for n in range(all_replicas)] + [
        {"name": f"{prefix}-per-{n}", "scope": "PerReplica"} for n in range(per_replica)
    ]


def podcliqueset(name: str, sharing: list[dict[str, str]], replicas: int, cliques: list[dict[str, Any]],
                 groups: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    groups = groups or []
    names = {e["name"] for e in sharing} | {e["name"] for c in cliques for e in c.get("resourceSharing", [])}
    names |= {e["name"] for g in groups for e in g["resourceSharing"]}
    return {
        "apiVersion": "grove.io/v1alpha1",
        "kind": "PodCliqueSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "template": {
                "resourceClaimTemplates": [{"name": n, "templateSpec": {"spec": SPEC}} for n in sorted(names)],
                "resourceSharing": sharing,
                "cliques": cliques,
                "podCliqueScalingGroups": groups,
            },
        },
    }


def clique(name: str, pods: int, sharing: list[dict[str, str]]) -> dict[str, Any]:
    return {"name": name, "resourceSharing": sharing, "spec": {"replicas": pods, "roleName": name}}


def small(api: FakeApiServer, name: str) -> Callable[[], bool]:
    """Create a small PodCliqueSet (3 claims); the condition that it has converged."""
    GroveOperator(api, podcliqueset(name, entries("s", 1, 1), 2, [])).sync()
    return lambda: api.count("resourceclaims", "default", f"app.kubernetes.io/part-of={name}") == 3


@contextmanager
def running(args: argparse.Namespace, *options: str, proxy: bool = False) -> Iterator[tuple[FakeApiServer, Reconciler, Any]]:
    with FakeApiServer() as api, tempfile.TemporaryDirectory() as tmp:
        cut = CuttableProxy((api.host, api.port)) if proxy else None
        kubeconfig = (cut or api).write_kubeconfig(Path(tmp) / "kubeconfig")
        child = Reconciler(kubeconfig, *options, source=args.source, workers=args.workers)
        try:
            wait_until(lambda: api.open_watches() == 4, timeout=30, message="the reconciler watching")
            yield api, child, cut
        finally:
            child.stop()
            if cut is not None:
                cut.stop()


# --- 1,000 claims ----------------------------------------------------------------------------------


def thousand(args: argparse.Namespace, shape: str) -> list[Row]:
    if shape == "flat":
        pcs, replicas, left = podcliqueset("bench-flat", entries("pcs", 0, 10), 100, []), 100, 500
    else:
        cliques = [clique("solo", 8, entries("solo", 1, 2)), clique("member", 8, entries("member", 1, 2))]
        groups = [{"name": "sg", "cliqueNames": ["member"], "replicas": 4, "resourceSharing": entries("sg", 1, 2)}]
        pcs, replicas, left = podcliqueset("bench-levels", entries("pcs", 10, 5), 10, cliques, groups), 10, 505
    rows: list[Row] = []
    with running(args) as (api, child, _):
        grove: dict[str, GroveOperator] = {}

        def phase(name: str, act: Callable[[], None], want: int) -> None:
            api.requests.reset()
            cpu, started = child.cpu_seconds(), time.monotonic()
            act()
            wait_until(lambda: api.count("resourceclaims") == want, timeout=300, interval=0.05, message=f"{want} claims")
            seconds = time.monotonic() - started
            quiet(api)
            rows.append({"case": shape, "phase": name, "wall s": seconds, "CPU s": child.cpu_seconds() - cpu,
                         "calls": calls(api)})

        def create() -> None:
            grove["op"] = GroveOperator(api, copy.deepcopy(pcs))
            grove["op"].sync()

        phase("from nothing (1,000 claims)", create, 1000)
        phase(f"scale-in of half ({left} left)",
              lambda: grove["op"].scale("podcliquesets", pcs["metadata"]["name"], replicas // 2), left)
    return rows


# --- replica counts --------------------------------------------------------------------------------


def hundred_thousand(args: argparse.Namespace) -> list[Row]:
    pods, window = 100_000, 60.0
    limit = ["--max-claims-per-owner", "200000"] if args.limit_option else []
    rows: list[Row] = []
    with running(args, *limit) as (api, child, _):
        groves = [GroveOperator(api, podcliqueset(n, [], 1, [clique("w", pods, entries("w", 0, 1))]))
                  for n in ("big-a", "big-b")]
        started = time.monotonic()
        for grove in groves:
            grove.sync()
        first = timed(lambda: api.requests.count("POST", "/resourceclaims$") > 0, timeout=window)
        time.sleep(max(started + 10 - time.monotonic(), 0))
        small_seconds = timed(small(api, "small"), timeout=max(started + window - time.monotonic(), 1))
        time.sleep(max(started + window - time.monotonic(), 0))
        made = api.count("resourceclaims") - (3 if small_seconds is not None else 0)
        rss, peak = child.memory_mib()
        rows.append({"case": "100k", "phase": f"writing, first {window:.0f} s", "first write s": first,
                     "claims/s": made / (window - (first or 0)), "small PodCliqueSet s": small_seconds,
                     "RSS MiB": rss, "peak RSS MiB": peak})
        # Grove's operator makes the rest (the reconciler keeps writing too: 409s, then nothing).
        for grove in groves:
            uid = grove.current("podcliques", "big-a-0-w" if grove.name == "big-a" else "big-b-0-w")
            fill(api, grove.name, uid)
        cached_claims = ("grove_sharing_reconciler_cached_objects", 'resource="resourceclaims"')
        cached = None
        if child.metric(*cached_claims) is not None:  # a reconciler before the metric: wait for quiet only
            cached = timed(lambda: (child.metric(*cached_claims) or 0) >= 2 * pods + 3, timeout=600, interval=1)
        quiet(api, seconds=3)
        rss, peak = child.memory_mib()
        small_seconds = timed(small(api, "small-2"), timeout=60)
        rows.append({"case": "100k", "phase": "200,000 claims cached", "cached after s": cached,
                     "small PodCliqueSet s": small_seconds, "RSS MiB": rss, "peak RSS MiB": peak})
        # A restart: the 200,000 claims are listed, not watched in.
        child.stop()
        api.requests.reset()
        kubeconfig = api.write_kubeconfig(Path(tempfile.mkdtemp()) / "kubeconfig")
        again = Reconciler(kubeconfig, *limit, source=args.source, workers=args.workers)
        try:
            synced = timed(lambda: api.open_watches() == 4, timeout=600, interval=0.1)
            quiet(api, seconds=3)
            rss, peak = again.memory_mib()
            rows.append({"case": "100k", "phase": "restarted with 200,000 claims", "synced after s": synced,
                         "RSS MiB": rss, "peak RSS MiB": peak, "calls": calls(api)})
        finally:
            again.stop()
    return rows


def fill(api: FakeApiServer, pcs: str, clique_obj: dict[str, Any] | None) -> None:
    """Every claim of ``<pcs>-0-w`` that does not exist yet, as Grove's operator would create it."""
    assert clique_obj is not None
    name = clique_obj["metadata"]["name"]
    reference = {"apiVersion": "grove.io/v1alpha1", "kind": "PodClique", "name": name,
                 "uid": clique_obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    labels = {"app.kubernetes.io/managed-by": "grove-operator", "app.kubernetes.io/part-of": pcs,
              "app.kubernetes.io/component": "resource-claim", "grove.io/podclique": name}
    for k in range(clique_obj["spec"]["replicas"]):
        claim = f"{name}-{k}-w-per-0"
        if api.get("resourceclaims", "default", claim) is None:
            try:
                api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                            "metadata": {"name": claim, "namespace": "default",
                                         "labels": {**labels, "grove.io/podclique-pod-index": str(k)},
                                         "ownerReferences": [reference]},
                            "spec": SPEC})
            except Exception:  # noqa: BLE001 - the reconciler made it first
                pass


def million(args: argparse.Namespace) -> list[Row]:
    limit_claims, give_up = 10_000, 120.0
    with running(args) as (api, child, _):
        grove = GroveOperator(api, podcliqueset("huge", [], 1, [clique("w", 1_000_000, entries("w", 0, 1))]))
        started = time.monotonic()
        grove.sync()
        peak_seen = 0.0

        def progress() -> bool:
            nonlocal peak_seen
            peak_seen = max(peak_seen, child.memory_mib()[1])
            return api.requests.count("POST", "/resourceclaims$") > 0 or peak_seen > 3000

        first = timed(progress, timeout=30)
        time.sleep(max(started + 5 - time.monotonic(), 0))
        small_seconds = timed(small(api, "small"), timeout=60) if peak_seen < 3000 else None
        timed(lambda: api.count("resourceclaims", "default", "app.kubernetes.io/part-of=huge") >= limit_claims
              or child.memory_mib()[1] > 3000, timeout=give_up, interval=0.2)
        made = api.count("resourceclaims", "default", "app.kubernetes.io/part-of=huge")
        rss, peak = child.memory_mib()
        warned = any("ResourceClaimLimitExceeded" in str(e.get("reason")) for e in api.list("events", "default"))
        return [{"case": "million", "phase": "1,000,000 pods, default limit", "first write s": first,
                 "claims": made, "after s": time.monotonic() - started, "small PodCliqueSet s": small_seconds,
                 "RSS MiB": rss, "peak RSS MiB": peak, "limit Event": warned}]


# --- many PodCliqueSets, outages ---------------------------------------------------------------------


def templates(args: argparse.Namespace) -> list[Row]:
    with running(args) as (api, child, _):
        ext_tpl, pcs = workload()
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rs-shared"}})
        api.create(ext_ns_template())
        api.create({**ext_tpl, "metadata": {**ext_tpl["metadata"], "namespace": "default"}})
        api.requests.reset()
        started = time.monotonic()
        for n in range(200):
            GroveOperator(api, {**copy.deepcopy(pcs), "metadata": {**pcs["metadata"], "name": f"rs-{n}"}}).sync()
        wait_until(lambda: api.count("resourceclaims") == 200 * 12, timeout=300, interval=0.1, message="claims")
        seconds = time.monotonic() - started
        quiet(api)
        return [{"case": "templates", "phase": "200 PodCliqueSets at once (2,400 claims)", "wall s": seconds,
                 "calls": calls(api)}]


def recovery(args: argparse.Namespace) -> list[Row]:
    rows: list[Row] = []
    with running(args, proxy=True) as (api, child, proxy):
        grove = GroveOperator(api, podcliqueset("rec", entries("p", 0, 1), 10, []))
        grove.sync()
        wait_until(lambda: api.count("resourceclaims") == 10, timeout=30, message="10 claims")
        for outage, (seconds, replicas) in enumerate(((30.0, 20), (1.0, 30))):
            if outage:
                time.sleep(40)
            began = time.monotonic()
            proxy.cut()
            api.patch("podcliquesets", "default", "rec", {"spec": {"replicas": replicas}})
            time.sleep(seconds)
            proxy.restore()
            back = timed(lambda: api.count("resourceclaims") == replicas, timeout=120, interval=0.05)
            log = child.log_since(began)
            rows.append({"case": "recovery", "phase": f"{seconds:.0f} s outage", "converged after return s": back,
                         "log lines": len(log), "WARNING lines": sum(" WARNING " in line for line in log),
                         "urllib3 Retrying lines": sum("Retrying" in line for line in log),
                         "tracebacks": sum("Traceback" in line for line in log)})
    return rows


CASES: dict[str, Callable[[argparse.Namespace], list[Row]]] = {
    "levels": lambda a: thousand(a, "levels"),
    "flat": lambda a: thousand(a, "flat"),
    "100k": hundred_thousand,
    "million": million,
    "templates": templates,
    "recovery": recovery,
}


def show(row: Row) -> str:
    parts = []
    for key, value in row.items():
        if key in ("case", "phase"):
            continue
        if key == "calls":
            parts.append(f"API calls {sum(value.values())}: " + ", ".join(f"{k} {v}" for k, v in sorted(value.items())))
        elif isinstance(value, float):
            parts.append(f"{key} {value:.2f}")
        else:
            parts.append(f"{key} {value}")
    return f"{row['case']:9} {row['phase']:38} " + "; ".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--case", action="append", choices=sorted(CASES), help="run only these cases")
    parser.add_argument("--source", type=Path, default=ROOT, help="checkout whose reconciler to run")
    parser.add_argument("--no-limit-option", dest="limit_option", action="store_false",
                        help="a reconciler without --max-claims-per-owner (before it existed)")
    arguments, _ = parser.parse_known_args()  # bench/run.py passes every script the same arguments
    print(f"machine: {machine()}; load {os.getloadavg()[0]:.1f}; reconciler workers: {arguments.workers}; "
          f"source: {arguments.source}", flush=True)
    for name in arguments.case or list(CASES):
        for row in CASES[name](arguments):
            print(show(row), flush=True)


if __name__ == "__main__":
    main()
