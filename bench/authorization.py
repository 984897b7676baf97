"""What asking about templates of other namespaces adds to the validating webhook (DECISIONS.md §3.1).

``webhook serve`` with the cluster store, in a child process as in a pod, against the tests' fake API
server in this process, which answers every SubjectAccessReview "allowed". Over TLS on one kept-alive
connection, the same CREATE reviews under ``--template-authorization off`` and ``enforce``, the
latter twice: the same user every time (answered from the webhook's cache after the first), and a
new user every time (a SubjectAccessReview per template on every request). Bodies: Grove's
end-to-end workload (one template of another namespace, ``rs-shared/ext-ns-tpl``), the large
PodCliqueSet of ``bench/validate.py`` (five, ``shared/ext-0`` to ``ext-4``, asked about at once), and
both without those references (their entries' namespaces removed), which must cost the same under
both modes. Also, in-process: one SubjectAccessReview through the client and the fake API server,
the scan that finds no reference, and each review decided without and with the check (its
answers remembered).
Run: ``python bench/authorization.py [--n N]``.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson
from serving import KeepAliveConnection, Stats, answered, machine, serve_tls, timed
from validate import large_pcs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from fakeapi import FakeApiServer  # noqa: E402
from server.reviews import workload_pcs  # noqa: E402

from webhook.core.admission import answer  # noqa: E402
from webhook.core.model.podcliqueset import read_podcliqueset  # noqa: E402
from webhook.core.pcs.authorization import TemplateAuthorization, User, cross_namespace_references  # noqa: E402
from webhook.core.pcs.validator import PodCliqueSetValidator  # noqa: E402
from webhook.settings import ServeSettings  # noqa: E402
from webhook.stores.cluster import ClusterStore  # noqa: E402

VALIDATE = "/webhooks/validate-podcliqueset"
GROUP = "bench-users"


def without_references(pcs: dict[str, Any]) -> dict[str, Any]:
    """The same PodCliqueSet with every entry's namespace removed (templates of its own namespace)."""
    pcs = copy.deepcopy(pcs)
    template = pcs["spec"]["template"]
    lists = [template.get("resourceSharing", [])]
    lists += [c.get("resourceSharing", []) for c in template.get("cliques", [])]
    lists += [g.get("resourceSharing", []) for g in template.get("podCliqueScalingGroups", [])]
    for entries in lists:
        for entry in entries:
            entry.pop("namespace", None)
    return pcs


def review(pcs: dict[str, Any], user: str) -> bytes:
    request = {"uid": "b3c1a2d4-0000-4000-8000-000000000001",
               "kind": {"group": "grove.io", "version": "v1alpha1", "kind": "PodCliqueSet"},
               "name": pcs["metadata"]["name"], "namespace": "default", "operation": "CREATE",
               "userInfo": {"username": user, "groups": [GROUP, "system:authenticated"]}, "object": pcs}
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


def timed_posts(connection: KeepAliveConnection, bodies: list[bytes], seconds: list[float]) -> None:
    """POSTs one after another, each timed into ``seconds``; each must be allowed."""
    for body in bodies:
        before = time.perf_counter()
        status, answer = connection.request("POST", VALIDATE, body)
        seconds.append(time.perf_counter() - before)
        if status != 200 or not orjson.loads(answer)["response"]["allowed"]:
            raise RuntimeError(f"not allowed: {answer[:300]!r}")


def interleaved(runs: dict[str, tuple[KeepAliveConnection, list[bytes]]], n: int, block: int = 100) -> dict[str, Stats]:
    """Each run's ``n`` POSTs (after 200 untimed), in blocks of ``block`` taken in turn, so that
    whatever else the machine does weighs on every run alike. A run's bodies are used in order."""
    for connection, bodies in runs.values():
        timed_posts(connection, bodies[:200], [])
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    spent = dict.fromkeys(runs, 0.0)
    for start in range(200, 200 + n, block):
        for name, (connection, bodies) in runs.items():
            began = time.perf_counter()
            timed_posts(connection, bodies[start : start + block], seconds[name])
            spent[name] += time.perf_counter() - began
    return {name: Stats.of(seconds[name], spent[name]) for name in runs}


