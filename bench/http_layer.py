"""What the HTTP layer costs a request: uvicorn with httptools over TLS, as ``webhook serve`` runs it,
against uvicorn bare.

Each server runs alone on CPU 0 (``taskset``), ``wrk`` on CPU 1 with 8 keep-alive connections
POSTing a small pod review; the server's CPU time (``/proc/<pid>/stat``) over the requests wrk
completed is the figure. The servers:

- *bare*: uvicorn with httptools and a trivial ASGI app that reads the body and answers ``{}``;
- *guarded*: the same app behind the connection guard and the request limits
  (``webhook.server.limits``): what the server's own limits cost;
- *production, dispatched*: ``create_app`` deciding a pod that is not Grove's (read no further than
  its labels, so the HTTP work weighs most), a webhook POST going straight to its endpoint;
- *production, FastAPI's router*: the same app with the webhook POSTs routed by FastAPI instead.

Runs alternate between the servers (the machine's state drifts); printed: the median of ``--pairs``
runs of ``--seconds`` each. Needs 2 CPUs, ``wrk`` and ``taskset``. Run: ``python bench/http_layer.py``.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import uvicorn
import uvloop

from webhook.certs import ensure
from webhook.server.app import create_app
from webhook.server.limits import Budget, Connections, Lifecycle, RequestLimits
from webhook.server.run import uvicorn_config
from webhook.settings import ServeSettings
from webhook.stores import EmbeddedStore

MUTATE = "/webhooks/mutate-pod"
SERVERS = ("bare", "guarded", "production, dispatched", "production, FastAPI's router")
POST_LUA = """
local body
function init(args)
  local f = assert(io.open(args[1], "rb")); body = f:read("*a"); f:close()
  wrk.method = "POST"; wrk.body = body; wrk.headers["Content-Type"] = "application/json"
end
"""


def pod_review() -> bytes:
    pod = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-1", "namespace": "default", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web", "image": "nginx"}]},
    }
    request = {
        "uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "resource": {"group": "", "version": "v1", "resource": "pods"}, "namespace": "default",
        "operation": "CREATE", "userInfo": {"username": "admin"}, "object": pod,
    }
    return orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request})


async def trivial(scope: Any, receive: Any, send: Any) -> None:
    more = True
    while more:
        more = (await receive()).get("more_body", False)
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json"), (b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"{}"})


def config(server: str, settings: ServeSettings) -> uvicorn.Config:
    if server == "bare":
        return uvicorn.Config(
            trivial, host=settings.host, port=settings.port, ssl_certfile=settings.tls_cert, ssl_keyfile=settings.tls_key,
            http="httptools", ws="none", lifespan="off", log_config=None, access_log=False, server_header=False, proxy_headers=False,
        )
    lifecycle, budget = Lifecycle(), Budget(settings.max_held_bytes)
    connections = Connections(settings, budget, lifecycle.dropped)
    if server == "guarded":
        return uvicorn_config(settings, RequestLimits(trivial, settings, budget, lifecycle, connections), connections)
    app: Any = create_app(settings, EmbeddedStore.of([]), lifecycle=lifecycle, budget=budget, connections=connections)
    if server == "production, FastAPI's router":
        app = RequestLimits(app.app.routes, settings, budget, lifecycle, connections)
    return uvicorn_config(settings, app, connections)


def serve(server: str, port: int, certs: Path) -> None:
    settings = ServeSettings(port=port, tls_cert=certs / "tls.crt", tls_key=certs / "tls.key")
    uvloop.run(uvicorn.Server(config(server, settings)).serve())


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def started(port: int, certs: Path, child: subprocess.Popen[bytes]) -> None:
    context = ssl.create_default_context(cafile=certs / "ca.crt")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert child.poll() is None, "the server exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as raw, context.wrap_socket(raw, server_hostname="localhost"):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def run(server: str, certs: Path, body: Path, lua: Path, seconds: int) -> float:
    """CPU µs per request of ``server`` under wrk for ``seconds``."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    child = subprocess.Popen(["taskset", "-c", "0", sys.executable, __file__, "--serve", server, "--port", str(port), "--certs", str(certs)])
    try:
        started(port, certs, child)
        wrk = ["taskset", "-c", "1", "wrk", "-t1", "-c8", "--timeout", "5s", "-s", str(lua), f"https://127.0.0.1:{port}{MUTATE}", "--", str(body)]
        subprocess.run([*wrk[:4], "-d1s", *wrk[4:]], capture_output=True, check=True)  # warm up
        before = cpu_seconds(child.pid)
        output = subprocess.run([*wrk[:4], f"-d{seconds}s", *wrk[4:]], capture_output=True, text=True, check=True).stdout
        used = cpu_seconds(child.pid) - before
        match = re.search(r"(\d+) requests in", output)
        assert match and "Non-2xx" not in output, output
        return used / int(match.group(1)) * 1e6
    finally:
        child.terminate()
        child.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--pairs", "--runs", type=int, default=3)
    parser.add_argument("--serve", choices=SERVERS, help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--certs", type=Path, help=argparse.SUPPRESS)
    arguments, _ = parser.parse_known_args()  # bench/run.py passes every script the same arguments
    if arguments.serve:
        serve(arguments.serve, arguments.port, arguments.certs)
        return
    with tempfile.TemporaryDirectory() as directory:
        certs = Path(directory)
        ensure(certs, ["localhost", "127.0.0.1"])
        (certs / "body.json").write_bytes(pod_review())
        (certs / "post.lua").write_text(POST_LUA)
        results: dict[str, list[float]] = {server: [] for server in SERVERS}
        for _ in range(arguments.pairs):
            for server in SERVERS:
                results[server].append(run(server, certs, certs / "body.json", certs / "post.lua", arguments.seconds))
    print("| server (8 keep-alive TLS connections, one CPU) | CPU µs per request (median) | runs |\n|---|---|---|")
    for server, values in results.items():
        print(f"| {server} | {statistics.median(values):.1f} | {', '.join(f'{v:.1f}' for v in values)} |")


if __name__ == "__main__":
    main()
