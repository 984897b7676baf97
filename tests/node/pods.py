"""What the tests look at on the node: the release's pods and their containers as the kernel sees
them (cgroups, processes), and TLS connections made inside the node's network namespace to a pod,
as the API server makes them."""

from __future__ import annotations

import base64
import socket
import ssl
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kubernetes import client

from cluster import kube
from node.host import NetworkNamespace
from node.node import Node

NAMESPACE = RELEASE = "grove-sharing-webhook"
"""The README's release name and namespace."""
SERVICE_HOST = f"{RELEASE}.{NAMESPACE}.svc"
WEBHOOK_PODS = f"app.kubernetes.io/instance={RELEASE},app.kubernetes.io/component=webhook"


def webhook_pods(admin: client.ApiClient, ready: bool | None = None) -> list[client.V1Pod]:
    pods = client.CoreV1Api(admin).list_namespaced_pod(NAMESPACE, label_selector=WEBHOOK_PODS).items
    pods = [p for p in pods if p.metadata.deletion_timestamp is None]
    if ready is not None:
        pods = [p for p in pods if is_ready(p) == ready]
    return pods


def is_ready(pod: client.V1Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in (pod.status.conditions or []))


def wait_ready(admin: client.ApiClient, count: int, deadline: float = 120) -> list[client.V1Pod]:
    """The ``count`` webhook pods, once each is ready and an endpoint of the Service (where the API
    server calls them)."""
    def ready() -> list[client.V1Pod] | None:
        pods = webhook_pods(admin)
        if len(pods) != count or not all(is_ready(p) for p in pods):
            return None
        return pods if {p.status.pod_ip for p in pods} <= endpoints(admin) else None

    return kube.wait_for(ready, f"{count} ready webhook pods, each an endpoint of the Service", deadline, 0.2)


def endpoints(admin: client.ApiClient) -> set[str]:
    """The addresses of the Service's ready endpoints."""
    slices = client.DiscoveryV1Api(admin).list_namespaced_endpoint_slice(
        NAMESPACE, label_selector=f"kubernetes.io/service-name={RELEASE}").items
    return {a for s in slices for e in s.endpoints or [] if e.conditions.ready for a in e.addresses}


def container_id(pod: client.V1Pod, name: str) -> str:
    status = next(s for s in pod.status.container_statuses if s.name == name)
    return str(status.container_id).split("://", 1)[1]


def container_cgroup(node: Node, pod: client.V1Pod, name: str, controller: str = "memory") -> Path:
    """The container's cgroup in ``controller``'s hierarchy (kubelet's cgroupfs layout under the
    tier's cgroup root: kubepods[/<qos>]/pod<uid>/<container id>)."""
    root = next(p for p in node.cgroups.paths if p.parent.name == controller)
    found = list(root.glob(f"kubepods/**/pod{pod.metadata.uid}/{container_id(pod, name)}"))
    assert len(found) == 1, f"no single cgroup of container {name} of {pod.metadata.name}: {found}"
    return found[0]


def container_pids(node: Node, pod: client.V1Pod, name: str) -> list[int]:
    return [int(pid) for pid in (container_cgroup(node, pod, name) / "cgroup.procs").read_text().split()]


def ca_bundle(admin: client.ApiClient) -> bytes:
    """The CA bundle the mutating webhook configuration gives the API server."""
    configuration = client.AdmissionregistrationV1Api(admin).read_mutating_webhook_configuration(RELEASE)
    return base64.b64decode(configuration.webhooks[0].client_config.ca_bundle or "")


def tls_context(ca: bytes) -> ssl.SSLContext:
    with tempfile.NamedTemporaryFile("wb", suffix=".crt") as file:
        file.write(ca)
        file.flush()
        return ssl.create_default_context(cafile=file.name)


def connect(netns: NetworkNamespace, ip: str, port: int, ca: bytes, server_name: str = SERVICE_HOST,
            receive_buffer: int | None = None, timeout: float = 10) -> ssl.SSLSocket:
    """A TLS connection to ``ip:port`` made inside the node's namespace, the server's certificate
    verified against ``ca`` for ``server_name``, as the API server verifies the webhook's."""
    def make() -> socket.socket:
        raw = socket.socket()
        if receive_buffer is not None:
            raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        raw.settimeout(timeout)
        raw.connect((ip, port))
        return raw

    return tls_context(ca).wrap_socket(netns.call(make), server_hostname=server_name)


def get(netns: NetworkNamespace, ip: str, port: int, path: str, ca: bytes, server_name: str = SERVICE_HOST) -> tuple[int, bytes]:
    """An HTTPS GET inside the namespace: status and body."""
    tls = connect(netns, ip, port, ca, server_name)
    try:
        tls.sendall(f"GET {path} HTTP/1.1\r\nHost: {server_name}\r\nConnection: close\r\n\r\n".encode())
        received = b""
        while chunk := tls.recv(65536):
            received += chunk
    finally:
        tls.close()
    head, _, body = received.partition(b"\r\n\r\n")
    if b"transfer-encoding: chunked" in head.lower():
        body = dechunk(body)
    return int(head.split()[1]), body


def dechunk(data: bytes) -> bytes:
    out = b""
    while data:
        size, _, rest = data.partition(b"\r\n")
        length = int(size.split(b";")[0], 16)
        if length == 0:
            break
        out += rest[:length]
        data = rest[length + 2:]
    return out


def until(condition: Callable[[], Any], what: str, deadline: float = 60, interval: float = 0.2) -> Any:
    return kube.wait_for(condition, what, deadline, interval)