@contextmanager
def webhook(kubeconfig: Path, mode: str) -> Iterator[KeepAliveConnection]:
    settings = ServeSettings(kubeconfig=kubeconfig, template_authorization=mode)  # type: ignore[arg-type]
    with serve_tls(settings) as endpoint, KeepAliveConnection(endpoint) as connection:
        yield connection


def in_process(kubeconfig: Path, cases: dict[str, dict[str, Any]], n: int) -> None:
    """One SubjectAccessReview through the client and the fake API server (a new user each time),
    then each case decided in-process without and with the check, its answers remembered."""
    store = ClusterStore(kubeconfig)

    async def reviews() -> Stats:
        await store.start()
        access = store.template_access()
        seconds = []
        started = time.perf_counter()
        for i in range(n):
            before = time.perf_counter()
            assert await access.may_get(User(f"direct-{i}", groups=(GROUP,)), "shared", "t")
            seconds.append(time.perf_counter() - before)
        return Stats.of(seconds, time.perf_counter() - started)

    print(asyncio.run(reviews()).row("one SubjectAccessReview (client, its thread, the fake API server)"))
    large = read_podcliqueset(without_references(large_pcs()))
    print(timed(lambda: cross_namespace_references(large.spec, "default"), n * 10).row("finding no reference, large PodCliqueSet"))
    off = PodCliqueSetValidator()
    enforce = PodCliqueSetValidator(templates=TemplateAuthorization(store.template_access()))
    for name, pcs in cases.items():
        body = review(pcs, "alice")
        asyncio.run(answer(enforce, "validate-podcliqueset", body))  # the answers remembered from here on
        for mode, validator in (("off", off), ("enforce, answers cached", enforce)):
            label = f"{name}, {mode}" if cross_namespace_references(read_podcliqueset(pcs).spec, "default") or mode == "off" else f"{name}, enforce"
            print(timed(lambda v=validator, b=body: answered(v, "validate-podcliqueset", b), n).row(label), flush=True)
    asyncio.run(store.stop())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    args = parser.parse_args()
    n, warmup = args.n, 200
    cases = {  # those without references first, before the enforcing server holds any answer
        "Grove's workload without its reference": without_references(workload_pcs()),
        "large PodCliqueSet without its references": without_references(large_pcs()),
        "Grove's workload, 1 template of another namespace": workload_pcs(),
        "large PodCliqueSet, 5 templates of another namespace": large_pcs(),
    }
    print(machine())
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    with FakeApiServer() as api, tempfile.TemporaryDirectory() as directory:
        api.authorization.allow(group=GROUP)
        kubeconfig = api.write_kubeconfig(Path(directory) / "kubeconfig")
        print("\n| in-process | median ms | p99 ms | per second |\n|---|---|---|---|")
        in_process(kubeconfig, cases, n)
        print("\n| `webhook serve` over TLS, one kept-alive connection | median ms | p99 ms | per second |\n|---|---|---|---|")
        with webhook(kubeconfig, "off") as off, webhook(kubeconfig, "enforce") as enforce:
            for name, pcs in cases.items():
                asks = len(cross_namespace_references(read_podcliqueset(pcs).spec, "default"))
                same = [review(pcs, "alice")] * (n + 200)
                runs = {"off": (off, same), "enforce": (enforce, same)}
                if asks:
                    runs = {"off": (off, same), "enforce, one user (answers cached)": (enforce, same),
                            "enforce, a new user each time": (enforce, [review(pcs, f"user-{i}") for i in range(n + 200)])}
                before = len(api.authorization.reviews)
                for mode, stats in interleaved(runs, n).items():
                    print(stats.row(f"{name}, {mode}"), flush=True)
                sent = len(api.authorization.reviews) - before
                assert sent >= asks * (n + 200), sent  # a new user each time: every template asked about
                print(f"|  | SubjectAccessReviews sent: {sent} |  |  |", flush=True)

if __name__ == "__main__":
    main()
